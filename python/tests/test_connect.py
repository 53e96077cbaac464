"""connect_config against the repository's test servers (tests/servers/, on
the TypeScript SDK): stdio and Streamable HTTP entries of one config, the
section the CLI's `preview --config` makes of the same config, a server
that fails, and every server closed at the end."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path
from typing import Any, Dict, Iterator

import pytest

import mcp_preamble as mp
from mcp_preamble import Assembler, connect_config

from .conftest import run_cli


@pytest.fixture()
def http_url(node_servers: Path) -> Iterator[str]:
    """The invoice server over Streamable HTTP (http.mjs on an ephemeral port)."""
    proc = subprocess.Popen(
        ["node", str(node_servers / "http.mjs"), "0"], cwd=node_servers, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().strip()
        assert line.startswith("listening "), line
        yield line.split(" ", 1)[1]
    finally:
        proc.kill()
        proc.wait()


def config(tmp_path: Path, servers: Path, url: str, vscode: bool) -> Path:
    entries: Dict[str, Any] = {
        "billing": {"command": "node", "args": [str(servers / "invoice.mjs")], "cwd": str(servers)},
        "spaces": {"command": "node", "args": ["whitespace.mjs"], "cwd": str(servers)},
        "remote": {"url": url},
        "broken": {"command": "node", "args": [str(servers / "exit-during-handshake.mjs")]},
    }
    if vscode:  # VS Code's shape: "servers" and a "type" per entry
        for e in entries.values():
            e["type"] = "http" if "url" in e else "stdio"
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"servers" if vscode else "mcpServers": entries}))
    return path


@pytest.mark.parametrize("vscode", [False, True], ids=["claude-desktop", "vscode"])
def test_every_server_of_a_config_in_one_live_section(
    cli: Path, node_servers: Path, http_url: str, tmp_path: Path, vscode: bool
) -> None:
    path = config(tmp_path, node_servers, http_url, vscode)
    expected = json.loads(run_cli(cli, ["preview", "--json", "--budget", "120", "--config", str(path)]))["assembly"]

    async def main() -> mp.LiveSection:
        async with connect_config(path, Assembler(budget=120), timeout=20) as live:
            assert sorted(live.sessions) == ["billing", "remote", "spaces"]
            assert {a: live.state(a) for a in ("billing", "remote", "spaces", "broken")} == {
                "billing": "connected",
                "remote": "connected",
                "spaces": "connected",
                "broken": "gone",
            }
            section = await live.section()
            # The same section the CLI makes of the same config, server by server.
            assert section.text == expected["text"]
            assert [(s.name, s.tokens) for s in section.servers] == [
                (s["name"], s["tokens"]) for s in expected["servers"]
            ]
            # The connections are the host's to use.
            answer = await live.sessions["billing"].call_tool("list_periods", {})
            assert answer.content[0].text == "2026-07, 2026-08"
            return live

    live = asyncio.run(main())
    failure = live.failures["broken"]
    assert isinstance(failure, mp.ConnectError) and failure.kind == "connect"
    assert "broken" in str(failure) and "fatal: config missing" in str(failure)
    # Leaving closed every connection: each block went with it.
    assert all(live.state(a) == "gone" for a in ("billing", "remote", "spaces"))
    assert live.sessions == {} and live.servers == {}


def test_a_config_the_cli_refuses_is_refused_with_its_message(cli: Path, tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"x": {"command": "node", "args": "not a list"}}}))
    out = subprocess.run([str(cli), "preview", "--config", str(path)], capture_output=True, text=True, check=False)

    async def main() -> None:
        async with connect_config(path):
            pass

    with pytest.raises(mp.InvalidConfigError) as e:
        asyncio.run(main())
    assert out.returncode == 2 and out.stderr.strip() == f"mcp-preamble: {e.value}"
    assert str(e.value) == f'invalid configuration: {path}: server "x": "args" must be an array of strings'


def test_a_server_that_never_answers_times_out_alone(node_servers: Path, tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text(
        json.dumps(
            {
                "mcpServers": {
                    "silent": {"command": "node", "args": [str(node_servers / "never-answers.mjs")]},
                    "billing": {"command": "node", "args": [str(node_servers / "invoice.mjs")]},
                }
            }
        )
    )

    async def main() -> mp.LiveSection:
        async with connect_config(path, timeout=8) as live:
            assert "### billing" in (await live.section()).text
            return live

    live = asyncio.run(main())
    assert isinstance(live.failures["silent"], mp.McpTimeoutError)
    assert str(live.failures["silent"]) == "timed out: server 'silent': no answer within the timeout"


def test_a_hand_written_jsonc_config_reads_as_the_cli_reads_it(
    node_servers: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A byte-order mark, CRLF, comments, trailing commas, ${VAR:-default} and ${VAR} (issue 51).
    monkeypatch.setenv("MCP_PREAMBLE_TEST_DIR", str(node_servers))
    monkeypatch.delenv("MCP_PREAMBLE_TEST_NODE", raising=False)
    path = tmp_path / "mcp.json"
    text = (
        "\ufeff{\r\n  // edited by hand\r\n  \"mcpServers\": {\r\n    \"billing\": {\r\n"
        '      "command": "${MCP_PREAMBLE_TEST_NODE:-node}", /* the default */\r\n'
        '      "args": ["${MCP_PREAMBLE_TEST_DIR}/invoice.mjs",],\r\n    },\r\n  },\r\n}\r\n'
    )
    path.write_bytes(text.encode("utf-8"))

    async def main() -> str:
        async with connect_config(path, timeout=20) as live:
            assert sorted(live.sessions) == ["billing"]
            return (await live.section()).text

    assert "Always call list_periods before get_invoice." in asyncio.run(main())
    monkeypatch.delenv("MCP_PREAMBLE_TEST_DIR")

    async def unset() -> None:
        async with connect_config(path):
            pass

    with pytest.raises(mp.InvalidConfigError) as e:
        asyncio.run(unset())
    assert str(e.value) == (
        f'invalid configuration: {path}: server "billing": "args" uses ${{MCP_PREAMBLE_TEST_DIR}}, '
        "but that variable is not set"
    )
