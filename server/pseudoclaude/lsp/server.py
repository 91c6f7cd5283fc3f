"""The pygls server: one :class:`~pseudoclaude.workspace.Workspace` per folder (SPEC §8).

Built by :func:`create_server` (a fresh instance each time, for tests). Custom params stay
plain dicts (``lsprotocol.converters.get_converter``); each request of
:data:`pseudoclaude.api.methods.REQUESTS` is registered as a request and as the matching
``workspace/executeCommand`` command, and advertised under ``capabilities.experimental``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import uuid
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any, cast

from lsprotocol import converters, types
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.uris import to_fs_path

from pseudoclaude import __version__
from pseudoclaude.api import protocol as p
from pseudoclaude.api.methods import LONG_RUNNING, RequestFailed, call, context_usage
from pseudoclaude.config import ConfigError, load_settings
from pseudoclaude.errors import EXPECTED_ERRORS, PseudoClaudeError, one_line
from pseudoclaude.events import CompactEvent, Event, StopEvent, ToolCallEvent, UsageUpdate
from pseudoclaude.llm.provider import preload
from pseudoclaude.lsp.approver import LspApprover
from pseudoclaude.lsp.logs import LspLogHandler
from pseudoclaude.lsp.settings import merge_settings
from pseudoclaude.workspace import Hooks, Workspace

log = logging.getLogger("pseudoclaude.lsp")

SECTION = p.EXPERIMENTAL_KEY


class PseudoClaudeProtocol(LanguageServerProtocol):
    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, Any]:
        server = self._server
        assert isinstance(server, PseudoClaudeServer)
        options = params.initialization_options
        server.init_options = options if isinstance(options, dict) else {}
        result = yield from super().lsp_initialize(params)
        result.capabilities.experimental = {SECTION: p.to_wire(p.Capability())}
        return result


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
        self._progress: dict[str, str] = {}  # folder uri -> progress token of its long work
        self._tasks: set[asyncio.Task[Any]] = set()

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
            proposals_changed=lambda count: self.on_loop(self._proposals_changed, uri, count)))
        approver.session_id = lambda: ws.session_id
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

    async def close_workspace(self, uri: str) -> None:
        ws = self.workspaces.pop(uri, None)
        if ws is not None:
            await ws.close()

    # -- notifications -------------------------------------------------------------------------
    def _forward(self, uri: str, session_id: str, event: Event) -> None:
        self.protocol.notify(p.EVENT, p.event_params(uri, session_id, event))
        if isinstance(event, UsageUpdate | CompactEvent | StopEvent):
            self.send_context_usage(uri)
        if isinstance(event, ToolCallEvent):
            self._report_progress(uri, f"{event.name}")

    def send_context_usage(self, uri: str) -> None:
        ws = self.workspaces.get(uri)
        if ws is None:
            return
        self.protocol.notify(p.CONTEXT_USAGE, p.to_wire(context_usage(uri, ws)))

    def _memory_changed(self, uri: str, level: str, source: str) -> None:
        self.protocol.notify(p.MEMORY_CHANGED, p.to_wire(
            p.MemoryChangedParams(workspace=uri, level=cast(p.MemoryLevel, level), source=source)))
        self.send_context_usage(uri)  # the memory index is part of the next request

    def _proposals_changed(self, uri: str, count: int) -> None:
        self.protocol.notify(p.MEMORY_PROPOSALS_CHANGED, p.to_wire(
            p.MemoryProposalsParams(workspace=uri, count=count)))

    # -- progress ------------------------------------------------------------------------------
    async def begin_progress(self, uri: str, title: str, token: Any) -> str | None:
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
        self.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title,
                                                                         cancellable=False))
        self._progress[uri] = token
        return str(token)

    def _report_progress(self, uri: str, message: str) -> None:
        token = self._progress.get(uri)
        if token is not None:
            self.work_done_progress.report(token, types.WorkDoneProgressReport(message=message))

    def end_progress(self, uri: str, message: str) -> None:
        token = self._progress.pop(uri, None)
        if token is not None:
            self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))

    # -- requests ------------------------------------------------------------------------------
    async def call(self, method: str, raw: Any) -> Any:
        """Run one custom request: validation, workspace, progress, error mapping."""
        try:
            params = p.as_object(raw)
            uri, ws = self.resolve(params.pop("workspace", None))
            token = params.pop("workDoneToken", None)
            if method not in LONG_RUNNING:
                result = await call(ws, method, params)
                if method in p.SESSION_CHANGES:
                    self.send_context_usage(uri)
                return p.to_wire(result)
            await self.begin_progress(uri, LONG_RUNNING[method], token)
            outcome = "canceled"
            try:
                result = await call(ws, method, params)
                outcome = str(getattr(result, "stop_reason", "done"))
                if method in p.SESSION_CHANGES:
                    self.send_context_usage(uri)
                return p.to_wire(result)
            except Exception:
                outcome = "failed"
                raise
            finally:
                self.end_progress(uri, outcome)
        except p.ParamError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
        except EXPECTED_ERRORS as exc:
            raise JsonRpcException(message=one_line(exc), code=p.REQUEST_FAILED) from None
        except asyncio.CancelledError:
            raise
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
        for provider in {ws.settings.provider for ws in server.workspaces.values()}:
            server.spawn(preload(provider))

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

    @server.feature(types.SHUTDOWN)
    async def shutdown(params: None) -> None:
        for uri in list(server.workspaces):
            await server.close_workspace(uri)  # drains memory updates, closes session logs

    @server.feature(types.EXIT)
    def exit_(params: None) -> None:
        for ws in server.workspaces.values():
            ws.stop_watching()

    return server


def _register(server: PseudoClaudeServer, method: str) -> None:
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
