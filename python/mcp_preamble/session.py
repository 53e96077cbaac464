"""The section of live ``mcp.ClientSession`` connections, kept current.

States, grace deadlines and revisions are the crate's ``Roster``, as in the
Node package: this module is the SDK wiring (``_sdk.py``) and one timer.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from typing import Any, AsyncIterator, Dict, List, Literal, Optional, Tuple, cast

from . import _native
from ._api import Assembler, Server
from ._reports import Assembly
from ._errors import ServerExitedError
from ._sdk import MessageHandler, changes_handler, connection_lost, exited, follow_listen, list_tools_pages, server_of, watched

ServerState = Literal["connected", "reconnecting", "gone"]  # the crate's ServerState
StateReason = Literal["added", "connected", "connection_lost", "closed", "removed", "grace_expired"]
DEFAULT_GRACE = 30.0  # seconds a server whose connection ended keeps its block (the hub's)
__all__ = ["DEFAULT_GRACE", "LiveSection", "MessageHandler", "ServerState", "StateChange", "StateReason", "list_tools_pages", "server_of"]


@dataclass(frozen=True)
class StateChange:
    """One change of a server's state (:meth:`LiveSection.subscribe_states`)."""

    alias: str
    state: ServerState
    reason: StateReason


class LiveSection:
    """Keeps one section of live MCP connections current, with the Rust hub's
    promises: the revision goes up exactly when the section's bytes change; a
    connection the host closes takes its block out at once; one that ends on
    its own keeps it for ``grace`` seconds (``reconnecting``) unless it comes
    back (``connected``), else it goes (``gone``). A ``ClientSession`` the host
    runs joins with :meth:`add` (and :meth:`message_handler`)."""

    def __init__(self, assembler: Optional[Assembler] = None, *, grace: float = DEFAULT_GRACE) -> None:
        if grace < 0:
            raise ValueError(f"grace: {grace} is negative")
        self._assembler = assembler if assembler is not None else Assembler()
        self._roster = _native.NativeRoster(grace)
        self._sessions: Dict[str, Tuple[Any, Any, int]] = {}  # alias -> (session, result, owner)
        self._followers: Dict[str, "asyncio.Task[None]"] = {}
        self._timer: Optional[asyncio.TimerHandle] = None
        self._queues: List["asyncio.Queue[StateChange]"] = []
        self._assembly: Optional[Assembly] = None
        self.failures: Dict[str, BaseException] = {}
        """Servers :func:`~mcp_preamble.connect_config` could not connect, by alias."""

    def message_handler(self, alias: str, inner: Optional[MessageHandler] = None) -> MessageHandler:
        """A ``ClientSession`` ``message_handler`` following ``tools/list_changed``, then ``inner``."""

        return changes_handler(lambda: self.mark_changed(alias), inner)

    @contextlib.asynccontextmanager
    async def connect(self, alias: str, server: Any, *, handshake: str = "auto", message_handler: Optional[MessageHandler] = None, **client: Any) -> AsyncIterator[Any]:  # noqa: E501
        """Connects ``mcp.Client`` to ``server`` (``StdioServerParameters``, a URL
        or a transport; ``handshake``: ``"auto"``, ``"legacy"`` or a version) and
        follows it under ``alias``; leaving the block closes it and removes it.
        A server that exits during its handshake, or under a request of the
        block, raises :class:`~mcp_preamble.ServerExitedError` (the SDK's
        ``ExceptionGroup`` is its ``__cause__``)."""
        from mcp import Client

        owner: List[int] = []
        ended = watched(server, lambda lost: self._ended(alias, owner, lost))
        try:
            async with Client(ended, mode=handshake, message_handler=self.message_handler(alias, message_handler), **client) as mcp:
                await self.add(alias, mcp.session)
                owner.append(self._sessions[alias][2])
                try:
                    yield mcp
                finally:
                    self._ended(alias, owner, False)
        except Exception as e:
            if not exited(e):
                raise
            when = "in a request" if owner else "during its handshake"
            detail = f"server {alias!r}: the connection closed {when} (the server exited, or its transport ended)"
            raise ServerExitedError(f"cannot connect: {detail}", detail=detail) from e

    async def add(self, alias: str, session: Any, *, result: Any = None, follow: bool = True) -> Server:
        """Adds (or replaces) a connected session, listing its tools now; the same snapshot changes nothing."""
        server = await server_of(session, alias, result)
        await self._stop_following(alias)
        owner, changes = self._roster.connected(alias, server._native)
        self._sessions[alias] = (session, result, owner)
        self.failures.pop(alias, None)
        if follow and server.era == "modern":
            self._followers[alias] = asyncio.ensure_future(follow_listen(session, lambda: self.mark_changed(alias)))
        self._apply(changes)
        return server

    async def remove(self, alias: str) -> None:
        """Removes a server's block at once (its session stays the caller's)."""
        await self._stop_following(alias)
        self._apply(self._roster.remove(alias, None, "removed"))

    def disconnected(self, alias: str) -> None:
        """The connection ended on its own: kept for the grace period (gone at once outside an event loop)."""
        try:
            self._apply(self._roster.lost(alias, None, asyncio.get_running_loop().time()))
        except RuntimeError:  # no running loop
            if self.state(alias) == "connected":
                self._apply(self._roster.remove(alias, None, "connection_lost"))

    def state(self, alias: str) -> ServerState:
        """``"connected"``, ``"reconnecting"`` (kept for the grace period) or ``"gone"``."""
        return cast(ServerState, self._roster.state(alias))

    def subscribe_states(self) -> "asyncio.Queue[StateChange]":
        """A queue of every server's state changes from now on, in order."""
        self._queues.append(asyncio.Queue())
        return self._queues[-1]

    def mark_changed(self, alias: str) -> None:
        """Re-lists ``alias``'s tools at the next :meth:`section`."""
        self._roster.mark_changed(alias)

    async def refresh(self, alias: Optional[str] = None) -> None:
        """Re-lists ``alias`` (all without one) now; a closed connection ended on its own, an error is raised."""
        for a in [a for a in ([alias] if alias is not None else list(self._sessions)) if a in self._sessions]:
            session, result, owner = self._sessions[a]
            try:
                server = await server_of(session, a, result)
            except Exception as e:
                if not connection_lost(e):
                    raise
                self.disconnected(a)
                continue
            self._roster.updated(a, owner, server._native)

    async def section(self) -> Assembly:
        """The section: re-lists servers that announced a change, re-assembles only when one changed."""
        for alias in self._roster.take_stale():
            await self.refresh(alias)
        natives = self._roster.pending_assembly()
        if natives is not None:
            self._assembly = self._assembler.assemble(Server(n) for n in natives)
            self._roster.assembled(self._assembly.digest)
        assert self._assembly is not None  # the first call always assembles
        return self._assembly

    @property
    def revision(self) -> int:
        """Up by one each time the section's bytes change (0 before the first)."""
        return self._roster.revision

    @property
    def servers(self) -> Dict[str, Server]:
        """The servers by alias, as last listed (those reconnecting too)."""
        return {alias: Server(native) for alias, native in self._roster.servers()}

    @property
    def sessions(self) -> Dict[str, Any]:
        """The connected servers' ``ClientSession``\\ s by alias."""
        return {alias: s[0] for alias, s in self._sessions.items()}

    async def aclose(self) -> None:
        """Stops following changes and the grace timer (sessions stay the caller's)."""
        for alias in list(self._followers):
            await self._stop_following(alias)
        if self._timer is not None:
            self._timer.cancel()

    async def __aenter__(self) -> LiveSection:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _ended(self, alias: str, owner: List[int], lost: bool) -> None:
        """A connection of :meth:`connect` ended (``lost``: on its own); before it was added, nothing to end."""
        if owner:
            now = asyncio.get_running_loop().time()
            self._apply(self._roster.lost(alias, owner[0], now) if lost else self._roster.remove(alias, owner[0], "closed"))

    def _apply(self, changes: List[Tuple[str, str, str, int]]) -> None:
        """Tells of ``changes``, lets go of ended sessions, sets the grace timer."""
        for alias, state, reason, _revision in changes:
            if state != "connected":
                self._sessions.pop(alias, None)
                follower = self._followers.pop(alias, None)
                if follower is not None:
                    follower.cancel()
            change = StateChange(alias, cast(ServerState, state), cast(StateReason, reason))
            for queue in self._queues:
                queue.put_nowait(change)
        if self._timer is not None:
            self._timer.cancel()
        deadline = self._roster.next_deadline()
        with contextlib.suppress(RuntimeError):  # no running loop, no timer: disconnected() removes at once
            loop = asyncio.get_running_loop()
            self._timer = None if deadline is None else loop.call_at(deadline, lambda: self._apply(self._roster.expire(loop.time())))

    async def _stop_following(self, alias: str) -> None:
        task = self._followers.pop(alias, None)
        if task is not None:
            task.cancel()  # its end (cancelled, or the stream had failed) is awaited, not raised
            await asyncio.gather(task, return_exceptions=True)

    def __repr__(self) -> str:
        return f"LiveSection(servers={[a for a, _ in self._roster.servers()]!r}, revision={self.revision})"
