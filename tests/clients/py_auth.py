"""The official Python SDK client (`mcp` on PyPI) against `mcp-preamble serve --listen` with a bearer token
over HTTPS.

Usage: python3 py_auth.py <url> <ca.pem> [token]
Prints one JSON line: the server's name and the tools listed, or the error the SDK raised.
"""

import asyncio
import json
import ssl
import sys

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


async def main(url: str, ca: str, token: str | None) -> dict:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, verify=ssl.create_default_context(cafile=ca), timeout=30)
    try:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy", cache=None) as client:
            tools = [t.name for t in (await client.list_tools()).tools]
            return {"server": client.server_info.name if client.server_info else None, "tools": tools}
    except BaseException as e:  # the test reads what the SDK said
        return {"error": repr(e)}
    finally:
        await http.aclose()


if __name__ == "__main__":
    token = sys.argv[3] if len(sys.argv) > 3 else None
    print(json.dumps(asyncio.run(main(sys.argv[1], sys.argv[2], token))))
