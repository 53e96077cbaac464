"""The section of live ``mcp.ClientSession`` connections, kept current.

An agent loop calls ``await live.section()`` before each model request: it
re-lists the tools of every server that announced a change
(``notifications/tools/list_changed``), re-assembles only when something
changed, and returns the :class:`~mcp_preamble.Assembly` (whose ``digest``
changes exactly when the section's bytes do).

Works with the official SDK's ``ClientSession`` (``mcp`` >= 2: it keeps the
handshake result; with an older SDK give it to :meth:`LiveSection.add`). The
package itself does not depend on ``mcp``: it is imported only to list tool
pages after the first and to follow changes on 2026-07-28 connections.
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, AsyncIterator, Callable, Dict, List, Literal, Optional, Protocol, Set, Union

from ._api import Assembler, Server, _plain
from ._reports import Assembly

ServerState = Literal["connected", "reconnecting", "gone"]
"""Where a server stands in a :class:`LiveSection` (as the Rust hub's ``ServerState``)."""

StateReason = Literal["added", "connected", "connection_lost", "closed", "removed", "grace_expired"]
"""Why a server's state changed (as the Rust hub's ``StateReason``)."""

# How long a server whose connection ended keeps its block (the Rust hub's
# DEFAULT_GRACE): long enough for a restart, short enough that the model is
# not told about tools it cannot call for long.
DEFAULT_GRACE = 30.0


@dataclass(frozen=True)
class StateChange:
    """One change of a server's state (:meth:`LiveSection.subscribe_states`)."""

    alias: str
    state: ServerState
    reason: StateReason


class MessageHandler(Protocol):
    """What ``ClientSession(message_handler=...)`` takes."""

    async def __call__(self, message: Any) -> None: ...


# The crate reads at most this many tools/list pages of a server (Limits).
_MAX_PAGES = 100
_TOOLS_CHANGED = "notifications/tools/list_changed"


def _connection_lost(exc: BaseException) -> bool:
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


def _is_tools_changed(message: Any) -> bool:
    """Whether a message the session surfaced is ``notifications/tools/list_changed``
    (the SDK's model, its ``RootModel`` wrapper, or a dict)."""
    message = getattr(message, "root", message)
    method = message.get("method") if isinstance(message, dict) else getattr(message, "method", None)
    return method == _TOOLS_CHANGED


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
async def _watched(transport: Any, on_end: Callable[[bool], None]) -> AsyncIterator[Any]:
    async with transport as (read, write):
        yield _WatchedRead(read, on_end), write


class LiveSection:
    """Keeps one section of several live MCP connections current, with the
    Rust hub's promises.

    ::

        live = LiveSection(Assembler(budget=256))
        async with live.connect("billing", StdioServerParameters(command="node", args=["server.mjs"])) as client:
            while True:
                section = await live.section()   # before each model request
                ...                              # client.call_tool(...)

    - The revision goes up exactly when the section's bytes change; a server
      that reconnects within the grace period with the same snapshot changes
      nothing (same bytes, digest and revision).
    - A connection the host closes (leaving :meth:`connect`, or
      :meth:`remove`) takes its block out at once: one new revision. A
      connection that ends on its own (the server exits or is killed, the
      transport dies, re-listing finds it closed) keeps its block for
      ``grace`` seconds (``reconnecting``); a :meth:`connect` or :meth:`add`
      within it takes it back (``connected``), otherwise the block goes with
      one new revision (``gone``).
    - :meth:`state` is ``"connected"``, ``"reconnecting"`` or ``"gone"``;
      :meth:`subscribe_states` tells of each change with its reason.

    A ``ClientSession`` the host runs itself joins with :meth:`add` (pass
    :meth:`message_handler` to it to follow ``tools/list_changed`` on 2025
    connections; on 2026-07-28 connections :meth:`add` opens
    ``subscriptions/listen`` itself). The section cannot see such a
    session's transport: it finds it gone when re-listing fails, or when the
    host says so with :meth:`disconnected` or :meth:`remove`.
    """

    def __init__(self, assembler: Optional[Assembler] = None, *, grace: float = DEFAULT_GRACE) -> None:
        if grace < 0:
            raise ValueError(f"grace: {grace} is negative")
        self._assembler = assembler if assembler is not None else Assembler()
        self._grace = grace
        self._sessions: Dict[str, Any] = {}
        self._results: Dict[str, Any] = {}
        self._servers: Dict[str, Server] = {}
        self._stale: Set[str] = set()
        self._followers: Dict[str, "asyncio.Task[None]"] = {}
        # The connection that owns each alias now (a late end of an older one is ignored).
        self._owners: Dict[str, int] = {}
        self._next_owner = 0
        self._timers: Dict[str, asyncio.TimerHandle] = {}
        self._queues: List["asyncio.Queue[StateChange]"] = []
        self._assembly: Optional[Assembly] = None
        self._dirty = True
        self._revision = 0
        self.failures: Dict[str, BaseException] = {}
        """Servers :func:`~mcp_preamble.connect_config` could not connect, by alias."""

    def message_handler(self, alias: str, inner: Optional[MessageHandler] = None) -> MessageHandler:
        """A ``message_handler`` for ``ClientSession``: marks ``alias``'s tools
        stale on ``notifications/tools/list_changed``, then calls ``inner``."""

        async def handle(message: Any) -> None:
            if _is_tools_changed(message):
                self.mark_changed(alias)
            if inner is not None:
                await inner(message)

        return handle

    @asynccontextmanager
    async def connect(
        self,
        alias: str,
        server: Any,
        *,
        handshake: str = "auto",
        message_handler: Optional[MessageHandler] = None,
        **client: Any,
    ) -> AsyncIterator[Any]:
        """Connects to ``server`` with the official SDK's ``mcp.Client`` and
        follows it under ``alias``; yields the client (call tools on it).

        ``server`` is what ``mcp.Client`` takes: ``StdioServerParameters``,
        a Streamable HTTP URL, or a transport (``stdio_client(...)``,
        ``streamable_http_client(...)``). ``handshake`` is ``"auto"``
        (``server/discover``, falling back to ``initialize``), ``"legacy"``
        or a 2026 protocol version; the other keywords go to ``mcp.Client``.
        Leaving the block closes the connection and removes the block at
        once; a connection that ends on its own first keeps it for the grace
        period.
        """
        from mcp import Client, StdioServerParameters
        from mcp.client.stdio import stdio_client
        from mcp.client.streamable_http import streamable_http_client

        if isinstance(server, StdioServerParameters):
            transport: Any = stdio_client(server)
        elif isinstance(server, str):
            transport = streamable_http_client(server)
        else:
            transport = server
        self._next_owner += 1
        owner = self._next_owner
        handler = self.message_handler(alias, message_handler)
        watched = _watched(transport, lambda lost: self._ended(alias, owner, lost))
        async with Client(watched, mode=handshake, message_handler=handler, **client) as mcp_client:
            await self.add(alias, mcp_client.session)
            self._owners[alias] = owner
            try:
                yield mcp_client
            finally:
                self._ended(alias, owner, False)

    async def add(self, alias: str, session: Any, *, result: Any = None, follow: bool = True) -> Server:
        """Adds (or replaces) a connected session under ``alias``: reads its
        handshake result and lists its tools now. A server kept while
        reconnecting is back (``connected``); the same snapshot as before
        leaves the section, its digest and revision as they were."""
        server = await server_of(session, alias, result)
        await self._stop_following(alias)
        before = self.state(alias)
        self._cancel_grace(alias)
        self._owners.pop(alias, None)
        self._sessions[alias] = session
        self._results[alias] = result
        if server != self._servers.get(alias):
            self._dirty = True
        self._servers[alias] = server
        self._stale.discard(alias)
        self.failures.pop(alias, None)
        if follow and server.era == "modern":
            self._followers[alias] = asyncio.ensure_future(self._follow(alias, session))
        self._emit(alias, before, "connected", "added" if before == "gone" else "connected")
        return server

    async def remove(self, alias: str) -> None:
        """Removes a server's block at once (its session stays the caller's)."""
        await self._stop_following(alias)
        self._drop(alias, "removed")

    def disconnected(self, alias: str) -> None:
        """The connection of ``alias`` ended on its own: its block stays for
        the grace period (``reconnecting``), then goes with one new revision
        unless :meth:`add` or :meth:`connect` brings the server back first.
        With a zero grace, or outside a running event loop, it goes at once."""
        if self.state(alias) != "connected":
            return
        self._owners.pop(alias, None)
        self._sessions.pop(alias, None)
        self._stale.discard(alias)
        follower = self._followers.pop(alias, None)
        if follower is not None:
            follower.cancel()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if loop is None or self._grace == 0:
            self._drop(alias, "connection_lost")
            return
        self._timers[alias] = loop.call_later(self._grace, self._drop, alias, "grace_expired")
        self._emit(alias, "connected", "reconnecting", "connection_lost")

    def state(self, alias: str) -> ServerState:
        """``"connected"``, ``"reconnecting"`` (kept for the grace period) or ``"gone"``."""
        if alias not in self._servers:
            return "gone"
        return "reconnecting" if alias in self._timers else "connected"

    def subscribe_states(self) -> "asyncio.Queue[StateChange]":
        """A queue of every server's state changes from now on, in order:
        ``connected`` (added, back within its grace period), ``reconnecting``
        (its connection ended on its own) and ``gone`` (closed or removed
        by the host, or its grace period ended)."""
        queue: "asyncio.Queue[StateChange]" = asyncio.Queue()
        self._queues.append(queue)
        return queue

    def mark_changed(self, alias: str) -> None:
        """Re-lists ``alias``'s tools at the next :meth:`section`."""
        if alias in self._sessions:
            self._stale.add(alias)

    async def refresh(self, alias: Optional[str] = None) -> None:
        """Re-lists the tools of ``alias`` (every server without one) now.
        A connection found closed counts as ended on its own
        (:meth:`disconnected`); an error the server answers is raised."""
        for a in [alias] if alias is not None else list(self._sessions):
            self._stale.discard(a)
            session = self._sessions.get(a)
            if session is None:
                continue
            try:
                server = await server_of(session, a, self._results.get(a))
            except Exception as e:
                if not _connection_lost(e):
                    raise
                self.disconnected(a)
                continue
            if server != self._servers.get(a):
                self._servers[a] = server
                self._dirty = True

    async def section(self) -> Assembly:
        """The current section: re-lists servers that announced a change,
        re-assembles only when a server changed. A server that answers its
        ``tools/list`` with an error raises the SDK's error here, once; its
        block stays as last listed."""
        for alias in sorted(self._stale):
            await self.refresh(alias)
        if self._assembly is None or self._dirty:
            assembly = self._assembler.assemble(self._servers.values())
            self._dirty = False
            if self._assembly is None or assembly.digest != self._assembly.digest:
                self._revision += 1
            self._assembly = assembly
        return self._assembly

    @property
    def revision(self) -> int:
        """Goes up by one each time the section's bytes change (0 before the first)."""
        return self._revision

    @property
    def servers(self) -> Dict[str, Server]:
        """The servers by alias, as last listed (those reconnecting too)."""
        return dict(self._servers)

    @property
    def sessions(self) -> Dict[str, Any]:
        """The connected servers' ``ClientSession``\\ s by alias."""
        return dict(self._sessions)

    async def aclose(self) -> None:
        """Stops following changes and every grace timer (sessions stay open:
        they are the caller's)."""
        for alias in list(self._followers):
            await self._stop_following(alias)
        for alias in list(self._timers):
            self._cancel_grace(alias)

    async def __aenter__(self) -> LiveSection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _ended(self, alias: str, owner: int, lost: bool) -> None:
        """A connection of :meth:`connect` ended: ``lost`` when on its own."""
        if self._owners.get(alias) != owner:
            return
        if lost:
            self.disconnected(alias)
            return
        follower = self._followers.pop(alias, None)
        if follower is not None:
            follower.cancel()
        self._drop(alias, "closed")

    def _drop(self, alias: str, reason: StateReason) -> None:
        before = self.state(alias)
        self._cancel_grace(alias)
        self._owners.pop(alias, None)
        self._sessions.pop(alias, None)
        self._results.pop(alias, None)
        self._stale.discard(alias)
        if self._servers.pop(alias, None) is not None:
            self._dirty = True
        self._emit(alias, before, "gone", reason)

    def _cancel_grace(self, alias: str) -> None:
        timer = self._timers.pop(alias, None)
        if timer is not None:
            timer.cancel()

    def _emit(self, alias: str, before: ServerState, after: ServerState, reason: StateReason) -> None:
        if before == after:
            return
        change = StateChange(alias, after, reason)
        for queue in self._queues:
            queue.put_nowait(change)

    async def _follow(self, alias: str, session: Any) -> None:
        # 2026-07-28: list changes come only on a subscriptions/listen stream.
        from mcp.client.subscriptions import listen

        async with listen(session, tools_list_changed=True) as events:
            async for _event in events:
                self.mark_changed(alias)

    async def _stop_following(self, alias: str) -> None:
        task = self._followers.pop(alias, None)
        if task is None:
            return
        task.cancel()
        try:
            await task
        except (asyncio.CancelledError, Exception):  # cancelled, or the stream had failed
            pass

    def __repr__(self) -> str:
        return f"LiveSection(servers={list(self._servers)!r}, revision={self._revision})"
