"""Every error of the crate arrives as a McpPreambleError subclass with its
kind, the crate's exact message, and its details."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any, Dict, List, Tuple, Type

import pytest

import mcp_preamble as mp
from mcp_preamble import Assembler, Lock, McpPreambleError, Server

from .conftest import ROOT

INIT = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "s", "version": "1"}}


def raised(kind: str, cls: Type[McpPreambleError], excinfo: pytest.ExceptionInfo[McpPreambleError]) -> McpPreambleError:
    err = excinfo.value
    assert isinstance(err, McpPreambleError)
    assert type(err) is cls
    assert err.kind == kind == cls.kind
    assert str(err) == err.message
    assert repr(err).startswith(f"{cls.__name__}(kind={kind!r}, message=")
    return err


def test_invalid_json(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(McpPreambleError) as e:
        Server.from_capture(bad)
    err = raised("invalid_json", mp.InvalidJsonError, e)
    assert str(err).startswith("invalid json: ")
    # A value JSON cannot hold never reaches the crate.
    with pytest.raises(mp.InvalidJsonError) as e2:
        Server.from_initialize({**INIT, "instructions": float("nan")})
    assert e2.value.kind == "invalid_json"


def test_invalid_message() -> None:
    with pytest.raises(McpPreambleError) as e:
        Server.from_initialize({"capabilities": {}}, alias="a")
    err = raised("invalid_message", mp.InvalidMessageError, e)
    assert str(err) == "invalid message: initialize result has no protocolVersion"


def test_rpc_error_keeps_method_code_and_message() -> None:
    with pytest.raises(McpPreambleError) as e:
        Server.from_discover({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}})
    err = raised("rpc_error", mp.JsonRpcError, e)
    assert str(err) == "json-rpc error response: server/discover failed with -32601: Method not found"
    assert err.rpc == mp.RpcErrorInfo(method="server/discover", code=-32601, message="Method not found")


def test_io(tmp_path: Path) -> None:
    with pytest.raises(McpPreambleError) as e:
        Server.from_capture(tmp_path / "missing.json")
    err = raised("io", mp.FileReadError, e)
    assert str(err).startswith("cannot read file: ")
    assert "missing.json" in str(err)


def test_template_error_names_template_and_line(tmp_path: Path) -> None:
    template = tmp_path / "mine.jinja"
    template.write_text(
        "{% macro server(s) %}{{ s.name }}\n{{ s.nope.x }}{% endmacro %}\n{% for b in blocks %}{{ b }}{% endfor %}\n"
    )
    assembler = Assembler(template=template)
    with pytest.raises(McpPreambleError) as e:
        assembler.assemble([Server.from_initialize({**INIT, "instructions": "Hi."}, alias="a")])
    err = raised("template", mp.TemplateError, e)
    assert err.template == "mine.jinja"
    assert err.line == 2


def test_unknown_template_and_encoding() -> None:
    with pytest.raises(McpPreambleError) as e:
        Assembler(template="nope")
    err = raised("unknown_template", mp.UnknownTemplateError, e)
    assert str(err) == 'unknown template: "nope" (built-in templates: markdown, xml)'
    with pytest.raises(McpPreambleError) as e2:
        Assembler(encoding="no-such-encoding")
    raised("unknown_encoding", mp.UnknownEncodingError, e2)
    with pytest.raises(McpPreambleError) as e3:
        Assembler(model="no-such-model")
    raised("unknown_model", mp.UnknownModelError, e3)


def test_invalid_config_names_file_and_line(tmp_path: Path) -> None:
    policy = tmp_path / "mcp-preamble.toml"
    policy.write_text("version = 1\n[defaults]\nbudgett = 3\n")
    with pytest.raises(McpPreambleError) as e:
        Assembler.from_policy(policy)
    err = raised("invalid_config", mp.InvalidConfigError, e)
    assert str(err) == f'invalid configuration: {policy}:3:1: unknown key "budgett" in [defaults] (did you mean "budget"?)'
    with pytest.raises(mp.InvalidConfigError):
        Lock.from_json('{"version": 99}', "x.lock")


def test_type_errors_are_python_type_errors() -> None:
    with pytest.raises(TypeError):
        Assembler().assemble(["not a server"])  # type: ignore[list-item]
    with pytest.raises(TypeError) as e:
        Assembler(budget="many")  # type: ignore[arg-type]
    assert isinstance(e.value, mp.InvalidConfigError) and e.value.kind == "invalid_config"
    assert str(e.value) == "invalid configuration: budget: expected an integer, got string"


# Invalid keywords and the `preview` flags of the same names: (keywords, flags, kind).
# (Counts past 2**53 - 1, which the flags take up to the platform's word, and
# keywords of the wrong type are the packages' own errors: tests/test_options.py.)
SAME_AS_THE_CLI: List[Tuple[Dict[str, Any], List[str], str]] = [
    ({"budget": -1}, ["--budget=-1"], "invalid_config"),
    ({"total_budget": -5}, ["--total-budget=-5"], "invalid_config"),
    ({"server_budgets": {"x": -1}}, ["--server-budget=x=-1"], "invalid_config"),
    ({"defer_over": -1}, ["--defer-over=-1"], "invalid_config"),
    ({"budget": 0}, ["--budget", "0"], "invalid_config"),
    ({"total_budget": 0}, ["--total-budget", "0"], "invalid_config"),
    ({"server_budgets": {"seed-invoice-server": 0}}, ["--server-budget", "seed-invoice-server=0"], "invalid_config"),
    ({"tool_names": "no-such-host"}, ["--tool-names", "no-such-host"], "invalid_config"),
    ({"model": "no-such-model"}, ["--model", "no-such-model"], "unknown_model"),
    ({"model": "llama-3.1"}, ["--model", "llama-3.1"], "invalid_config"),
    ({"encoding": "no-such-encoding"}, ["--encoding", "no-such-encoding"], "unknown_encoding"),
    ({"template": "no-such-template"}, ["--template", "no-such-template"], "unknown_template"),
    ({"tokenizer": "no-such-tokenizer.json"}, ["--tokenizer", "no-such-tokenizer.json"], "io"),
]


def cli_message(cli: Path, flags: List[str]) -> Tuple[str, bool]:
    """The CLI's error for `flags` (exit 2) and whether clap's value parser gave it."""
    capture = str(ROOT / "tests" / "corpus" / "seed-invoice-server.json")
    out = subprocess.run([str(cli), "preview", capture, *flags], capture_output=True, text=True, check=False)
    assert out.returncode == 2, (flags, out.stderr)
    first = out.stderr.splitlines()[0]
    if first.startswith("error: invalid value"):
        # clap's line: `error: invalid value 'V' for '--flag <N>': MESSAGE` (or the values on the next lines).
        return (first.split("': ", 1)[1] if "': " in first else out.stderr), True
    assert first.startswith("mcp-preamble: "), first
    return first[len("mcp-preamble: ") :], False


@pytest.mark.parametrize("case", range(len(SAME_AS_THE_CLI)))
def test_invalid_keywords_fail_with_the_clis_message(cli: Path, case: int) -> None:
    kw, flags, kind = SAME_AS_THE_CLI[case]
    message, by_parser = cli_message(cli, flags)
    with pytest.raises(McpPreambleError) as e:
        Assembler(**kw).assemble([Server.from_capture(ROOT / "tests" / "corpus" / "seed-invoice-server.json")])
    assert e.value.kind == kind, str(e.value)
    if by_parser:
        # The flag's value parser: its words, after the keyword's name when the crate's error has none.
        assert str(e.value) == message or str(e.value).endswith(f": {message}"), (str(e.value), message)
    else:
        assert str(e.value) == message


def test_a_budget_of_zero_is_refused_in_the_policy_file_too(cli: Path, tmp_path: Path) -> None:
    policy = tmp_path / "mcp-preamble.toml"
    for body, where in [
        ("[defaults]\nbudget = 0\n", "[defaults] budget"),
        ("[servers.billing]\nbudget = 0\n", "[servers.billing] budget"),
    ]:
        policy.write_text(f"version = 1\n{body}")
        message, _ = cli_message(cli, ["--policy", str(policy)])
        with pytest.raises(mp.InvalidConfigError) as e:
            Assembler.from_policy(policy)
        assert str(e.value) == message
        assert message == f"invalid configuration: {policy}: {where} = 0 leaves no room for any text: give 1 or more tokens"


@pytest.mark.parametrize(
    "key, value, toml",
    [
        ("order", "sideways", '"sideways"'),
        ("on_change", "ignore", '"ignore"'),
        ("similarity", 1.5, "1.5"),
    ],
)
def test_policy_keys_are_checked_as_the_policy_file_checks_them(
    cli: Path, tmp_path: Path, key: str, value: Any, toml: str
) -> None:
    policy = tmp_path / "mcp-preamble.toml"
    policy.write_text(f"version = 1\n[defaults]\n{key} = {toml}\n")
    message, _ = cli_message(cli, ["--policy", str(policy)])
    with pytest.raises(mp.InvalidConfigError) as e:
        Assembler(**{key: value})
    # The schema's own words: the file's message has them after its place.
    words = str(e.value).split(f"{key}: ", 1)[1]
    assert words in message, (str(e.value), message)


def test_target_names_its_two_values(cli: Path) -> None:
    message, _ = cli_message(cli, ["--target", "sideways"])
    with pytest.raises(mp.InvalidConfigError) as e:
        Assembler(target="sideways")
    assert str(e.value) == 'invalid configuration: target: "sideways" is not "section" or "namespace"'
    assert "section" in message and "namespace" in message


def test_every_kind_has_its_class() -> None:
    kinds = {cls.kind for cls in vars(mp).values() if isinstance(cls, type) and issubclass(cls, McpPreambleError)}
    assert {"unknown_model", "invalid_tokenizer", "invalid_config", "unknown_encoding"} <= kinds
