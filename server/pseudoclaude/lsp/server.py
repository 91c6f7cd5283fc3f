"""The pygls server: one :class:`~pseudoclaude.workspace.Workspace` per folder (SPEC §8).

Built by :func:`create_server` (a fresh instance each time, for tests). Custom params stay
plain dicts (``lsprotocol.converters.get_converter``); each request of
:data:`pseudoclaude.api.methods.REQUESTS` is registered as a request and as the matching
``workspace/executeCommand`` command, and advertised under ``capabilities.experimental``.

Staying responsive while a run streams (a read-only request answers in about its idle time):

- streamed ``text`` deltas are merged (:mod:`pseudoclaude.api.coalesce`): at most one
  ``pseudoclaude/event`` per stream every 16 ms while a model streams fast, flushed before any
  other message goes out, so nothing overtakes them;
- stdin, when it is a pipe (as editors start the server), is read by the event loop itself
  (:meth:`PseudoClaudeServer.start_io`): pygls's reader makes a worker-thread round trip for
  every header line and body, each waiting for the GIL and for the loop;
- the requests of :data:`~pseudoclaude.api.methods.IMMEDIATE` (``context``, ``slashCommands``)
  are plain functions, answered in the loop turn that reads them;
- the provider SDK is imported in a worker thread right after ``initialized``, with no full
  garbage collection meanwhile, and frozen afterwards (:func:`preload_providers`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import logging
import os
import stat
import sys
import threading
import uuid
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, cast

from lsprotocol import converters, types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.uris import to_fs_path

from pseudoclaude import __version__
from pseudoclaude.api import protocol as p
from pseudoclaude.api.coalesce import TextCoalescer
from pseudoclaude.api.methods import (
    IMMEDIATE,
    LONG_RUNNING,
    RequestFailed,
    call,
    call_now,
    context_usage,
)
from pseudoclaude.config import ConfigError, load_settings
from pseudoclaude.errors import EXPECTED_ERRORS, PseudoClaudeError, one_line
from pseudoclaude.events import (
    CompactEvent,
    Event,
    StopEvent,
    TextEvent,
    ToolCallEvent,
    UsageUpdate,
)
from pseudoclaude.lsp.approver import LspApprover
from pseudoclaude.lsp.editor import Documents, LspEditor
from pseudoclaude.lsp.logs import LspLogHandler
from pseudoclaude.lsp.settings import merge_settings
from pseudoclaude.workspace import Hooks, SessionBusy, Workspace, on_write, preload_provider

log = logging.getLogger("pseudoclaude.lsp")

SECTION = p.EXPERIMENTAL_KEY
ProgressValue = (types.WorkDoneProgressBegin | types.WorkDoneProgressReport
                 | types.WorkDoneProgressEnd)


@dataclass
class Progress:
    """The ``$/progress`` of one long request (a run, a compaction, an undo) in the folder
    ``uri``. It begins once the request has taken its session (``session_id``: a run of
    ``new`` learns its id only then), and every value names that session."""

    uri: str
    token: str | int
    title: str
    session_id: str | None = None


@functools.cache
def _converter() -> Any:
    return converters.get_converter()


def progress_value(value: ProgressValue, session_id: str) -> dict[str, Any]:
    """A ``$/progress`` value as lsprotocol writes it, with ``sessionId`` beside its fields (a
    client that runs several sessions of a folder at once tells their progress apart)."""
    wire: dict[str, Any] = _converter().unstructure(value)
    return {**wire, "sessionId": session_id}


class PseudoClaudeProtocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, Any]:
        server = self._server
        assert isinstance(server, PseudoClaudeServer)
        options = params.initialization_options
        server.init_options = options if isinstance(options, dict) else {}
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {SECTION: p.to_wire(p.Capability())}
        result.capabilities.text_document_sync = types.TextDocumentSyncOptions(
            open_close=True, change=types.TextDocumentSyncKind.Incremental)
        return result

    # The documents' text is kept by the server's own store (lsp/editor.Documents), not by
    # pygls's workspace (whose incremental change re-splits the whole text).
    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params: types.DidOpenTextDocumentParams) -> None:
        self._documents().opened(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams
                                      ) -> None:
        self._documents().changed(params)

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params: types.DidCloseTextDocumentParams) -> None:
        self._documents().closed(params.text_document.uri)

    def _documents(self) -> Documents:
        server = self._server
        assert isinstance(server, PseudoClaudeServer)
        return server.documents

    def _send_data(self, data: Any) -> None:
        """Every message (pygls sends them all through here) goes out after the text deltas
        held for merging: a ``stop``, a tool call or a response never overtakes text."""
        server = self._server
        if data and isinstance(server, PseudoClaudeServer) and server.held_text.pending:
            server.flush_text()
        super()._send_data(data)


class _StdinProtocol(asyncio.Protocol):
    """JSON-RPC frames (``Content-Length`` headers, a JSON body) read from stdin by the event
    loop and handled as soon as each is complete, in the loop turn that read it (pygls's
    ``run_async`` does the same per frame, a task step later)."""

    def __init__(self, protocol: LanguageServerProtocol,
                 on_error: Callable[[Exception, type[JsonRpcException]], Any]) -> None:
        self.protocol = protocol
        self.on_error = on_error
        self.buffer = bytearray()
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (body := self._next_body()) is not None:
            if not body:  # a frame without a Content-Length (or 0): nothing to handle
                continue
            try:
                message = json.loads(body, object_hook=self.protocol.structure_message)
                self.protocol.handle_message(message)
            except Exception as exc:  # as pygls: report it, read on
                log.exception("unable to handle a message")
                self.on_error(exc, JsonRpcException)

    def _next_body(self) -> bytes | None:
        """The next complete frame's body, taken off the buffer (None: none is complete)."""
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            return None
        length = 0
        for line in bytes(self.buffer[:end]).split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                with contextlib.suppress(ValueError):  # not a number: the frame is skipped
                    length = max(0, int(value.strip()))
        start = end + 4
        if len(self.buffer) < start + length:
            return None
        body = bytes(self.buffer[start:start + length])
        del self.buffer[:start + length]
        return body

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def _is_pipe(stream: BinaryIO) -> bool:
    """A pipe or a socket, which the event loop can read (not a terminal, not a file)."""
    if os.name != "posix":
        return False
    try:
        mode = os.fstat(stream.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


class PseudoClaudeServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(name="pseudoclaude", version=__version__,
                         protocol_cls=PseudoClaudeProtocol,
                         converter_factory=converters.get_converter)
        self.init_options: dict[str, Any] = {}
        self.client_settings: dict[str, dict[str, Any]] = {}  # folder uri -> pulled settings
        self.workspaces: dict[str, Workspace] = {}  # folder uri -> its workspace
        self.loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread: int | None = None
        self._progress: dict[tuple[str, str], Progress] = {}  # (folder uri, session id) ->
        # the progress of the long request writing that session
        self._tasks: set[asyncio.Task[Any]] = set()
        self.documents = Documents(self)  # the client's open documents
        self.editors: dict[str, LspEditor] = {}  # folder uri -> the agent's view of the editor
        self.held_text = TextCoalescer()  # streamed deltas waiting to go out merged
        self._text_timer: asyncio.TimerHandle | None = None

    # -- stdio -------------------------------------------------------------------------------
    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve over stdio. A pipe (how editors start the server) is read by the event loop:
        a message that arrives while a run streams is parsed and handled in the next loop turn.
        pygls's own reader (kept for a terminal or a file) reads every header line and body in
        a worker thread, a round trip through the GIL and the loop's queue each."""
        stdin = stdin or sys.stdin.buffer
        if not _is_pipe(stdin):
            super().start_io(stdin, stdout)
            return
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(self._serve_pipe(stdin))
        except BrokenPipeError:
            log.error("the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        finally:
            self.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it untyped

    async def _serve_pipe(self, stdin: BinaryIO) -> None:
        """Until stdin ends (or ``exit``, whose ``sys.exit`` ends the loop)."""
        reader = _StdinProtocol(self.protocol, self.report_server_error)
        transport, _ = await asyncio.get_running_loop().connect_read_pipe(lambda: reader, stdin)
        try:
            await reader.closed
        finally:
            transport.close()

    # -- the loop ----------------------------------------------------------------------------
    def on_loop(self, fn: Callable[..., None], *args: Any) -> None:
        """Run ``fn`` on the server's loop (now when already there; watchdog and worker
        threads hop)."""
        if self.loop is None or threading.get_ident() == self._loop_thread:
            fn(*args)
        else:
            self.loop.call_soon_threadsafe(fn, *args)

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._task_done)

    def _task_done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("background task failed: %s", task.exception())

    # -- folders and settings ------------------------------------------------------------------
    def folder_uris(self) -> list[str]:
        folders = list(self.workspace.folders) if self.workspace else []
        if not folders and self.workspace is not None and self.workspace.root_uri:
            folders = [self.workspace.root_uri]
        return folders

    def settings_for(self, uri: str) -> dict[str, Any]:
        return merge_settings(self.init_options, self.client_settings.get(uri))

    async def pull_configuration(self, uris: list[str]) -> None:
        """Ask the client for section ``pseudoclaude`` per folder (when it can answer)."""
        caps = self.client_capabilities
        can_pull = bool(caps and caps.workspace and caps.workspace.configuration)
        if not can_pull or not uris:
            return
        try:
            answers = await asyncio.wait_for(self.workspace_configuration_async(
                types.ConfigurationParams(items=[
                    types.ConfigurationItem(section=SECTION, scope_uri=uri) for uri in uris])),
                timeout=10)
        except Exception as exc:  # a client that fails to answer keeps initializationOptions
            log.warning("workspace/configuration failed: %s", exc)
            return
        for uri, answer in zip(uris, answers or [], strict=False):
            if isinstance(answer, dict):
                self.client_settings[uri] = answer

    def workspace_for(self, uri: str) -> Workspace:
        existing = self.workspaces.get(uri)
        if existing is not None:
            return existing
        root = Path(to_fs_path(uri) or "")
        if not root.is_dir():
            raise RequestFailed(f"workspace folder {uri} is not a folder on this machine")
        settings = load_settings(root, self.settings_for(uri))
        approver = LspApprover(self, uri)
        ws = Workspace(root, settings, approver=approver, hooks=Hooks(
            events=lambda sid, event: self.on_loop(self._forward, uri, sid, event),
            memory_changed=lambda level, source: self.on_loop(
                self._memory_changed, uri, level, source),
            proposals_changed=lambda count: self.on_loop(self._proposals_changed, uri, count),
            mcp_changed=lambda: self._mcp_changed(uri)))
        approver.session_id = lambda: ws.session_id
        ws.set_editor(self.editor_for(uri))
        self.workspaces[uri] = ws
        ws.start()
        self.spawn(ws.announce_pending())  # proposals waiting from an earlier process
        return ws

    def resolve(self, requested: Any) -> tuple[str, Workspace]:
        """The folder a request is for: ``workspace`` if given, else the only folder."""
        folders = self.folder_uris()
        if requested is None:
            if len(folders) == 1:
                return folders[0], self.workspace_for(folders[0])
            if not folders:
                raise RequestFailed("no workspace folder is open; open a folder first")
            raise p.ParamError("workspace", "several workspace folders are open; name one of: "
                             + ", ".join(folders))
        if not isinstance(requested, str):
            raise p.ParamError("workspace", "must be a folder URI (a string)")
        wanted = to_fs_path(requested)
        for uri in folders:
            if uri == requested or (wanted and to_fs_path(uri) == wanted):
                return uri, self.workspace_for(uri)
        raise p.ParamError("workspace", f"{requested} is not one of the workspace folders: "
                         + ", ".join(folders))

    def apply_settings(self) -> None:
        for uri, ws in self.workspaces.items():
            try:
                ws.update_settings(load_settings(ws.root, self.settings_for(uri)))
            except ConfigError as exc:
                log.warning("%s: %s (keeping the previous settings)", uri, exc)
                self.window_show_message(types.ShowMessageParams(
                    type=types.MessageType.Warning, message=str(exc)))

    def editor_for(self, uri: str) -> LspEditor:
        """The agent's view of the editor in the folder ``uri``."""
        editor = self.editors.get(uri)
        if editor is None:
            root = Path(to_fs_path(uri) or "")
            editor = self.editors[uri] = LspEditor(self, self.documents, uri, root)
        return editor

    def code_actions(self, params: types.CodeActionParams) -> list[types.CodeAction]:
        """The code actions of the folder the document is in (none outside the folders)."""
        for uri in self.folder_uris():
            editor = self.editor_for(uri)
            if editor.relative(params.text_document.uri) is not None:
                return editor.code_actions(params)
        return []

    async def close_workspace(self, uri: str) -> None:
        self.editors.pop(uri, None)
        ws = self.workspaces.pop(uri, None)
        if ws is not None:
            await ws.close()

    # -- notifications -------------------------------------------------------------------------
    def _forward(self, uri: str, session_id: str, event: Event) -> None:
        params = p.event_params(uri, session_id, event)
        if isinstance(event, TextEvent):
            self._hold_text(params)
            return
        self.protocol.notify(p.EVENT, params)  # after the text held so far (_send_data)
        if isinstance(event, UsageUpdate | CompactEvent | StopEvent):
            self.send_context_usage(uri)
        if isinstance(event, ToolCallEvent):
            self._report_progress(uri, session_id, f"{event.name}")

    def _hold_text(self, params: dict[str, Any]) -> None:
        due = self.held_text.add(params)
        if due <= 0:
            self.flush_text()
        elif self._text_timer is None:
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # not on a loop (no timer to wait for): now
                self.flush_text()
                return
            self._text_timer = loop.call_later(due, self.flush_text)

    def flush_text(self) -> None:
        """Send the text deltas held so far, merged (one notification per stream)."""
        if self._text_timer is not None:
            self._text_timer.cancel()
            self._text_timer = None
        for params in self.held_text.take():
            self.protocol.notify(p.EVENT, params)

    def send_context_usage(self, uri: str) -> None:
        ws = self.workspaces.get(uri)
        if ws is None:
            return
        self.protocol.notify(p.CONTEXT_USAGE, p.to_wire(context_usage(uri, ws)))

    def _memory_changed(self, uri: str, level: str, source: str) -> None:
        self.protocol.notify(p.MEMORY_CHANGED, p.to_wire(
            p.MemoryChangedParams(workspace=uri, level=cast(p.MemoryLevel, level), source=source)))
        self.send_context_usage(uri)  # the memory index is part of the next request

    def _mcp_changed(self, uri: str) -> None:
        self.protocol.notify(p.MCP_CHANGED, p.to_wire(p.McpChangedParams(workspace=uri)))
        self.send_context_usage(uri)  # the tools' schemas are part of the next request

    def _proposals_changed(self, uri: str, count: int) -> None:
        self.protocol.notify(p.MEMORY_PROPOSALS_CHANGED, p.to_wire(
            p.MemoryProposalsParams(workspace=uri, count=count)))

    # -- progress ------------------------------------------------------------------------------
    # Keyed by folder and session: several sessions of a folder run at once, each request with
    # its own token; every value carries ``sessionId``.
    async def new_progress(self, uri: str, title: str, token: Any) -> Progress | None:
        """The progress of a long request: the client's ``workDoneToken``, else a fresh token
        the client created (``window/workDoneProgress/create``); ``None``: no progress."""
        if token is None:
            caps = self.client_capabilities
            if not (caps and caps.window and caps.window.work_done_progress):
                return None
            token = str(uuid.uuid4())  # tokens are never released: always a fresh one
            try:
                await asyncio.wait_for(self.work_done_progress.create_async(token), timeout=5)
            except Exception as exc:
                log.info("no progress: %s", exc)
                return None
        elif isinstance(token, bool) or not isinstance(token, str | int):
            return None  # not a progress token (JSON true is not an integer here)
        return Progress(uri, token, title)

    def begin_progress(self, progress: Progress, session_id: str) -> None:
        """The request has taken its session (:func:`~pseudoclaude.workspace.on_write`): its
        progress begins, for that session (a later write the request makes is not news)."""
        if progress.session_id is not None:
            return
        progress.session_id = session_id
        self._progress[(progress.uri, session_id)] = progress
        self._send_progress(progress, types.WorkDoneProgressBegin(title=progress.title,
                                                                  cancellable=False))

    def _report_progress(self, uri: str, session_id: str, message: str) -> None:
        progress = self._progress.get((uri, session_id))
        if progress is not None:
            self._send_progress(progress, types.WorkDoneProgressReport(message=message))

    def end_progress(self, progress: Progress, message: str) -> None:
        """The request is over (a progress that never began has nothing to end)."""
        if progress.session_id is None:
            return
        key = (progress.uri, progress.session_id)
        if self._progress.get(key) is progress:
            del self._progress[key]
        self._send_progress(progress, types.WorkDoneProgressEnd(message=message))

    def _send_progress(self, progress: Progress, value: ProgressValue) -> None:
        assert progress.session_id is not None
        self.protocol.notify(types.PROGRESS, types.ProgressParams(
            token=progress.token, value=progress_value(value, progress.session_id)))

    # -- requests ------------------------------------------------------------------------------
    def call_now(self, method: str, raw: Any) -> Any:
        """Answer a request of :data:`~pseudoclaude.api.methods.IMMEDIATE` (read-only, never
        waits) without leaving the loop turn that read it."""
        with _errors_mapped(method):
            params = p.as_object(raw)
            _, ws = self.resolve(params.pop("workspace", None))
            params.pop("workDoneToken", None)
            return p.to_wire(call_now(ws, method, params))

    async def call(self, method: str, raw: Any) -> Any:
        """Run one custom request: validation, workspace, progress, error mapping."""
        with _errors_mapped(method):
            params = p.as_object(raw)
            uri, ws = self.resolve(params.pop("workspace", None))
            token = params.pop("workDoneToken", None)
            if method not in LONG_RUNNING:
                result = await call(ws, method, params)
                if method in p.SESSION_CHANGES:
                    self.send_context_usage(uri)
                return p.to_wire(result)
            progress = await self.new_progress(uri, LONG_RUNNING[method], token)
            outcome = "canceled"
            try:
                with self._progress_of(progress):
                    result = await call(ws, method, params)
                outcome = str(getattr(result, "stop_reason", "done"))
                if method in p.SESSION_CHANGES:
                    self.send_context_usage(uri)
                return p.to_wire(result)
            except Exception:
                outcome = "failed"
                raise
            finally:
                if progress is not None:
                    self.end_progress(progress, outcome)

    def _progress_of(self, progress: Progress | None) -> contextlib.AbstractContextManager[None]:
        """While a long request runs: its progress begins when it takes its session."""
        if progress is None:
            return contextlib.nullcontext()
        return on_write(lambda session_id, _doing: self.begin_progress(progress, session_id))


@contextlib.contextmanager
def _errors_mapped(method: str) -> Iterator[None]:
    """A request's failure as the JSON-RPC error the client gets."""
    try:
        yield
    except p.ParamError as exc:
        raise JsonRpcInvalidParams(str(exc)) from None
    except SessionBusy as exc:
        raise JsonRpcException(message=one_line(exc), code=p.SESSION_BUSY, data=p.to_wire(
            p.SessionBusyData(session_id=exc.session_id, pid=exc.pid))) from None
    except EXPECTED_ERRORS as exc:
        raise JsonRpcException(message=one_line(exc), code=p.REQUEST_FAILED) from None
    except JsonRpcException:
        raise
    except Exception as exc:
        log.exception("%s failed", method)
        raise JsonRpcException(message=f"{method} failed: {one_line(exc)}",
                               code=p.REQUEST_FAILED) from None


def create_server() -> PseudoClaudeServer:
    server = PseudoClaudeServer()
    for method in p.REQUESTS:
        _register(server, method)

    @server.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        server.loop = asyncio.get_running_loop()
        server._loop_thread = threading.get_ident()
        LspLogHandler.install(server)
        await server.pull_configuration(server.folder_uris())
        for uri in server.folder_uris():
            try:
                server.workspace_for(uri)
            except PseudoClaudeError as exc:
                log.warning("%s: %s", uri, exc)
        server.spawn(preload_providers({ws.settings.provider
                                        for ws in server.workspaces.values()}))

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    async def did_change_configuration(params: types.DidChangeConfigurationParams) -> None:
        caps = server.client_capabilities
        if caps and caps.workspace and caps.workspace.configuration:
            await server.pull_configuration(server.folder_uris())
        else:
            settings = params.settings
            if isinstance(settings, dict):
                section = settings.get(SECTION, settings)
                if isinstance(section, dict):
                    for uri in server.folder_uris():
                        server.client_settings[uri] = section
        server.apply_settings()

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def did_change_folders(params: types.DidChangeWorkspaceFoldersParams) -> None:
        for folder in params.event.removed:
            await server.close_workspace(folder.uri)
        added = [folder.uri for folder in params.event.added]
        await server.pull_configuration(added)
        for uri in added:
            try:
                server.workspace_for(uri)
            except PseudoClaudeError as exc:
                log.warning("%s: %s", uri, exc)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix]))
    def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        return server.code_actions(params)

    @server.feature(types.SHUTDOWN)
    async def shutdown(params: None) -> None:
        server.flush_text()
        for uri in list(server.workspaces):
            await server.close_workspace(uri)  # drains memory updates, closes session logs

    @server.feature(types.EXIT)
    def exit_(params: None) -> None:
        for ws in server.workspaces.values():
            ws.stop_watching()

    return server


async def preload_providers(providers: set[str | None]) -> None:
    """Import the providers' SDKs ahead of the first run (in a worker thread:
    :func:`~pseudoclaude.workspace.preload_provider`), without stalling the loop.

    The import makes ~200,000 objects; a full garbage collection among them holds the GIL for
    100-150 ms, and the loop waits as long (one to three happen during the import). So, while
    it lasts, only the young generations are collected; afterwards everything imported so far
    is frozen (:func:`gc.freeze`, a few dozen garbage objects with it): a later full collection
    skips it, instead of taking ~160 ms at a random moment."""
    thresholds = gc.get_threshold()
    gc.set_threshold(thresholds[0], thresholds[1], 1 << 30)  # no full collection
    try:
        for provider in sorted(name for name in providers if name):
            await preload_provider(provider)
    finally:
        gc.freeze()
        gc.set_threshold(*thresholds)


def _register(server: PseudoClaudeServer, method: str) -> None:
    if method in IMMEDIATE:
        _register_immediate(server, method)
        return

    async def request(params: Any) -> Any:
        return await server.call(method, params)

    async def command(*args: Any) -> Any:
        if len(args) > 1:
            raise JsonRpcInvalidParams(
                f"{p.command_name(method)} takes one argument (the params object), "
                f"got {len(args)}")
        return await server.call(method, args[0] if args else None)

    request.__name__ = command.__name__ = method.replace("/", "_")
    server.feature(method)(request)
    server.command(p.command_name(method))(command)


def _register_immediate(server: PseudoClaudeServer, method: str) -> None:
    """Plain functions: pygls answers them in the loop turn that reads the request."""
    def request(params: Any) -> Any:
        return server.call_now(method, params)

    def command(*args: Any) -> Any:
        if len(args) > 1:
            raise JsonRpcInvalidParams(
                f"{p.command_name(method)} takes one argument (the params object), "
                f"got {len(args)}")
        return server.call_now(method, args[0] if args else None)

    request.__name__ = command.__name__ = method.replace("/", "_")
    server.feature(method)(request)
    server.command(p.command_name(method))(command)
