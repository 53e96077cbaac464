"""Every error of the crate arrives as a McpPreambleError subclass with its
kind, the crate's exact message, and its details."""

from __future__ import annotations

from pathlib import Path
from typing import Type

import pytest

import mcp_preamble as mp
from mcp_preamble import Assembler, Lock, McpPreambleError, Server

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
        Assembler(model="no-such-model")
    raised("unknown_encoding", mp.UnknownEncodingError, e2)


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
    with pytest.raises(TypeError):
        Assembler(budget="many")  # type: ignore[arg-type]
