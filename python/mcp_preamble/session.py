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
from typing import Any, Dict, List, Optional, Protocol, Set

from ._api import Assembler, Server, _plain
from ._reports import Assembly


class MessageHandler(Protocol):
    """What ``ClientSession(message_handler=...)`` takes."""

    async def __call__(self, message: Any) -> None: ...


# The crate reads at most this many tools/list pages of a server (Limits).
_MAX_PAGES = 100
_TOOLS_CHANGED = "notifications/tools/list_changed"


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


class LiveSection:
    """Keeps one section of several live ``ClientSession``\\ s current.

    ::

        live = LiveSection(Assembler(budget=256))
        session = ClientSession(read, write, message_handler=live.message_handler("billing"))
        await session.initialize()
        await live.add("billing", session)
        while True:
            section = await live.section()   # before each model request
            ...

    On 2025 connections servers send ``notifications/tools/list_changed``
    unasked: pass :meth:`message_handler` to the session to follow them. On
    2026-07-28 connections :meth:`add` opens ``subscriptions/listen`` for
    them itself (``follow=True``). :meth:`refresh` re-lists on demand.
    """

    def __init__(self, assembler: Optional[Assembler] = None) -> None:
        self._assembler = assembler if assembler is not None else Assembler()
        self._sessions: Dict[str, Any] = {}
        self._results: Dict[str, Any] = {}
        self._servers: Dict[str, Server] = {}
        self._stale: Set[str] = set()
        self._followers: Dict[str, "asyncio.Task[None]"] = {}
        self._assembly: Optional[Assembly] = None
        self._dirty = True
        self._revision = 0

    def message_handler(self, alias: str, inner: Optional[MessageHandler] = None) -> MessageHandler:
        """A ``message_handler`` for ``ClientSession``: marks ``alias``'s tools
        stale on ``notifications/tools/list_changed``, then calls ``inner``."""

        async def handle(message: Any) -> None:
            if _is_tools_changed(message):
                self.mark_changed(alias)
            if inner is not None:
                await inner(message)

        return handle

    async def add(self, alias: str, session: Any, *, result: Any = None, follow: bool = True) -> Server:
        """Adds (or replaces) a connected session under ``alias``: reads its
        handshake result and lists its tools now."""
        server = await server_of(session, alias, result)
        await self._stop_following(alias)
        self._sessions[alias] = session
        self._results[alias] = result
        self._servers[alias] = server
        self._stale.discard(alias)
        self._dirty = True
        if follow and server.era == "modern":
            self._followers[alias] = asyncio.ensure_future(self._follow(alias, session))
        return server

    async def remove(self, alias: str) -> None:
        """Removes a server's block (its session stays the caller's)."""
        await self._stop_following(alias)
        self._sessions.pop(alias, None)
        self._results.pop(alias, None)
        self._stale.discard(alias)
        if self._servers.pop(alias, None) is not None:
            self._dirty = True

    def mark_changed(self, alias: str) -> None:
        """Re-lists ``alias``'s tools at the next :meth:`section`."""
        if alias in self._sessions:
            self._stale.add(alias)

    async def refresh(self, alias: Optional[str] = None) -> None:
        """Re-lists the tools of ``alias`` (every server without one) now."""
        for a in [alias] if alias is not None else list(self._sessions):
            self._stale.discard(a)
            session = self._sessions.get(a)
            if session is None:
                continue
            server = await server_of(session, a, self._results.get(a))
            if server != self._servers.get(a):
                self._servers[a] = server
                self._dirty = True

    async def section(self) -> Assembly:
        """The current section: re-lists servers that announced a change,
        re-assembles only when a server changed. A session that cannot re-list
        its tools raises the SDK's error here, once; its block stays as last
        listed until :meth:`remove` (or a later change notice re-lists it)."""
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
        """The servers by alias, as last listed."""
        return dict(self._servers)

    async def aclose(self) -> None:
        """Stops following changes (sessions stay open: they are the caller's)."""
        for alias in list(self._followers):
            await self._stop_following(alias)

    async def __aenter__(self) -> LiveSection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

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
