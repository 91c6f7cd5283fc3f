"""The ACP agent: the handlers of ACP's requests over the core's workspaces (SPEC §11 "ACP").

A second thin front end, like the LSP server. This module answers the requests and wires the
parts, each in its own module: the workspaces of the folders (:mod:`.folders`), the prompt
turns and their live updates (:mod:`.turns`), a loaded session's replay (:mod:`.replay`),
slash commands (:mod:`.slash`), approvals (:mod:`.permission`), the updates sent
(:mod:`.outbox`) and errors (:mod:`.errors`).

``session/load`` takes any session of the folder; ``session/resume`` opens one the same way
without replaying it; ``session/close`` cancels a session's prompt and closes it (its lock
released); ``session/delete`` removes a session's folder unless it is being written. A prompt
for another session of the same folder makes it the folder's current one (resumed from its log
first). A session runs one thing at a time (a prompt, ``/compact``, ``/undo``): a second one
fails with :data:`~.errors.BUSY`.

``session/delete`` is in ACP's schema, but the package (0.12) routes no request to a handler
for it: the transport hands it over as the extension method ``_session/delete``
(:data:`UNROUTED`), which :meth:`PseudoClaudeAgent.ext_method` serves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.meta import AGENT_METHODS
from acp.schema import (
    AgentCapabilities,
    CloseSessionResponse,
    DeleteSessionRequest,
    DeleteSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from pseudoclaude import __version__
from pseudoclaude.acp import slash, turns
from pseudoclaude.acp.editor import AcpEditor, offers_fs
from pseudoclaude.acp.errors import answers, busy, invalid, unknown_session
from pseudoclaude.acp.folders import Folders, SettingsFor
from pseudoclaude.acp.modes import current_mode, current_plan, mode_state, plan_update
from pseudoclaude.acp.options import MODEL_OPTION, OPTIONS, config_options, options_update
from pseudoclaude.acp.outbox import Outbox
from pseudoclaude.acp.permission import AcpApprover
from pseudoclaude.acp.replay import replay
from pseudoclaude.acp.subagents import SubAgentCards
from pseudoclaude.acp.transport import StdioTransport
from pseudoclaude.acp.turns import Turn
from pseudoclaude.acp.updates import AcpStopReason, ContentBlock, prompt_text, usage
from pseudoclaude.api import commands
from pseudoclaude.config import API_KEY_ENV, Settings
from pseudoclaude.events import Event, ModeEvent, TasksEvent
from pseudoclaude.workspace import (
    MODES,
    Hooks,
    PermissionsError,
    UnknownModel,
    Workspace,
    is_session_id,
    rfc3339,
)

__all__ = ["PseudoClaudeAgent", "SettingsFor"]

log = logging.getLogger("pseudoclaude.acp")

PAGE = 100
"""Sessions per ``session/list`` page (``nextCursor`` gives the next one)."""
SESSION_DELETE = AGENT_METHODS["session_delete"]
UNROUTED = (SESSION_DELETE,)
"""ACP requests the package has no route for: received as extension methods
(:meth:`PseudoClaudeAgent.ext_method`)."""


class PseudoClaudeAgent:
    """The handlers of the ``agent-client-protocol`` package's ``Agent`` protocol."""

    def __init__(self, transport: StdioTransport, settings: SettingsFor) -> None:
        self.transport = transport
        self.outbox = Outbox(transport)
        self.folders = Folders(transport, settings, self._make_workspace)
        self._client: Client | None = None
        self._fs = (False, False)  # the client's fs.readTextFile, fs.writeTextFile
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self.turns: dict[str, Turn] = {}
        self.cards = SubAgentCards(self.outbox)
        """The cards of the sub-agents (:mod:`.subagents`)."""
        self._intro: set[str] = set()
        """Sessions whose commands, usage and tasks follow the response (new, resumed)."""
        self._resuming: dict[Any, str] = {}
        """The ``session/resume`` requests not answered yet: request id → session id."""
        transport.on_message = self._received
        transport.on_sent = self._after_sent
        transport.route_as_extensions(UNROUTED)
        for name in API_KEY_ENV.values():
            transport.add_secret(os.environ.get(name))

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    def _make_workspace(self, root: Path, settings: Settings) -> Workspace:
        def session() -> str | None:  # the approver asks in the folder's current session
            ws = self.folders.workspaces.get(root)
            return ws.session_id if ws is not None else None

        approver = AcpApprover(root, self.outbox, client=lambda: self._client, session=session,
                               cards=self.cards)
        ws = Workspace(root, settings, approver=approver, hooks=Hooks(
            events=lambda sid, event: self._on_loop(self._on_event, root, sid, event),
            memory_changed=lambda level, source: self._on_loop(self._memory_changed, root)))
        reads, writes = self._fs
        if reads:  # the client's buffers: reads (and writes, when offered) go through it
            ws.set_editor(AcpEditor(lambda: self._client, session, writes=writes))
        return ws

    # -- initialize -------------------------------------------------------------------------------
    @answers
    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        self._fs = offers_fs(client_capabilities)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False,
                                                       embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(), resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(), delete=SessionDeleteCapabilities())),
            agent_info=Implementation(name="pseudoclaude", title="PseudoClaude",
                                      version=__version__),
            auth_methods=[])

    # -- sessions ---------------------------------------------------------------------------------
    @answers
    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None,
                          **kwargs: Any) -> NewSessionResponse:
        ws = self.folders.workspace(cwd)
        _use_mcp(ws, mcp_servers)
        ws.keep_current(None)
        session_id = await ws.new_session()  # (other sessions of the folder may be running)
        self.folders.sessions[session_id] = ws.root
        self._intro.add(session_id)  # commands and usage follow the response (_after_sent)
        return NewSessionResponse(session_id=session_id, modes=mode_state(ws, session_id),
                                  config_options=list(config_options(ws, session_id)))

    def _received(self, message: dict[str, Any]) -> None:
        self.outbox.peek(message)
        params = message.get("params")
        if message.get("method") == AGENT_METHODS["session_resume"] and "id" in message \
                and isinstance(params, dict):
            self._resuming[message["id"]] = str(params.get("sessionId"))

    def _after_sent(self, message: dict[str, Any]) -> None:
        if "method" in message:  # a request or notification of ours, not an answer
            return
        result = message.get("result")
        resumed = self._resuming.pop(message.get("id"), None)  # its answer says no session
        session_id = resumed or (result.get("sessionId") if isinstance(result, dict) else None)
        if "result" in message and isinstance(session_id, str) and session_id in self._intro:
            self._intro.discard(session_id)
            self._introduce(session_id)

    def _introduce(self, session_id: str) -> None:
        """What a client learns of a session it opened: the commands, the usage, and the task
        list when it has one."""
        root = self.folders.sessions.get(session_id)
        self.outbox.post(session_id, slash.available_commands(
            self.folders.workspaces.get(root) if root else None))
        self._send_usage(session_id)
        plan = current_plan(self.folders.workspaces[root], session_id) if root else None
        if plan is not None:
            self.outbox.post(session_id, plan)

    @answers
    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        if session_id in self.turns:
            raise busy(f"a prompt is running in session {session_id}; cancel it or wait for it "
                       "to finish")
        ws = await self._open(cwd, session_id, mcp_servers)
        items = (await ws.transcript(session_id)).items
        for update in replay(items, ws.root, compaction_updates=self.outbox.compaction):
            self.outbox.post(session_id, update)
        self._introduce(session_id)
        return LoadSessionResponse(modes=mode_state(ws, session_id),
                                   config_options=list(config_options(ws, session_id)))

    @answers
    async def resume_session(self, cwd: str, session_id: str,
                             mcp_servers: list[Any] | None = None,
                             **kwargs: Any) -> ResumeSessionResponse:
        """``session/load`` without the replay: the client shows the history it has."""
        ws = await self._open(cwd, session_id, mcp_servers)
        self._intro.add(session_id)  # commands, usage and tasks follow the response
        return ResumeSessionResponse(modes=mode_state(ws, session_id),
                                     config_options=list(config_options(ws, session_id)))

    async def _open(self, cwd: str, session_id: str, mcp_servers: list[Any] | None
                    ) -> Workspace:
        """A session of ``cwd`` made the folder's current one (resumed from its log when it
        is not) and an ACP session of this process from now on."""
        ws = self.folders.workspace(cwd)
        _use_mcp(ws, mcp_servers)
        if not is_session_id(session_id):
            raise unknown_session(f"not a session id: {session_id[:100]!r}", session_id)
        if ws.session_id != session_id:
            ws.keep_current(session_id)
            await ws.resume(session_id)
        self.folders.sessions[session_id] = ws.root
        return ws

    @answers
    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Cancel the session's prompt (it answers ``cancelled``) and wait for it to end,
        then close the session: its log closed, its lock released (another process may write
        it now). It stays on disk: ``session/load`` or ``session/resume`` open it again."""
        ws = self.folders.of_session(session_id)
        turn = self.turns.get(session_id)
        if turn is not None and turn.task is not None:
            turn.cancelled = True
            turn.task.cancel()
            await asyncio.gather(turn.task, return_exceptions=True)
        await ws.close_session(session_id)
        self._forget(session_id)
        return CloseSessionResponse()

    @answers
    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """Remove the session's folder (its log and tool results): a session of a folder
        this process opened. Refused (``-32001``) while a prompt runs in it, in this process or
        another."""
        if session_id in self.turns:
            raise busy(f"a prompt is running in session {session_id}: cancel it, or close the "
                       "session, before deleting it")
        ws = self.folders.having(session_id)
        await ws.delete_session(session_id)
        self._forget(session_id)
        return DeleteSessionResponse()

    def _forget(self, session_id: str) -> None:
        self.folders.sessions.pop(session_id, None)
        self._intro.discard(session_id)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The requests of :data:`UNROUTED` (the package validates nothing of them: this
        does), and nothing else."""
        if method != SESSION_DELETE:
            raise RequestError.method_not_found(f"_{method}")
        request = DeleteSessionRequest.model_validate(params)
        answer = await self.delete_session(session_id=request.session_id)
        return answer.model_dump(mode="json", by_alias=True, exclude_none=True)

    # -- permission modes -------------------------------------------------------------------------
    @answers
    async def set_session_mode(self, session_id: str, mode_id: str,
                               **kwargs: Any) -> SetSessionModeResponse:
        await self._set_mode(session_id, mode_id, "modeId")
        return SetSessionModeResponse()

    @answers
    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        if config_id not in OPTIONS:
            raise invalid("configId", f"unknown config option {config_id[:60]!r} (known: "
                                      f"{', '.join(OPTIONS)})")
        if not isinstance(value, str):
            raise invalid("value", f"must be one of the {config_id} option's values")
        if config_id == MODEL_OPTION:
            ws = await self._set_model(session_id, value)
        else:
            ws = await self._set_mode(session_id, value, "value")
        return SetSessionConfigOptionResponse(
            config_options=list(config_options(ws, session_id)))

    async def _set_model(self, session_id: str, model: str) -> Workspace:
        ws = self.folders.of_session(session_id)
        try:
            await ws.set_model(model, session_id)
        except UnknownModel as exc:
            raise invalid("value", str(exc)) from None
        self.outbox.post(session_id, options_update(ws, session_id))
        return ws

    async def _set_mode(self, session_id: str, mode: str, field: str) -> Workspace:
        ws = self.folders.of_session(session_id)
        if mode not in MODES:
            raise invalid(field, f"unknown mode {mode[:40]!r} (one of {', '.join(MODES)})")
        try:
            await ws.set_mode(mode, session_id)
        except PermissionsError as exc:
            raise invalid(field, str(exc)) from None
        return ws

    @answers
    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        """The sessions of ``cwd``, or of every folder this process has opened, newest
        first."""
        workspaces = [self.folders.workspace(cwd, start=False)] if cwd is not None \
            else list(self.folders.workspaces.values())
        found = []
        for ws in workspaces:
            for info in await ws.sessions():
                found.append((info.updated, SessionInfo(
                    session_id=info.id, cwd=str(ws.root), title=info.title,
                    updated_at=rfc3339(info.updated),
                    field_meta={"pseudoclaude": {"messageCount": info.message_count,
                                                 "model": info.model,
                                                 "createdAt": rfc3339(info.created)}})))
        found.sort(key=lambda item: item[0], reverse=True)
        start = 0
        if cursor is not None:
            if not cursor.isdigit() or int(cursor) > len(found):
                raise invalid("cursor", "not a cursor of this agent")
            start = int(cursor)
        page = [info for _, info in found[start:start + PAGE]]
        more = start + PAGE < len(found)
        return ListSessionsResponse(sessions=page,
                                    next_cursor=str(start + PAGE) if more else None)

    # -- prompts ----------------------------------------------------------------------------------
    @answers
    async def prompt(self, prompt: list[ContentBlock], session_id: str,
                     **kwargs: Any) -> PromptResponse:
        ws = self.folders.of_session(session_id)
        if session_id in self.turns:
            raise busy(f"a prompt is already running in session {session_id}; cancel it or "
                       "wait for it to finish")
        text = prompt_text(prompt)
        if not text.strip():
            raise invalid("prompt", "is empty")
        self.folders.refresh_settings(ws)
        turn = Turn(session_id)
        self.turns[session_id] = turn
        task = turn.task = asyncio.ensure_future(self._turn(ws, turn, text))
        reason: AcpStopReason
        try:
            reason = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not turn.cancelled or (current is not None and current.cancelling()):
                raise
            reason = "cancelled"
        finally:
            if not task.done():
                task.cancel()
            self.turns.pop(session_id, None)
            turns.close_calls(self.outbox, turn)
            self._send_usage(session_id)
        return PromptResponse(stop_reason="cancelled" if turn.cancelled else reason)

    async def _turn(self, ws: Workspace, turn: Turn, text: str) -> AcpStopReason:
        command = commands.parse(text)
        if command is None:
            return await turns.run_prompt(ws, turn, text)
        name, argument = command
        if name.name == "plan" and argument.strip():  # /plan TASK: plan mode, then the task
            await slash.run(ws, turn, self.outbox, name, "")
            return await turns.run_prompt(ws, turn, argument.strip())
        await slash.run(ws, turn, self.outbox, *command)
        return "end_turn"

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        turn = self.turns.get(session_id)
        if turn is None or turn.task is None:
            log.info("session/cancel: nothing is running in %s", session_id[:100])
            return
        turn.cancelled = True
        turn.task.cancel()

    # -- events -----------------------------------------------------------------------------------
    def _on_loop(self, fn: Callable[..., None], *args: Any) -> None:
        if threading.get_ident() == self._loop_thread:
            fn(*args)
        else:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens
                self._loop.call_soon_threadsafe(fn, *args)

    def _on_event(self, root: Path, session_id: str, event: Event) -> None:
        if not session_id or self.folders.sessions.get(session_id) != root:
            return
        if isinstance(event, ModeEvent):
            self.outbox.post(session_id, current_mode(event.mode))
            self.outbox.post(session_id, options_update(self.folders.workspaces[root],
                                                        session_id))
            return
        if isinstance(event, TasksEvent):
            self.outbox.post(session_id, plan_update(event))
            return
        turns.forward(self.outbox, self.folders.workspaces[root], root, session_id,
                      self.turns.get(session_id), event, self._send_usage, self.cards)

    def _memory_changed(self, root: Path) -> None:
        """The memory index is part of the next request: a new usage."""
        ws = self.folders.workspaces.get(root)
        if ws is not None and ws.session_id is not None:
            self._send_usage(ws.session_id)

    def _send_usage(self, session_id: str) -> None:
        ws = self.folders.current(session_id)
        if ws is not None:
            self.outbox.post(session_id, usage(ws.context()))

    # -- shutdown ---------------------------------------------------------------------------------
    async def close(self) -> None:
        """End of input: cancel what runs, then close every workspace (memory updates are
        drained, bounded; logs closed)."""
        tasks = [turn.task for turn in self.turns.values() if turn.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for ws in list(self.folders.workspaces.values()):
            try:
                await ws.close()
            except Exception as exc:
                log.warning("closing %s: %s", ws.root, exc)


def _use_mcp(ws: Workspace, servers: list[Any] | None) -> None:
    """The client's MCP servers (source ``acp``) for the folder, merged with its own."""
    if servers is not None and (servers or ws.mcp.acp_servers):
        ws.mcp.configure(acp_servers=servers)
