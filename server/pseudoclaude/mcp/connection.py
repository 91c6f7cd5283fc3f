"""One session with one MCP server, through the official SDK, on the MCP thread's loop.

A :class:`Connection` is one attempt: :meth:`~Connection.start` runs it, and once it has
ended (stopped, failed, or lost) it is never reused: the manager makes a new one to restart.
The SDK's transports are anyio context managers that must be entered and left by the same
task, so each connection has an *owner* task that enters the ``Client`` (which spawns the
process, or opens the HTTP session, and does the handshake), lists the tools, reports ready and
then waits until it is told to stop or the connection is lost; calls run in their own tasks
and share the client. The owner's body runs in an anyio cancel scope: aborting (a start that
took too long, a stop that took too long) cancels that scope, and the SDK's shielded shutdown
still ends the process (stdin closed, then SIGTERM, then SIGKILL of its process group).

A lost connection (the server's stdout reached its end: it exited; or the transport failed) is
reported to ``on_lost`` with a one-line reason. A local server's stderr goes to the log
(:mod:`pseudoclaude.mcp.stderr`); its environment is ours without provider credentials
(:func:`pseudoclaude.redact.without_credentials`) plus its entry's ``env``; it runs in the
workspace. Messages never contain the server's secrets.

This module imports the SDK: import it on the MCP thread (the manager does, lazily).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any

import anyio
import httpx2
import mcp_types as types
from mcp import Client, MCPError, StdioServerParameters
from mcp.client.session import IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import CONNECTION_CLOSED, REQUEST_TIMEOUT
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from pseudoclaude import __version__
from pseudoclaude.mcp.config import ServerConfig
from pseudoclaude.mcp.results import McpCallResult, convert
from pseudoclaude.mcp.secrets import safe_url, scrub_text
from pseudoclaude.mcp.stderr import StderrLog
from pseudoclaude.redact import without_credentials

log = logging.getLogger("pseudoclaude.mcp")

MAX_TOOL_PAGES = 100
HTTP_TIMEOUT = 30.0
HTTP_READ_TIMEOUT = 300.0
CALL_GRACE = 5.0
"""Beyond the call timeout the SDK enforces, the call's own backstop."""


class StartFailed(Exception):
    """The server could not be started; the message is one line for the user."""


class _WatchedRead:
    """The transport's read stream, telling ``on_end`` when it ends (the server is gone)."""

    def __init__(self, inner: Any, on_end: Callable[[], None]) -> None:
        self._inner = inner
        self._on_end = on_end

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        try:
            item: SessionMessage | Exception = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_end()
            raise
        return item

    def __aiter__(self) -> _WatchedRead:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _WatchedRead:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc_val: BaseException | None, exc_tb: TracebackType | None) -> None:
        await self.aclose()


@contextlib.asynccontextmanager
async def _watched(transport: contextlib.AbstractAsyncContextManager[Any],
                   on_end: Callable[[], None]) -> AsyncIterator[Any]:
    async with transport as (read, write):
        yield _WatchedRead(read, on_end), write


def _leaf(exc: BaseException) -> BaseException:
    """The first real failure inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        inner = [e for e in exc.exceptions if not isinstance(e, asyncio.CancelledError)]
        exc = (inner or list(exc.exceptions))[0]
    return exc


def _one_line(text: str, limit: int = 500) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[:limit] + "…"


class Connection:
    """One attempt at a session with one server (see the module docstring)."""

    def __init__(self, config: ServerConfig, *, cwd: Path | None,
                 environ: Mapping[str, str] | None,
                 on_lost: Callable[[Connection, str], None],
                 on_tools_changed: Callable[[Connection, list[types.Tool]], None]) -> None:
        self.config = config
        self._cwd = cwd
        self._environ = environ
        self._on_lost = on_lost
        self._on_tools_changed = on_tools_changed
        self._client: Client | None = None
        self._scope: anyio.CancelScope | None = None
        self._owner: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[list[types.Tool]] | None = None
        self._wake: asyncio.Event | None = None
        self._stderr: StderrLog | None = None
        self._stopping = False
        self._lost_reason: str | None = None
        self._refresh: asyncio.Task[None] | None = None
        self.tools: list[types.Tool] = []

    # -- state -------------------------------------------------------------------------------
    @property
    def usable(self) -> bool:
        """Started, and neither lost nor stopping."""
        return (self._client is not None and not self._stopping and self._lost_reason is None)

    @property
    def lost_reason(self) -> str | None:
        """Why the connection ended by itself (``None`` while it lives, or when stopped)."""
        return self._lost_reason

    @property
    def ended(self) -> bool:
        return self._owner is not None and self._owner.done()

    def _say(self, text: str) -> str:
        return scrub_text(_one_line(text), self.config.secrets)

    def describe(self, exc: BaseException) -> str:
        """A failure as one line naming what was being started (secrets redacted)."""
        exc = _leaf(exc)
        config = self.config
        if isinstance(exc, OSError) and config.transport == "stdio" and exc.strerror and (
                exc.filename is not None or isinstance(exc, FileNotFoundError | PermissionError)):
            return self._say(f"cannot run `{config.command}`: {exc.strerror.lower()}")
        if isinstance(exc, MCPError):
            if exc.error.code == CONNECTION_CLOSED:
                if config.transport == "stdio":
                    last = self._stderr.tail[-1] if self._stderr and self._stderr.tail else ""
                    said = f"; its stderr ends with: {last}" if last else " (nothing on its stderr)"
                    return self._say(f"`{config.command}` exited before it answered{said}")
                return self._say(f"{safe_url(config.url)} closed the connection")
            return self._say(f"the server answered with an error: {exc.error.message}")
        if isinstance(exc, httpx2.HTTPStatusError):
            return self._say(f"{safe_url(config.url)} answered HTTP "
                             f"{exc.response.status_code}")
        if isinstance(exc, httpx2.TransportError):
            return self._say(f"cannot connect to {safe_url(config.url)}: "
                             f"{str(exc) or type(exc).__name__}")
        text = str(exc).strip()
        return self._say(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)

    # -- the transport -----------------------------------------------------------------------
    def _transport(self, stack: contextlib.AsyncExitStack
                   ) -> contextlib.AbstractAsyncContextManager[Any]:
        config = self.config
        if config.transport == "stdio":
            self._stderr = StderrLog(config.name, config.secrets)
            env = without_credentials(self._environ)
            env.update(config.env)
            params = StdioServerParameters(command=config.command, args=list(config.args),
                                           env=env, cwd=self._cwd)
            return stdio_client(params, errlog=self._stderr.writer)
        if config.transport == "sse":
            return sse_client(config.url, headers=dict(config.headers) or None,
                              timeout=HTTP_TIMEOUT, sse_read_timeout=HTTP_READ_TIMEOUT)
        http = httpx2.AsyncClient(headers=dict(config.headers),
                                  timeout=httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT))
        stack.push_async_callback(http.aclose)
        return streamable_http_client(config.url, http_client=http)

    def _ended_stream(self) -> None:
        if self._stopping or self._lost_reason is not None or self._client is None:
            return
        self._lost_reason = ("the server exited" if self.config.transport == "stdio"
                             else "the connection to the server was lost")
        if self._wake is not None:
            self._wake.set()

    # -- the owner ---------------------------------------------------------------------------
    async def _own(self) -> None:
        assert self._ready is not None and self._wake is not None
        ready, wake = self._ready, self._wake
        lost: str | None = None
        scope = self._scope = anyio.CancelScope()
        try:
            with scope:
                async with contextlib.AsyncExitStack() as stack:
                    transport = _watched(self._transport(stack), self._ended_stream)
                    client = Client(
                        transport, cache=None, message_handler=self._on_message,
                        logging_callback=self._on_log,
                        client_info=types.Implementation(name="pseudoclaude",
                                                         version=__version__))
                    await stack.enter_async_context(client)
                    if self._stderr is not None:
                        self._stderr.close_writer()  # the server has its own copy
                    self.tools = await self._list_tools(client)
                    self._client = client
                    if not ready.done():
                        ready.set_result(self.tools)
                    listener = None
                    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                        listener = asyncio.get_running_loop().create_task(self._listen(client))
                    try:
                        await wake.wait()
                    finally:
                        if listener is not None:
                            listener.cancel()
                            await asyncio.wait({listener}, timeout=1.0)
                    lost = self._lost_reason
        except Exception as exc:
            if not ready.done():
                if self._stderr is not None:  # let its last words reach the log first
                    self._stderr.close_writer()
                    await asyncio.get_running_loop().run_in_executor(None, self._stderr.join,
                                                                     0.5)
                ready.set_exception(StartFailed(self.describe(exc)))
            elif not self._stopping:
                lost = self._lost_reason or self.describe(exc)
        finally:
            self._client = None
            if self._stderr is not None:
                self._stderr.close_writer()
            if self._refresh is not None:
                self._refresh.cancel()
            if not ready.done():
                ready.set_exception(StartFailed("the start was abandoned"))
        if lost is not None and not self._stopping:
            self._lost_reason = lost
            log.info("MCP server %s: %s", self.config.name, lost)
            self._on_lost(self, lost)

    async def _list_tools(self, client: Client) -> list[types.Tool]:
        if client.server_capabilities.tools is None:
            return []
        tools: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(MAX_TOOL_PAGES):
            page = await client.list_tools(cursor=cursor)
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                break
        return tools

    async def _listen(self, client: Client) -> None:
        """List the tools again whenever the server says they changed (a 2026-era session
        asks for the events with ``subscriptions/listen``; earlier ones get them as
        notifications: :meth:`_on_message`)."""
        try:
            async with client.listen(tools_list_changed=True) as subscription:
                async for _event in subscription:
                    await self._relist()
        except Exception as exc:
            log.debug("MCP server %s sends no tool changes: %s", self.config.name,
                      self.describe(exc))

    async def _on_message(self, message: IncomingMessage) -> None:
        if isinstance(message, Exception):
            log.debug("MCP server %s: %s", self.config.name, self.describe(message))
        elif getattr(message, "method", None) == "notifications/tools/list_changed" and (
                self._refresh is None or self._refresh.done()):
            self._refresh = asyncio.get_running_loop().create_task(self._relist())
        await anyio.lowlevel.checkpoint()

    async def _relist(self) -> None:
        client = self._client
        if client is None:
            return
        try:
            tools = await self._list_tools(client)
        except Exception as exc:
            log.info("MCP server %s: listing its tools again failed: %s", self.config.name,
                     self.describe(exc))
            return
        if client is self._client:
            self.tools = tools
            self._on_tools_changed(self, tools)

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        log.debug("MCP server %s [%s] %s", self.config.name, params.level,
                  self._say(str(params.data)))

    # -- the public part ---------------------------------------------------------------------
    async def start(self, timeout: float) -> list[types.Tool]:
        """Start (spawn or connect, handshake, list the tools) within ``timeout`` seconds; the
        tools, or :class:`StartFailed`. Once only."""
        if self._owner is not None:
            raise RuntimeError("a connection starts once")
        loop = asyncio.get_running_loop()
        self._ready = loop.create_future()
        self._ready.add_done_callback(_retrieve)
        self._wake = asyncio.Event()
        self._owner = loop.create_task(self._own(), name=f"mcp-server-{self.config.name}")
        self._owner.add_done_callback(self._owner_done)
        try:
            return await asyncio.wait_for(asyncio.shield(self._ready), timeout)
        except TimeoutError:
            self.abort()
            raise StartFailed(f"did not answer within {timeout:g} s") from None
        except asyncio.CancelledError:
            self.abort()
            raise

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float
                   ) -> McpCallResult:
        """Call ``tool``; always a result (``asyncio.CancelledError`` propagates, after the
        SDK has told the server to give up)."""
        client = self._client
        name = self.config.name
        if client is None or not self.usable:
            return McpCallResult.error("connection_lost", f"the MCP server `{name}` is not "
                                       "running (it restarts on the next call)")
        try:
            with anyio.fail_after(timeout + CALL_GRACE):
                result = await client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        except TimeoutError:
            return self._timed_out(tool, timeout)
        except MCPError as exc:
            if exc.error.code == REQUEST_TIMEOUT:
                return self._timed_out(tool, timeout)
            if exc.error.code == CONNECTION_CLOSED or self._lost_reason is not None:
                self._ended_stream()
                return McpCallResult.error(
                    "connection_lost", f"the MCP server `{name}` stopped during the call "
                    f"({self._lost_reason or 'connection closed'}); it restarts on the next "
                    "call")
            return McpCallResult.error("protocol_error", self._say(
                f"the MCP server `{name}` refused the call: {exc.error.message}"))
        except Exception as exc:
            if self._lost_reason is not None or isinstance(_leaf(exc), httpx2.TransportError):
                self._ended_stream()
                return McpCallResult.error(
                    "connection_lost", f"the MCP server `{name}` stopped during the call "
                    f"({self.describe(exc)}); it restarts on the next call")
            log.warning("MCP call %s/%s failed", name, tool, exc_info=True)
            return McpCallResult.error("protocol_error", self._say(
                f"the MCP call `{tool}` of `{name}` failed: {self.describe(exc)}"))
        return convert(result)

    def _owner_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and (exc := task.exception()) is not None:
            log.debug("MCP server %s: the session ended with %s", self.config.name,
                      self.describe(exc))

    def _timed_out(self, tool: str, timeout: float) -> McpCallResult:
        return McpCallResult.error("timeout", f"the MCP tool `{tool}` of `{self.config.name}` "
                                   f"did not answer within {timeout:g} s")

    def abort(self) -> None:
        """Cancel the owner's body now (the SDK still ends the process)."""
        self._stopping = True
        if self._scope is not None:
            self._scope.cancel()
        elif self._owner is not None:
            self._owner.cancel()

    async def stop(self, timeout: float) -> None:
        """End the session and the process: politely, then by cancelling, at most about
        ``timeout`` seconds (plus the SDK's own bounded shutdown when it is cancelled)."""
        self._stopping = True
        if self._owner is None:
            return
        if self._wake is not None:
            self._wake.set()
        done, _ = await asyncio.wait({self._owner}, timeout=max(0.0, timeout))
        if not done:
            self.abort()
            await asyncio.wait({self._owner}, timeout=max(0.5, timeout / 2))
        if self._stderr is not None:
            self._stderr.close_writer()

    async def wait_ended(self, timeout: float) -> bool:
        """Wait for the owner to finish; whether it did."""
        if self._owner is None:
            return True
        done, _ = await asyncio.wait({self._owner}, timeout=timeout)
        return bool(done)


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a future's exception as seen (nobody may be waiting for it any more)."""
    if not future.cancelled():
        future.exception()

