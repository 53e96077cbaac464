"""LiveSection keeps the Rust hub's promises with live servers (tests/servers/,
on the TypeScript SDK; the official Python SDK's `mcp.Client` connects):
one revision when a server goes, none when it comes back the same within the
grace period, and the states `connected`, `reconnecting`, `gone`."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any, List

import pytest
from mcp import StdioServerParameters

from mcp_preamble import Assembler, LiveSection, StateChange

DEADLINE_S = 20.0


def server(servers: Path, script: str, **env: str) -> StdioServerParameters:
    return StdioServerParameters(command="node", args=[str(servers / script)], cwd=str(servers), env=env or None)


async def next_change(queue: "asyncio.Queue[StateChange]") -> StateChange:
    return await asyncio.wait_for(queue.get(), DEADLINE_S)


def changes(queue: "asyncio.Queue[StateChange]") -> List[Any]:
    out = []
    while not queue.empty():
        c = queue.get_nowait()
        out.append((c.alias, c.state, c.reason))
    return out


def test_a_killed_server_leaves_with_one_revision(node_servers: Path) -> None:
    async def main() -> None:
        live = LiveSection(Assembler(budget=200), grace=0.2)
        states = live.subscribe_states()
        async with live.connect("billing", server(node_servers, "invoice.mjs"), handshake="legacy"):
            async with live.connect("tools", server(node_servers, "slow-tool.mjs"), handshake="legacy") as tools:
                before = await live.section()
                assert "### billing" in before.text and "### tools" in before.text
                revision = live.revision
                pid = int((await tools.call_tool("pid", {})).content[0].text)
                assert changes(states) == [("billing", "connected", "added"), ("tools", "connected", "added")]
                os.kill(pid, signal.SIGKILL)
                # The transport's end: kept for the grace period, then gone.
                assert (await next_change(states)) == StateChange("tools", "reconnecting", "connection_lost")
                assert live.state("tools") == "reconnecting"
                assert (await live.section()) is before and live.revision == revision
                assert (await next_change(states)) == StateChange("tools", "gone", "grace_expired")
                after = await live.section()
                assert live.revision == revision + 1
                assert "### tools" not in after.text and "### billing" in after.text
                assert await live.section() is after and live.revision == revision + 1
            # Leaving the dead connection changes nothing more.
            assert live.revision == revision + 1 and changes(states) == []
        # Closing a connection takes its block out at once: one more revision.
        assert live.state("billing") == "gone"
        assert changes(states) == [("billing", "gone", "closed")]
        assert (await live.section()).servers == () and live.revision == revision + 2
        await live.aclose()

    asyncio.run(main())


def test_a_reconnect_within_the_grace_period_with_the_same_snapshot_changes_nothing(node_servers: Path) -> None:
    async def main() -> None:
        live = LiveSection(grace=60.0)
        states = live.subscribe_states()
        ending = server(node_servers, "exit-after.mjs", EXIT_AFTER_MS="5000")
        async with live.connect("billing", ending, handshake="legacy"):
            first = await live.section()
            assert "### billing" in first.text
            assert (await next_change(states)).state == "connected"
            assert (await next_change(states)) == StateChange("billing", "reconnecting", "connection_lost")
        # Leaving the ended connection does not cut the grace period short.
        assert live.state("billing") == "reconnecting"
        async with live.connect("billing", server(node_servers, "invoice.mjs"), handshake="legacy"):
            assert (await next_change(states)) == StateChange("billing", "connected", "connected")
            again = await live.section()
            assert again is first and again.digest == first.digest and live.revision == 1
        await live.aclose()

    asyncio.run(main())


def test_a_host_session_found_closed_is_reconnecting_then_gone(node_servers: Path) -> None:
    """A ClientSession the host runs itself: the section finds it closed when
    re-listing fails, and keeps its block for the grace period."""
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    async def main() -> None:
        live = LiveSection(grace=0.2)
        states = live.subscribe_states()
        async with stdio_client(server(node_servers, "invoice.mjs")) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                await live.add("billing", session)
                before = await live.section()
        live.mark_changed("billing")
        assert (await live.section()) is before and live.state("billing") == "reconnecting"
        assert changes(states)[-1] == ("billing", "reconnecting", "connection_lost")
        assert (await next_change(states)) == StateChange("billing", "gone", "grace_expired")
        assert (await live.section()).servers == () and live.revision == 2

    asyncio.run(main())


def test_states_without_a_grace_period(node_servers: Path) -> None:
    async def main() -> None:
        live = LiveSection(grace=0)
        states = live.subscribe_states()
        ending = server(node_servers, "exit-after.mjs", EXIT_AFTER_MS="5000")
        async with live.connect("billing", ending, handshake="legacy"):
            await live.section()
            await next_change(states)
            assert (await next_change(states)) == StateChange("billing", "gone", "connection_lost")
            assert live.state("billing") == "gone"
            assert (await live.section()).servers == () and live.revision == 2

    asyncio.run(main())


def test_a_server_that_exits_is_a_server_exited_error(node_servers: Path) -> None:
    """During its handshake, or under a request of the block: the documented
    error (a ConnectError), not the SDK's bare ExceptionGroup."""
    import mcp_preamble as mp

    async def during_handshake() -> None:
        async with LiveSection().connect("broken", server(node_servers, "exit-during-handshake.mjs")):
            raise AssertionError("connected to a server that exited")

    with pytest.raises(mp.ServerExitedError) as e:
        asyncio.run(during_handshake())
    assert isinstance(e.value, mp.ConnectError) and e.value.kind == "connect"
    assert str(e.value) == (
        "cannot connect: server 'broken': the connection closed during its handshake "
        "(the server exited, or its transport ended)"
    )
    assert type(e.value.__cause__).__name__ == "ExceptionGroup"

    async def in_a_request() -> LiveSection:
        live = LiveSection(grace=60.0)
        async with live.connect("billing", server(node_servers, "exit-after.mjs", EXIT_AFTER_MS="3000"), handshake="legacy") as client:
            for _ in range(400):
                if live.state("billing") != "connected":
                    break
                await asyncio.sleep(0.025)
            await client.call_tool("list_periods", {})
        return live

    with pytest.raises(mp.ServerExitedError) as e:
        asyncio.run(in_a_request())
    assert "server 'billing': the connection closed in a request" in str(e.value)
