"""The package against the CLI on the whole corpus: the same bytes (`to_json()`
is `mcp-preamble preview --json`), the same counts and removals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Tuple

import pytest

from mcp_preamble import Assembler, Assembly, Lock, Server

from .conftest import CORPUS, ROOT, run_cli

# Settings as the CLI's flags and as the Assembler's keywords.
SETTINGS: List[Dict[str, Any]] = [
    {"flags": [], "kw": {}},
    {"flags": ["--budget", "64"], "kw": {"budget": 64}},
    {"flags": ["--total-budget", "900", "--template", "xml"], "kw": {"total_budget": 900, "template": "xml"}},
    {"flags": ["--budget", "96", "--encoding", "cl100k_base"], "kw": {"budget": 96, "encoding": "cl100k_base"}},
]


def check_fields(assembly: Assembly, cli_json: bytes) -> None:
    """The typed report says what the CLI's JSON says, server by server."""
    report = json.loads(cli_json)["assembly"]
    assert assembly.text == report["text"]
    assert assembly.total_tokens == report["total_tokens"]
    assert [s.name for s in assembly.servers] == [s["name"] for s in report["servers"]]
    for mine, theirs in zip(assembly.servers, report["servers"]):
        assert (mine.tokens_before, mine.tokens, mine.budget) == (
            theirs["tokens_before"],
            theirs["tokens"],
            theirs["budget"],
        )
        assert mine.text == theirs["text"]
        assert [(r.reason, r.text, r.tool, r.server) for r in mine.removed] == [
            (r["reason"], r["text"], r.get("tool"), r.get("server")) for r in theirs["removed"]
        ]


@pytest.mark.parametrize("setting", range(len(SETTINGS)))
def test_whole_corpus_at_once(cli: Path, setting: int) -> None:
    s = SETTINGS[setting]
    expected = run_cli(cli, ["preview", "--json", *s["flags"], *map(str, CORPUS)])
    assembly = Assembler(**s["kw"]).assemble([Server.from_capture(p) for p in CORPUS])
    assert assembly.to_json().encode() == expected
    check_fields(assembly, expected)
    # Something was removed, so the removals were compared too.
    if setting == 1:
        assert sum(len(r.removed) for r in assembly.servers) > 10


@pytest.mark.parametrize("capture", CORPUS, ids=lambda p: p.stem)
def test_each_capture_alone(cli: Path, capture: Path) -> None:
    expected = run_cli(cli, ["preview", "--json", "--budget", "64", str(capture)])
    assembly = Assembler(budget=64).assemble([Server.from_capture(capture)])
    assert assembly.to_json().encode() == expected
    check_fields(assembly, expected)


POLICY = """
version = 1
[defaults]
budget = 120
total_budget = 1500
order = "insertion"
tool_descriptions = true
on_change = "hold"
[servers.basic-memory]
weight = 3.0
[servers.context7-mcp]
instructions = "Use only for library docs."
label = "platform team"
[servers.mcp-server-git]
exclude = true
"""


def test_policy_file_and_lock_as_the_cli_reads_them(cli: Path, tmp_path: Path) -> None:
    policy = tmp_path / "mcp-preamble.toml"
    policy.write_text(POLICY)
    files = [str(p) for p in CORPUS[:14]]
    servers = [Server.from_capture(p) for p in files]
    # A lock with half of them pinned, one of those pinned with other instructions.
    lock = Lock()
    for s in servers[:7]:
        lock.pin(s)
    raw = json.loads(Path(files[3]).read_text())
    raw["initialize"]["result"]["instructions"] = "Old text."
    old = Server.from_initialize(raw["initialize"], raw["tools_list_pages"], alias=servers[3].name)
    assert old.era == servers[3].era == "legacy"
    lock.pin(old)
    lock_file = tmp_path / "mcp-preamble.lock"
    lock.save(lock_file)
    flags = ["preview", "--json", "--policy", str(policy), "--lock", str(lock_file)]
    expected = run_cli(cli, [*flags, *files])
    assembly = Assembler.from_policy(policy, lock=Lock.load(lock_file)).assemble(servers)
    assert assembly.to_json().encode() == expected
    states = {s.pin.state for s in assembly.servers}
    assert states == {"same", "changed", "new"}
    # Keywords override the file as flags do.
    expected = run_cli(cli, [*flags, "--budget", "48", *files])
    assembly = Assembler.from_policy(policy, budget=48, lock=Lock.load(lock_file)).assemble(servers)
    assert assembly.to_json().encode() == expected


def test_lint_matches_the_cli(cli: Path) -> None:
    """The same findings, in order (MCP015 too: a Server read from a capture
    keeps its other handshake to compare with, as the CLI does)."""
    from mcp_preamble import lint

    files = [str(p) for p in CORPUS]
    report = json.loads(run_cli(cli, ["lint", "--format", "json", "--hosts", "all", *files]))
    expected = [
        (f["code"], f["severity"], f["server"], f["message"], f.get("line"))
        for s in report["servers"]
        for f in s["findings"]
    ]
    servers = [Server.from_capture(p) for p in files]
    findings = lint(servers, hosts="all")
    assert [(f.code, f.severity, f.server, f.message, f.line) for f in findings] == expected
    assert any(f.code == "MCP010" for f in findings)


def test_lint_compares_a_captures_two_handshakes_as_the_cli_does(cli: Path, tmp_path: Path) -> None:
    from mcp_preamble import lint

    raw = json.loads((ROOT / "tests" / "corpus" / "seed-invoice-server.json").read_text())
    raw["initialize"]["result"]["instructions"] = "Call get_invoice first."
    capture = tmp_path / "drifting.json"
    capture.write_text(json.dumps(raw))
    report = json.loads(run_cli(cli, ["lint", "--format", "json", str(capture)]))
    expected = [(f["code"], f["message"], f.get("line")) for s in report["servers"] for f in s["findings"]]
    server = Server.from_capture(capture)
    assert server.era == "modern" and server.other_eras == ["legacy"]
    got = [(f.code, f.message, f.line) for f in lint([server])]
    assert got == expected
    assert "MCP015" in [code for code, _, _ in got]
    # A server without its other handshake has nothing to compare with.
    alone = Server.from_snapshot_json(server.to_snapshot_json(0))
    assert alone.other_eras == [] and "MCP015" not in [f.code for f in lint([alone])]


def test_the_models_tokens_and_the_hosts_names_as_the_cli_counts_them(cli: Path, llama3_tokenizer: Path) -> None:
    """`model=`, `tokenizer=`, `tool_names=`, `deferred=`, `defer_over=` and
    `target=` give the bytes and counts of the CLI's flags of those names,
    on the whole corpus."""
    tok = str(llama3_tokenizer)
    cases: List[Tuple[List[str], Dict[str, Any]]] = [
        (["--model", "llama-3.1", "--tokenizer", tok, "--budget", "64"], {"model": "llama-3.1", "tokenizer": tok, "budget": 64}),
        (["--model", "claude-sonnet-4", "--budget", "64"], {"model": "claude-sonnet-4", "budget": 64}),
        (["--tool-names", "claude-code", "--total-budget", "900"], {"tool_names": "claude-code", "total_budget": 900}),
        (
            ["--deferred", "basic-memory", "--deferred", "context7-mcp", "--defer-over", "20", "--target", "namespace"],
            {"deferred": ["basic-memory", "context7-mcp"], "defer_over": 20, "target": "namespace"},
        ),
    ]
    servers = [Server.from_capture(p) for p in CORPUS]
    reports = []
    for flags, kw in cases:
        expected = run_cli(cli, ["preview", "--json", *flags, *map(str, CORPUS)])
        assembly = Assembler(**kw).assemble(servers)
        assert assembly.to_json().encode() == expected, flags
        check_fields(assembly, expected)
        reports.append(assembly)
    llama, claude, claude_code, deferred = reports
    # Each setting took effect: other counters, other names, deferred tools, namespaces.
    plain = Assembler(budget=64).assemble(servers)
    assert llama.counting["exact"] is True and llama.total_tokens != plain.total_tokens
    assert claude.counting["exact"] is False and claude.total_tokens >= plain.total_tokens
    assert "mcp__" in claude_code.text and "mcp__" not in plain.text
    assert any(s.deferred for s in deferred.servers) and any(s.namespace for s in deferred.servers)
    assert all(s.namespace is None for s in claude_code.servers)
