"""mcp-preamble for Python: MCP servers' handshake instructions as one
budgeted, sanitized system-prompt section.

The core is the Rust crate ``mcp-preamble`` (compiled in, no dependencies):
the same inputs give the same bytes, token counts and removals as its CLI.

>>> from mcp_preamble import Assembler, Server
>>> billing = Server.from_initialize(
...     {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
...      "serverInfo": {"name": "invoice-server", "version": "1.0.0"},
...      "instructions": "Always call list_periods before get_invoice."},
...     [{"name": "list_periods", "description": "List billing periods.", "inputSchema": {}}],
...     alias="billing")
>>> assembly = Assembler(budget=256).assemble([billing])
>>> print(assembly.servers[0].text)
### billing
<BLANKLINE>
Always call list_periods before get_invoice.
<BLANKLINE>
Tools: `list_periods`
"""

from ._api import Assembler, Lock, Server, lint
from ._errors import (
    ConnectError,
    DriftError,
    FileReadError,
    InvalidConfigError,
    InvalidJsonError,
    InvalidMessageError,
    InvalidTokenizerError,
    InvalidTypeError,
    JsonRpcError,
    McpPreambleError,
    McpTimeoutError,
    RpcErrorInfo,
    ServerExitedError,
    TemplateError,
    UnknownEncodingError,
    UnknownModelError,
    UnknownTemplateError,
)
from ._native import VERSION as __version__
from ._reports import (
    Assembly,
    ConfigDiagnosticCode,
    Diagnostic,
    DiagnosticCode,
    Finding,
    InstructionsState,
    PinCheck,
    PinState,
    Removal,
    RemovalReason,
    ServerDiagnosticCode,
    ServerReport,
    Severity,
)
from .connect import connect_config
from .session import LiveSection, ServerState, StateChange, StateReason

__all__ = [
    "Assembler",
    "Assembly",
    "ConfigDiagnosticCode",
    "ConnectError",
    "Diagnostic",
    "DiagnosticCode",
    "DriftError",
    "FileReadError",
    "Finding",
    "InstructionsState",
    "InvalidConfigError",
    "InvalidJsonError",
    "InvalidMessageError",
    "InvalidTokenizerError",
    "InvalidTypeError",
    "JsonRpcError",
    "LiveSection",
    "Lock",
    "McpPreambleError",
    "McpTimeoutError",
    "PinCheck",
    "PinState",
    "Removal",
    "RemovalReason",
    "RpcErrorInfo",
    "Server",
    "ServerDiagnosticCode",
    "ServerExitedError",
    "ServerReport",
    "ServerState",
    "Severity",
    "StateChange",
    "StateReason",
    "TemplateError",
    "UnknownEncodingError",
    "UnknownModelError",
    "UnknownTemplateError",
    "__version__",
    "connect_config",
    "lint",
]
