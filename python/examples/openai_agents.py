"""The OpenAI Agents SDK: the MCP servers' instructions from an `instructions` callable.

    python python/examples/openai_agents.py

`Agent(instructions=...)` takes a function of the run context and the agent;
it returns the host's prompt plus the live section. The model is a stub
(no API key, no network) that answers with the tools its system
instructions list.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator, List, Optional, Union

from agents import Agent, Model, ModelResponse, ModelSettings, ModelTracing, RunContextWrapper, Runner, Tool
from agents import set_tracing_disabled
from agents.agent_output import AgentOutputSchemaBase
from agents.handoffs import Handoff
from agents.items import TResponseInputItem, TResponseStreamEvent
from agents.usage import Usage
from mcp import ClientSession
from mcp.client.stdio import stdio_client
from openai.types.responses import ResponseOutputMessage, ResponseOutputText
from openai.types.responses.response_prompt_param import ResponsePromptParam

from _servers import invoice_server
from mcp_preamble import Assembler, LiveSection


class StubModel(Model):
    """Answers with the `Tools:` lines of its system instructions."""

    async def get_response(
        self,
        system_instructions: Optional[str],
        input: Union[str, List[TResponseInputItem]],
        model_settings: ModelSettings,
        tools: List[Tool],
        output_schema: Optional[AgentOutputSchemaBase],
        handoffs: List[Handoff[Any, Any]],
        tracing: ModelTracing,
        *,
        previous_response_id: Optional[str],
        conversation_id: Optional[str],
        prompt: Optional[ResponsePromptParam],
    ) -> ModelResponse:
        lines = [line for line in (system_instructions or "").splitlines() if line.startswith("Tools:")]
        text = "; ".join(lines) or "no MCP tools in my instructions"
        message = ResponseOutputMessage(
            id="msg_stub",
            type="message",
            role="assistant",
            status="completed",
            content=[ResponseOutputText(type="output_text", text=text, annotations=[])],
        )
        return ModelResponse(output=[message], usage=Usage(), response_id=None)

    def stream_response(
        self,
        system_instructions: Optional[str],
        input: Union[str, List[TResponseInputItem]],
        model_settings: ModelSettings,
        tools: List[Tool],
        output_schema: Optional[AgentOutputSchemaBase],
        handoffs: List[Handoff[Any, Any]],
        tracing: ModelTracing,
        *,
        previous_response_id: Optional[str],
        conversation_id: Optional[str],
        prompt: Optional[ResponsePromptParam],
    ) -> AsyncIterator[TResponseStreamEvent]:
        raise NotImplementedError("the stub does not stream")


async def main() -> None:
    set_tracing_disabled(True)  # no trace export (it would need an API key)
    live = LiveSection(Assembler(budget=200))

    async def instructions(ctx: RunContextWrapper[None], agent: Agent[None]) -> str:
        return "You are a billing assistant.\n\n" + (await live.section()).text

    agent = Agent[None](name="billing", instructions=instructions, model=StubModel())
    async with stdio_client(invoice_server()) as (read, write):
        async with ClientSession(read, write, message_handler=live.message_handler("billing")) as session:
            await session.initialize()
            await live.add("billing", session)
            first = await Runner.run(agent, "Which tools can you use?")
            print("first run:", first.final_output)
            assert "`pay_invoice`" not in first.final_output
            deadline = time.monotonic() + 15
            while "`pay_invoice`" not in (await live.section()).text and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            second = await Runner.run(agent, "And now?")
            print("second run:", second.final_output)
            assert "`pay_invoice`" in second.final_output, "the model never saw the new tool"


if __name__ == "__main__":
    asyncio.run(main())
