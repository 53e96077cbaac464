"""The results: plain frozen dataclasses read from the Rust crate's JSON report."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Mapping, Optional, Tuple, Union

# The crate's enums as they appear in its JSON (new values may be added).
RemovalReason = Literal["restates_tool", "repeated", "same_as_server", "budget", "policy"]
PinState = Literal["unpinned", "new", "same", "changed"]
InstructionsState = Literal["present", "blank", "absent"]
Severity = Literal["note", "warning", "error"]
# The diagnostics' codes: stable, never renamed (the crate's `ServerDiagnostic::CODES`
# and `ConfigDiagnostic::CODES`).
ServerDiagnosticCode = Literal[
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
]
ConfigDiagnosticCode = Literal["unknown_alias"]
DiagnosticCode = Union[ServerDiagnosticCode, ConfigDiagnosticCode]


@dataclass(frozen=True)
class Diagnostic:
    """One thing a report says, typed: a stable ``code``, its ``fields``, and
    ``message``, the line for people (``str(d)``), which the crate derives from
    the fields. Match on ``code`` and the fields, never on the message.

    ``fields`` by code (``d["chars"]`` reads one):

    - ``"renamed"``: ``original``, ``shown`` (another server has the name)
    - ``"blank_instructions"``: ``chars``
    - ``"tools_list_failed"``: ``error``, ``{"code": int, "message": str}``
    - ``"unnamed_tools"``: ``count``
    - ``"limit_hit"``: ``limit``, ``allowed``, ``sent``, ``count``
    - ``"pin"``: ``state`` (``"new"``/``"changed"``), ``summary``, ``rendering``
      (``"accepted"``, ``"pending_review"``, ``"held"``, ``"nothing_to_hold"``, ``"dropped"``)
    - ``"omitted"``: ``reason`` (``"excluded"``, ``"empty"``, ``"tool_only"``,
      ``"over_budget"`` with ``budget``, ``"over_total"``, ``"render_fuel"``)
    - ``"duplicate_tools"``: ``count``, ``names`` (tools listed under an earlier
      tool's name; only the first is listed)
    - ``"tool_name_over_cap"``: ``tool``, ``name``, ``chars``, ``cap`` (a host tool name the
      model API rejects)
    - ``"unmatched_tool_rule"``: ``rule`` (``"allow"``, ``"deny"``, ``"override"``), ``pattern``,
      and ``closest`` when a listed tool is close
    - ``"skills_skipped"``: ``count``, ``reasons`` (skills of ``skills/list`` not listed, and why)
    - ``"unknown_alias"`` (the assembly's, about the configuration): ``setting``
      (``"policy"``, ``"budget"``, ``"visibility"``, ``"tool_visibility"``),
      ``alias``, and ``closest`` when an alias is close
    """

    code: DiagnosticCode
    message: str
    fields: Mapping[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.fields[key]

    def __str__(self) -> str:
        return self.message

    def to_dict(self) -> Dict[str, Any]:
        """The object as in the JSON report: ``code``, the fields, ``message``."""
        return {"code": self.code, **self.fields, "message": self.message}

    @classmethod
    def _from_json(cls, d: Mapping[str, Any]) -> Diagnostic:
        fields = {k: v for k, v in d.items() if k not in ("code", "message")}
        return cls(code=d["code"], message=d["message"], fields=fields)


@dataclass(frozen=True)
class Removal:
    """One unit removed from a server's instructions, with its typed reason.

    ``reason`` is ``"restates_tool"`` (``tool`` names it), ``"repeated"``,
    ``"same_as_server"`` (``server`` names it), ``"budget"`` or ``"policy"``.
    """

    text: str
    reason: RemovalReason
    tool: Optional[str] = None
    server: Optional[str] = None

    @classmethod
    def _from_json(cls, d: Mapping[str, Any]) -> Removal:
        return cls(text=d["text"], reason=d["reason"], tool=d.get("tool"), server=d.get("server"))


@dataclass(frozen=True)
class PinCheck:
    """How a server compares with its pin in a lock.

    ``state`` is ``"unpinned"`` (no lock), ``"new"``, ``"same"`` or
    ``"changed"``; ``diff`` is a unified diff of the instructions when they changed;
    ``skills_added``, ``skills_removed`` and ``skills_changed`` name skills by URI.
    """

    state: PinState
    instructions_changed: bool = False
    invisible_only: bool = False
    tools_added: Tuple[str, ...] = ()
    tools_removed: Tuple[str, ...] = ()
    tools_redescribed: Tuple[str, ...] = ()
    cut_changed: bool = False
    sha256: Optional[str] = None
    on_change: Optional[str] = None
    diff: Optional[str] = None
    skills_added: Tuple[str, ...] = ()
    skills_removed: Tuple[str, ...] = ()
    skills_changed: Tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        """Whether the server differs from its pin."""
        return self.state == "changed"

    @classmethod
    def _from_json(cls, d: Mapping[str, Any]) -> PinCheck:
        return cls(
            state=d["state"],
            instructions_changed=d.get("instructions_changed", False),
            invisible_only=d.get("invisible_only", False),
            tools_added=tuple(d.get("tools_added", ())),
            tools_removed=tuple(d.get("tools_removed", ())),
            tools_redescribed=tuple(d.get("tools_redescribed", ())),
            cut_changed=d.get("cut_changed", False),
            sha256=d.get("sha256"),
            on_change=d.get("on_change"),
            diff=d.get("diff"),
            skills_added=tuple(d.get("skills_added", ())),
            skills_removed=tuple(d.get("skills_removed", ())),
            skills_changed=tuple(d.get("skills_changed", ())),
        )


@dataclass(frozen=True)
class ServerReport:
    """One server's part of an assembly: its block, counts and removals.

    ``text`` is exactly the server's block in the section; ``tokens_before``
    and ``tokens`` count it before and after trimming (in the assembly's
    encoding); ``instructions`` is ``"present"``, ``"blank"`` or ``"absent"``;
    ``tools`` is how many tools the server has; ``diagnostics`` are typed
    :class:`Diagnostic` objects.
    """

    name: str
    alias: Optional[str]
    server_name: str
    version: str
    era: str
    protocol_version: str
    instructions: InstructionsState
    tools: int
    included: bool
    text: str
    span: Optional[Tuple[int, int]]
    budget: Optional[int]
    tokens_before: int
    tokens: int
    removed: Tuple[Removal, ...]
    truncated: bool
    pin: PinCheck
    diagnostics: Tuple[Diagnostic, ...] = ()
    hidden_characters: Mapping[str, int] = field(default_factory=dict)
    tool_tokens: Optional[int] = None
    policy: Optional[Mapping[str, Any]] = None
    deferred: Optional[Mapping[str, Any]] = None
    limits: Tuple[Mapping[str, Any], ...] = ()
    namespace: Optional[Mapping[str, Any]] = None
    """With ``Assembler(target="namespace")``: the block as a namespace
    description (``text``, ``chars``, ``max_chars``, ``units_left_out``)."""

    @property
    def trimmed(self) -> bool:
        """Whether anything was cut to fit the budget."""
        return self.truncated or any(r.reason == "budget" for r in self.removed)

    def __repr__(self) -> str:
        return (
            f"ServerReport(name={self.name!r}, instructions={self.instructions!r}, "
            f"tools={self.tools}, tokens={self.tokens_before}->{self.tokens}, "
            f"budget={self.budget}, removed={len(self.removed)}, included={self.included})"
        )

    @classmethod
    def _from_json(cls, d: Mapping[str, Any]) -> ServerReport:
        span = d.get("span")
        return cls(
            name=d["name"],
            alias=d.get("alias"),
            server_name=d["server_name"],
            version=d["version"],
            era=d["era"],
            protocol_version=d["protocol_version"],
            instructions=d["instructions"],
            tools=d["tools"],
            included=d["included"],
            text=d["text"],
            span=(span[0], span[1]) if span is not None else None,
            budget=d.get("budget"),
            tokens_before=d["tokens_before"],
            tokens=d["tokens"],
            removed=tuple(Removal._from_json(r) for r in d.get("removed", ())),
            truncated=d.get("truncated", False),
            pin=PinCheck._from_json(d.get("pin") or {"state": "unpinned"}),
            diagnostics=tuple(Diagnostic._from_json(x) for x in d.get("diagnostics", ())),
            hidden_characters=dict(d.get("hidden_characters") or {}),
            tool_tokens=d.get("tool_tokens"),
            policy=d.get("policy"),
            deferred=d.get("deferred"),
            limits=tuple(d.get("limits", ())),
            namespace=d.get("namespace"),
        )


@dataclass(frozen=True, repr=False)
class Assembly:
    """An assembled section and its report.

    ``text`` goes into the system prompt; ``digest`` is the SHA-256 of it
    (hex), stable across processes, so a host can tell when the prompt's
    bytes (and its cache) change. ``servers`` has one report per input
    server, in section order; ``diagnostics`` are the configuration's
    (:class:`Diagnostic`, ``code`` ``"unknown_alias"``).
    """

    text: str
    digest: str
    total_tokens: int
    encoding: str
    template: str
    servers: Tuple[ServerReport, ...]
    diagnostics: Tuple[Diagnostic, ...]
    _cli_json: str = field(compare=False)
    counting: Mapping[str, Any] = field(default_factory=dict)
    """What counted the tokens: ``counter`` (the ``encoding``), ``exact``
    (``False`` for an estimate such as ``model="claude-sonnet-4"``) and the
    ``estimate``'s factors."""

    def to_json(self) -> str:
        """The report, byte for byte what ``mcp-preamble preview --json`` prints
        for the same capture files and settings (``connections`` is empty: no
        server was connected here)."""
        return self._cli_json

    def to_dict(self) -> Dict[str, Any]:
        """The report as a dict (the ``assembly`` object of :meth:`to_json`)."""
        report: Dict[str, Any] = json.loads(self._cli_json)["assembly"]
        return report

    def __repr__(self) -> str:
        names = ", ".join(s.name for s in self.servers)
        return (
            f"Assembly(servers=[{names}], total_tokens={self.total_tokens}, "
            f"encoding={self.encoding!r}, digest={self.digest[:12]!r}…)"
        )

    @classmethod
    def _from_native(cls, report_json: str, cli_json: str) -> Assembly:
        d = json.loads(report_json)
        return cls(
            text=d["text"],
            digest=hashlib.sha256(d["text"].encode("utf-8")).hexdigest(),
            total_tokens=d["total_tokens"],
            encoding=d["encoding"],
            template=d["template"],
            servers=tuple(ServerReport._from_json(s) for s in d["servers"]),
            diagnostics=tuple(Diagnostic._from_json(x) for x in d.get("diagnostics", ())),
            _cli_json=cli_json,
            counting=d["counting"],
        )


@dataclass(frozen=True)
class Finding:
    """One lint finding: a stable ``code`` (``"MCP003"``), a ``severity``
    (``"note"``, ``"warning"`` or ``"error"``), a lowercase ``message``, and
    the 1-based ``line`` in the sanitized instructions when it is about one."""

    code: str
    severity: Severity
    message: str
    line: Optional[int]
    server: str
    excerpt: Optional[str] = None
    tool: Optional[str] = None
    explanation: str = ""
    fix: str = ""

    def __str__(self) -> str:
        where = self.server if self.line is None else f"{self.server}:{self.line}"
        return f"{where}: {self.severity}[{self.code}]: {self.message}"

    def __repr__(self) -> str:
        return (
            f"Finding(code={self.code!r}, severity={self.severity!r}, server={self.server!r}, "
            f"line={self.line!r}, message={self.message!r})"
        )

    @classmethod
    def _from_json(cls, d: Mapping[str, Any]) -> Finding:
        return cls(
            code=d["code"],
            severity=d["severity"],
            message=d["message"],
            line=d.get("line"),
            server=d["server"],
            excerpt=d.get("excerpt"),
            tool=d.get("tool"),
            explanation=d.get("explanation", ""),
            fix=d.get("fix", ""),
        )


def _findings(lint_json: str) -> List[Finding]:
    return [Finding._from_json(f) for server in json.loads(lint_json) for f in server["findings"]]
