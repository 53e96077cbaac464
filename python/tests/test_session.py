"""The LiveSection helper against live servers over stdio (the official
Python SDK's ClientSession; servers from tests/servers/, on the TypeScript SDK)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any, List

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from mcp_preamble import Assembler, LiveSection, Server

DEADLINE_S = 15.0


def params(servers: Path, script: str) -> StdioServerParameters:
    return StdioServerParameters(command="node", args=[str(servers / script)], cwd=str(servers))


async def wait_for(live: LiveSection, text: str) -> Any:
    start = time.monotonic()
    while True:
        section = await live.section()
        if text in section.text or time.monotonic() - start > DEADLINE_S:
            return section
        await asyncio.sleep(0.05)


def test_follows_tools_list_changed_on_a_2025_connection(node_servers: Path) -> None:
    async def main() -> List[Any]:
        seen: List[Any] = []

        async def mine(message: Any) -> None:
            seen.append(message)

        live = LiveSection(Assembler(budget=200))
        async with stdio_client(params(node_servers, "changing.mjs")) as (read, write):
            handler = live.message_handler("changing", inner=mine)
            async with ClientSession(read, write, message_handler=handler) as session:
                await session.initialize()
                server = await live.add("changing", session)
                assert server.era == "legacy" and server.tool_names == ["first"]
                first = await live.section()
                assert "`first`" in first.text and "`second`" not in first.text
                assert live.revision == 1
                # Nothing changed: the same assembly, no new revision.
                assert await live.section() is first and live.revision == 1
                second = await wait_for(live, "`second`")
                assert "`second`" in second.text, "the section never showed the tool added later"
                assert second.digest != first.digest and live.revision == 2
                assert live.servers["changing"].tool_names == ["first", "second"]
                await live.remove("changing")
                assert (await live.section()).servers == () and live.revision == 3
        await live.aclose()
        return seen

    seen = asyncio.run(main())
    # The host's own handler still saw the notification.
    assert any(getattr(getattr(m, "root", m), "method", None) == "notifications/tools/list_changed" for m in seen)


def test_follows_changes_on_a_2026_connection(node_servers: Path) -> None:
    async def main() -> None:
        async with LiveSection() as live:
            async with stdio_client(params(node_servers, "changing.mjs")) as (read, write):
                async with ClientSession(read, write) as session:
                    await session.discover()
                    server = await live.add("changing", session)
                    assert server.era == "modern"
                    assert "`second`" not in (await live.section()).text
                    second = await wait_for(live, "`second`")
                    assert "`second`" in second.text, "the section never showed the tool added later"
                await live.aclose()

    asyncio.run(main())


def test_the_session_gives_what_the_crate_reads_from_the_wire(node_servers: Path) -> None:
    """The invoice server over the SDK gives the capture's section (the seed's
    invoice server, captured in tests/corpus/)."""

    async def main() -> Server:
        live = LiveSection()
        async with stdio_client(params(node_servers, "invoice.mjs")) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await live.add("billing", session)

    server = asyncio.run(main())
    root = node_servers.parents[1]
    capture = Server.from_capture(root / "tests" / "corpus" / "seed-invoice-server.json", alias="billing")
    assert server.instructions == capture.instructions
    assert server.tool_names == capture.tool_names
    a = Assembler(budget=40)
    assert a.assemble([server]).text == a.assemble([capture]).text
