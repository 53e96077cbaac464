"""The official Python SDK client (`mcp` on PyPI) against `mcp-preamble serve`.

Usage: python3 py_client.py <legacy|modern> <spec.json>; spec: {command, args, calls: [tool…], waitFor: tool,
progress: {name, arguments}}, or {url, …} for a gateway already serving Streamable HTTP there.
Prints one JSON line: era, instructions, tools (and their output schemas), each call's text and structured content (or error), the progress call's answer and the
progress it saw (`progress_callback`), and the tools after the list changed.
"""

import asyncio
import json
import sys

from mcp import Client, StdioServerParameters


async def main(era: str, spec: dict) -> dict:
    changed = asyncio.Event()

    async def on_message(message) -> None:
        # 2025 era: notifications/tools/list_changed arrives as a plain notification.
        if "ToolListChanged" in type(getattr(message, "root", message)).__name__:
            changed.set()

    # A URL string is the SDK's Streamable HTTP transport.
    params = spec.get("url") or StdioServerParameters(command=spec["command"], args=spec["args"])
    # "auto" probes `server/discover` (a pinned version would synthesize the discover result, without instructions).
    mode = "auto" if era == "modern" else "legacy"
    out: dict = {}
    async with Client(params, mode=mode, message_handler=on_message, cache=None) as client:
        out["protocol"] = client.protocol_version
        out["instructions"] = client.instructions
        listed = (await client.list_tools()).tools
        out["tools"] = [t.name for t in listed]
        out["outputSchemas"] = {t.name: t.output_schema for t in listed if t.output_schema}
        out["calls"] = {}
        for name in spec["calls"]:
            try:
                r = await client.call_tool(name, {})
                text = "".join(getattr(c, "text", "") for c in r.content)
                out["calls"][name] = {"text": text, "isError": bool(r.is_error), "structured": r.structured_content}
            except Exception as e:  # the test reads the message
                out["calls"][name] = {"error": str(e)}

        async def relisted() -> list[str]:
            while True:
                names = [t.name for t in (await client.list_tools()).tools]
                if spec["waitFor"] in names:
                    return names
                await asyncio.sleep(0.1)

        if era == "modern":
            async with client.listen(tools_list_changed=True) as sub:
                async for _event in sub:
                    names = [t.name for t in (await client.list_tools()).tools]
                    if spec["waitFor"] in names:
                        out["changed"] = names
                        break
        else:
            await changed.wait()
            out["changed"] = await relisted()
        # After the list change, so that this call does not hold up the subscription.
        if "progress" in spec:
            seen: list[dict] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append({"progress": progress, "total": total, "message": message})

            call = spec["progress"]
            r = await client.call_tool(call["name"], call["arguments"], progress_callback=on_progress)
            text = "".join(getattr(c, "text", "") for c in r.content)
            out["progress"] = {"text": text, "seen": seen}

    return out


if __name__ == "__main__":
    era, path = sys.argv[1], sys.argv[2]
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    result = asyncio.run(asyncio.wait_for(main(era, spec), 30))
    print(json.dumps(result))
