"""The ACP agent: ACP sessions over the core's workspaces (SPEC §11 "ACP").

A second thin front end, like the LSP server: one :class:`~pseudoclaude.workspace.Workspace`
per folder (the ``cwd`` of ``session/new`` and ``session/load``), created on first use with
the settings of that folder (config files and environment, SPEC §7, plus the command line's
provider flags); any number of folders in one process. ACP session ids are the core's session
ids, so ``pseudoclaude sessions show ID`` shows an ACP session and ``session/load`` takes any
session of the folder. A workspace holds one session at a time: a prompt for another session
of the same folder resumes it from its log first. Each workspace runs one thing at a time (a
prompt, ``/compact``, ``/undo-compact``, a load): a second one fails with :data:`BUSY`.

Errors (JSON-RPC): bad params ``-32602`` (from the package's validation, with the fields
named, or ours: ``cwd``, prompt content); an unknown session ``-32002`` (resource not found);
a busy workspace or session :data:`BUSY` (``-32001``); any other failure ``-32603`` with a
one-line message (a run that ends with our stop reason ``error``: the provider's error, with
``data.stopReason = "error"``).

Stop reasons: ``completed`` → ``end_turn``; ``max_iterations`` and ``unknown_tool_limit`` →
``max_turn_requests``; ``canceled`` (``session/cancel``) → ``cancelled``; ``error`` → the
``-32603`` error above (not ``refusal``: ACP's refusal means the prompt is dropped from the
history, and ours stays in the log).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import threading
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    ContentToolCallContent,
    FileEditToolCallContent,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    TerminalToolCallContent,
    ToolCallStatus,
    ToolCallUpdate,
)
from pydantic import ValidationError

from pseudoclaude import __version__
from pseudoclaude.acp.transport import StdioTransport
from pseudoclaude.acp.updates import (
    STOP_REASONS,
    AcpStopReason,
    ContentBlock,
    UnsupportedContent,
    Update,
    agent_text,
    available_commands,
    compaction,
    locations,
    parse_command,
    prompt_text,
    replay,
    tool_call,
    tool_kind,
    tool_result,
    tool_status,
    usage,
    user_text,
    wire,
)
from pseudoclaude.agent.approvals import ApprovalRequest, ApprovalUnavailable, Decision
from pseudoclaude.compact import CompactOutcome
from pseudoclaude.compact.layer2 import BOUNDARY_REMINDER
from pseudoclaude.compact.plan import UndoOutcome
from pseudoclaude.config import API_KEY_ENV, Settings
from pseudoclaude.errors import EXPECTED_ERRORS, one_line
from pseudoclaude.events import (
    CompactEvent,
    ErrorEvent,
    Event,
    MemoryEvent,
    StopReason,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageUpdate,
    WarningEvent,
)
from pseudoclaude.llm.types import Message
from pseudoclaude.memory.manager import MemoryView
from pseudoclaude.session import SessionNotFound, is_session_id
from pseudoclaude.session.listing import rfc3339
from pseudoclaude.workspace import Hooks, Workspace, WorkspaceBusy

log = logging.getLogger("pseudoclaude.acp")

INVALID_PARAMS, NOT_FOUND, BUSY, FAILED = -32602, -32002, -32001, -32603
PAGE = 100
"""Sessions per ``session/list`` page (``nextCursor`` gives the next one)."""

SettingsFor = Callable[[Path], Settings]
ToolCallContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent
P = ParamSpec("P")
R = TypeVar("R")

OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_session", name="Allow for this session",
                     kind="allow_always"),
    PermissionOption(option_id="deny", name="Reject", kind="reject_once"),
]
"""``session/request_permission`` options; the chosen id is the core's decision."""
DECISIONS: dict[str, Decision] = {"allow_once": "allow_once", "allow_session": "allow_session",
                                  "deny": "deny"}


def invalid(field_name: str, message: str) -> RequestError:
    return RequestError(INVALID_PARAMS, f"Invalid params: {field_name}: {message}",
                        {"errors": [{"field": field_name, "message": message}]})


def as_request_error(exc: Exception) -> RequestError:
    """The JSON-RPC error for a failure of a request (see the module docstring)."""
    if isinstance(exc, RequestError):
        return exc
    if isinstance(exc, WorkspaceBusy):
        return RequestError(BUSY, one_line(exc), {"reason": "busy"})
    if isinstance(exc, SessionNotFound):
        return RequestError(NOT_FOUND, one_line(exc), None)
    if isinstance(exc, UnsupportedContent):
        return invalid("prompt", one_line(exc).removeprefix("prompt: "))
    if isinstance(exc, EXPECTED_ERRORS):
        return RequestError(FAILED, one_line(exc), None)
    log.error("internal error", exc_info=exc)
    return RequestError(FAILED, f"internal error: {one_line(exc)}", None)


def answers(handler: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Map a handler's failures to JSON-RPC errors (:func:`as_request_error`)."""
    @functools.wraps(handler)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await handler(*args, **kwargs)
        except Exception as exc:
            raise as_request_error(exc) from None
    return wrapper


@dataclass
class Turn:
    """A prompt in progress in one session."""

    session_id: str
    task: asyncio.Task[AcpStopReason] | None = None
    cancelled: bool = False
    open_calls: dict[str, str] = field(default_factory=dict)
    """Tool calls announced and not finished (id → tool name)."""
    compaction_id: str | None = None
    """The compaction of ``/compact``, announced ``in_progress``."""
    compaction_done: bool = False


class AcpApprover:
    """The core's :class:`~pseudoclaude.agent.approvals.Approver` for one workspace: asks
    with ``session/request_permission`` in the workspace's current session."""

    def __init__(self, agent: PseudoClaudeAgent, root: Path) -> None:
        self._agent = agent
        self._root = root

    async def ask(self, request: ApprovalRequest) -> Decision | None:
        return await self._agent.ask_permission(self._root, request)


class PseudoClaudeAgent:
    """The handlers of the ``agent-client-protocol`` package's ``Agent`` protocol."""

    def __init__(self, transport: StdioTransport, settings: SettingsFor) -> None:
        self.transport = transport
        self._settings = settings
        self._client: Client | None = None
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self.workspaces: dict[Path, Workspace] = {}
        self._started: set[Path] = set()
        self.sessions: dict[str, Path] = {}
        """ACP sessions of this process (new or loaded) → their workspace folder."""
        self.turns: dict[str, Turn] = {}
        self.compaction = False
        """The client advertised ``session.compaction``: compactions are sent as
        ``compaction_update``s (and a loaded summary as a completed compaction)."""
        self._intro: set[str] = set()
        transport.on_message = self._peek
        transport.on_sent = self._after_sent
        for name in API_KEY_ENV.values():
            transport.add_secret(os.environ.get(name))

    def on_connect(self, conn: Client) -> None:
        self._client = conn

    # -- initialize -------------------------------------------------------------------------------
    def _peek(self, message: dict[str, Any]) -> None:
        """The client's ``session.compaction`` capability (newer than the package's schema,
        which drops it): read from the raw ``initialize`` params."""
        if message.get("method") != "initialize":
            return
        params = message.get("params")
        capabilities = params.get("clientCapabilities") if isinstance(params, dict) else None
        session = capabilities.get("session") if isinstance(capabilities, dict) else None
        self.compaction = isinstance(session, dict) and isinstance(session.get("compaction"),
                                                                   dict)

    @answers
    async def initialize(self, protocol_version: int, client_capabilities: Any = None,
                         client_info: Any = None, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=False, audio=False,
                                                       embedded_context=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities())),
            agent_info=Implementation(name="pseudoclaude", title="PseudoClaude",
                                      version=__version__),
            auth_methods=[])

    # -- workspaces -------------------------------------------------------------------------------
    def _folder(self, cwd: Any) -> Path:
        if not isinstance(cwd, str) or not os.path.isabs(cwd):
            raise invalid("cwd", f"must be an absolute path, got {str(cwd)[:200]!r}")
        if not os.path.isdir(cwd):
            raise invalid("cwd", f"{cwd} is not a folder on this machine")
        return Path(cwd).resolve()

    def workspace(self, cwd: Any, *, start: bool = True) -> Workspace:
        """The workspace of ``cwd`` (made on first use); ``start``: watch its memory and
        clean up expired sessions, as the LSP server does for an open folder."""
        root = self._folder(cwd)
        ws = self.workspaces.get(root)
        if ws is None:
            ws = Workspace(root, self._settings(root), approver=AcpApprover(self, root),
                           hooks=Hooks(
                               events=lambda sid, event: self._on_loop(self._on_event, root,
                                                                       sid, event),
                               memory_changed=lambda level, source: self._on_loop(
                                   self._memory_changed, root)))
            self.workspaces[root] = ws
            self._add_secret(ws.settings)
        if start and root not in self._started:
            self._started.add(root)
            ws.start()
        return ws

    def _add_secret(self, settings: Settings) -> None:
        if settings.api_key is not None:
            self.transport.add_secret(settings.api_key.reveal())

    def _refresh_settings(self, ws: Workspace) -> None:
        """Before each prompt: config files edited since apply (a bad one fails the
        prompt with its message)."""
        settings = self._settings(ws.root)
        if settings != ws.settings:
            ws.update_settings(settings)
            self._add_secret(settings)

    def _session(self, session_id: str) -> Workspace:
        root = self.sessions.get(session_id)
        if root is None:
            raise RequestError(NOT_FOUND, f"unknown session {session_id[:100]!r}: start one with "
                               "session/new or open it with session/load first",
                               {"sessionId": session_id[:100]})
        return self.workspaces[root]

    # -- sessions ---------------------------------------------------------------------------------
    @answers
    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None,
                          **kwargs: Any) -> NewSessionResponse:
        ws = self.workspace(cwd)
        _ignore_mcp(mcp_servers)
        try:
            ws.keep_current(None)
            session_id = await ws.new_session()
        except WorkspaceBusy:  # another session of the folder is running: make this one aside
            session_id = await ws.new_session_aside()  # its first prompt resumes it
        self.sessions[session_id] = ws.root
        self._intro.add(session_id)  # commands and usage follow the response (_after_sent)
        return NewSessionResponse(session_id=session_id)

    def _after_sent(self, message: dict[str, Any]) -> None:
        result = message.get("result")
        session_id = result.get("sessionId") if isinstance(result, dict) else None
        if isinstance(session_id, str) and session_id in self._intro:
            self._intro.discard(session_id)
            self._introduce(session_id)

    def _introduce(self, session_id: str) -> None:
        self.post(session_id, available_commands())
        self._send_usage(session_id)

    @answers
    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        ws = self.workspace(cwd)
        _ignore_mcp(mcp_servers)
        if not is_session_id(session_id):
            raise RequestError(NOT_FOUND, f"not a session id: {session_id[:100]!r}",
                               {"sessionId": session_id[:100]})
        if session_id in self.turns:
            raise RequestError(BUSY, f"a prompt is running in session {session_id}; cancel it "
                               "or wait for it to finish", {"reason": "busy"})
        if ws.session_id != session_id:
            try:
                ws.keep_current(session_id)
                await ws.resume(session_id)
            except WorkspaceBusy:  # another session is running: its next prompt resumes it
                ws.check_session(session_id)
        _, _, messages = await ws.messages(session_id)
        self.sessions[session_id] = ws.root
        for item in replay(messages, ws.root):
            if isinstance(item, Message):  # a compaction summary
                if self.compaction:
                    self.post_raw(session_id, compaction(
                        uuid.uuid4().hex, "completed", summary=_summary_text(item)))
                else:
                    self.post(session_id, user_text(item.content))
            else:
                self.post(session_id, item)
        self._introduce(session_id)
        return LoadSessionResponse()

    @answers
    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        """The sessions of ``cwd``, or of every folder this process has opened, newest
        first."""
        roots = [self.workspace(cwd, start=False).root] if cwd is not None \
            else list(self.workspaces)
        found = []
        for root in roots:
            for info in await self.workspaces[root].sessions():
                found.append((info.updated, SessionInfo(
                    session_id=info.id, cwd=str(root), title=info.title,
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
        ws = self._session(session_id)
        if session_id in self.turns:
            raise RequestError(BUSY, f"a prompt is already running in session {session_id}; "
                               "cancel it or wait for it to finish", {"reason": "busy"})
        text = prompt_text(prompt)
        if not text.strip():
            raise invalid("prompt", "is empty")
        self._refresh_settings(ws)
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
            self._close_calls(turn)
            if ws.session_id == session_id:
                self._send_usage(session_id)
        return PromptResponse(stop_reason="cancelled" if turn.cancelled else reason)

    async def _turn(self, ws: Workspace, turn: Turn, text: str) -> AcpStopReason:
        command = parse_command(text)
        if command is not None:
            return await self._command(ws, turn, *command)
        ws.keep_current(turn.session_id)
        _, result = await ws.run(text, turn.session_id)
        if result.stop_reason == StopReason.ERROR:
            raise RequestError(FAILED, f"the run failed: {result.error or 'unknown error'}",
                               {"stopReason": "error", "sessionId": turn.session_id})
        return STOP_REASONS[result.stop_reason]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        turn = self.turns.get(session_id)
        if turn is None or turn.task is None:
            log.info("session/cancel: nothing is running in %s", session_id[:100])
            return
        turn.cancelled = True
        turn.task.cancel()

    def _close_calls(self, turn: Turn) -> None:
        """Calls left without a result (a cancelled run) end ``failed``, as the log has them
        (``canceled`` results)."""
        for call_id in list(turn.open_calls):
            self.post(turn.session_id, tool_result(
                call_id, is_error=True, text="canceled: the run was canceled",
                raw_output={"error_type": "canceled"}))
        turn.open_calls.clear()

    # -- slash commands ---------------------------------------------------------------------------
    async def _command(self, ws: Workspace, turn: Turn, name: str,
                       argument: str) -> AcpStopReason:
        session_id = turn.session_id
        if name == "memory":
            self.post(session_id, agent_text(describe_memory(await ws.memory_view())))
            return "end_turn"
        if ws.session_id != session_id:
            ws.keep_current(session_id)
            await ws.resume(session_id)
        if name == "compact":
            text = await self._compact(ws, turn, argument)
        else:
            try:
                text = describe_undo(await ws.undo_compact())
            except WorkspaceBusy:
                raise
            except EXPECTED_ERRORS as exc:
                text = f"Undo failed: {one_line(exc)}"
        self.post(session_id, agent_text(text))
        return "end_turn"

    async def _compact(self, ws: Workspace, turn: Turn, instructions: str) -> str:
        session_id = turn.session_id
        cid = turn.compaction_id = uuid.uuid4().hex
        if self.compaction:
            self.post_raw(session_id, compaction(cid, "in_progress"))
        try:
            result = await ws.compact(instructions)
        except asyncio.CancelledError:
            if self.compaction:
                self.post_raw(session_id, compaction(cid, "cancelled"))
            raise
        except WorkspaceBusy:
            raise
        except EXPECTED_ERRORS as exc:
            if self.compaction:
                self.post_raw(session_id, compaction(cid, "failed", error=one_line(exc)))
            return f"Compaction failed: {one_line(exc)}"
        text = describe_compaction(result)
        if self.compaction and not turn.compaction_done:  # no summary (Layer 1 only)
            self.post_raw(session_id, compaction(cid, "completed", summary=text))
        return text

    # -- events -----------------------------------------------------------------------------------
    def _on_loop(self, fn: Callable[..., None], *args: Any) -> None:
        if threading.get_ident() == self._loop_thread:
            fn(*args)
        else:
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody listens
                self._loop.call_soon_threadsafe(fn, *args)

    def _on_event(self, root: Path, session_id: str, event: Event) -> None:
        if not session_id or self.sessions.get(session_id) != root:
            return
        ws = self.workspaces[root]
        turn = self.turns.get(session_id)
        if isinstance(event, TextEvent):
            self.post(session_id, agent_text(event.delta))
        elif isinstance(event, ToolCallEvent):
            if turn is not None:
                turn.open_calls[event.id] = event.name
            self.post(session_id, tool_call(event.id, event.name, event.arguments, root,
                                            _first_status(ws, event.name)))
        elif isinstance(event, ToolResultEvent):
            if turn is not None:
                turn.open_calls.pop(event.id, None)
            error = event.error if isinstance(event.error, str) else None
            self.post(session_id, tool_result(
                event.id, is_error=event.is_error,
                text=(error if event.is_error and error else event.preview),
                raw_output={"bytes": event.bytes, **({"error": error} if error else {})}))
        elif isinstance(event, UsageUpdate):
            self._send_usage(session_id)
        elif isinstance(event, CompactEvent):
            if event.layer == 2 and self.compaction:
                cid = turn.compaction_id if turn and turn.compaction_id else uuid.uuid4().hex
                self.post_raw(session_id, compaction(cid, "completed",
                                                     summary=ws.current_summary()))
                if turn is not None:
                    turn.compaction_done = True
            self._send_usage(session_id)
        elif isinstance(event, ErrorEvent | WarningEvent):
            log.info("%s: %s", session_id, event.message)
        elif isinstance(event, MemoryEvent) and event.status == "failed":
            log.warning("memory update failed: %s", event.error)

    def _memory_changed(self, root: Path) -> None:
        """The memory index is part of the next request: a new usage."""
        ws = self.workspaces.get(root)
        if ws is not None and ws.session_id in self.sessions:
            self._send_usage(ws.session_id)

    def _send_usage(self, session_id: str | None) -> None:
        root = self.sessions.get(session_id or "")
        ws = self.workspaces.get(root) if root is not None else None
        if session_id and ws is not None and ws.session_id == session_id:
            self.post(session_id, usage(ws.context()))

    def post(self, session_id: str, update: Update) -> None:
        self.transport.post({"jsonrpc": "2.0", "method": "session/update",
                             "params": wire(session_id, update)})

    def post_raw(self, session_id: str, update: dict[str, Any]) -> None:
        """An update the package's schema does not have (``compaction_update``)."""
        self.transport.post({"jsonrpc": "2.0", "method": "session/update",
                             "params": {"sessionId": session_id, "update": update}})

    # -- approvals --------------------------------------------------------------------------------
    async def ask_permission(self, root: Path, request: ApprovalRequest) -> Decision | None:
        ws = self.workspaces.get(root)
        session_id = ws.session_id if ws is not None else None
        if self._client is None or session_id is None:
            raise ApprovalUnavailable(f"{request.tool} was not approved: no client to ask")
        call_id = request.call_id or f"approval-{uuid.uuid4().hex}"
        status: ToolCallStatus = "pending"
        update = ToolCallUpdate(tool_call_id=call_id, title=request.summary,
                                kind=tool_kind(request.tool), status=status,
                                raw_input=request.arguments,
                                locations=locations(request.arguments, root),
                                content=_diff(request, root))
        try:
            response = await self._client.request_permission(
                session_id=session_id, tool_call=update, options=OPTIONS)
        except (RequestError, ConnectionError, ValidationError) as exc:
            raise ApprovalUnavailable(f"{request.tool} was not approved: the client could not "
                                      f"ask ({one_line(exc)})") from None
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome):
            return None  # cancelled: dismissed, a denial
        decision = DECISIONS.get(outcome.option_id, "deny")
        if decision != "deny":
            self.post(session_id, tool_status(call_id, "in_progress"))
        return decision

    # -- shutdown ---------------------------------------------------------------------------------
    async def close(self) -> None:
        """End of input: cancel what runs, then close every workspace (memory updates are
        drained, bounded; logs closed)."""
        tasks = [turn.task for turn in self.turns.values() if turn.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for ws in list(self.workspaces.values()):
            try:
                await ws.close()
            except Exception as exc:
                log.warning("closing %s: %s", ws.root, exc)


def _ignore_mcp(servers: list[Any] | None) -> None:
    if servers:
        log.warning("MCP servers are not supported; ignoring %d", len(servers))


def _first_status(ws: Workspace, tool: str) -> ToolCallStatus:
    """``pending`` when the call will wait for approval, else ``in_progress``."""
    return "pending" if ws.would_ask(tool) else "in_progress"


def _diff(request: ApprovalRequest, root: Path) -> list[ToolCallContent] | None:
    """A write's change as ACP diff content (SPEC §11 "Diff approvals": the gate computed the
    whole file without and with the change; no ``oldText`` for a new file)."""
    if request.path is None or request.after is None:
        return None
    content: list[ToolCallContent] = [FileEditToolCallContent(
        type="diff", path=os.path.normpath(os.path.join(root, request.path)),
        new_text=request.after, old_text=request.before or None)]
    return content


def _summary_text(message: Message) -> str:
    return message.content.removesuffix(BOUNDARY_REMINDER).rstrip()


def describe_compaction(result: CompactOutcome) -> str:
    if not result.summarized and not result.offloaded:
        return (f"Nothing to compact yet ({result.before_tokens:,} tokens): the most recent "
                "messages are always kept as they are.")
    parts = [f"Compacted the context: {result.before_tokens:,} → {result.after_tokens:,} "
             "tokens"]
    if result.summarized:
        parts.append("the earlier conversation is now a summary")
    if result.offloaded:
        parts.append(f"{result.offloaded} tool result(s) moved to files")
    text = "; ".join(parts) + "."
    check = result.fact_check
    if check.added:
        text += (f" Fact check: {check.missing} of {check.checked} facts were missing from the "
                 "summary and were carried into it.")
    return text


def describe_undo(outcome: UndoOutcome) -> str:
    if not outcome.restored:
        return f"Nothing to undo: {outcome.reason or 'no compaction to undo'}."
    return (f"Restored what the last compaction summarised: {outcome.before_tokens:,} → "
            f"{outcome.after_tokens:,} tokens, {outcome.message_count} messages.")


def describe_memory(view: MemoryView) -> str:
    lines = ["**Memory index** (what the model sees):", ""]
    lines.append(view.index.strip() or "(empty)")
    if view.truncated:
        lines.append("(the index is cut to fit its budget)")
    for store in view.stores:
        lines += ["", f"**{store.level.capitalize()} notes** ({store.dir}): "
                      f"{len(store.notes) or 'none'}"]
        lines += [f"- `{note.filename}` ({note.type}): {note.title} — {note.summary}"
                  for note in store.notes]
    return "\n".join(lines)
