"""One workspace folder: what it shares (settings, providers, instructions, memory, MCP,
checkpoints) and one :class:`~pseudoclaude.workspace.session.Session` per session it has open.

The LSP server keeps one :class:`Workspace` per folder; the ACP agent and the CLI make theirs
the same way. Front ends drive it through this facade only: ``await run(prompt, session)``,
``await compact(session_id=...)``, ``context(session_id)``, session listing and resuming.
Different sessions run at the same time (at most ``sessions.maxParallel``; one more is
:class:`WorkspaceBusy`); one session has one writer (a second run, compaction, undo or rewind
of a session being written, by this process or another, is
:class:`~pseudoclaude.session.lock.SessionBusy`); read-only calls answer at once. Requests that
take ``session_id`` default to the current session: the one the front end used last.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import os
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import msgspec

from pseudoclaude import words, worktrees
from pseudoclaude.agent.approvals import (
    ApprovalRequest,
    ApprovalUnavailable,
    Approver,
)
from pseudoclaude.agent.editor import Editor
from pseudoclaude.agent.prompt import (
    SystemPrompt,
    memory_section,
    memory_section_bytes,
    system_prompt_parts,
)
from pseudoclaude.agent.runner import Runner, RunOutcome
from pseudoclaude.agent.skills import SessionSkills
from pseudoclaude.agent.tools import ToolError, ToolRegistry
from pseudoclaude.agent.tools.freshness import WriteBoard
from pseudoclaude.agents import (
    AgentRecord,
    RunHooks,
    agent_log,
    list_records,
    load_messages,
    load_roles,
    running_elsewhere,
    section,
    with_section,
)
from pseudoclaude.checkpoints import (
    BEFORE,
    NO_GIT,
    CheckpointError,
    Checkpoints,
    CheckpointStatus,
    open_checkpoints,
)
from pseudoclaude.compact import (
    CompactConfig,
    CompactOutcome,
    CompactRuntime,
    ContextState,
    Ledger,
)
from pseudoclaude.compact.breakdown import RuleSize, TokenBreakdown, rule_files
from pseudoclaude.compact.estimate import json_bytes
from pseudoclaude.compact.factcheck import WRITE_TOOLS
from pseudoclaude.compact.plan import CompactPlan, UndoOutcome
from pseudoclaude.compact.summarize import RequestPrefix
from pseudoclaude.config import API_KEY_ENV, PendingSettings, Settings, settings_trust
from pseudoclaude.conversation import Conversation
from pseudoclaude.conversation.summary import is_summary, summary_text
from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.events import Event, StopReason, WarningEvent
from pseudoclaude.llm import window
from pseudoclaude.llm.editor import EditorContext
from pseudoclaude.llm.provider import Provider, ProviderOptions, create_provider
from pseudoclaude.llm.types import Message, ToolCall, Usage
from pseudoclaude.mcp import ServerInfo
from pseudoclaude.memory import MemoryManager, OnChange
from pseudoclaude.memory.manager import MemoryView, OnProposals, Reviewed, provenance
from pseudoclaude.memory.proposals import PROPOSALS_DIR, ProposalRecord
from pseudoclaude.names import plural
from pseudoclaude.permissions import Call as PermissionCall
from pseudoclaude.permissions import PermissionEngine, Verdict
from pseudoclaude.rewind import Mode as RewindMode
from pseudoclaude.rewind import (
    RewindOutcome,
    RewindPlan,
    TurnSummary,
    finish_interrupted,
    pick_turn,
    restore_files,
    write_fork,
)
from pseudoclaude.rewind import plan as rewind_plan
from pseudoclaude.sandbox import SandboxStatus
from pseudoclaude.session import (
    LATEST,
    LoadedSession,
    OpenSession,
    SessionInfo,
    SessionNotFound,
    SessionStore,
    SessionWriter,
    cleanup_expired,
    compaction_history,
    is_session_id,
    latest_id,
    list_sessions,
    load_session,
    new_session,
    resolve,
    resume_session,
)
from pseudoclaude.session.lock import SessionBusy, SessionLock, holder
from pseudoclaude.session.timeline import Timeline, timeline
from pseudoclaude.session.turns import count_prompts
from pseudoclaude.skills import Catalog, listing
from pseudoclaude.transcript import Item, build_transcript
from pseudoclaude.workspace.hooks import FolderHooks, HookInfo
from pseudoclaude.workspace.lifecycle import (
    ModelChoice,
    check_model,
    delete_session_folder,
    model_choices,
)
from pseudoclaude.workspace.mcp import WorkspaceMcp
from pseudoclaude.workspace.permissions import FolderPermissions
from pseudoclaude.workspace.session import Session, logged_instructions
from pseudoclaude.workspace.skills import FolderSkills, logged_skills
from pseudoclaude.workspace.status import FolderStatus, folder_status
from pseudoclaude.worktrees import (
    ApplyResult,
    Worktree,
    WorktreeError,
    WorktreeStatus,
    git_available,
)

log = logging.getLogger("pseudoclaude.workspace")

NEW = "new"
RUNNING = "a run"
T = TypeVar("T")


class WorkspaceError(PseudoClaudeError):
    """A request the workspace cannot serve; the message is for the user."""


class WorkspaceBusy(WorkspaceError):
    pass


EventSink = Callable[[str, Event], None]  # (session id, event)


@dataclass(frozen=True)
class Hooks:
    """What a front end hears from a workspace (each may be called from another thread: the
    memory watcher's)."""

    events: EventSink | None = None
    """Every event of a run, a compaction or a memory update, with its session id."""
    memory_changed: OnChange | None = None
    """``(level, source)``: the memory index changed."""
    proposals_changed: OnProposals | None = None
    """``(count)``: the pending memory proposals changed."""
    mcp_changed: Callable[[], None] | None = None
    """The MCP servers' status or tools changed (called on the event loop)."""


@dataclass(frozen=True)
class IgnoredSetting:
    """A setting of the workspace's own ``config.yaml`` that is not applied, and why."""

    key: str
    value: str
    reason: str


@dataclass(frozen=True)
class TranscriptPage:
    """A page of a session's transcript (``items[offset:offset + limit]`` of ``total``)."""

    session_id: str
    total: int
    items: list[Item]


@dataclass(frozen=True)
class ResumeInfo:
    session_id: str
    message_count: int
    bad_lines: int
    repaired: int


class Workspace:
    def __init__(self, root: Path, settings: Settings, *, approver: Approver,
                 hooks: Hooks = Hooks()) -> None:
        self.root = root.resolve()
        self.settings = settings
        self.approver = approver
        self._events = hooks.events or (lambda session_id, event: None)
        memory_changed, proposals_changed = hooks.memory_changed, hooks.proposals_changed
        data_dir = settings.data_dir or self.root / ".PseudoClaude"
        self.store = SessionStore(data_dir)
        user_memory = settings.memory.user_dir or Path.home() / ".PseudoClaude" / "memory"
        self._memory_changed = memory_changed
        self.memory = MemoryManager(data_dir / "memory", user_memory,
                                    provider=self.memory_provider,
                                    emit=self._emit, emit_to=self.emit_of,
                                    on_change=self._on_memory_change,
                                    mode=settings.memory.mode,
                                    proposals_dir=data_dir / PROPOSALS_DIR,
                                    on_proposals=proposals_changed)
        self.open_sessions: dict[str, Session] = {}
        """The sessions open in this process, by id."""
        self.file_writes = WriteBoard()
        """Which session last wrote each file, for a stale write's refusal to name it."""
        self.current: str | None = None
        """The session the front end used last (the default of every session request)."""
        self.editor: Editor | None = None
        """What the agent sees of the editor (its open documents), for every session."""
        self.mcp = WorkspaceMcp(self.root, settings, self._user_dir() or Path.home()
                                / ".PseudoClaude", approver, on_change=hooks.mcp_changed)
        """The MCP servers (an open folder starts its trusted ones in the background)."""
        self.permissions = FolderPermissions(
            self.root, settings, approver,
            user_dir=self._user_dir() or Path.home() / ".PseudoClaude", data_dir=data_dir,
            warn=lambda message: self._emit(WarningEvent(message)))
        """The permission rules, the approvals of the folder's own files, the sandbox."""
        self.hooks = FolderHooks(self.root, settings, approver,
                                 user_dir=self._user_dir() or Path.home() / ".PseudoClaude",
                                 warn=lambda message: self._emit(WarningEvent(message)))
        """The hooks (the user's, the settings', the folder's own once approved)."""
        self.skills = FolderSkills(self.root, self._user_dir() or Path.home() / ".PseudoClaude")
        """The skills (the folder's, Claude Code's, the user's, the built-in ones)."""
        self._hooks_asking: asyncio.Future[bool] | None = None
        self.next_mode: str | None = None
        """The mode chosen while no session was open: the next session opened without a mode
        of its own starts in it."""
        self._permissions_asking: asyncio.Future[bool] | None = None
        self._providers: list[tuple[ProviderOptions, Provider]] = []
        """The providers in use, one per distinct options (the session's, ``compact.model``'s,
        ``memory.model``'s)."""
        self.checkpoints: Checkpoints = open_checkpoints(
            self.root, data_dir / "checkpoints", excluded=[data_dir])
        """The snapshots of the files (a shadow Git repository; before-images of the agent's
        own writes where there is no ``git`` command), shared by the sessions: one git
        command at a time (:attr:`_checkpointing`)."""
        self._worktree_checkpoints: dict[str, Checkpoints] = {}
        """The checkpoints of the worktree sessions' worktrees, by session id."""
        self._checkpointing = threading.Lock()
        self.checkpoint_problem = ""
        """Why the latest checkpoint failed; ``""`` when it did not."""
        self.checkpoint_skipped: list[str] = []  # files over 1 MiB left out of the last one
        self._journals_checked: set[int] = set()  # the checkpoints whose journal was done
        self._cleanup: asyncio.Task[None] | None = None
        self._settings_asking: asyncio.Future[None] | None = None
        self._settings_answers: dict[str, str] = {}
        """The user's answer (``approved``, ``denied``) about the workspace's own settings
        file, by its fingerprint, in this process; absent: not answered yet."""
        self._settings_warned: set[str] = set()

    # -- life --------------------------------------------------------------------------------
    def start(self) -> None:
        """What an open folder does in the background: watch its memory for hand edits and
        delete expired sessions (a folder whose memory cannot be watched still works)."""
        try:
            self.memory.start_watching()
        except OSError as exc:
            log.warning("cannot watch the memory folders of %s: %s", self.root, exc)
        self.start_cleanup()
        self.mcp.start()  # reads the configuration, starts the trusted servers, asks the rest
        if self.settings.pending is not None:  # the folder's own settings: asked once opened
            self._settings_asking = asyncio.ensure_future(self._ask_settings())
        self._permissions_asking = asyncio.ensure_future(self._ask_permissions())
        self._hooks_asking = asyncio.ensure_future(self._ask_hooks())
        threading.Thread(target=self._probe_sandbox, daemon=True,
                         name=f"sandbox {self.root.name}").start()
        threading.Thread(target=self._read_skills, daemon=True,  # for the chats' `/` list
                         name=f"skills {self.root.name}").start()
        if self.store.sessions_dir.is_dir():  # the agent worked here: it will again
            threading.Thread(target=self._prepare_checkpoints, daemon=True,
                             name=f"checkpoints {self.root.name}").start()

    def _probe_sandbox(self) -> None:
        """Whether ``bwrap`` works here, found before the first command needs it."""
        try:
            self.permissions.sandbox_status()
        except Exception as exc:  # a probe never breaks the folder
            log.warning("the sandbox probe failed: %s", exc)

    def _read_skills(self) -> None:
        try:
            self.skills.scan()
        except Exception as exc:  # a skills folder never breaks the folder
            log.warning("the skills of %s cannot be read: %s", self.root, exc)

    async def _ask_permissions(self) -> bool:
        """The folder's own permission files that grant more: asked (once per content in
        this process); the sessions' engines follow an approval."""
        await self.approve_settings()  # one question at a time, the settings first
        changed = await self.permissions.ask_waiting()
        if changed:
            await asyncio.to_thread(self._apply_permissions)
        return changed

    def _apply_permissions(self) -> None:
        self.permissions.apply(s.engine for s in list(self.open_sessions.values()))

    async def _ask_hooks(self) -> bool:
        """The folder's own ``hooks.yaml``: asked (once per content in this process), after
        the questions about its settings and permission files."""
        permissions = self._permissions_asking
        if permissions is not None:
            await asyncio.shield(permissions)
        return await self.hooks.ask()

    async def prepare_hooks(self) -> None:
        """Before a run: the folder's ``hooks.yaml`` asked when it waits (edited since)."""
        asking = self._hooks_asking
        if asking is None or asking.done():
            asking = self._hooks_asking = asyncio.ensure_future(self._ask_hooks())
        await asyncio.shield(asking)

    async def review_hooks(self) -> list[HookInfo]:
        """The folder's ``hooks.yaml`` asked again, declined or not, as when the folder opens
        (``pseudoclaude/hooks/review``); then every hook and its status."""
        asking = self._hooks_asking
        if asking is not None and not asking.done():  # asked already: that answer
            await asyncio.shield(asking)
        else:
            self.hooks.reconsider()
            await self.prepare_hooks()
        return await self.hook_list()

    async def hook_list(self) -> list[HookInfo]:
        """Every hook of the folder and its status (``pseudoclaude/hooks/list``); the files
        read off the loop."""
        return await asyncio.to_thread(self.hooks.listing)

    async def prepare_permissions(self) -> None:
        """Before a run: the permission files read again when changed, what waits asked,
        the sandbox probed (off the loop)."""
        asking = self._permissions_asking
        if asking is None or asking.done():
            asking = self._permissions_asking = asyncio.ensure_future(self._ask_permissions())
        await asyncio.shield(asking)
        await asyncio.to_thread(self._apply_permissions)

    def _prepare_checkpoints(self) -> None:
        """The first snapshot of a large tree hashes every file: done in the background when
        a folder the agent worked in opens, so its first run does not wait for it (a daemon
        thread: an exit never waits for it either). In a folder it never worked in, nothing is
        created until the first run, whose first snapshot runs while the model answers."""
        try:
            with self._checkpointing:
                self.checkpoints.prepare()
        except (CheckpointError, OSError) as exc:
            log.warning("checkpoints of %s: %s", self.root, exc)

    async def announce_pending(self) -> None:
        """Proposals waiting from an earlier process: tell the listener (reads the folder off
        the loop)."""
        try:
            await asyncio.to_thread(self.memory.announce_proposals, initial=True)
        except OSError as exc:
            log.warning("cannot read the memory proposals of %s: %s", self.root, exc)

    def stop_watching(self) -> None:
        self.memory.stop_watching()

    def set_editor(self, editor: Editor | None) -> None:
        """What the agent sees of the editor, for every session (open and to come)."""
        self.editor = editor
        for session in self.open_sessions.values():
            session.tools.set_editor(editor)

    # -- settings and provider -------------------------------------------------------------
    @property
    def context_window(self) -> int:
        """The settings' window: ``contextWindow``, else the one a local server said it runs
        with (:mod:`pseudoclaude.llm.window`), else the provider's default."""
        return window.context_window(self.settings)

    async def discover_window(self) -> None:
        """Ask a local server for its window, when that is wanted (once per process); the
        open sessions then work with it."""
        if await window.discover_window(self.settings) is not None:
            for session in self.open_sessions.values():
                session.runtime.config = self.compact_config()

    def update_settings(self, settings: Settings) -> None:
        """New settings apply to the next run (a run in progress keeps its own)."""
        self.settings = settings
        self.memory.mode = settings.memory.mode
        with contextlib.suppress(RuntimeError):  # no loop: the next run configures them
            self.mcp.configure(settings)
        self.permissions.update_settings(settings)
        self.hooks.update_settings(settings)
        for session in self.open_sessions.values():
            session.tools.set_sandbox(self.permissions.sandbox)
            session.gate.mcp_servers = dict(self.mcp.approvals())
            session.runtime.config = self.compact_config()
        self._apply_permissions()

    async def approve_settings(self) -> None:
        """Ask the user about what the workspace's own ``config.yaml`` sets that waits for an
        approval (where the prompts and the key go, what runs unasked), unless they answered
        in this process already: allowed once (this process), for the session (remembered
        outside the workspace by the folder and the file's content) or denied (this process;
        the settings without it stand). An approver that cannot ask leaves it waiting, said
        once as a warning; the next call asks again. Waits for a question already asked."""
        asking = self._settings_asking
        if asking is None or asking.done():
            pending = self.settings.pending
            if pending is None or pending.fingerprint in self._settings_answers:
                return
            asking = self._settings_asking = asyncio.ensure_future(self._ask_settings())
        await asyncio.shield(asking)

    async def _ask_settings(self) -> None:
        pending = self.settings.pending
        if pending is None or pending.fingerprint in self._settings_answers:
            return
        request = ApprovalRequest.permissions(pending.name, pending.lines(), pending.url)
        try:
            decision = await self.approver.ask(request)
        except ApprovalUnavailable as exc:
            self._settings_warning(pending, f"no way to ask here ({exc})")
            return
        except Exception as exc:  # CancelledError propagates
            log.warning("asking to approve %s failed: %s", pending.path, exc)
            self._settings_warning(pending, f"asking failed ({exc})")
            return
        if decision in ("allow_once", "allow_session"):
            trust = settings_trust(self.settings)
            trust.approve_once(self.root, pending.name, pending.fingerprint)
            if decision == "allow_session":
                try:
                    await asyncio.to_thread(trust.remember, self.root, pending.name,
                                            pending.fingerprint)
                except OSError as exc:
                    log.warning("cannot remember the approval of %s: %s", pending.path, exc)
            self._settings_answers[pending.fingerprint] = "approved"
            if self.settings.pending is pending:
                self.update_settings(pending.approved)
        else:
            self._settings_answers[pending.fingerprint] = "denied"

    def _settings_warning(self, pending: PendingSettings, why: str) -> None:
        """Once per process and file content: the folder's settings that were not applied."""
        if pending.fingerprint in self._settings_warned:
            return
        self._settings_warned.add(pending.fingerprint)
        keys = ", ".join(asked.key for asked in pending.asked)
        self._emit(WarningEvent(words.settings_not_applied(pending.name, keys, why)))

    def ignored_settings(self) -> list[IgnoredSetting]:
        """What the workspace's own ``config.yaml`` sets that is not applied now, and why."""
        pending = self.settings.pending
        if pending is None:
            return []
        answer = self._settings_answers.get(pending.fingerprint)
        reason = words.settings_ignored(pending.name, declined=answer == "denied")
        return [IgnoredSetting(key=a.key, value=a.value, reason=reason) for a in pending.asked]

    def _options(self, model: str = "") -> ProviderOptions:
        """The session's provider options, with ``model`` instead of its model when set."""
        options = ProviderOptions.from_settings(self.settings)  # raises NoProviderConfigured
        return dataclasses.replace(options, model=model) if model else options

    async def _provider_for(self, options: ProviderOptions) -> Provider:
        """The provider of ``options``, made on first use; those no setting or open session
        names any more (the settings changed, a session chose another model) are closed."""
        wanted = [self._options(), self._options(self.settings.compact.model),
                  self._options(self.settings.memory.model),
                  *(self._options(s.model) for s in self.open_sessions.values() if s.model),
                  *(self._options(m) for s in self.open_sessions.values() for m in s.agents.models)]
        keep = [(o, p) for o, p in self._providers if o in wanted]
        for o, p in self._providers:
            if o not in wanted:
                await p.aclose()
        self._providers = keep
        for held, provider in keep:
            if held == options:
                return provider
        provider = await create_provider(options)
        self._providers.append((options, provider))
        return provider

    async def provider(self, model: str = "") -> Provider:
        """The sessions' provider (the runs'); with ``model``, the same provider's for that
        model (a session's own choice)."""
        return await self._provider_for(self._options(model))

    async def summary_provider(self) -> Provider:
        """The summaries' provider: ``compact.model``, else the session's."""
        return await self._provider_for(self._options(self.settings.compact.model))

    async def memory_provider(self) -> Provider:
        """The memory updates' provider: ``memory.model``, else the session's."""
        return await self._provider_for(self._options(self.settings.memory.model))

    def compact_config(self) -> CompactConfig:
        return CompactConfig.from_settings(self.settings, self.context_window)

    # -- sessions ----------------------------------------------------------------------------
    @property
    def session_id(self) -> str | None:
        """The current session (the one the front end used last)."""
        return self.current

    @property
    def session(self) -> Session | None:
        return self.open_sessions.get(self.current) if self.current is not None else None

    def emit_of(self, session_id: str, event: Event) -> None:
        self._events(session_id, event)

    def _emit(self, event: Event) -> None:
        """An event that belongs to no run (memory, the folder's settings): the current
        session's."""
        self._events(self.current or "", event)

    def _session(self, session_id: str | None) -> Session:
        """An open session by id (``None``, ``""``: the current one); a session of the folder
        that is not open is opened by the caller (:meth:`_open`)."""
        sid = self.current if session_id in (None, "") else session_id
        session = self.open_sessions.get(sid) if sid is not None else None
        if session is None:
            raise WorkspaceError("no active session in this workspace")
        return session

    async def _target(self, session_id: str | None) -> Session:
        """The session a request is about: the current one by default, else the one named
        (an id or ``latest``; opened when this process has not opened it yet)."""
        if session_id in (None, ""):
            return self._session(None)
        assert session_id is not None
        if session_id in self.open_sessions:
            return self.open_sessions[session_id]
        sid = await asyncio.to_thread(resolve, self.store, session_id)
        session = self.open_sessions.get(sid)
        if session is None:
            session = (await self._open_resumed(sid))[0]
        return session

    async def new_session(self, worktree: bool = False) -> str:
        """A new session, current from now on (runs of others go on); with ``worktree``, one
        that works in a git worktree of its own (:class:`WorktreeError` when the folder is
        not in a git repository)."""
        return (await self._open_new(worktree)).id

    async def resume(self, ref: str) -> ResumeInfo:
        """Make ``ref`` (an id or ``latest``) the current session: opened from its log, or
        the open one (read again from its log when another process wrote it)."""
        sid = ref if ref in self.open_sessions else await asyncio.to_thread(
            resolve, self.store, ref)
        session = self.open_sessions.get(sid)
        if session is None:
            session, loaded = await self._open_resumed(sid)
            self.current = sid
            session.emit_tasks()  # the editors show the list it resumes with
            return ResumeInfo(sid, len(loaded.messages), loaded.bad_lines, loaded.repaired)
        if session.busy is None and session.grew():
            with contextlib.suppress(SessionBusy):  # being written elsewhere: as it is
                async with session.writing("a resume"):
                    pass  # (reloaded on entering)
        self.current = sid
        session.emit_tasks()
        session.hooks.resumed()  # its only_once hooks may run again
        was = session.opened.loaded
        return ResumeInfo(sid, len(session.conversation),
                          was.bad_lines if was else 0, was.repaired if was else 0)

    async def _hooks_start(self, session: Session, source: str) -> None:
        """Its ``SessionStart`` hooks (``startup``: a new session), or ``SessionResume``
        (``resume``: the first prompt of a session this process opened from its log); what
        they say waits for its next request. Opening a session to read it fires nothing."""
        session.started = True
        await session.hooks.session_start(source)

    async def _hooks_end(self, session: Session, reason: str) -> None:
        """Its ``SessionEnd`` hooks, when its start was told to them."""
        if session.started:
            session.started = False
            await session.hooks.session_end(reason)

    async def _open_new(self, worktree: bool = False) -> Session:
        if worktree and not git_available():
            raise WorktreeError("a session in a worktree needs the git command, which is not "
                                "on PATH")
        opened = await asyncio.to_thread(
            new_session, self.store, model=self.settings.model, workspace=str(self.root))
        made: Worktree | None = None
        if worktree:
            try:
                made = await asyncio.to_thread(self._make_worktree, opened)
            except BaseException:
                opened.writer.close()
                await asyncio.to_thread(self._drop_empty, opened.session_id)
                raise
        session = self.open_sessions[opened.session_id] = Session(self, opened, made)
        self.current = session.id
        await session.restore_estimate()
        await self._hooks_start(session, "startup")
        return session

    def _make_worktree(self, opened: OpenSession) -> Worktree:
        """The worktree of a new session, and its log (so it is listed and can be resumed
        before its first prompt). Blocking."""
        made = worktrees.create(self.root, self.store.data_dir, opened.session_id)
        opened.writer.touch()
        return made

    def _drop_empty(self, sid: str) -> None:
        """Remove the folder of a session that was never written (best effort)."""
        folder = self.store.session_dir(sid)
        with contextlib.suppress(OSError):
            for child in folder.iterdir():
                if child.is_dir():
                    child.rmdir()
                else:
                    child.unlink()
            folder.rmdir()

    def worktree_of(self, sid: str) -> Worktree | None:
        """The worktree a session works in (``None``: the folder itself). Blocking (a small
        record is read)."""
        open_session = self.open_sessions.get(sid)
        if open_session is not None:
            return open_session.worktree
        return worktrees.load(self.store.data_dir, sid)

    def checkpoints_of(self, worktree: Worktree | None) -> Checkpoints:
        """The checkpoints of the folder, or of a worktree session's worktree (a shadow
        repository of its own, beside the worktree's record)."""
        if worktree is None:
            return self.checkpoints
        held = self._worktree_checkpoints.get(worktree.session_id)
        if held is None:
            held = self._worktree_checkpoints[worktree.session_id] = open_checkpoints(
                worktree.workspace,
                self.store.data_dir / "worktrees" / f"{worktree.session_id}.checkpoints",
                excluded=[worktree.workspace / ".PseudoClaude"])
        return held

    async def _open_resumed(self, sid: str) -> tuple[Session, LoadedSession]:
        """Open a session of the folder from its log. Its lock is taken for the resume (a
        repair is written); a session another process is writing opens as its log is now,
        nothing written (its next write reloads it)."""
        lock = SessionLock(self.store.session_dir(sid), sid)
        try:
            lock.acquire()
        except SessionBusy:
            opened = await asyncio.to_thread(self._open_as_is, sid)
        else:
            try:
                opened = await asyncio.to_thread(
                    resume_session, self.store, sid, model=self.settings.model,
                    workspace=str(self.root))
            finally:
                lock.release()
        loaded = opened.loaded
        assert loaded is not None
        try:
            worktree = await asyncio.to_thread(worktrees.load, self.store.data_dir, sid)
        except BaseException:
            opened.writer.close()
            raise
        session = self.open_sessions[sid] = Session(self, opened, worktree)
        await session.restore_estimate()
        return session, loaded

    def _open_as_is(self, sid: str) -> OpenSession:
        loaded = load_session(self.store, sid)
        writer = SessionWriter.open(self.store, sid, model=self.settings.model,
                                    workspace=str(self.root))
        return OpenSession(writer=writer, conversation=Conversation(
            list(loaded.messages), hooks=writer.hooks()), loaded=loaded)

    def keep_current(self, target: str | None) -> None:
        """Before switching to ``target``: a current session that has no log yet (new, never
        prompted) gets one, so it can still be resumed later."""
        session = self.session
        if session is not None and session.id != target and not session.writer.path.is_file():
            session.writer.touch()
            session.known_size = session.log_size()

    async def close_session(self, session_id: str) -> None:
        """Close a session open in this process: its log is closed, its lock released, and it
        is no longer the current session (it stays on disk, to be resumed later). Refused while
        this process writes it (:class:`SessionBusy`: cancel its run first); nothing to do for a
        session that is not open here."""
        session = self.open_sessions.get(session_id)
        if session is None:
            return
        if session.busy is not None:
            raise SessionBusy(session_id, os.getpid())
        if not session.writer.path.is_file():  # never prompted: it can still be resumed
            await asyncio.to_thread(session.writer.touch)
        del self.open_sessions[session_id]
        await session.stop_tasks("its session was closed")
        await self._hooks_end(session, "close")
        session.close()
        if self.current == session_id:
            self.current = None

    async def delete_session(self, session_id: str) -> None:
        """Delete a session of the folder: its folder (log, tool results) is removed, under
        its lock, so it is refused while any process writes it, this one included
        (:class:`SessionBusy`). :class:`SessionNotFound` when the folder has no such session;
        a session that works in a worktree keeps it: refused until the worktree is removed. A
        session open here is closed."""
        if not is_session_id(session_id):
            raise SessionNotFound(f"not a session id: {session_id[:100]!r}")
        session = self.open_sessions.get(session_id)
        if session is not None and session.busy is not None:
            raise SessionBusy(session_id, os.getpid())
        worktree = await asyncio.to_thread(self.worktree_of, session_id)
        if worktree is not None:
            raise WorkspaceError(f"session {session_id} works in the worktree {worktree.path}: "
                                 "remove the worktree first")
        if session is not None:
            await session.stop_tasks("its session was deleted")
            await self._hooks_end(session, "delete")
        await asyncio.to_thread(delete_session_folder, self.store, session_id)
        if session is not None:
            del self.open_sessions[session_id]
            session.close()
        if self.current == session_id:
            self.current = None

    def check_session(self, session_id: str) -> str:
        """``session_id`` when this workspace has that session, open here (maybe without a
        log yet) or on disk (``SessionNotFound`` else)."""
        if session_id in self.open_sessions:
            return session_id
        return self.store.check_id(session_id)

    @property
    def sessions_dir(self) -> Path:
        return self.store.sessions_dir

    async def has_latest(self) -> bool:
        """Whether ``latest`` names a session (one the model answered in)."""
        return self.store.sessions_dir.is_dir() and (
            await asyncio.to_thread(latest_id, self.store)) is not None

    async def sessions(self) -> list[SessionInfo]:
        """Every session of the folder, newest first."""
        return await asyncio.to_thread(list_sessions, self.store)

    async def session_list(self) -> list[tuple[SessionInfo, bool]]:
        """Every session of the folder, newest first, with whether it is being written now
        (a run, a compaction, an undo or a rewind, in any process)."""
        def listing() -> list[tuple[SessionInfo, bool]]:
            return [(info, holder(self.store.session_dir(info.id)) is not None)
                    for info in list_sessions(self.store)]

        return await asyncio.to_thread(listing)

    async def load(self, session_id: str) -> LoadedSession:
        """A session's log replayed (``latest`` or an id), without making it current."""
        return await asyncio.to_thread(load_session, self.store, session_id)

    async def transcript(self, session_id: str | None, offset: int = 0,
                         limit: int | None = None, agent_id: str | None = None
                         ) -> TranscriptPage:
        """The session (the current one by default), or its sub-agent ``agent_id``, as the
        user lived it (the whole log is read, off the loop)."""
        if session_id in (None, ""):
            session_id = self._session(None).id
        ref = session_id

        def build() -> tuple[str, list[Item]]:
            assert ref is not None
            sid = resolve(self.store, ref)
            path = self.store.log_path(sid)
            open_session = self.open_sessions.get(sid)
            live = (open_session is not None and open_session.busy == RUNNING) or \
                holder(self.store.session_dir(sid)) not in (None, os.getpid())
            if agent_id:
                path = self._agent_log(sid, agent_id)
                live = open_session is not None and agent_id in open_session.agents.live
            return sid, build_transcript(path, running=live) if path.is_file() else []

        sid, items = await asyncio.to_thread(build)
        end = len(items) if limit is None else offset + limit
        return TranscriptPage(session_id=sid, total=len(items), items=items[offset:end])

    async def agent_messages(self, session_id: str | None, agent_id: str
                             ) -> tuple[str, list[Message]]:
        """A sub-agent's conversation, as its model saw it (replayed and repaired from its
        log, which is not written): the session's id (``latest`` resolved) and the
        messages; :class:`WorkspaceError` for an unknown session or sub-agent."""
        ref = session_id if session_id not in (None, "") else self.current or LATEST

        def read() -> tuple[str, list[Message]]:
            sid = resolve(self.store, ref)
            return sid, load_messages(self._agent_log(sid, agent_id))

        return await asyncio.to_thread(read)

    def _agent_log(self, sid: str, agent_id: str) -> Path:
        """The log of a sub-agent of session ``sid``; :class:`WorkspaceError` for a malformed
        id or one the session does not have."""
        try:
            path = agent_log(self.store, sid, agent_id)
        except ValueError as exc:
            raise WorkspaceError(str(exc)) from None
        if not path.is_file():
            raise WorkspaceError(f"session {sid} has no sub-agent {agent_id}")
        return path

    def current_summary(self) -> str | None:
        """The summary the current conversation starts with, if a compaction made one."""
        session = self.session
        if session is None:
            return None
        messages = session.conversation.messages()
        return summary_text(messages[0]) if messages and is_summary(messages[0]) else None

    async def messages(self, session_id: str | None, offset: int = 0,
                       limit: int | None = None) -> tuple[str, int, list[Message]]:
        """Messages of a session (the current one by default), as the model would see them
        (from the log when another process wrote it since)."""
        sid = self.current if session_id in (None, "") else session_id
        session = self.open_sessions.get(sid) if sid is not None else None
        if session_id in (None, "") and session is None:
            raise WorkspaceError("no active session in this workspace")
        if session is not None and (session.busy is not None or not session.grew()):
            note = session.opened.note  # the model sees it; the session's record does not
            all_messages = [m for m in session.conversation.messages()
                            if note is None or m != note]
        else:
            assert sid is not None
            loaded = await asyncio.to_thread(load_session, self.store, sid)
            all_messages, sid = loaded.messages, loaded.session_id
        end = len(all_messages) if limit is None else offset + limit
        assert sid is not None
        return sid, len(all_messages), all_messages[offset:end]

    def start_cleanup(self) -> None:
        """Delete expired sessions in the background (never an open one)."""
        days = self.settings.session.retention_days
        if days <= 0 or self._cleanup is not None:
            return

        def clean() -> None:
            keep = set(self.open_sessions)
            report = cleanup_expired(self.store, days, keep=keep)
            for error in report.errors:
                log.warning("session cleanup: %s", error)
            if report.deleted:
                log.info("session cleanup: deleted %d expired session(s)", len(report.deleted))
            # the checkpoints follow the sessions: only those of the remaining ones are kept
            remaining = set(self.store.session_ids()) | keep
            try:
                with self._checkpointing:
                    dropped = self.checkpoints.prune(remaining)
            except (CheckpointError, OSError) as exc:
                log.warning("checkpoint cleanup: %s", exc)
            else:
                if dropped:
                    log.info("checkpoint cleanup: dropped the checkpoints of %d session(s)",
                             len(dropped))

        self._cleanup = asyncio.ensure_future(asyncio.to_thread(clean))

    # -- runs --------------------------------------------------------------------------------
    def build_system_prompt(self, nested: Sequence[str] = (), nested_root: Path | None = None,
                            skills: Catalog | None = None) -> SystemPrompt:
        """Blocking: reads the instruction files and the skills (and the memory index once);
        ``nested``: the subfolders' files a session joined, under ``nested_root`` (its
        worktree); ``skills``: as a session just read them (default: read now)."""
        index = self.memory.index_text() if self.settings.memory.enabled else ""
        catalog = self.skills.scan() if skills is None else skills
        return system_prompt_parts(self.root, user_dir=self._user_dir(), memory_index=index,
                                   nested=nested, nested_root=nested_root,
                                   skills=listing(catalog.listed))

    def _on_memory_change(self, level: str, source: str) -> None:
        """The memory index changed (the manager's cache is fresh; this may run on the
        watcher's thread): count the new index, then tell the server's listener."""
        index = self.memory.index_text() if self.settings.memory.enabled else ""
        for session in list(self.open_sessions.values()):
            session.runtime.set_request_overhead(
                memory=memory_section_bytes(memory_section(index)))
        if self._memory_changed is not None:
            self._memory_changed(level, source)

    def _user_dir(self) -> Path | None:
        memory_dir = self.settings.memory.user_dir
        return memory_dir.parent if memory_dir is not None else None

    def running(self) -> list[str]:
        """The sessions running in this process."""
        return [s.id for s in self.open_sessions.values() if s.busy == RUNNING]

    async def _session_for_run(self, session: str | None) -> Session:
        """The session a run is for: ``new``, the current one (a new one when there is
        none), or the one named; refused when ``sessions.maxParallel`` others run."""
        running = self.running()
        limit = self.settings.sessions.max_parallel
        if session == NEW or (session is None and self.session is None):
            target = None
        elif session is None or session in self.open_sessions:
            target = self.current if session is None else session
        else:
            target = await asyncio.to_thread(resolve, self.store, session)
        if target not in running and len(running) >= limit:
            raise WorkspaceBusy(
                f"{plural(len(running), 'session')} of {self.root} already "
                f"{'runs' if len(running) == 1 else 'run'} (sessions.maxParallel is {limit}): "
                "wait for one to finish, or raise the setting")
        if target is None:
            return await self._open_new()
        opened = self.open_sessions.get(target)
        if opened is None:
            opened = (await self._open_resumed(target))[0]
        self.current = opened.id
        return opened

    async def run(self, prompt: str, session: str | None = None,
                  context: EditorContext | None = None) -> tuple[str, RunOutcome]:
        """Run the agent on ``prompt`` in ``session`` (``new``, an id, ``latest``, or the
        current session — a new one when there is none), with the editor's ``context`` (what
        the user has open) when the front end has one. Other sessions may run meanwhile."""
        if not prompt.strip():
            raise WorkspaceError("the prompt is empty")
        await self.approve_settings()  # the folder's own settings, before they would apply
        await self.prepare_permissions()
        await self.prepare_hooks()
        ProviderOptions.from_settings(self.settings)  # no provider: fail before any change
        await self.discover_window()
        s = await self._session_for_run(session)
        if s.busy is not None:  # refused before its hooks hear of the prompt
            raise SessionBusy(s.id, os.getpid())
        if not s.started:
            await self._hooks_start(s, "resume")
        refused = await s.hooks.user_prompt_submit(prompt)
        if refused is not None:  # nothing sent, nothing logged
            return s.id, RunOutcome(StopReason.BLOCKED, error=refused.message())
        async with s.writing(RUNNING):
            prompt = await s.invoke_skill(prompt)  # `/review src`: the skill's prompt
            s.runs = await self._runs_so_far(s) + 1
            if s.worktree is not None and not s.root.is_dir():
                raise WorkspaceError(
                    f"the worktree of session {s.id} is gone ({s.worktree.path}): remove it "
                    "(pseudoclaude/worktree/remove with force) to go on in the folder itself")
            turn = await self._next_prompt_turn(s)
            await self._finish_journal(s.checkpoints)
            # the snapshot before the run is taken while the model thinks: the first tool
            # call that may change files waits for it, reads do not
            before_run = asyncio.ensure_future(self._checkpoint(s, turn, before_run=True))

            async def before_change(call: ToolCall) -> None:
                await asyncio.shield(before_run)
                await self._before_write(s, call)

            async def after_change(call: ToolCall) -> None:
                written = self._written_path(s, call)
                await self._checkpoint(s, turn, None if written is None else [written])

            def completed(appended: list[Message]) -> None:
                self._remember_run(s, appended)

            await s.offer_mcp_tools()
            runner = Runner(
                s.conversation, compact=s.runtime,
                provider=s.provider, tools=s.tools, gate=s.gate,
                system_prompt=s.system_prompt, emit=s.emit,
                max_iterations=self.settings.max_iterations,
                on_completed=completed, before_change=before_change,
                after_change=after_change,
                secrets=self._secrets(), reminder=s.reminder, environment=s.environment,
                hooks=s.hooks, inbox=s.agents.take_notices,
            )
            s.last_run = runner

            def add_usage(usage: Usage) -> None:  # its sub-agents' usage is the run's too
                runner.result.usage = runner.result.usage.plus(usage)

            s.agents.run_hooks = RunHooks(before_change, after_change, add_usage)
            try:
                result = await runner.run(prompt, context)
            finally:  # the run's checkpoint lines are all written when it ends
                with contextlib.suppress(asyncio.CancelledError):
                    await asyncio.shield(before_run)
            return s.id, result

    # -- checkpoints, rewind and fork ------------------------------------------------------
    async def _next_prompt_turn(self, s: Session) -> int:
        """The turn number of the prompt about to run (the timeline's numbering)."""
        if s.turns_known is None:
            path = self.store.log_path(s.id)
            line = await asyncio.to_thread(timeline, path) if path.exists() else None
            s.turns_known = len(line.turns) if line else 0
        s.turns_known += 1
        return s.turns_known

    async def _finish_journal(self, repo: Checkpoints) -> None:
        """Finish a code rewind that a killed process left half done (once per checkpoints
        in this process)."""
        if id(repo) in self._journals_checked:
            return
        self._journals_checked.add(id(repo))

        def finish() -> list[str]:
            with self._checkpointing:
                return finish_interrupted(repo)

        try:
            done = await asyncio.to_thread(finish)
        except (CheckpointError, OSError) as exc:
            log.warning("an interrupted rewind in %s could not be finished: %s", self.root, exc)
            return
        if done:
            log.warning("finished an interrupted rewind in %s: %d files", self.root, len(done))

    def _locked(self, fn: Callable[..., T], *args: Any) -> T:
        """A checkpoint operation, one at a time (the sessions share one shadow repository)."""
        with self._checkpointing:
            return fn(*args)

    async def _checkpoint(self, s: Session, turn: int, paths: list[str] | None = None, *,
                          before_run: bool = False) -> None:
        """Snapshot the files (a ``checkpoint`` line of ``turn``); ``paths``: only these may
        have changed since the last one. A failure is logged and said by ``context``, and
        never stops a run. The one taken before a run (``before_run``: every later one waits
        for it) is named as what changed outside the agent since the one before
        (``BEFORE``)."""
        await self._finish_journal(s.checkpoints)
        try:
            snap = await asyncio.to_thread(
                self._locked, s.checkpoints.snapshot,
                f"{BEFORE}prompt {turn}" if before_run else f"prompt {turn}", s.id, paths)
        except (CheckpointError, OSError) as exc:
            problem = f"checkpoints failed: {exc}"
            if problem != self.checkpoint_problem:
                log.warning("%s: %s", self.root, problem)
            self.checkpoint_problem = problem
            return
        self.checkpoint_problem = ""
        self.checkpoint_skipped = snap.skipped if paths is None else sorted(
            {*self.checkpoint_skipped, *snap.skipped} - (set(paths) - set(snap.skipped)))
        s.writer.append_checkpoint(turn, snap.ref)

    def _written_path(self, s: Session, call: ToolCall) -> str | None:
        """The file a ``write_file`` or ``edit_file`` call writes (relative, ``/``); None for
        another tool, or a path the tool refuses."""
        if call.name not in WRITE_TOOLS or not isinstance(call.arguments, dict):
            return None
        path = call.arguments.get("path")
        if not isinstance(path, str) or not path.strip():
            return None
        root = s.root.resolve()
        target = (root / path).resolve()
        return target.relative_to(root).as_posix() if target.is_relative_to(root) else None

    async def _before_write(self, s: Session, call: ToolCall) -> None:
        """Before-images: keep what a file the agent is about to write holds now (without
        ``git``: every file; with it: the files the snapshots leave out, such as ignored
        ones)."""
        relative = self._written_path(s, call)
        if relative is None:
            return
        try:
            await asyncio.to_thread(self._locked, s.checkpoints.before_write, relative,
                                    s.id)
        except (CheckpointError, OSError) as exc:
            self.checkpoint_problem = f"checkpoints failed: {exc}"
            log.warning("%s: %s", self.root, self.checkpoint_problem)

    def checkpoint_status(self, session_id: str | None = None) -> CheckpointStatus:
        """What a rewind of code can restore here now (``pseudoclaude/context``): in the
        folder, or in the worktree of the session named (the current one by default)."""
        sid = self.current if session_id in (None, "") else session_id
        open_session = self.open_sessions.get(sid) if sid is not None else None
        repo = self.checkpoints if open_session is None else open_session.checkpoints
        covers = repo.covers
        unreadable = repo.unreadable()  # named as a rewind preview names them
        named = ", ".join(unreadable[:5]) + (f" and {len(unreadable) - 5} more"
                                             if len(unreadable) > 5 else "")
        problems = [p for p in (self.checkpoint_problem,
                                NO_GIT if covers == "writes" else "",
                                f"not kept because they cannot be read: {named}"
                                if unreadable else "") if p]
        return CheckpointStatus(covers=covers,
                                problem="; ".join(problems) if problems else msgspec.UNSET,
                                skipped=list(self.checkpoint_skipped))

    async def _checkpoints_for(self, sid: str) -> Checkpoints:
        """The checkpoints of a session: its worktree's, else the folder's."""
        return self.checkpoints_of(await asyncio.to_thread(self.worktree_of, sid))

    async def _timeline(self, session_id: str | None) -> tuple[str, Timeline]:
        sid = session_id if session_id not in (None, "") else self.current
        if sid is None:
            raise WorkspaceError("no active session in this workspace")
        sid = await asyncio.to_thread(resolve, self.store, sid)
        path = self.store.log_path(sid)
        if not path.exists():
            return sid, Timeline(turns=[], last_checkpoint=None)
        return sid, await asyncio.to_thread(timeline, path)

    async def turns(self, session_id: str | None = None) -> list[TurnSummary]:
        """The prompts of a session (default: the current one) with the files each changed."""
        sid, line = await self._timeline(session_id)
        repo = await self._checkpoints_for(sid)
        pairs: dict[int, tuple[str, str]] = {}
        for i, turn in enumerate(line.turns):
            if turn.checkpoints:  # from before it ran to before the next (or its own last)
                following = next((t.checkpoints[0] for t in line.turns[i + 1:]
                                  if t.checkpoints), turn.checkpoints[-1])
                pairs[i] = (turn.checkpoints[0], following)

        def count() -> dict[int, int]:
            try:
                with self._checkpointing:
                    counts = repo.count_changes(list(pairs.values()))
            except (CheckpointError, OSError):
                return {}
            return dict(zip(pairs, counts, strict=True))

        counts = await asyncio.to_thread(count) if pairs else {}
        return [TurnSummary(turn=t.turn, prompt=t.prompt, ts=t.ts,
                            files_changed=counts.get(i, 0)) for i, t in enumerate(line.turns)]

    async def rewind_preview(self, turn: int, mode: RewindMode,
                             session_id: str | None = None) -> RewindPlan:
        """What a rewind would do; nothing changes (read-only: answers during a run too)."""
        sid, line = await self._timeline(session_id)
        repo = await self._checkpoints_for(sid)
        await self._finish_journal(repo)
        session = self.open_sessions.get(sid)
        current = (session.conversation.messages() if session is not None and not session.grew()
                   else (await self.load(sid)).messages)
        return await asyncio.to_thread(self._locked, rewind_plan, line, turn, mode, current,
                                       repo)

    async def rewind_file(self, turn: int, path: str, session_id: str | None = None
                          ) -> tuple[bytes | None, bytes | None]:
        """One file of a code rewind to before prompt ``turn``: its bytes now and after the
        rewind (None: absent). ``KeyError`` when the rewind does not restore it; nothing
        changes."""
        planned = await self.rewind_preview(turn, "code", session_id)
        if planned.target_ref is None or path not in {f.path for f in planned.files}:
            raise KeyError(path)
        sid, _ = await self._timeline(session_id)
        worktree = await asyncio.to_thread(self.worktree_of, sid)
        repo, ref = self.checkpoints_of(worktree), planned.target_ref
        root = self.root if worktree is None else worktree.workspace

        def read() -> tuple[bytes | None, bytes | None]:
            target = root / path
            try:  # never opened when not a file (a pipe would block)
                current = target.read_bytes() if target.is_file() else None
            except OSError:  # cannot be read: shown as absent (the preview names it)
                current = None
            with self._checkpointing:
                return current, repo.content(ref, path)

        return await asyncio.to_thread(read)

    async def rewind(self, turn: int, mode: RewindMode, *, force: bool = False,
                     session_id: str | None = None) -> RewindOutcome:
        """Take the code, the conversation or both back to before prompt ``turn``."""
        s = await self._target(session_id)
        async with s.writing("a rewind"):
            self.current = s.id
            repo = s.checkpoints
            await self._finish_journal(repo)
            _, line = await self._timeline(s.id)
            conversation = s.conversation
            planned = await asyncio.to_thread(self._locked, rewind_plan, line, turn, mode,
                                              conversation.messages(), repo)
            if mode in ("code", "both") and planned.problem:
                raise WorkspaceError(planned.problem)
            restored: list[str] = []
            conflicts: list[str] = []
            if mode in ("code", "both"):
                restored, conflicts = await asyncio.to_thread(
                    self._locked, restore_files, repo, planned, force, s.id)
                head = await asyncio.to_thread(self._locked, repo.head, s.id)
                if head is not None:
                    s.writer.append_checkpoint(len(line.turns), head)
            if mode in ("conversation", "both"):
                target = planned.turn
                await asyncio.to_thread(s.runtime.rewind_to, target.before, target.turn)
                s.turns_known = target.turn - 1
                if target.tasks != s.tasks:  # the list as it was before that prompt
                    await s.set_tasks(target.tasks)
            if mode == "both" and restored:  # the model is back where it knew these bytes
                await asyncio.to_thread(s.knows_files, restored)
            return RewindOutcome(restored_files=restored, conflicts=conflicts,
                                 message_count=len(conversation),
                                 message=words.rewound(turn, mode, len(restored),
                                                       len(conflicts), len(conversation)))

    async def fork(self, session_id: str | None = None, turn: int | None = None) -> str:
        """A new session whose conversation is the source's before prompt ``turn`` (default:
        all of it); the source is unchanged (it may be running). Returns the new session's
        id."""
        sid, line = await self._timeline(session_id)
        if turn is None:
            session = self.open_sessions.get(sid)
            messages = (session.conversation.messages()
                        if session is not None and not session.grew()
                        else (await self.load(sid)).messages)
            tasks = line.tasks
        else:
            picked = pick_turn(line, turn)
            messages, tasks = picked.before, picked.tasks
        return await asyncio.to_thread(write_fork, self.store, sid, turn, messages,
                                       self.settings.model, str(self.root), tasks, line.mode)

    # -- worktree sessions -----------------------------------------------------------------
    async def _worktree_session(self, session_id: str | None, agent_id: str | None = None
                                ) -> tuple[Session, Worktree]:
        s = await self._target(session_id)
        if agent_id:  # a sub-agent's (isolation: "worktree")
            return s, await asyncio.to_thread(self._agent_worktree, s.id, agent_id)
        if s.worktree is None:
            raise WorktreeError(f"session {s.id} has no worktree: it works in the folder "
                                "itself")
        return s, s.worktree

    def _agent_worktree(self, sid: str, agent_id: str) -> Worktree:
        """The worktree a sub-agent of ``sid`` kept (:class:`WorktreeError`: none). Blocking."""
        try:
            log_path = agent_log(self.store, sid, agent_id)
        except ValueError as exc:
            raise WorktreeError(str(exc)) from None
        found = worktrees.load(self.store.data_dir, agent_id) if log_path.is_file() else None
        if found is None:
            raise WorktreeError(f"sub-agent {agent_id} of session {sid} has no worktree (it "
                                "did not run with isolation \"worktree\", or it was removed)")
        return found

    async def worktree_status(self, session_id: str | None = None, agent_id: str | None = None
                              ) -> tuple[str, WorktreeStatus]:
        """Where a worktree session (or a sub-agent's worktree) works and what it changed
        since ``base`` (read-only)."""
        s, worktree = await self._worktree_session(session_id, agent_id)
        return s.id, await asyncio.to_thread(worktrees.status, worktree)

    async def worktree_apply(self, session_id: str | None = None, agent_id: str | None = None
                             ) -> tuple[str, ApplyResult]:
        """Write a worktree session's (or a sub-agent's worktree's) changes into the folder's
        files: all of them, or none when the folder changed one of them too (the conflicts are
        listed). Not while the session runs (:class:`SessionBusy`)."""
        s, worktree = await self._worktree_session(session_id, agent_id)
        async with s.writing("applying its worktree"):
            return s.id, await asyncio.to_thread(worktrees.apply, self.root, worktree)

    async def worktree_remove(self, session_id: str | None = None, force: bool = False,
                              agent_id: str | None = None) -> str:
        """Remove a session's worktree and its branch (refused with changes not applied to
        the folder, unless ``force``); the session goes on in the folder itself. With
        ``agent_id``: the worktree that sub-agent kept."""
        s, worktree = await self._worktree_session(session_id, agent_id)
        if agent_id:
            async with s.writing("removing a sub-agent's worktree"):
                await asyncio.to_thread(worktrees.remove, self.root, worktree, force)
                return s.id
        async with s.writing("removing its worktree"):
            await asyncio.to_thread(worktrees.remove, self.root, worktree, force)
            self._worktree_checkpoints.pop(s.id, None)
            await asyncio.to_thread(shutil.rmtree, self.store.data_dir / "worktrees" /
                                    f"{s.id}.checkpoints", True)
            s.set_worktree(None)
            return s.id

    async def worktree_branches(self) -> dict[str, str]:
        """The branch of every session that works in a worktree, by session id."""
        folder = self.store.data_dir / "worktrees"

        def scan() -> dict[str, str]:
            branches: dict[str, str] = {}
            for record in sorted(folder.glob("*.json")) if folder.is_dir() else []:
                try:
                    found = worktrees.load(self.store.data_dir, record.stem)
                except WorktreeError as exc:
                    log.warning("%s", exc)
                    continue
                if found is not None:
                    branches[found.session_id] = found.branch
            return branches

        return await asyncio.to_thread(scan)

    async def mcp_servers(self) -> list[ServerInfo]:
        """Every configured MCP server and its state (``pseudoclaude/mcp/list``)."""
        return await self.mcp.listing()

    async def skill_list(self, session_id: str | None = None
                         ) -> tuple[Catalog, str | None, list[str]]:
        """Every skill (read now) and problem, the session (the current one by default; an id
        or ``latest``) and the skills it loaded (from its log when this process has not opened
        it; no session: none)."""
        catalog = await asyncio.to_thread(self.skills.scan)
        sid = self.current if session_id in (None, "") else session_id
        if sid is None:
            return catalog, None, []
        session = self.open_sessions.get(sid)
        if session is not None:
            return catalog, sid, await asyncio.to_thread(session.skills.loaded)
        sid = await asyncio.to_thread(resolve, self.store, sid)
        session = self.open_sessions.get(sid)
        loaded = await asyncio.to_thread(session.skills.loaded) if session is not None else \
            await asyncio.to_thread(logged_skills, self.store.log_path(sid))
        return catalog, sid, loaded

    async def status(self, session_id: str | None = None) -> FolderStatus:
        """What ``/status`` shows of a session (the current one by default; with none, of the
        folder and the mode the next session starts in): :mod:`.status`."""
        no_session = session_id in (None, "") and self.session is None
        return await folder_status(self, None if no_session else await self._target(session_id))

    def last_outcome(self, session_id: str | None = None) -> RunOutcome | None:
        """What the latest run of a session (the current one) did (a cancelled run's too:
        what it had done by then)."""
        sid = self.current if session_id in (None, "") else session_id
        session = self.open_sessions.get(sid) if sid is not None else None
        run = session.last_run if session is not None else None
        return run.result if run is not None else None

    def secrets(self) -> list[str]:
        return self._secrets()

    def _secrets(self) -> list[str]:
        """The API keys this process knows, so tool output can never carry one."""
        keys = [os.environ.get(name, "") for name in API_KEY_ENV.values()]
        if self.settings.api_key is not None:
            keys.append(self.settings.api_key.reveal())
        return [key for key in keys if key]

    async def _runs_so_far(self, s: Session) -> int:
        """The runs of a session so far: counted from its log the first time (so the numbers
        survive restarts), then kept up by :meth:`run`."""
        if s.runs is None:
            s.runs = await asyncio.to_thread(count_prompts, self.store.log_path(s.id))
        return s.runs

    def _remember_run(self, s: Session, appended: list[Message]) -> None:
        """After a completed run: the memory update, in the background (``memory.mode``
        ``auto`` writes, ``confirm`` proposes, ``off`` and ``memory.enabled: false`` skip)."""
        memory = self.settings.memory
        if memory.enabled and memory.mode != "off":
            self.memory.schedule_update(appended, s.id, s.runs or 0, memory.mode)

    async def remember(self, text: str, level: str, type: str | None = None,
                       title: str | None = None) -> tuple[str, Path]:
        """``remember`` with the provenance of the current session and its latest run."""
        session = self.session
        source = provenance(session.id, await self._runs_so_far(session)) if session else ""
        return await self.memory.remember(text, level, type, title, source=source)

    async def memory_view(self) -> MemoryView:
        return await self.memory.show()

    async def forget(self, level: str, filename: str) -> bool:
        return await self.memory.forget(level, filename)

    async def proposals(self) -> list[ProposalRecord]:
        return await self.memory.list_proposals()

    async def review(self, proposal_id: str, decision: str,
                     content: str | None = None) -> Reviewed:
        return await self.memory.review(proposal_id, decision, content)

    def would_ask(self, call: ToolCall, session_id: str | None = None) -> bool:
        """Whether ``call`` waits for the user's approval now."""
        sid = self.current if session_id in (None, "") else session_id
        session = self.open_sessions.get(sid) if sid is not None else None
        if session is None:
            return False
        tools = session.tools
        mcp = tools.mcp_tool(call.name)
        return session.gate.verdict(
            call, tools.approval_class(call.name),
            (mcp.server, mcp.tool) if mcp is not None else None,
            mcp.read_only_hint if mcp is not None else False).decision == "ask"

    # -- permissions -------------------------------------------------------------------------
    async def set_mode(self, mode: str, session_id: str | None = None) -> str:
        """Switch a session's permission mode (the current one by default; with no session
        yet, the mode the next one starts in). :class:`PermissionsError` when it cannot
        apply. Returns the message for the user."""
        if session_id in (None, "") and self.session is None:
            engine = await asyncio.to_thread(self.permissions.engine, self.root)
            engine.set_mode(mode)  # raises for an unknown mode, bypass without allowBypass
            self.next_mode = mode
            return words.mode_next(mode)
        session = await self._target(session_id)
        was = session.mode
        await session.set_mode(mode)
        return words.mode_set(mode, was)

    async def agents_of(self, session_id: str | None = None
                        ) -> tuple[str | None, list[tuple[AgentRecord, str, Usage]]]:
        """A session's sub-agents (the current one by default, else the latest), from their
        logs, each with its status (a log without an end whose sub-agent does not run in this
        process was interrupted: ``failed``) and its usage (so far, for one running here)."""
        ref = session_id if session_id not in (None, "") else self.current
        if ref is None:
            if not await self.has_latest():
                return None, []
            ref = LATEST

        def scan() -> tuple[str, list[tuple[AgentRecord, str, Usage]]]:
            assert ref is not None
            sid = resolve(self.store, ref)
            session = self.open_sessions.get(sid)
            live = dict(session.agents.live) if session is not None else {}
            found: list[tuple[AgentRecord, str, Usage]] = []
            for r in list_records(self.store, sid):
                if r.stop is not None:
                    found.append((r, r.status, Usage(r.stop.input_tokens,
                                                     r.stop.output_tokens)))
                elif (one := live.get(r.header.agent_id)) is not None:
                    used = one.runner.result.usage if one.runner is not None else Usage()
                    found.append((r, "running", Usage(used.input_all, used.output_tokens)))
                elif running_elsewhere(r.path, r.header.agent_id):  # another process's
                    found.append((r, "running", Usage()))
                else:  # interrupted: a crash, a kill
                    found.append((r, "failed", Usage()))
            return sid, found

        return await asyncio.to_thread(scan)

    async def stop_agent(self, session_id: str | None, agent_id: str) -> tuple[str, str]:
        """Stop one sub-agent of an open session (its log ends ``canceled``, ``stopped by the
        user``): a background one as ``task_stop`` does (no notification), a foreground one
        alone (its ``agent`` call answers that it was stopped, and the run goes on). The
        session's id and how it ended; :class:`WorkspaceError` when it is not running."""
        session = self._session(session_id)
        agents = session.agents
        if agent_id not in agents.live and agent_id not in agents.tasks.by_id:
            _, records = await self.agents_of(session.id)
            ended = next((status for r, status, _ in records
                          if r.header.agent_id == agent_id), None)
            raise WorkspaceError(f"sub-agent {agent_id[:80]} is not running: it ended {ended}"
                                 if ended else f"no sub-agent {agent_id[:80]!r} in session "
                                 f"{session.id}")
        try:
            if agent_id not in agents.tasks.by_id:
                return session.id, await agents.stop_live(agent_id, "stopped by the user")
            info = await agents.stop_task(agent_id, "stopped by the user")
        except ToolError as exc:
            raise WorkspaceError(exc.message) from None
        return session.id, info.status

    async def tasks_of(self, session_id: str | None = None) -> tuple[str | None,
                                                                     list[tuple[str, str]]]:
        """A session's task list (the current one by default; none open: empty)."""
        if session_id in (None, "") and self.session is None:
            return None, []
        session = await self._target(session_id)
        return session.id, list(session.tasks)

    def mode_of(self, session_id: str | None = None) -> str:
        """A session's permission mode (the current one by default; with none, the mode the
        next one starts in)."""
        sid = self.current if session_id in (None, "") else session_id
        session = self.open_sessions.get(sid) if sid is not None else None
        if session is not None:
            return session.mode
        if self.next_mode is not None:
            return self.next_mode
        return self.permissions.loaded().start_mode

    # -- the model ---------------------------------------------------------------------------
    def models(self) -> list[ModelChoice]:
        """The models a session may switch to (the ``model`` setting's first)."""
        return model_choices(self.settings)

    def model_of(self, session_id: str | None = None) -> str:
        """The model a session's requests use (the current one by default; with none, the
        ``model`` setting)."""
        sid = self.current if session_id in (None, "") else session_id
        session = self.open_sessions.get(sid) if sid is not None else None
        return session.model if session is not None and session.model else self.settings.model

    async def set_model(self, model: str, session_id: str | None = None) -> str:
        """Make a session's next requests (the current one's by default) use ``model``, one of
        :meth:`models` (else :class:`~.lifecycle.UnknownModel`): for that session in this
        process, written to no settings file. Returns the session's id."""
        check_model(self.settings, model)
        session = await self._target(session_id)
        session.model = "" if model == self.settings.model else model
        return session.id

    async def permission_engine(self, session_id: str | None = None) -> PermissionEngine:
        """The engine of a session (the current one), or of the next new session when there
        is none, with the rules as they are now. Blocking parts run off the loop."""
        await asyncio.to_thread(self._apply_permissions)
        if session_id in (None, "") and self.session is None:
            return await asyncio.to_thread(self.permissions.engine, self.root, (),
                                           self.next_mode)
        return (await self._target(session_id)).engine

    async def check_permission(self, tool: str, arguments: dict[str, Any],
                               session_id: str | None = None) -> Verdict:
        """What the engine would decide about a call now (a dry run: nothing asked, run or
        remembered), as the session's gate sees it."""
        if session_id in (None, "") and self.session is None:
            engine = await self.permission_engine()
            return await asyncio.to_thread(engine.check, PermissionCall(tool, arguments))
        await asyncio.to_thread(self._apply_permissions)
        session = await self._target(session_id)
        tools = session.tools
        mcp = tools.mcp_tool(tool)
        call = ToolCall("check", tool, arguments)
        return await asyncio.to_thread(
            session.gate.verdict, call, tools.approval_class(tool),
            (mcp.server, mcp.tool) if mcp is not None else None,
            mcp.read_only_hint if mcp is not None else False)

    def sandbox_state(self) -> SandboxStatus | None:
        """Whether commands run sandboxed; ``None`` while the first probe runs."""
        sandbox = self.permissions.sandbox
        return sandbox.status if sandbox.checked else None

    # -- compaction and the context ----------------------------------------------------------
    async def compact(self, instructions: str = "", session_id: str | None = None
                      ) -> CompactOutcome:
        try:
            s = await self._target(session_id)
        except WorkspaceError:
            raise WorkspaceError("no active session to compact in this workspace") from None
        async with s.writing("a compaction"):
            return await s.runtime.compact(instructions)

    async def compact_preview(self, instructions: str = "", session_id: str | None = None
                              ) -> CompactPlan:
        """What a compaction would do now: no model call, nothing written (read-only, so it
        answers during a run too)."""
        sid = self.current if session_id in (None, "") else session_id
        session = self.open_sessions.get(sid) if sid is not None else None
        if session is None and session_id not in (None, ""):
            session = await self._target(session_id)
        if session is None:
            state = self.context()
            return CompactPlan(would_summarize=False, before_tokens=state.estimated_tokens,
                               estimated_after_tokens=state.estimated_tokens,
                               summarized_messages=0, kept_messages=0, first_kept_index=0,
                               reason="no session")
        return await session.runtime.preview(instructions)

    async def undo_compact(self, session_id: str | None = None) -> UndoOutcome:
        """Bring back what the last compaction of the session summarised (from the log)."""
        s = await self._target(session_id)
        async with s.writing("an undo"):
            path = self.store.log_path(s.id)
            return await s.runtime.undo(lambda: compaction_history(path))

    def context(self, session_id: str | None = None) -> ContextState:
        """The context state of a session (the current one; the empty state without one).
        A session another process wrote since is counted from its log as it is now."""
        sid = self.current if session_id in (None, "") else session_id
        session = self.open_sessions.get(sid) if sid is not None else None
        if session is None and sid is not None and self.store.log_path(sid).is_file():
            return self._context_from_log(sid)
        if session is None:
            config = self.compact_config()
            return ContextState(message_count=0, estimated_tokens=0,
                                context_window=config.window,
                                auto_compact_threshold=config.threshold,
                                auto_compact_failures=0, auto_compact_tripped=False,
                                breakdown=TokenBreakdown(free=config.window,
                                                         reserved=config.reserved))
        if session.busy is None and session.grew():
            return self._context_from_log(session.id, session.tools_bytes)
        return with_rules(session.runtime.state(), session.rule_sizes)

    def _context_from_log(self, sid: str, tools_bytes: int | None = None) -> ContextState:
        """The context of a session as its log is now (not open here, or another process
        wrote it): a runtime over the replayed history that writes nothing (blocking: one
        replay)."""
        loaded = load_session(self.store, sid)

        async def no_prefix() -> RequestPrefix:
            raise WorkspaceError("a count of the context makes no request")

        runtime = CompactRuntime(
            Conversation(list(loaded.messages)), config=self.compact_config(),
            spill_dir=self.store.spill_dir(sid), workspace=self.root,
            provider=self.summary_provider, prefix=no_prefix,
            ledger=Ledger(dict(loaded.offloads), set(loaded.kept)))
        if loaded.anchor is not None:
            runtime.restore_anchor(loaded.anchor.tokens, loaded.anchor.count,
                                   loaded.anchor.saved)
        else:
            runtime.estimate()
        prompt = with_section(  # as the session's next request would send it
            self.build_system_prompt(logged_instructions(self.store.log_path(sid))),
            section(load_roles(self.root, Path.home()), plan=loaded.mode == "plan"))
        system, rules, memory, skills = prompt.sizes()
        if tools_bytes is None:
            registry = ToolRegistry(self.root)
            session_skills = SessionSkills(
                self.skills.scan, self.skills.cached(), session_id=sid, workspace=self.root,
                load=lambda: logged_skills(self.store.log_path(sid)),
                install_dir=self.skills.install_dir)
            session_skills.catalog()  # the skills it loaded, and their tools
            registry.set_skills(session_skills)
            tools_bytes = json_bytes([
                {"name": t.name, "description": t.description, "input_schema": t.input_schema}
                for t in registry.specs()])
        runtime.set_request_overhead(system=system, rules=rules, memory=memory,
                                     skills=skills, tools=tools_bytes)
        return with_rules(runtime.state(), prompt.rule_sizes())

    async def close(self, memory_timeout: float = 10.0) -> None:
        """Wait (bounded) for pending memory updates, then close the logs and the provider."""
        for asking in (self._settings_asking, self._hooks_asking):
            if asking is not None and not asking.done():
                asking.cancel()
        for session in list(self.open_sessions.values()):
            await session.stop_tasks("the server shut down")
        await self.memory.close(timeout=memory_timeout)
        await self.mcp.close()
        if self._cleanup is not None:
            await asyncio.gather(self._cleanup, return_exceptions=True)
        for session in list(self.open_sessions.values()):
            await self._hooks_end(session, "exit")
        await self.hooks.aclose()
        for session in self.open_sessions.values():
            session.close()
        providers, self._providers = self._providers, []
        for _, provider in providers:
            await provider.aclose()


def with_rules(state: ContextState, sizes: Sequence[RuleSize]) -> ContextState:
    """``state`` with its instruction files, which share its breakdown's ``rules``."""
    return msgspec.structs.replace(state, rules=rule_files(sizes, state.breakdown.rules))
