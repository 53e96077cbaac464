"""The package's exceptions: one base, ``McpPreambleError``, and a subclass per error kind."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple


@dataclass(frozen=True)
class RpcErrorInfo:
    """A JSON-RPC error a server answered instead of a result."""

    method: str
    code: int
    message: str


class McpPreambleError(Exception):
    """Every error of the package.

    ``kind`` is the Rust crate's ``ErrorKind`` as a snake_case string
    (``"invalid_json"``, ``"invalid_message"``, ``"rpc_error"``, ``"io"``,
    ``"template"``, ``"unknown_template"``, ``"unknown_encoding"``,
    ``"unknown_model"``, ``"invalid_tokenizer"``, ``"invalid_config"``, ``"connect"``, ``"timeout"``, ``"drift"``);
    ``str(exc)`` is the crate's message, exactly.
    """

    kind: str = "other"

    def __init__(
        self,
        message: str,
        *,
        detail: Optional[str] = None,
        line: Optional[int] = None,
        template: Optional[str] = None,
        rpc: Optional[RpcErrorInfo] = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.detail = message if detail is None else detail
        self.line = line
        self.template = template
        self.rpc = rpc

    def __repr__(self) -> str:
        extra = ""
        if self.line is not None:
            extra += f", line={self.line}"
        if self.template is not None:
            extra += f", template={self.template!r}"
        if self.rpc is not None:
            extra += f", rpc={self.rpc!r}"
        return f"{type(self).__name__}(kind={self.kind!r}, message={self.message!r}{extra})"


class InvalidJsonError(McpPreambleError):
    """The input was not valid JSON."""

    kind = "invalid_json"


class InvalidMessageError(McpPreambleError):
    """The JSON was valid but not the shape the protocol defines."""

    kind = "invalid_message"


class JsonRpcError(McpPreambleError):
    """The server answered a JSON-RPC error instead of a result (see ``rpc``)."""

    kind = "rpc_error"


class FileReadError(McpPreambleError, OSError):
    """A file could not be read, or written (``Lock.save``: ``cannot write
    file: …``); an ``OSError`` too, as ``Lock.save`` raised before the crate
    wrote lock files."""

    kind = "io"


class TemplateError(McpPreambleError):
    """A template failed to compile or render (``template`` and ``line`` say where)."""

    kind = "template"


class UnknownTemplateError(McpPreambleError):
    """No built-in template has that name."""

    kind = "unknown_template"


class UnknownEncodingError(McpPreambleError):
    """No tokenizer encoding or model has that name."""

    kind = "unknown_encoding"


class UnknownModelError(McpPreambleError):
    """No model of the model table has that name (``model=``)."""

    kind = "unknown_model"


class InvalidTokenizerError(McpPreambleError):
    """A ``tokenizer.json`` could not be read or loaded (``tokenizer=``)."""

    kind = "invalid_tokenizer"


class InvalidConfigError(McpPreambleError):
    """A configuration value or file (policy, lock, MCP config) is invalid,
    or an ``Assembler`` keyword is: a budget that is not a whole number of
    tokens of at least 1, an unknown ``tool_names`` scheme, ``order``…"""

    kind = "invalid_config"


class InvalidTypeError(InvalidConfigError, TypeError):
    """A keyword of the wrong Python type (``budget="5"``): both an
    :class:`InvalidConfigError` and a ``TypeError``."""


class ConnectError(McpPreambleError):
    """A live server could not be started or did not complete its handshake."""

    kind = "connect"


class ServerExitedError(ConnectError):
    """A live server's connection closed under the SDK (the server exited,
    was killed, or its transport ended), during its handshake or a request:
    raised instead of the SDK's bare ``ExceptionGroup``, which is its
    ``__cause__``."""


class McpTimeoutError(McpPreambleError):
    """A live server did not answer in time."""

    kind = "timeout"


class DriftError(McpPreambleError):
    """A server differs from its pin and its ``on_change`` is ``fail``."""

    kind = "drift"


_BY_KIND = {
    cls.kind: cls
    for cls in (
        InvalidJsonError,
        InvalidMessageError,
        JsonRpcError,
        FileReadError,
        TemplateError,
        UnknownTemplateError,
        UnknownEncodingError,
        UnknownModelError,
        InvalidTokenizerError,
        InvalidConfigError,
        ConnectError,
        McpTimeoutError,
        DriftError,
    )
}


def _from_native(
    kind: str,
    message: str,
    detail: str,
    line: Optional[int],
    template: Optional[str],
    rpc: Optional[Tuple[str, int, str]],
) -> McpPreambleError:
    """The exception for an error of the Rust crate (called by ``_native``)."""
    cls = _BY_KIND.get(kind, McpPreambleError)
    info = RpcErrorInfo(*rpc) if rpc is not None else None
    return cls(message, detail=detail, line=line, template=template, rpc=info)
