"""Every server of an MCP client config, connected with the official SDK and
followed by one :class:`~mcp_preamble.LiveSection`.

::

    async with connect_config("mcp.json", Assembler(budget=256)) as live:
        section = await live.section()             # before each model request
        await live.sessions["billing"].call_tool("list_periods", {})

The config is read by the crate, as ``mcp-preamble preview --config`` reads
it: Claude Desktop / Cursor ``{"mcpServers": …}``, VS Code ``{"servers":
…}``, stdio entries (``command``, ``args``, ``env``, ``cwd``) and ``url``
entries (Streamable HTTP, with ``headers``), VS Code variables expanded.
"""

from __future__ import annotations

import asyncio
import json
import os
import tempfile
from contextlib import asynccontextmanager
from typing import IO, Any, AsyncIterator, Awaitable, Dict, List, Union

from . import _native
from ._api import Assembler, PathLike
from ._errors import ConnectError, McpPreambleError, McpTimeoutError, ServerExitedError
from .session import LiveSection

# The CLI's defaults: `--timeout 30`, 8 servers started at a time.
DEFAULT_TIMEOUT = 30.0
DEFAULT_CONCURRENCY = 8


def _stderr_tail(log: IO[str]) -> str:
    """The last line a stdio server wrote to stderr, if any."""
    try:
        log.seek(0)
        lines = [line.strip() for line in log.read().splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    return lines[-1] if lines else ""


def _transport(entry: Dict[str, Any], stack: List[Any]) -> Any:
    """What ``mcp.Client`` connects to for one config entry."""
    if "url" in entry:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client

        # The SDK's own timeouts (30 s, and 300 s to read a stream).
        http = httpx2.AsyncClient(headers=entry["headers"] or None, timeout=httpx2.Timeout(30.0, read=300.0))
        stack.append(http)
        return streamable_http_client(entry["url"], http_client=http)
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=entry["command"], args=entry["args"], env=entry["env"] or None, cwd=entry["cwd"]
    )
    log = tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace")
    stack.append(log)
    return stdio_client(params, errlog=log)


def _failure(alias: str, exc: BaseException, stack: List[Any]) -> McpPreambleError:
    """A failed server as the CLI's row says it: the reason and the stderr tail."""
    if isinstance(exc, McpPreambleError) and not isinstance(exc, ServerExitedError):
        return exc
    logs = [s for s in stack if hasattr(s, "seek")]
    tail = _stderr_tail(logs[0]) if logs else ""
    cls: type[McpPreambleError]
    if isinstance(exc, ServerExitedError):
        detail, cls, prefix = exc.detail, ServerExitedError, "cannot connect"
    elif isinstance(exc, TimeoutError):
        detail = f"server {alias!r}: no answer within the timeout"
        cls = McpTimeoutError
        prefix = "timed out"
    else:
        detail = f"server {alias!r}: {type(exc).__name__}: {exc}".rstrip(": ")
        cls = ConnectError
        prefix = "cannot connect"
    if tail:
        detail += f" (stderr: {tail})"
    return cls(f"{prefix}: {detail}", detail=detail)


async def _within(timeout: float, entering: Awaitable[Any]) -> None:
    """``entering`` (the connection's handshake and first ``tools/list``),
    cancelled after ``timeout`` seconds: a cancel of this very task, since
    the SDK's transports must stay in the task that entered them (a scope
    around the entering would have to close before them)."""
    task = asyncio.current_task()
    assert task is not None
    fired = False

    def expire() -> None:
        nonlocal fired
        fired = True
        task.cancel()

    handle = asyncio.get_running_loop().call_later(timeout, expire)
    try:
        await entering
    except asyncio.CancelledError:
        if not fired:
            raise
        uncancel = getattr(task, "uncancel", None)  # Python 3.11+
        if uncancel is not None:
            uncancel()
        raise TimeoutError() from None
    finally:
        handle.cancel()


async def _close_all(stack: List[Any]) -> None:
    for resource in reversed(stack):
        close = getattr(resource, "aclose", None)
        if close is not None:
            await close()
        else:
            resource.close()


async def _run(
    live: LiveSection,
    entry: Dict[str, Any],
    handshake: str,
    timeout: float,
    gate: asyncio.Semaphore,
    ready: asyncio.Future[None],
    stop: asyncio.Event,
    client: Dict[str, Any],
) -> None:
    """One server's connection, held open in its own task until ``stop``
    (the SDK's transports must be entered and left in the same task)."""
    alias = entry["alias"]
    stack: List[Any] = []
    try:
        async with gate:
            connecting = live.connect(alias, _transport(entry, stack), handshake=handshake, **client)
            await _within(timeout, connecting.__aenter__())
        try:
            ready.set_result(None)
            await stop.wait()
        finally:
            await connecting.__aexit__(None, None, None)
    except Exception as e:  # a server that fails does not hold up the others
        live.failures[alias] = _failure(alias, e, stack)
        if not ready.done():
            ready.set_result(None)
    finally:
        await _close_all(stack)


@asynccontextmanager
async def connect_config(
    config: PathLike,
    assembler: Union[None, Assembler, LiveSection] = None,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    handshake: str = "auto",
    concurrency: int = DEFAULT_CONCURRENCY,
    **client: Any,
) -> AsyncIterator[LiveSection]:
    """Starts every server of an MCP config (``mcp.json``) with the official
    SDK, at most ``concurrency`` at a time, and follows each in one
    :class:`~mcp_preamble.LiveSection` under its alias; yields it. Leaving
    the block closes every connection (and stops every stdio server).

    ``assembler``: an :class:`~mcp_preamble.Assembler` (or a
    ``LiveSection`` to add the servers to). ``timeout``: seconds each server
    has for its handshake and ``tools/list`` (``--timeout``); ``handshake``:
    ``"auto"``, ``"legacy"`` or a 2026 protocol version (``--handshake``).
    Other keywords go to each ``mcp.Client`` (``client_info``,
    ``sampling_callback``, ``list_roots_callback``…).

    A server that cannot start, dies during its handshake or does not answer
    in time does not hold up the others: it is left out, and
    ``live.failures[alias]`` holds why (:class:`~mcp_preamble.ConnectError`
    or :class:`~mcp_preamble.McpTimeoutError`, with its last stderr line),
    as the CLI's failed rows do. A config that cannot be read raises
    :class:`~mcp_preamble.InvalidConfigError` (or ``FileReadError``) with
    the CLI's message.
    """
    entries: List[Dict[str, Any]] = json.loads(_native.config_json(os.fspath(config)))
    if concurrency < 1:
        raise ValueError(f"concurrency: {concurrency} is less than 1")
    live = assembler if isinstance(assembler, LiveSection) else LiveSection(assembler)
    gate = asyncio.Semaphore(concurrency)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    readies: List[asyncio.Future[None]] = [loop.create_future() for _ in entries]
    tasks = [
        asyncio.ensure_future(_run(live, e, handshake, timeout, gate, r, stop, client))
        for e, r in zip(entries, readies)
    ]
    try:
        await asyncio.gather(*readies)
        yield live
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)


__all__ = ["connect_config", "DEFAULT_TIMEOUT", "DEFAULT_CONCURRENCY"]
