"""A plain `mcp` ClientSession loop: the section before every model request.

    python python/examples/session_loop.py

Connects to the invoice server over stdio, keeps its instructions section
current with LiveSection (the server adds a tool mid-loop) and prints what a
host would put in its system prompt each turn. No model, no network.
"""

from __future__ import annotations

import asyncio

from mcp import ClientSession
from mcp.client.stdio import stdio_client

from _servers import invoice_server
from mcp_preamble import Assembler, LiveSection


async def main() -> None:
    live = LiveSection(Assembler(budget=200))
    async with stdio_client(invoice_server()) as (read, write):
        async with ClientSession(read, write, message_handler=live.message_handler("billing")) as session:
            await session.initialize()
            await live.add("billing", session)
            sent = ""
            for turn in range(1, 6):
                section = await live.section()  # one call before each model request
                if section.digest != sent:
                    print(f"turn {turn}: new system prompt section (revision {live.revision}, "
                          f"{section.total_tokens} tokens, sha256 {section.digest[:12]}):")
                    print(section.text)
                    sent = section.digest
                else:
                    print(f"turn {turn}: section unchanged")
                result = await session.call_tool("list_periods", {})
                print(f"turn {turn}: list_periods -> {len(result.content)} content block(s)")
                await asyncio.sleep(0.2)
            final = await live.section()
            assert "`pay_invoice`" in final.text, "the tool the server added never reached the section"
            for s in final.servers:
                print(f"{s.name}: {s.tokens_before} -> {s.tokens} tokens, {len(s.removed)} removed")


if __name__ == "__main__":
    asyncio.run(main())
