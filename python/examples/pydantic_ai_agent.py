"""pydantic-ai: the MCP servers' instructions as an instructions function.

    python python/examples/pydantic_ai_agent.py

The agent's `@agent.instructions` function returns the live section, so every
model request carries the servers' current instructions. The model is
pydantic-ai's FunctionModel (no API key, no network): it answers with the
tools the section lists, which shows what reached the model.
"""

from __future__ import annotations

import asyncio
import time
from typing import List

from mcp import ClientSession
from mcp.client.stdio import stdio_client
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from _servers import invoice_server
from mcp_preamble import Assembler, LiveSection


def stand_in_model(messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
    """Answers with the `Tools:` lines of the instructions it was sent."""
    lines = [line for line in (info.instructions or "").splitlines() if line.startswith("Tools:")]
    return ModelResponse(parts=[TextPart("; ".join(lines) or "no MCP tools in my instructions")])


async def main() -> None:
    live = LiveSection(Assembler(budget=200))
    agent = Agent(FunctionModel(stand_in_model), instructions="You are a billing assistant.")

    @agent.instructions
    async def mcp_servers() -> str:
        return (await live.section()).text

    async with stdio_client(invoice_server()) as (read, write):
        async with ClientSession(read, write, message_handler=live.message_handler("billing")) as session:
            await session.initialize()
            await live.add("billing", session)
            first = await agent.run("Which tools can you use?")
            print("first run:", first.output)
            assert "`pay_invoice`" not in first.output
            # The server adds pay_invoice after its first tools/list; wait for the notification.
            deadline = time.monotonic() + 15
            while "`pay_invoice`" not in (await live.section()).text and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            second = await agent.run("And now?")
            print("second run:", second.output)
            assert "`pay_invoice`" in second.output, "the model never saw the new tool"


if __name__ == "__main__":
    asyncio.run(main())
