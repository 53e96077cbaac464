"""The READMEs' Python snippets run (python/README.md, and the root README's Python section)."""

from __future__ import annotations

import asyncio
import json
import re
import textwrap
from pathlib import Path
from typing import Any, Dict, List

from mcp.client.stdio import StdioServerParameters

from .conftest import ROOT


def snippets(path: Path, section: str = "") -> List[str]:
    text = path.read_text()
    if section:
        start = text.index(section)
        end = text.find("\n## ", start + len(section))
        text = text[start : end if end != -1 else None]
    return re.findall(r"```python\n(.*?)```", text, re.S)


def run(code: str, namespace: Dict[str, Any]) -> None:
    if "await " in code:
        body = "async def __snippet():\n" + textwrap.indent(code, "    ")
        exec(compile(body, "<readme>", "exec"), namespace)
        asyncio.run(namespace["__snippet"]())
    else:
        exec(compile(code, "<readme>", "exec"), namespace)


def test_python_readme(node_servers: Path, monkeypatch: Any, tmp_path: Path) -> None:
    monkeypatch.chdir(ROOT)
    found = snippets(ROOT / "python" / "README.md")
    assert len(found) == 4
    params = StdioServerParameters(command="node", args=[str(node_servers / "invoice.mjs")], cwd=str(node_servers))
    # The config the connect_config snippet reads: the invoice server as "billing".
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"billing": {"command": "node", "args": [str(node_servers / "invoice.mjs")]}}}))
    for code in found:
        run(code.replace('"mcp.json"', repr(str(config))), {"params": params})


def test_root_readme_python_section(monkeypatch: Any) -> None:
    monkeypatch.chdir(ROOT)
    found = snippets(ROOT / "README.md", "## Python")
    assert len(found) == 1
    run(found[0], {})


def test_package_docstring_example() -> None:
    import doctest

    import mcp_preamble

    result = doctest.testmod(mcp_preamble)
    assert result.attempted > 0 and result.failed == 0
