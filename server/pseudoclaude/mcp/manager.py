"""The MCP servers of one workspace: their states, their tools, calls, approvals and shutdown.

:class:`McpManager` is the one object the rest of the server uses. Its async methods are called
from the caller's event loop and run on the MCP thread (:mod:`pseudoclaude.mcp.loop`); every
session, every child process and every piece of state lives there, so the caller's loop never
blocks on a server. :meth:`McpManager.configure` starts nothing: :meth:`McpManager.tools` (the
tools for a run) starts the servers that can start, concurrently, each within
``mcp.startTimeout``; :meth:`McpManager.warm` starts the ones not started yet in the background
(an open folder's, so the listing settles to ``ready`` or ``failed`` without a run). Neither
starts a server waiting for the user's approval.

States (:data:`Status`): ``starting`` (being started, or not started yet), ``ready``,
``failed`` (with ``error``: a bad entry, a start that failed or took too long, a server that
stopped), ``needsApproval`` (a project server nobody approved yet: it has not run), and
``disabled`` (``disabled: true``, ``approval: deny``, or denied by the user).

Restarts: a server that was ready and then stopped (its process exited, its connection was
lost) is ``failed`` until it is next needed, and then started again; one that stopped
:attr:`~pseudoclaude.mcp.options.McpOptions.max_restarts` times within the restart window, or
that failed to start, stays ``failed`` until :meth:`McpManager.restart` or a changed entry.

The change hook ``on_change(listing)`` is called **on the MCP thread** whenever the listing
changes (a status, an error, the tools); hop to your own loop
(``loop.call_soon_threadsafe``) before touching anything of yours. It must not block.

Call :meth:`McpManager.close` when the workspace closes; a manager nobody closed is closed at
interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import threading
import time
import weakref
from collections.abc import Callable, Coroutine, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import msgspec

from pseudoclaude.mcp import naming
from pseudoclaude.mcp.config import ServerConfig, Source, Transport
from pseudoclaude.mcp.loop import LoopClosed, LoopThread
from pseudoclaude.mcp.options import McpOptions
from pseudoclaude.mcp.results import McpCallResult
from pseudoclaude.mcp.tools import McpTool, make_tool
from pseudoclaude.trust import TrustStore

if TYPE_CHECKING:
    from pseudoclaude.mcp.connection import Connection

log = logging.getLogger("pseudoclaude.mcp")
T = TypeVar("T")

Status = Literal["starting", "ready", "failed", "needsApproval", "disabled"]
Decision = Literal["allow_once", "allow_session", "deny"]
"""The answers of an approval (the agent's vocabulary): for this process, remembered, no."""


class ServerInfo(msgspec.Struct, kw_only=True, rename="camel", omit_defaults=True):
    """One server, as the listing shows it."""

    name: str
    source: Source
    status: Status
    tools: list[str]
    """The tools' own names (not the model's), when ``ready``."""
    error: str | None = None
    """Why it is ``failed`` (or ``disabled`` by an approval)."""


class ApprovalRequest(msgspec.Struct, kw_only=True, rename="camel"):
    """A server waiting for the user's approval, and what it would run."""

    name: str
    source: Source
    transport: Transport
    summary: str
    """The command line, or the URL (without its query); secrets redacted."""
    env: list[str]
    """The names of the variables its entry sets (never their values)."""


@dataclass(slots=True)
class _Server:
    config: ServerConfig
    status: Status = "starting"
    error: str | None = None
    tools: list[Any] = field(default_factory=list)
    connection: Connection | None = None
    starting: asyncio.Task[None] | None = None
    retry: bool = True
    """Whether it may be started by itself (false after a failed start or a crash loop)."""
    stops: list[float] = field(default_factory=list)
    denied: bool = False

    @property
    def name(self) -> str:
        return self.config.name


_LIVE: weakref.WeakSet[McpManager] = weakref.WeakSet()
"""Managers not closed yet: closed at interpreter exit if their owner forgot (a server that
ignores the end of its stdin would otherwise outlive us)."""
_LIVE_LOCK = threading.Lock()
_at_exit_registered = False


def _close_at_exit() -> None:
    for manager in list(_LIVE):
        manager.close_blocking()


def _track(manager: McpManager) -> None:
    global _at_exit_registered
    with _LIVE_LOCK:
        _LIVE.add(manager)
        if not _at_exit_registered:
            atexit.register(_close_at_exit)
            _at_exit_registered = True


class McpManager:
    """The MCP servers of one workspace (see the module docstring).

    ``workspace`` is where local servers run and what approvals are keyed by; ``trust`` holds
    the approvals (one per process, shared by every workspace); ``environ`` is the environment
    local servers inherit (default ``os.environ``; provider credentials are always left out).
    """

    def __init__(self, workspace: Path, trust: TrustStore, *,
                 options: McpOptions | None = None,
                 on_change: Callable[[list[ServerInfo]], None] | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self.workspace = workspace
        self.trust = trust
        self.options = options or McpOptions()
        self._on_change = on_change
        self._environ = environ
        self._thread = LoopThread()
        self._servers: dict[str, _Server] = {}
        self._names: dict[str, tuple[str, str]] = {}
        self._listing: tuple[ServerInfo, ...] = ()
        self._pending: tuple[ApprovalRequest, ...] = ()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._connections: set[Connection] = set()
        """Every connection whose owner may still run (a start that timed out tears down in
        the background): :meth:`close` waits for them all."""
        self._closed = False
        _track(self)

    # -- reading (any thread) ----------------------------------------------------------------
    def listing(self) -> list[ServerInfo]:
        """Every configured server and its state (a snapshot; cheap)."""
        return list(self._listing)

    def pending_approvals(self) -> list[ApprovalRequest]:
        """The servers waiting for :meth:`approve`, with what they would run."""
        return list(self._pending)

    def resolve(self, name: str) -> tuple[str, str] | None:
        """``(server, tool)`` of a model tool name offered by :meth:`tools`, or ``None``."""
        return self._names.get(name)

    @property
    def closed(self) -> bool:
        return self._closed

    # -- the public async API (the caller's loop) --------------------------------------------
    async def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._closed:
            coro.close()
            raise LoopClosed("the MCP manager is closed")
        return await self._thread.run(coro)

    async def configure(self, servers: Iterable[ServerConfig]) -> list[ServerInfo]:
        """Use ``servers`` (merged: :func:`pseudoclaude.mcp.config.collect`) from now on. A
        server whose entry did not change keeps running; a changed or removed one is stopped
        (in the background). Starts nothing. Returns the listing."""
        configs = list(servers)
        with contextlib.suppress(LoopClosed):
            await self._run(self._configure(configs))
        return self.listing()

    async def tools(self) -> list[McpTool]:
        """The tools for a run: every server that can start is started (concurrently, each
        within ``mcp.startTimeout``; one that stopped is restarted), and the tools of the ready
        ones are returned, named for the model. Never raises for a server's failure."""
        try:
            return await self._run(self._tools())
        except LoopClosed:
            return []

    async def call(self, server: str, tool: str, arguments: Any) -> McpCallResult:
        """Call ``tool`` of ``server``; always a result (the server is started or restarted
        first when needed). Cancelling the caller cancels the call on the server."""
        try:
            return await self._run(self._call(server, tool, arguments))
        except LoopClosed:
            return McpCallResult.error("unavailable", "the MCP servers are shut down")

    async def call_tool(self, name: str, arguments: Any) -> McpCallResult:
        """:meth:`call` by the model's name of the tool (one :meth:`tools` offered)."""
        target = self.resolve(name)
        if target is None:
            return McpCallResult.error("unknown_tool", f"unknown MCP tool {name!r}")
        return await self.call(*target, arguments)

    async def approve(self, name: str, decision: Decision) -> ServerInfo | None:
        """The user's answer for a server waiting for approval: ``allow_once`` (this
        process), ``allow_session`` (remembered in the user's data folder) or ``deny`` (this
        process: ``disabled``; a remembered approval is withdrawn, so a later process asks
        again). An approved server starts in the background. Returns its
        listing entry (``None``: no such server)."""
        try:
            return await self._run(self._approve(name, decision))
        except LoopClosed:
            return None

    async def restart(self, name: str) -> ServerInfo | None:
        """Stop ``name`` and start it again (also after a failed start); its listing entry,
        or ``None`` when there is no such server."""
        try:
            return await self._run(self._restart(name))
        except LoopClosed:
            return None

    def warm(self) -> None:
        """Start, in the background, every server not started yet that may start (returns at
        once): each is ``ready`` or ``failed`` within ``mcp.startTimeout``. A server waiting
        for an approval starts once approved; one that stopped waits, as always, for the next
        run that needs it, and one whose start failed for :meth:`restart` or a changed entry; a
        disabled one never starts."""
        if self._closed:
            return
        with contextlib.suppress(LoopClosed):
            self._thread.submit(self._warm()).add_done_callback(_log_failure)

    async def close(self) -> None:
        """End every session and child process, waiting at most about
        ``options.close_timeout`` seconds; never raises, never hangs. Idempotent."""
        if self._closed:
            return
        self._closed = True
        _LIVE.discard(self)
        if self._thread.started:
            try:
                future = self._thread.submit(self._shutdown())
                await asyncio.wait_for(asyncio.wrap_future(future),
                                       self.options.close_timeout + 2.0)
            except (TimeoutError, LoopClosed):
                log.warning("MCP servers did not all stop within %.0f s",
                            self.options.close_timeout)
            except Exception:
                log.exception("stopping the MCP servers failed")
        await asyncio.get_running_loop().run_in_executor(None, self._thread.stop)

    def close_blocking(self, timeout: float | None = None) -> None:
        """:meth:`close` for a thread without an event loop (an exit handler); not on the
        MCP thread."""
        if self._closed:
            return
        self._closed = True
        _LIVE.discard(self)
        if self._thread.started and not self._thread.in_thread():
            try:
                self._thread.submit(self._shutdown(timeout)).result(
                    (timeout or self.options.close_timeout) + 2.0)
            except Exception:
                log.warning("MCP servers did not all stop in time")
        self._thread.stop()

    # -- on the MCP thread -------------------------------------------------------------------
    def _info(self, entry: _Server) -> ServerInfo:
        tools = [str(t.name) for t in entry.tools] if entry.status == "ready" else []
        return ServerInfo(name=entry.name, source=entry.config.source, status=entry.status,
                          tools=tools, error=entry.error)

    def _changed(self) -> None:
        listing = tuple(self._info(e) for e in self._servers.values())
        self._pending = tuple(
            ApprovalRequest(name=e.name, source=e.config.source, transport=e.config.transport,
                            summary=e.config.summary(), env=sorted(e.config.env))
            for e in self._servers.values() if e.status == "needsApproval")
        if listing == self._listing:
            return
        self._listing = listing
        if self._on_change is not None:
            try:
                self._on_change(list(listing))
            except Exception:
                log.exception("the MCP change hook failed")

    def _idle(self, entry: _Server) -> None:
        """The state of a server that is not running, from its entry and the approvals."""
        config = entry.config
        entry.tools = []
        if config.problem:
            entry.status, entry.error = "failed", config.problem
        elif config.disabled:
            entry.status, entry.error = "disabled", None
        elif config.denied:
            entry.status, entry.error = "disabled", "its entry says `approval: deny`"
        elif entry.denied:
            entry.status, entry.error = "disabled", "not approved"
        elif config.needs_approval and not self.trust.is_approved(
                self.workspace, config.name, config.fingerprint):
            entry.status, entry.error = "needsApproval", None
        else:
            entry.status, entry.error = "starting", None

    async def _configure(self, configs: list[ServerConfig]) -> None:
        old = self._servers
        new: dict[str, _Server] = {}
        for config in configs:
            entry = old.get(config.name)
            if entry is not None and entry.config == config:
                new[config.name] = entry
                if entry.connection is None and entry.starting is None \
                        and entry.status in ("starting", "needsApproval"):
                    self._idle(entry)  # an approval may have come from elsewhere
                continue
            entry = _Server(config=config)
            self._idle(entry)
            new[config.name] = entry
        gone = [e for name, e in old.items() if new.get(name) is not e]
        self._servers = new
        for entry in gone:
            self._drop(entry)
        self._changed()

    def _drop(self, entry: _Server) -> None:
        """Stop a server that is no longer configured (in the background)."""
        if entry.starting is not None:
            entry.starting.cancel()
        connection, entry.connection = entry.connection, None
        if connection is not None:
            self._background(connection.stop(self.options.close_timeout))

    def _background(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _startable(self, entry: _Server) -> bool:
        if entry.connection is not None and entry.connection.usable:
            return False
        if entry.starting is not None:
            return True
        if entry.status == "starting":
            return True
        return entry.status == "failed" and entry.retry and not entry.config.problem

    async def _ensure(self, entry: _Server) -> Connection | str:
        """The server's live connection (started or restarted first), or why there is
        none."""
        connection = entry.connection
        if connection is not None and connection.usable:
            return connection
        if connection is not None and entry.starting is None:
            # it stopped, and the news has not arrived yet: the same as when it does
            self._lost(entry, connection, connection.lost_reason or "the server stopped")
        if entry.starting is None:
            if entry.connection is None and entry.status in ("starting", "needsApproval"):
                self._idle(entry)  # approvals may have changed
                self._changed()
            if not self._startable(entry):
                return self._unavailable(entry)
            entry.starting = asyncio.get_running_loop().create_task(self._start(entry))
        await asyncio.shield(entry.starting)
        connection = entry.connection
        if connection is not None and connection.usable:
            return connection
        return self._unavailable(entry)

    def _unavailable(self, entry: _Server) -> str:
        name = entry.name
        if entry.status == "needsApproval":
            return (f"the MCP server `{name}` (from {entry.config.source} configuration) has "
                    "not been approved yet")
        if entry.status == "disabled":
            return f"the MCP server `{name}` is disabled" + (
                f" ({entry.error})" if entry.error else "")
        return f"the MCP server `{name}` is not available: {entry.error or 'it did not start'}"

    async def _start(self, entry: _Server) -> None:
        from pseudoclaude.mcp.connection import Connection, StartFailed

        try:
            connection = Connection(entry.config, cwd=self.workspace, environ=self._environ,
                                    on_lost=lambda c, why: self._lost(entry, c, why),
                                    on_tools_changed=lambda c, t: self._retooled(entry, c, t))
            entry.connection = connection
            self._connections = {c for c in self._connections if not c.ended}
            self._connections.add(connection)
            entry.status, entry.error, entry.tools = "starting", None, []
            self._changed()
            log.info("starting MCP server %s: %s", entry.name, entry.config.summary())
            try:
                tools = await connection.start(self.options.start_timeout)
            except StartFailed as exc:
                if entry.connection is connection:
                    entry.connection = None
                    entry.status, entry.error, entry.retry = "failed", str(exc), False
                    log.warning("MCP server %s did not start: %s", entry.name, exc)
                return
            if entry.connection is connection and connection.usable:
                entry.status, entry.error, entry.tools, entry.retry = "ready", None, tools, True
                log.info("MCP server %s is ready (%d tools)", entry.name, len(tools))
        finally:
            entry.starting = None
            self._changed()

    def _lost(self, entry: _Server, connection: Connection, reason: str) -> None:
        if entry.connection is not connection:
            return
        entry.connection = None
        now = time.monotonic()
        window = self.options.restart_window
        entry.stops = [t for t in entry.stops if now - t < window] + [now]
        entry.status, entry.tools = "failed", []
        if len(entry.stops) >= self.options.max_restarts:
            entry.retry = False
            entry.error = (f"{reason}; it stopped {len(entry.stops)} times within "
                           f"{window:g} s, so it is not restarted by itself")
        else:
            entry.retry = True
            entry.error = f"{reason}; it restarts when next needed"
        self._changed()

    def _retooled(self, entry: _Server, connection: Connection, tools: list[Any]) -> None:
        if entry.connection is connection and entry.status == "ready":
            entry.tools = tools
            self._changed()

    async def _tools(self) -> list[McpTool]:
        await asyncio.gather(*(self._ensure(e) for e in list(self._servers.values())))
        ready = [e for e in self._servers.values() if e.status == "ready"]
        pairs = [(e.name, str(t.name)) for e in ready for t in e.tools]
        names = naming.assign(pairs)
        by_pair = {pair: name for name, pair in names.items()}
        self._names = {**self._names, **names}  # a name offered to an earlier run still works
        return [make_tool(by_pair[(e.name, str(t.name))], e.name, t, self.call)
                for e in ready for t in e.tools]

    async def _call(self, server: str, tool: str, arguments: Any) -> McpCallResult:
        entry = self._servers.get(server)
        if entry is None:
            return McpCallResult.error("unknown_tool", f"no MCP server named {server!r}")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            return McpCallResult.error("invalid_arguments", f"the arguments of `{tool}` are "
                                       "not a JSON object")
        connection = await self._ensure(entry)
        if isinstance(connection, str):
            return McpCallResult.error("unavailable", connection)
        result = await connection.call(tool, arguments, self.options.tool_timeout)
        if result.error_type == "connection_lost":
            self._lost(entry, connection, connection.lost_reason or "the server stopped")
        return result

    async def _approve(self, name: str, decision: Decision) -> ServerInfo | None:
        entry = self._servers.get(name)
        if entry is None:
            return None
        config = entry.config
        if decision == "deny":
            entry.denied = True
            try:  # a remembered "allow for this session" is withdrawn: it would start it again
                await asyncio.get_running_loop().run_in_executor(
                    None, self.trust.forget, self.workspace, name)
            except OSError as exc:
                log.warning("the approval of MCP server %s cannot be withdrawn (%s); it is "
                            "denied in this process", name, exc.strerror or type(exc).__name__)
        else:
            entry.denied = False
            if decision == "allow_session":
                try:
                    await asyncio.get_running_loop().run_in_executor(
                        None, self.trust.remember, self.workspace, name, config.fingerprint)
                except OSError as exc:
                    log.warning("the approval of MCP server %s cannot be saved (%s); it holds "
                                "for this process", name, exc.strerror or type(exc).__name__)
            else:
                self.trust.approve_once(self.workspace, name, config.fingerprint)
        if entry.connection is None and entry.starting is None:
            self._idle(entry)
        self._changed()
        if entry.status == "starting" and entry.connection is None:
            self._background(self._ensure(entry))
        return self._info(entry)

    async def _restart(self, name: str) -> ServerInfo | None:
        entry = self._servers.get(name)
        if entry is None:
            return None
        if entry.starting is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(entry.starting)
        connection, entry.connection = entry.connection, None
        if connection is not None:
            await connection.stop(self.options.close_timeout)
        entry.stops, entry.retry = [], True
        self._idle(entry)
        self._changed()
        await self._ensure(entry)
        return self._info(entry)

    async def _warm(self) -> None:
        fresh = []
        for entry in list(self._servers.values()):
            if entry.connection is None and entry.starting is None \
                    and entry.status in ("starting", "needsApproval"):
                self._idle(entry)  # approvals may have changed
            if entry.connection is None and entry.starting is None \
                    and entry.status == "starting":
                fresh.append(entry)
        self._changed()
        await asyncio.gather(*(self._ensure(e) for e in fresh))

    async def _shutdown(self, timeout: float | None = None) -> None:
        timeout = timeout or self.options.close_timeout
        entries = list(self._servers.values())
        for entry in entries:
            if entry.starting is not None:
                entry.starting.cancel()
        connections = self._connections | {c for e in entries if (c := e.connection)}
        stops = [c.stop(timeout * 0.6) for c in connections]
        for entry in entries:
            entry.connection = None
        pending = [t for t in self._tasks if not t.done()]
        jobs = [asyncio.ensure_future(s) for s in stops]
        if jobs or pending:
            await asyncio.wait([*jobs, *pending], timeout=timeout)


def _log_failure(future: Any) -> None:
    if not future.cancelled() and future.exception() is not None:
        log.error("starting the MCP servers failed", exc_info=future.exception())
