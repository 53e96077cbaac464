"""LiveSection's state changes for one story, connect, kill, reconnect within
the grace period, grace expiry, close: the very list node/test/states.test.mjs
asserts for the Node package (both drive the crate's Roster). Servers:
tests/servers/slow-tool.mjs (its ``pid`` tool says which process to kill),
through the official SDK's ``mcp.Client``."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from typing import Any, List, Tuple

from mcp import StdioServerParameters

from mcp_preamble import LiveSection, StateChange

# The same list as node/test/states.test.mjs's EXPECTED.
EXPECTED = [
    ("billing", "connected", "added"),
    ("billing", "reconnecting", "connection_lost"),
    ("billing", "connected", "connected"),
    ("billing", "reconnecting", "connection_lost"),
    ("billing", "gone", "grace_expired"),
    ("billing", "connected", "added"),
    ("billing", "gone", "closed"),
]
# Long enough to start a server again on a loaded machine; the expiry waits it out.
GRACE_S = 5.0


async def kill(client: Any) -> None:
    os.kill(int((await client.call_tool("pid", {})).content[0].text), signal.SIGKILL)


async def until(live: LiveSection, state: str) -> None:
    for _ in range(400):
        if live.state("billing") == state:
            return
        await asyncio.sleep(0.025)
    assert live.state("billing") == state


def drained(queue: "asyncio.Queue[StateChange]") -> List[Tuple[str, str, str]]:
    out: List[Tuple[str, str, str]] = []
    while not queue.empty():
        c = queue.get_nowait()
        out.append((c.alias, c.state, c.reason))
    return out


def test_connect_kill_reconnect_expiry_close_give_the_node_packages_changes(node_servers: Path) -> None:
    slow = StdioServerParameters(command="node", args=[str(node_servers / "slow-tool.mjs")], cwd=str(node_servers))

    async def main() -> None:
        live = LiveSection(grace=GRACE_S)
        states = live.subscribe_states()
        async with live.connect("billing", slow, handshake="legacy") as client:
            first = await live.section()
            await kill(client)
            await until(live, "reconnecting")
        async with live.connect("billing", slow, handshake="legacy") as client:
            assert live.state("billing") == "connected"
            # Back within the grace period with the same snapshot: the same section.
            assert await live.section() is first
            await kill(client)
            await until(live, "reconnecting")
            await until(live, "gone")
            assert live.revision == 1 and (await live.section()).servers == () and live.revision == 2
        async with live.connect("billing", slow, handshake="legacy"):
            pass
        assert live.state("billing") == "gone"
        assert drained(states) == EXPECTED
        await live.aclose()

    asyncio.run(main())
