"""The official Python SDK client's close sequence (stdin closed, then SIGTERM to the process group after 2 s)
against a command. Usage: python3 close.py <command> <args…>. Prints one JSON line: the tools it listed and how long
the close took (under 2,000 ms: the command ended on its stdin's end, with no signal)."""

import asyncio
import json
import sys
import time

from mcp import Client, StdioServerParameters


async def main(command: str, args: list[str]) -> dict:
    params = StdioServerParameters(command=command, args=args)
    client = Client(params, mode="legacy", cache=None)
    await client.__aenter__()
    tools = [t.name for t in (await client.list_tools()).tools]
    start = time.monotonic()
    await client.__aexit__(None, None, None)
    return {"tools": tools, "close_ms": round((time.monotonic() - start) * 1000)}


print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2:]))))
