"""The Python API: servers from the official SDK's models and from plain
dicts, results, pins, lint, reprs, the version."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any, Dict, List, Optional, Set, get_args

import pytest
from mcp import types

import mcp_preamble
from mcp_preamble import Assembler, Diagnostic, FileReadError, Finding, Lock, Server, lint

from .conftest import CORPUS, ROOT


def capture(path: Path) -> Dict[str, Any]:
    data: Dict[str, Any] = json.loads(path.read_text())
    return data


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_sdk_models_and_dicts_give_the_capture_section(path: Path) -> None:
    """For every capture: its initialize result and tool pages as the SDK's
    pydantic models, as their model_dump(by_alias=True), as a flat list of
    tool dicts, and raw: the same section as the capture file read in that era."""
    raw = capture(path)
    pages = raw["tools_list_pages"]
    alias = path.stem
    expected = Assembler(budget=80).assemble([Server.from_capture(path, alias)])
    # Capture files use server/discover when it succeeded.
    if "result" in raw.get("discover", {}):
        init, pages = raw["discover"], raw["discover_tools_list_pages"]
        model: Any = types.DiscoverResult.model_validate(init["result"])
        build, era = Server.from_discover, "modern"
    else:
        init = raw["initialize"]
        model = types.InitializeResult.model_validate(init["result"])
        build, era = Server.from_initialize, "legacy"
    ok_pages = [p for p in pages if "result" in p]
    page_models = [types.ListToolsResult.model_validate(p["result"]) for p in ok_pages]
    tools = [t.model_dump(by_alias=True) for m in page_models for t in m.tools]
    variants: List[Server] = [
        build(init, pages, alias),
        build(init["result"], pages, alias),
    ]
    if len(ok_pages) == len(pages):  # an error page is an exception in the SDK, not a model
        variants.append(build(model, page_models, alias))
        variants.append(build(model.model_dump(by_alias=True), tools, alias))
    for server in variants:
        assert server.era == era
        got = Assembler(budget=80).assemble([server])
        assert got.text == expected.text
        assert got.servers[0].removed == expected.servers[0].removed


def test_server_properties_and_snapshot_round_trip() -> None:
    s = Server.from_capture(ROOT / "tests" / "corpus" / "seed-invoice-server.json")
    assert (s.alias, s.name, s.server_name, s.version) == (
        "seed-invoice-server",
        "seed-invoice-server",
        "invoice-server",
        "1.0.0",
    )
    assert s.era == "modern" and s.protocol_version == "2026-07-28"
    assert s.tool_names == ["list_periods", "get_invoice"]
    assert s.instructions_state == "present" and s.instructions is not None
    assert repr(s) == (
        "Server(name='seed-invoice-server', server_name='invoice-server', version='1.0.0', "
        "era='modern', instructions='present', tools=2)"
    )
    billing = s.with_alias("billing")
    assert billing.name == "billing" and billing != s
    again = Server.from_snapshot_json(billing.to_snapshot_json(1))
    assert again == billing
    assert Server.from_capture(ROOT / "tests" / "corpus" / "seed-invoice-server.json", alias="b").name == "b"


def test_assembly_results() -> None:
    servers = [Server.from_capture(p) for p in CORPUS]
    a = Assembler(budget=64, server_budgets={"basic-memory": 200}).assemble(servers)
    assert a.digest == hashlib.sha256(a.text.encode()).hexdigest()
    assert a.digest == Assembler(budget=64, server_budgets={"basic-memory": 200}).assemble(servers).digest
    by_name = {s.name: s for s in a.servers}
    assert by_name["basic-memory"].budget == 200
    for s in a.servers:
        if s.included:
            assert s.text in a.text
            assert s.tokens <= (s.budget or 0)
    trimmed = [s for s in a.servers if s.trimmed]
    assert trimmed and all(s.tokens_before > s.budget for s in trimmed if s.budget is not None)
    reasons = {r.reason for s in a.servers for r in s.removed}
    assert "budget" in reasons and "restates_tool" in reasons
    restated = next(r for s in a.servers for r in s.removed if r.reason == "restates_tool")
    assert restated.tool
    assert a.to_dict()["servers"][0]["name"] == a.servers[0].name
    assert re.fullmatch(r"Assembly\(servers=\[antv-mcp-server-chart, .*\], total_tokens=\d+, "
                        r"encoding='o200k_base', digest='[0-9a-f]{12}'…\)", repr(a))
    assert repr(a.servers[0]).startswith("ServerReport(name='antv-mcp-server-chart', instructions='absent'")
    assert repr(Assembler(budget=64, model="gpt-4o")) == "Assembler(budget=64, model='gpt-4o')"
    xml = Assembler(template="xml").assemble(servers[:3])
    assert xml.template == "xml" and xml.text.startswith("<mcp_servers>")


def test_pins_save_load_and_compare(tmp_path: Path) -> None:
    raw = capture(ROOT / "tests" / "corpus" / "seed-invoice-server.json")
    before = Server.from_initialize(raw["initialize"], raw["tools_list_pages"], alias="billing")
    lock = Lock()
    assert lock.check(before).state == "new"
    lock.pin(before)
    path = tmp_path / "mcp-preamble.lock"
    lock.save(path)
    loaded = Lock.load(path)
    assert loaded.keys() == ["billing"] and "billing" in loaded
    assert path.read_text() == loaded.to_json() == lock.to_json()
    assert loaded.check(before).state == "same"
    raw["initialize"]["result"]["instructions"] = "Always call get_invoice first."
    raw["tools_list_pages"][0]["result"]["tools"].pop()
    after = Server.from_initialize(raw["initialize"], raw["tools_list_pages"], alias="billing")
    check = loaded.check(after)
    assert check.state == "changed" and check.changed and check.instructions_changed
    assert check.tools_removed == ("get_invoice",)
    assert check.diff is not None and "+Always call get_invoice first." in check.diff
    # The pin decides what reaches the model with on_change = hold.
    held = Assembler(lock=loaded).assemble([after])
    assert held.servers[0].pin.state == "changed"
    assert loaded.unpin("billing") and loaded.keys() == []
    assert repr(loaded) == "Lock(keys=[])"


def test_lock_save_replaces_a_symlink_and_never_writes_through_it(tmp_path: Path) -> None:
    raw = capture(ROOT / "tests" / "corpus" / "seed-invoice-server.json")
    lock = Lock()
    lock.pin(Server.from_initialize(raw["initialize"], raw["tools_list_pages"], alias="billing"))
    outside = tmp_path / "outside.txt"
    outside.write_text("not a lock")
    path = tmp_path / "mcp-preamble.lock"
    path.symlink_to(outside)
    lock.save(path)
    assert outside.read_text() == "not a lock"
    assert not path.is_symlink() and Lock.load(path).keys() == ["billing"]
    # A dangling link is replaced too, and no temporary file is left behind.
    dangling = tmp_path / "dangling.lock"
    dangling.symlink_to(tmp_path / "missing" / "x")
    lock.save(dangling)
    assert not dangling.is_symlink() and not (tmp_path / "missing").exists()
    # `.pinning`: the writers' turn, as `mcp-preamble pin` leaves it.
    names = ["dangling.lock", "dangling.lock.pinning", "mcp-preamble.lock", "mcp-preamble.lock.pinning", "outside.txt"]
    assert sorted(p.name for p in tmp_path.iterdir()) == names
    # A 0600 lock stays 0600 when written again.
    path.write_text("{}")
    path.chmod(0o600)
    lock.save(path)
    assert path.stat().st_mode & 0o777 == 0o600 and Lock.load(path).keys() == ["billing"]
    # A folder that does not exist: the crate's io error, an OSError too.
    missing = tmp_path / "missing" / "x.lock"
    with pytest.raises(FileReadError) as caught:
        lock.save(missing)
    assert isinstance(caught.value, OSError) and caught.value.kind == "io"
    assert str(caught.value).startswith(f"cannot write file: {missing}.pinning: ")


def test_lint_findings() -> None:
    server = Server.from_initialize(
        {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "invoice-server", "version": "1.0.0"},
            "instructions": "Call list_periods first.\nThen call get_invoices with the id.",
        },
        [{"name": "list_periods", "description": "List billing periods.", "inputSchema": {}},
         {"name": "get_invoice", "description": "Get an invoice by id.", "inputSchema": {}}],
        alias="billing",
    )
    findings = lint([server])
    f = next(f for f in findings if f.code == "MCP003")
    assert isinstance(f, Finding)
    assert (f.severity, f.server, f.line, f.tool) == ("error", "billing", 2, "get_invoice")
    assert "get_invoices" in f.message and f.fix and f.explanation
    assert str(f).startswith("billing:2: error[MCP003]: ")
    assert repr(f).startswith("Finding(code='MCP003', severity='error', server='billing', line=2")
    assert lint([server], hosts=["claude-code", "chatgpt"]) == lint([server], hosts="claude-code,chatgpt")
    long = Server.from_initialize(
        {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"},
         "instructions": "Use the tools. " * 100},
        alias="long",
    )
    assert any(f.code == "MCP004" for f in lint([long], max_tokens=50))
    assert not any(f.code == "MCP004" for f in lint([long], max_tokens=5000))


def test_version_follows_the_crate() -> None:
    cargo = (ROOT / "Cargo.toml").read_text()
    workspace = cargo[cargo.index("[workspace.package]"):]
    version = re.search(r'^version = "([^"]+)"', workspace, re.M)
    assert version is not None
    assert mcp_preamble.__version__ == version.group(1)
    from importlib.metadata import version as dist_version

    assert dist_version("mcp-preamble") == mcp_preamble.__version__


def test_values_json_cannot_hold_as_they_are() -> None:
    """Models inside plain dicts, and pydantic values (URLs, datetimes) that a
    ``model_dump()`` without ``mode="json"`` may leave, are written as the SDK
    would send them; anything else is an InvalidJsonError."""
    import datetime

    from pydantic import AnyUrl

    result = types.InitializeResult(
        protocol_version="2025-11-25",
        capabilities=types.ServerCapabilities(tools=types.ToolsCapability()),
        server_info=types.Implementation(name="s", version="1"),
        instructions="Call ping first.",
    )
    tool = types.Tool(name="ping", description="Ping.", input_schema={"type": "object"})
    dumped = result.model_dump(by_alias=True)
    odd = {**dumped, "_meta": {"at": datetime.datetime(2026, 1, 1), "url": AnyUrl("https://example.com/x")}}
    plain = Server.from_initialize(odd, {"tools": [tool]}, alias="s")
    assert plain == Server.from_initialize(result, [tool], alias="s")
    assert plain.tool_names == ["ping"] and plain.instructions == "Call ping first."
    with pytest.raises(mcp_preamble.InvalidJsonError):
        Server.from_initialize({**dumped, "instructions": object()}, alias="s")


def init_server(name: str, instructions: str, alias: Optional[str] = None) -> Server:
    result = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}},
        "serverInfo": {"name": name, "version": "1"},
        "instructions": instructions,
    }
    return Server.from_initialize(result, [], alias=alias)


def test_diagnostic_codes_are_pinned() -> None:
    """The codes are a public format (the crate's ``CODES``): renaming one fails here."""
    assert get_args(mcp_preamble.ServerDiagnosticCode) == (
        "renamed",
        "blank_instructions",
        "tools_list_failed",
        "unnamed_tools",
        "limit_hit",
        "pin",
        "omitted",
        "duplicate_tools",
        "tool_name_over_cap",
        "unmatched_tool_rule",
        "skills_skipped",
    )
    assert get_args(mcp_preamble.ConfigDiagnosticCode) == ("unknown_alias",)


def test_diagnostics_are_typed_objects() -> None:
    """Each diagnostic is a Diagnostic: its code, its typed fields, and the
    crate's line as its message; the same object as in the JSON report."""
    billing = init_server("invoice-server", "Always call list_periods first.", alias="billing")
    blank = init_server("blank", "   ")
    a = Assembler(budget=256, server_budgets={"biling": 50}, lock=Lock()).assemble([billing, blank])
    (unknown,) = a.diagnostics
    assert unknown == Diagnostic(
        code="unknown_alias",
        message='budget for "biling": no server has this alias (did you mean "billing"?)',
        fields={"setting": "budget", "alias": "biling", "closest": "billing"},
    )
    assert str(unknown) == unknown.message and unknown["closest"] == "billing"
    by_name = {s.name: s for s in a.servers}
    blank_text, empty, pin = by_name["blank"].diagnostics
    assert (pin.code, pin["state"], pin["rendering"]) == ("pin", "new", "pending_review")
    assert pin.message == f"pin: {pin['summary']}; rendered as sent; pending review"
    assert blank_text == Diagnostic(
        code="blank_instructions",
        message="instructions are blank (3 characters of whitespace or invisible text); not rendered",
        fields={"chars": 3},
    )
    assert (empty.code, empty["reason"], str(empty)) == ("omitted", "empty", "omitted: no instructions and no tools")
    assert [d.code for d in by_name["billing"].diagnostics] == ["pin"]
    report = a.to_dict()
    assert report["format"] == 6
    assert report["diagnostics"] == [unknown.to_dict()]
    for s, json_server in zip(a.servers, report["servers"]):
        assert [d.to_dict() for d in s.diagnostics] == json_server["diagnostics"]


def test_every_corpus_diagnostic_is_an_object_with_a_known_code() -> None:
    servers = [Server.from_capture(p) for p in CORPUS]
    a = Assembler(budget=40, total_budget=400).assemble(servers)
    codes = set(get_args(mcp_preamble.ServerDiagnosticCode))
    seen: Set[str] = set()
    for s, json_server in zip(a.servers, a.to_dict()["servers"]):
        assert [d.to_dict() for d in s.diagnostics] == json_server["diagnostics"]
        for d in s.diagnostics:
            assert d.code in codes and d.message and list(d.to_dict())[0] == "code"
            seen.add(d.code)
    assert {"omitted", "tools_list_failed"} <= seen, seen
