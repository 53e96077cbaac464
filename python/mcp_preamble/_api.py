"""Servers, the assembler, the lint and pins: the Rust crate in Python's idioms."""

from __future__ import annotations

import json
import os
import time
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _native
from ._errors import InvalidConfigError, InvalidJsonError, InvalidTypeError
from ._reports import Assembly, Finding, PinCheck, _findings

PathLike = Union[str, "os.PathLike[str]"]


def _plain(value: Any) -> Any:
    """``value`` with the official SDK's pydantic models dumped as they go on
    the wire (``model_dump(by_alias=True, mode="json")``); dicts and lists as is."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(by_alias=True, mode="json")
    return value


def _jsonable(value: Any) -> Any:
    """What ``json`` cannot write itself: models inside plain dicts, and the
    pydantic values a ``model_dump()`` without ``mode="json"`` leaves (URLs…)."""
    if callable(getattr(value, "model_dump", None)):
        return _plain(value)
    try:
        import pydantic_core
    except ImportError:
        raise TypeError(f"{type(value).__name__} is not JSON serializable") from None
    try:
        return pydantic_core.to_jsonable_python(value)
    except pydantic_core.PydanticSerializationError as e:
        raise TypeError(str(e)) from None


def _json(value: Any, what: str) -> str:
    try:
        return json.dumps(_plain(value), default=_jsonable, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as e:
        detail = f"{what}: {e}"
        raise InvalidJsonError(f"invalid json: {detail}", detail=detail) from e


def _tools_json(tools: Any) -> str:
    """The tools as JSON for the crate, which reads every shape (a list of
    tools, one ``ListToolsResult`` or its JSON-RPC response, a list of
    pages, JSON text): here only the SDK's models are dumped, and other
    iterables listed."""
    plain = _plain(tools)
    if plain is not None and not isinstance(plain, (str, bytes, Mapping, list)):
        try:
            plain = list(plain)
        except TypeError:
            pass  # not iterable: the crate names its type
    return _json(plain, "tools")


class Server:
    """What a host knows about one MCP server: its handshake and its tools.

    Build one with :meth:`from_capture` (a capture or snapshot file),
    :meth:`from_initialize` / :meth:`from_discover` (what the official SDK
    gives, as pydantic models or plain dicts), or from a live
    ``ClientSession`` with :func:`mcp_preamble.session.server_of`.
    """

    __slots__ = ("_native",)

    def __init__(self, native: _native.NativeServer) -> None:
        self._native = native

    @classmethod
    def from_capture(cls, path: PathLike, alias: Optional[str] = None) -> Server:
        """A capture file (the ``tests/corpus/`` format) or a snapshot file
        (``mcp-preamble snapshot``). Without ``alias`` the file's alias, else
        its stem, as the CLI names it. A capture with both handshakes gives
        the ``server/discover`` one, and keeps the other for :func:`lint`."""
        return cls(_native.NativeServer.from_capture(os.fspath(path), alias))

    @classmethod
    def from_initialize(cls, result: Any, tools: Any = None, alias: Optional[str] = None) -> Server:
        """The ``initialize`` result (an ``InitializeResult``, its
        ``model_dump(by_alias=True)``, or the JSON-RPC response) and the tools
        (``list[Tool]``, a ``ListToolsResult``, a list of pages, or dicts)."""
        return cls._from(False, result, tools, alias)

    @classmethod
    def from_discover(cls, result: Any, tools: Any = None, alias: Optional[str] = None) -> Server:
        """The ``server/discover`` result (2026-07-28 revision); as :meth:`from_initialize`."""
        return cls._from(True, result, tools, alias)

    @classmethod
    def _from(cls, discover: bool, result: Any, tools: Any, alias: Optional[str]) -> Server:
        method = "server/discover" if discover else "initialize"
        era = "modern" if discover else "legacy"
        text = result if isinstance(result, str) else _json(result, method)
        return cls(_native.NativeServer.from_handshake(era, text, _tools_json(tools), alias))

    @classmethod
    def from_snapshot_json(cls, text: str) -> Server:
        """A snapshot file's text (:meth:`to_snapshot_json`)."""
        return cls(_native.NativeServer.from_snapshot_json(text))

    def to_snapshot_json(self, captured_ms: Optional[int] = None) -> str:
        """The snapshot file format of ``mcp-preamble snapshot`` (loads with
        :meth:`from_capture` and the CLI)."""
        stamp = int(time.time() * 1000) if captured_ms is None else captured_ms
        return self._native.snapshot_json(stamp)

    def with_alias(self, alias: str) -> Server:
        """The same server under another alias (the name the section shows)."""
        return Server(self._native.with_alias(alias))

    @property
    def alias(self) -> Optional[str]:
        """The host's name for the server, when it has one."""
        return self._native.alias

    @property
    def name(self) -> str:
        """The name the section shows: the alias, else ``serverInfo.name``."""
        return self._native.name

    @property
    def server_name(self) -> str:
        """``serverInfo.name`` as sent."""
        return self._native.server_name

    @property
    def version(self) -> str:
        """``serverInfo.version`` as sent."""
        return self._native.version

    @property
    def instructions(self) -> Optional[str]:
        """The instructions as sent (unsanitized), ``None`` when absent."""
        return self._native.instructions

    @property
    def instructions_state(self) -> str:
        """``"present"``, ``"blank"`` (nothing visible) or ``"absent"``."""
        return self._native.instructions_state

    @property
    def era(self) -> str:
        """``"legacy"`` (``initialize``) or ``"modern"`` (``server/discover``)."""
        return self._native.era

    @property
    def protocol_version(self) -> str:
        """The negotiated protocol version."""
        return self._native.protocol_version

    @property
    def tool_names(self) -> List[str]:
        """The tools' names as sent, in order."""
        return self._native.tool_names

    @property
    def other_eras(self) -> List[str]:
        """The eras of a capture's other handshake, which :func:`lint` compares
        with (``MCP015``); empty for servers not read from a capture with both."""
        return self._native.other_eras

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Server) and self._native == other._native

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"Server(name={self.name!r}, server_name={self.server_name!r}, version={self.version!r}, "
            f"era={self.era!r}, instructions={self.instructions_state!r}, tools={len(self.tool_names)})"
        )


def _natives(servers: Iterable[Server]) -> List[_native.NativeServer]:
    out = []
    for s in servers:
        if not isinstance(s, Server):
            raise TypeError(f"expected mcp_preamble.Server, got {type(s).__name__}")
        out.append(s._native)
    return out


class Lock:
    """A lock: each server's reviewed instructions and tools (``mcp-preamble pin``).

    ``Lock.load(path)`` / ``lock.save(path)`` read and write the lock file
    format of the CLI; ``lock.check(server)`` compares a server with its pin.
    """

    __slots__ = ("_native",)

    def __init__(self) -> None:
        self._native = _native.NativeLock()

    @classmethod
    def _wrap(cls, native: _native.NativeLock) -> Lock:
        lock = cls.__new__(cls)
        lock._native = native
        return lock

    @classmethod
    def load(cls, path: PathLike) -> Lock:
        """Reads a lock file."""
        return cls._wrap(_native.NativeLock.from_path(os.fspath(path)))

    @classmethod
    def from_json(cls, text: str, origin: str = "<lock>") -> Lock:
        """Parses a lock file's text; ``origin`` names it in errors."""
        return cls._wrap(_native.NativeLock.from_json(text, origin))

    def to_json(self) -> str:
        """The lock file's text (the same pins give the same bytes)."""
        return self._native.to_json()

    def save(self, path: PathLike) -> None:
        """Writes the lock file as ``mcp-preamble pin`` does (the crate's
        ``Lock::save``): one writer at a time (``<path>.pinning``), whole or
        not at all (a new temporary file beside ``path``, renamed into
        place); a symlink at ``path`` is replaced itself, never written
        through; an existing file keeps its permissions."""
        self._native.save(os.fspath(path))

    def pin(self, server: Server) -> None:
        """Pins the server as it is now (replacing its pin)."""
        self._native.pin(_natives([server])[0])

    def unpin(self, key: str) -> bool:
        """Removes a pin; whether there was one."""
        return self._native.unpin(key)

    def keys(self) -> List[str]:
        """The pinned servers' keys (alias, else server name)."""
        return self._native.keys()

    def check(self, server: Server) -> PinCheck:
        """How ``server`` compares with its pin: ``state`` and what changed."""
        return PinCheck._from_json(json.loads(self._native.check(_natives([server])[0])))

    def __contains__(self, key: object) -> bool:
        return key in self.keys()

    def __repr__(self) -> str:
        return f"Lock(keys={self.keys()!r})"


# The largest count a JavaScript number holds exactly: larger ones are
# refused in both packages (tests/data/assembler-options.json).
_MAX_COUNT = 2**53 - 1


def _json_type(value: Any) -> str:
    """``value``'s type as JSON names it (as the Node package says it);
    a non-integer number by its value."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "number"
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return "string"
    if isinstance(value, Mapping):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def _wrong_type(key: str, expected: str, value: Any) -> InvalidTypeError:
    detail = f"{key}: expected {expected}, got {_json_type(value)}"
    return InvalidTypeError(f"invalid configuration: {detail}", detail=detail)


def _count(key: str, value: Any) -> Optional[str]:
    """A count keyword as the text the CLI's flag would get (the crate checks
    it as it checks the flag: ``-1`` is refused there)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _wrong_type(key, "an integer", value)
    if value > _MAX_COUNT:
        detail = f"{key}: {value} is more than {_MAX_COUNT}"
        raise InvalidConfigError(f"invalid configuration: {detail}", detail=detail)
    return str(value)


def _text(key: str, value: Any) -> Optional[str]:
    if value is None or isinstance(value, str):
        return value
    raise _wrong_type(key, "a string", value)


def _path(key: str, value: Any) -> Optional[str]:
    """A path keyword: a ``str`` or an ``os.PathLike``."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        if isinstance(path, str):
            return path
    raise _wrong_type(key, "a path", value)


def _aliases(key: str, value: Any) -> List[str]:
    """``deferred``: one alias or several (the CLI's flag repeats)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (Mapping, bytes)) or not isinstance(value, Iterable):
        raise _wrong_type(key, "a string or a list of strings", value)
    return [_text(f"{key}[{i}]", a) or "" for i, a in enumerate(value)]


def _counts(key: str, value: Any) -> Dict[str, str]:
    """``server_budgets``: counts by alias."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _wrong_type(key, "an object of counts by alias", value)
    out: Dict[str, str] = {}
    for alias, n in value.items():
        name = _text(f"{key} alias", alias) or ""
        out[name] = _count(f"{key}[{json.dumps(name, ensure_ascii=False)}]", n) or ""
    return out


def _typed(key: str, value: Any, kind: str) -> Any:
    """A policy-only keyword of its JSON type (its values are the crate's to check)."""
    if value is None:
        return None
    if kind == "flag" and isinstance(value, bool):
        return value
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    if kind == "text" and isinstance(value, str):
        return value
    raise _wrong_type(key, {"flag": "a boolean", "number": "a number"}.get(kind, "a string"), value)


class Assembler:
    """Turns servers into one budgeted, sanitized system-prompt section.

    Every keyword is a setting of ``mcp-preamble preview`` and of the policy
    file's ``[defaults]``, under the policy key's name, checked as the CLI
    and the file check it (python/README.md has the table):

    - ``budget``, ``total_budget``: tokens per server block, and for the
      whole section (shared fairly); at least 1. ``server_budgets``: by alias.
    - ``template``: ``"markdown"``, ``"xml"`` or a template file.
    - ``model`` (``"gpt-4o"``, ``"claude-sonnet-4"``, ``"llama-3.1"`` with
      ``tokenizer``…), ``tokenizer`` (a Hugging Face ``tokenizer.json``),
      ``encoding`` (``"o200k_base"``, ``"cl100k_base"``): what tokens are
      counted in; ``model`` wins over ``encoding``, as in the CLI.
    - ``tool_names``: ``"claude-code"``, ``"vscode"``, ``"codex"``,
      ``"opencode"``, ``"plain"`` or a pattern like ``"{server}__{tool}"``.
    - ``deferred`` (aliases), ``defer_over`` (a number of tools): tools the
      host defers behind tool search.
    - ``target``: ``"section"`` or ``"namespace"`` (each block also as a
      namespace description, ``ServerReport.namespace``).
    - ``order`` (``"name"``, ``"insertion"``), ``dedup``, ``similarity``
      (0.0 to 1.0), ``list_tool_only_servers``, ``tool_descriptions``,
      ``shortening_note`` (a shortened block says so in one line; default on),
      ``on_change`` (``"accept"``, ``"hold"``, ``"drop"``, ``"fail"``).
    - ``lock``: pins (each report gets its pin state); ``policy``: a policy
      file, which the keywords override.

    An invalid value raises :class:`InvalidConfigError` (or the kind's own
    subclass: :class:`UnknownModelError`, :class:`InvalidTokenizerError`…)
    with the CLI's message. The same servers and settings give
    byte-identical sections.
    """

    __slots__ = ("_native", "_settings")

    def __init__(
        self,
        *,
        budget: Optional[int] = None,
        total_budget: Optional[int] = None,
        template: Optional[PathLike] = None,
        encoding: Optional[str] = None,
        model: Optional[str] = None,
        tokenizer: Optional[PathLike] = None,
        server_budgets: Optional[Mapping[str, int]] = None,
        tool_names: Optional[str] = None,
        deferred: Union[None, str, Iterable[str]] = None,
        defer_over: Optional[int] = None,
        target: Optional[str] = None,
        order: Optional[str] = None,
        dedup: Optional[bool] = None,
        similarity: Optional[float] = None,
        list_tool_only_servers: Optional[bool] = None,
        tool_descriptions: Optional[bool] = None,
        shortening_note: Optional[bool] = None,
        on_change: Optional[str] = None,
        lock: Optional[Lock] = None,
        policy: Optional[PathLike] = None,
    ) -> None:
        # The keys only the policy file has (no `preview` flag): read by the
        # file's own schema in the crate, so a value is refused with its message.
        policy_only = {
            "order": _typed("order", order, "text"),
            "on_change": _typed("on_change", on_change, "text"),
            "dedup": _typed("dedup", dedup, "flag"),
            "similarity": _typed("similarity", similarity, "number"),
            "list_tool_only_servers": _typed("list_tool_only_servers", list_tool_only_servers, "flag"),
            "tool_descriptions": _typed("tool_descriptions", tool_descriptions, "flag"),
            "shortening_note": _typed("shortening_note", shortening_note, "flag"),
        }
        keywords: Dict[str, Any] = {
            "policy": _path("policy", policy),
            "budget": _count("budget", budget),
            "total_budget": _count("total_budget", total_budget),
            "defer_over": _count("defer_over", defer_over),
            "server_budgets": _counts("server_budgets", server_budgets),
            "deferred": _aliases("deferred", deferred),
            "template": _path("template", template),
            "encoding": _text("encoding", encoding),
            "model": _text("model", model),
            "tokenizer": _path("tokenizer", tokenizer),
            "tool_names": _text("tool_names", tool_names),
            "target": _text("target", target),
            "policy_keys": _json({k: v for k, v in policy_only.items() if v is not None}, "settings"),
        }
        if lock is not None and not isinstance(lock, Lock):
            raise _wrong_type("lock", "a Lock", lock)
        self._native = _native.NativeAssembler(keywords, lock._native if lock is not None else None)
        shown = {**keywords, **policy_only, "server_budgets": dict(server_budgets or {}), "deferred": keywords["deferred"]}
        shown.update(budget=budget, total_budget=total_budget, defer_over=defer_over)
        shown.pop("policy_keys")
        self._settings = {k: v for k, v in shown.items() if v is not None and v != {} and v != []}

    @classmethod
    def from_policy(cls, path: PathLike, **overrides: Any) -> Assembler:
        """The assembler of a policy file (``mcp-preamble.toml``); keyword
        arguments override it as the CLI's flags override ``--policy``."""
        return cls(policy=path, **overrides)

    def assemble(self, servers: Iterable[Server]) -> Assembly:
        """The section of ``servers`` (in this order) and its report."""
        native = self._native.assemble(_natives(servers))
        return Assembly._from_native(native.report_json(), native.cli_json())

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._settings.items())
        return f"Assembler({args})"


def lint(
    servers: Iterable[Server],
    hosts: Union[None, str, Sequence[str]] = None,
    *,
    max_tokens: int = 400,
    encoding: Optional[str] = None,
) -> List[Finding]:
    """Lints each server's instructions and tool descriptions, as
    ``mcp-preamble lint`` does: the findings of every server, in order.

    ``hosts`` (``"all"``, a host name, or several) adds what each host's cut
    loses (``MCP010``); ``max_tokens`` is ``MCP004``'s limit.
    """
    host_list = hosts if hosts is None or isinstance(hosts, str) else ",".join(hosts)
    return _findings(_native.lint_json(_natives(servers), host_list, max_tokens, encoding))
