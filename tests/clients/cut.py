"""The official Python SDK client (`mcp` on PyPI) on a call the gateway does not finish: a drain that cuts it, or the
replica that ran it gone (the SDK then resumes the stream, `Last-Event-ID`, wherever the URL leads now).

Usage: python3 cut.py <url> <tool> <ms> <deadline seconds>. Prints `calling` once the session is open and the call
goes out, then one JSON line: the call's text or its error, and the seconds it took.
"""

import asyncio
import json
import sys
import time

from mcp import Client


async def main(url: str, tool: str, ms: int, deadline: float) -> dict:
    async with Client(url, mode="legacy", cache=None) as client:
        print("calling", flush=True)
        start = time.monotonic()
        try:
            r = await client.call_tool(tool, {"ms": ms}, read_timeout_seconds=deadline)
            out = {"text": "".join(getattr(c, "text", "") for c in r.content)}
        except Exception as e:  # the test reads the message
            out = {"error": str(e)}
        out["seconds"] = round(time.monotonic() - start, 2)
        return out


if __name__ == "__main__":
    url, tool, ms, deadline = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
    print(json.dumps(asyncio.run(main(url, tool, ms, deadline))), flush=True)
