"""The official SDK's side of a live section: tool pages, handshake results,
notifications and the end of a transport (moved from ``session.py``, which
keeps the ``LiveSection`` itself). Nothing here decides a server's state."""

from __future__ import annotations

from contextlib import asynccontextmanager
from typing import Any, AsyncIterator, Callable, List, Optional, Protocol

from ._api import Server, _plain


class MessageHandler(Protocol):
    """What ``ClientSession(message_handler=...)`` takes."""

    async def __call__(self, message: Any) -> None: ...


# The crate reads at most this many tools/list pages of a server (Limits).
_MAX_PAGES = 100
_TOOLS_CHANGED = "notifications/tools/list_changed"


def connection_lost(exc: BaseException) -> bool:
    """Whether re-listing failed because the connection is gone (closed by
    the transport, the process ended, the network dropped), not because the
    server answered an error."""
    try:
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED
    except ImportError:  # an SDK without them: only transport errors count
        return isinstance(exc, (OSError, EOFError))
    if isinstance(exc, MCPError):
        return exc.code == CONNECTION_CLOSED
    import anyio

    return isinstance(exc, (OSError, EOFError, anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream))


def exited(exc: BaseException) -> bool:
    """Whether ``exc`` is the SDK's ``ExceptionGroup`` (its task groups, one
    inside another) of nothing but lost connections: the server exited."""
    leaves: List[BaseException] = []
    stack = [exc]
    while stack:
        e = stack.pop()
        inner = getattr(e, "exceptions", None)
        if isinstance(inner, tuple):  # a (Base)ExceptionGroup, or the backport's on Python < 3.11
            stack.extend(inner)
        else:
            leaves.append(e)
    return exc is not leaves[0] and bool(leaves) and all(connection_lost(e) for e in leaves)


def is_tools_changed(message: Any) -> bool:
    """Whether a message the session surfaced is ``notifications/tools/list_changed``
    (the SDK's model, its ``RootModel`` wrapper, or a dict)."""
    message = getattr(message, "root", message)
    method = message.get("method") if isinstance(message, dict) else getattr(message, "method", None)
    return method == _TOOLS_CHANGED


def changes_handler(changed: Callable[[], None], inner: Optional[MessageHandler]) -> MessageHandler:
    """A ``message_handler`` that calls ``changed`` on ``tools/list_changed``, then ``inner``."""

    async def handle(message: Any) -> None:
        if is_tools_changed(message):
            changed()
        if inner is not None:
            await inner(message)

    return handle


async def follow_listen(session: Any, changed: Callable[[], None]) -> None:
    """2026-07-28: list changes come only on a ``subscriptions/listen`` stream."""
    from mcp.client.subscriptions import listen

    async with listen(session, tools_list_changed=True) as events:
        async for _event in events:
            changed()


async def list_tools_pages(session: Any) -> List[Any]:
    """Every ``tools/list`` page of a session, following ``nextCursor``."""
    pages: List[Any] = []
    cursor: Optional[str] = None
    for _ in range(_MAX_PAGES):
        if cursor is None:
            page = await session.list_tools()
        else:
            from mcp import types  # only sessions with more than one page need it

            page = await session.list_tools(params=types.PaginatedRequestParams(cursor=cursor))
        pages.append(page)
        cursor = getattr(page, "next_cursor", None)
        if cursor is None:
            break
    return pages


async def server_of(session: Any, alias: str, result: Any = None) -> Server:
    """A :class:`~mcp_preamble.Server` of a connected ``ClientSession``: its
    handshake result (``result``, else the one the session kept) and all its
    tools (listed now)."""
    if result is None:
        result = getattr(session, "discover_result", None) or getattr(session, "initialize_result", None)
    if result is None:
        raise TypeError(
            "the session has no handshake result: await session.initialize() first, "
            "or pass the InitializeResult as result="
        )
    pages = await list_tools_pages(session)
    plain = _plain(result)
    if isinstance(plain, dict) and "supportedVersions" in plain:
        return Server.from_discover(plain, pages, alias)
    return Server.from_initialize(plain, pages, alias)


class _WatchedRead:
    """A transport's read stream (the SDK's ``ReadStream`` protocol) that
    tells when the connection ended: ``on_end(True)`` at the end of the
    stream (the server exited, the transport died), ``on_end(False)`` when
    the session closed it first (the host closed the connection)."""

    def __init__(self, inner: Any, on_end: Callable[[bool], None]) -> None:
        self._inner = inner
        self._on_end: Optional[Callable[[bool], None]] = on_end

    def _end(self, lost: bool) -> None:
        on_end, self._on_end = self._on_end, None
        if on_end is not None:
            on_end(lost)

    async def receive(self) -> Any:
        import anyio

        try:
            return await self._inner.receive()
        except (anyio.EndOfStream, anyio.BrokenResourceError):
            self._end(True)
            raise

    async def aclose(self) -> None:
        self._end(False)
        await self._inner.aclose()

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __getattr__(self, name: str) -> Any:
        # `last_context` and whatever else the SDK's dispatcher reads.
        return getattr(self._inner, name)


@asynccontextmanager
async def watched(server: Any, on_end: Callable[[bool], None]) -> AsyncIterator[Any]:
    """The transport of ``server`` (``StdioServerParameters``, a Streamable
    HTTP URL, or a transport), its read stream watched for its end."""
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.client.streamable_http import streamable_http_client

    if isinstance(server, StdioServerParameters):
        transport: Any = stdio_client(server)
    elif isinstance(server, str):
        transport = streamable_http_client(server)
    else:
        transport = server
    async with transport as (read, write):
        yield _WatchedRead(read, on_end), write
