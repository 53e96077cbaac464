"""Every setting of the CLI's `preview` and of the policy file is reachable
from Python under the same name: the flags are read from the CLI's own
`--help`, the policy keys from the crate's schema, and python/README.md's
table says where each flag went (this checks that it is there)."""

from __future__ import annotations

import dataclasses
import inspect
import re
import subprocess
from pathlib import Path
from typing import Any, Dict, List, Tuple

import mcp_preamble as mp
from mcp_preamble import Assembler, _native

from .conftest import ROOT

README = ROOT / "python" / "README.md"


def preview_flags(cli: Path) -> List[str]:
    """The long flags `mcp-preamble preview --help` lists (not --help itself)."""
    out = subprocess.run([str(cli), "preview", "--help"], capture_output=True, check=True, text=True).stdout
    flags = re.findall(r"^\s+(?:-\w, )?(--[a-z][a-z-]*)", out, flags=re.M)
    assert "--budget" in flags and "--tokenizer" in flags, out
    return sorted(set(flags) - {"--help"})


def table() -> Dict[str, str]:
    """python/README.md's flag table: `--flag` -> what Python has for it."""
    text = README.read_text()
    section = text.split("## Every setting of the CLI", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `(--[a-z-]+|FILES)` \| (.+?) \|$", section, flags=re.M)
    assert len(rows) > 20, "the table was not found"
    return dict(rows)


def keywords(obj: Any) -> List[str]:
    params = inspect.signature(obj).parameters.values()
    return [p.name for p in params if p.name != "self" and p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]


def resolve(name: str) -> Any:
    """`Assembler.from_policy`, `ServerReport.trimmed` (dataclass fields too)."""
    obj: Any = mp
    for part in name.split("."):
        if dataclasses.is_dataclass(obj) and part in {f.name for f in dataclasses.fields(obj)}:
            return None
        obj = getattr(obj, part)
    return obj


def calls(python: str) -> List[Tuple[str, str]]:
    """`Assembler(budget=…)` -> [("Assembler", "budget")]; `Assembly.to_json()`
    and `ServerReport.trimmed` -> [(name, "")]."""
    out: List[Tuple[str, str]] = []
    for callee, args in re.findall(r"`([A-Za-z_][\w.]*)\(([^`]*)\)`", python):
        kws = re.findall(r"(\w+)=", args)
        out += [(callee, k) for k in kws] or [(callee, "")]
    out += [(name, "") for name in re.findall(r"`([A-Z]\w*\.\w+)`", python)]
    return out


def test_every_preview_flag_has_its_python_keyword(cli: Path) -> None:
    flags = preview_flags(cli)
    rows = table()
    assert sorted(f for f in rows if f.startswith("--")) == flags, "python/README.md's table and `preview --help` differ"
    client_fields = {f.name for f in dataclasses.fields(__import__("mcp").Client)}
    for flag, python in rows.items():
        if python.startswith("CLI only: "):
            # A flag the package cannot have names the CLI command that has it.
            named = re.match(r"CLI only: `mcp-preamble (\w+) (--[a-z-]+)`", python)
            assert named, f"{flag}: {python!r} names no CLI command"
            command, option = named.groups()
            out = subprocess.run([str(cli), command, "--help"], capture_output=True, check=True, text=True).stdout
            assert re.search(rf"^\s+{option}\b", out, flags=re.M), f"{flag}: `{command} --help` has no {option}"
            continue
        found = calls(python)
        assert found, f"{flag}: no Python name in {python!r}"
        for callee, kw in found:
            obj = resolve(callee)
            if not kw:
                continue
            params = keywords(obj)
            if callee == "connect_config" and kw not in params:
                assert kw in client_fields, f"{flag}: {kw} is neither connect_config's nor mcp.Client's"
            else:
                assert kw in params, f"{flag}: {callee} has no keyword {kw}"
        # Settings of the assembly keep the flag's name.
        for callee, kw in found:
            if callee == "Assembler" and kw:
                name = flag[2:].replace("-", "_")
                assert kw in (name, name + "s"), f"{flag} is {kw}"


def test_every_policy_key_is_a_keyword() -> None:
    names = keywords(Assembler.__init__)
    keys = _native.policy_keys()
    assert "budget" in keys and "tool_names" in keys
    assert sorted(set(keys) - set(names)) == []


def test_keywords_are_what_the_cli_and_the_policy_file_take(cli: Path) -> None:
    """Each keyword that is no policy key is a preview flag (or a file the CLI reads)."""
    flags = {f[2:].replace("-", "_") for f in preview_flags(cli)}
    keys = set(_native.policy_keys())
    for name in keywords(Assembler.__init__):
        assert name in keys or name in flags or name[:-1] in flags, name
