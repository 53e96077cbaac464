"""The repository's test servers (tests/servers/, the official TypeScript SDK) for the examples."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Dict, Optional

from mcp import StdioServerParameters

SERVERS = Path(__file__).resolve().parents[2] / "tests" / "servers"


def invoice_server(env: Optional[Dict[str, str]] = None) -> StdioServerParameters:
    """The seed's invoice server that adds `pay_invoice` 300 ms after its first
    tools/list (and says so with notifications/tools/list_changed)."""
    if not (SERVERS / "node_modules" / "@modelcontextprotocol").is_dir():
        subprocess.run(["npm", "ci", "--silent"], cwd=SERVERS, check=True)
    return StdioServerParameters(
        command="node",
        args=[str(SERVERS / "invoice-growing.mjs")],
        env={"GROW_AFTER_MS": "300", **(env or {})},
        cwd=str(SERVERS),
    )
