"""One open session of a folder: its conversation and log writer, compaction runtime, tools,
approval gate and run counters, and the lock that makes its process the session's one writer.

A :class:`~pseudoclaude.workspace.folder.Workspace` keeps one per session it has opened; several
may run at once. Everything that writes the session (a run, a compaction, an undo, a rewind)
happens inside :meth:`Session.writing`: it refuses at once when this process is already writing
the session (:class:`~pseudoclaude.session.lock.SessionBusy` with this pid) or another process
holds its lock (with that pid), and, holding the lock, first reloads the session from its log
when the log grew since this process last read or wrote it (another client's turns), so the
next request carries them: two clients never split one session into two conversations.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from pseudoclaude import __version__
from pseudoclaude.agent.approvals import Answer, ApprovalRequest, ApprovalUnavailable, Gate
from pseudoclaude.agent.environment import environment
from pseudoclaude.agent.instructions import INSTRUCTIONS_KEY, NestedInstructions, logged_nested
from pseudoclaude.agent.reminders import (
    PLAN_EXITS,
    block,
    plan_reminder,
    tasks_instruction,
    tasks_reminder,
)
from pseudoclaude.agent.runner import Runner
from pseudoclaude.agent.skills import SessionSkills
from pseudoclaude.agent.tools import ToolRegistry
from pseudoclaude.agent.tools.base import PlanAnswer
from pseudoclaude.agent.tools.freshness import DIGEST_KEY, FileLedger, digest, ledger_entries
from pseudoclaude.agents import SubAgents, with_section
from pseudoclaude.checkpoints import Checkpoints
from pseudoclaude.compact import CompactRuntime, Ledger
from pseudoclaude.compact.estimate import json_bytes
from pseudoclaude.compact.summarize import RequestPrefix
from pseudoclaude.conversation import Conversation
from pseudoclaude.events import Event, ModeEvent, Task, TasksEvent, WarningEvent
from pseudoclaude.hooks import SessionHooks
from pseudoclaude.mcp import McpTool
from pseudoclaude.permissions import MODES, PermissionEngine, PermissionsError
from pseudoclaude.session import (
    OpenSession,
    SessionStore,
    SessionWriter,
    resume_session,
)
from pseudoclaude.session.lock import SessionBusy, SessionLock
from pseudoclaude.session.results import tool_results
from pseudoclaude.skills import command, invocation
from pseudoclaude.workspace.frontend import announce_write
from pseudoclaude.workspace.skills import logged_skills
from pseudoclaude.worktrees import Worktree

if TYPE_CHECKING:
    from pseudoclaude.agent.prompt import SystemPrompt
    from pseudoclaude.compact.breakdown import RuleSize
    from pseudoclaude.compact.types import CompactConfig
    from pseudoclaude.config import Settings
    from pseudoclaude.llm.provider import Provider
    from pseudoclaude.workspace.folder import Workspace


class Session:
    """One open session (see the module docstring). Made by the workspace only."""

    def __init__(self, ws: Workspace, opened: OpenSession,
                 worktree: Worktree | None = None) -> None:
        self.ws = ws
        self.id = opened.session_id
        self.lock = SessionLock(ws.store.session_dir(self.id), self.id)
        self.hooks = SessionHooks(ws.hooks.dispatcher, ws.hooks.active, session_id=self.id,
                                  transcript_path=ws.store.log_path(self.id),
                                  cwd=lambda: self.root, mode=lambda: self.mode,
                                  warn=lambda message: self.emit(WarningEvent(message)))
        """Its hooks (the folder's), with what they said for its next request."""
        self.started = False
        """Its SessionStart (or SessionResume) hooks ran in this process."""
        self.worktree = worktree
        """The session's own git worktree (``None``: it works in the folder itself)."""
        self.root = ws.root
        """Where its tools work: the folder, or its worktree's copy of the folder."""
        self.checkpoints: Checkpoints = ws.checkpoints
        self.tools = ToolRegistry(ws.root)
        if worktree is not None:
            self._work_in(worktree)
        self.tools.set_editor(ws.editor)
        self.tools.set_sandbox(ws.permissions.sandbox)
        self.track_files()
        self.track_instructions()
        self.track_skills()
        self.opened = opened
        self.model = ""
        """The model its requests use instead of the ``model`` setting (``""``: the setting's),
        chosen by a front end for this session only; never written to a settings file."""
        self.runtime = self._runtime(opened)
        loaded = opened.loaded
        logged = loaded.mode if loaded is not None and loaded.mode in MODES else None
        chosen = ws.next_mode if logged is None else None
        if chosen is not None:
            ws.next_mode = None  # chosen for the next session: this one
        self.gate = Gate(ws.permissions.engine(self.root, self.tools.extra_read_roots,
                                               logged or chosen),
                         ws.approver, session_id=self.id, mcp_servers=ws.mcp.approvals(),
                         remember=ws.permissions.remember_rule,
                         on_ask=lambda request: self.hooks.notify("approval", request.summary))
        self.mode_unlogged = chosen is not None
        """It started in the mode chosen before it existed: its first write logs it."""
        self.tasks: list[tuple[str, str]] = list(loaded.tasks or []) if loaded else []
        """Its task list, ``(content, status)`` each (``update_tasks`` replaces it)."""
        self.tools.set_state(self)
        self.tools.set_plan(self.mode == "plan")
        self.agents = SubAgents(self, Path.home())
        """Its sub-agents (the ``agent`` tool)."""
        self.tools.set_agents(self.agents, self.agents)
        self.runtime.carry = self.carried
        self.busy: str | None = None
        """What this process is doing to the session (``a run``, ``a compaction``, ...)."""
        self.runs: int | None = None
        """The session's runs so far (``None``: not counted from its log yet)."""
        self.turns_known: int | None = None
        """The prompts of its timeline so far (``None``: not counted yet)."""
        self.last_run: Runner | None = None
        self.last_system: str | None = None
        """The system prompt of its last run (the one the provider cached)."""
        self.last_environment = ""
        """The environment block its last request sent (a summary request repeats it)."""
        self.tools_bytes: int | None = None
        self.rule_sizes: tuple[RuleSize, ...] = ()
        """The instruction files of its system prompt as last built, with their bytes."""
        self.mcp_offered: list[McpTool] = []
        self.offered: tuple[str, ...] = ()
        """The names of the tools its last request offered (their schemas: ``tools_bytes``)."""
        self.known_size = self.log_size()

    # -- what it is made of ------------------------------------------------------------------
    def set_worktree(self, worktree: Worktree | None) -> None:
        """Work in ``worktree`` (its tools, commands, checkpoints and permission checks), or
        in the folder again when it is ``None`` (the worktree was removed)."""
        self._work_in(worktree)
        self.engine.workspace = self.root

    def _work_in(self, worktree: Worktree | None) -> None:
        self.worktree = worktree
        self.root = worktree.workspace if worktree is not None else self.ws.root
        self.checkpoints = self.ws.checkpoints_of(worktree)
        self.tools.set_workspace(self.root)

    # -- the permission mode -----------------------------------------------------------------
    @property
    def engine(self) -> PermissionEngine:
        return self.gate.engine

    @property
    def mode(self) -> str:
        return self.engine.mode

    async def set_mode(self, mode: str) -> None:
        """Switch the permission mode (:class:`PermissionsError` when it cannot apply: an
        unknown mode, ``bypassPermissions`` without ``permissions.allowBypass``), logged as a
        ``mode`` line so a resume keeps it, and told to the listeners (a ``mode`` event)."""
        if mode == self.mode:
            return
        self.engine.set_mode(mode)
        self.tools.set_plan(mode == "plan")
        self.mode_unlogged = False
        if self.busy is not None:  # this process writes it now (a run): one more line
            await asyncio.to_thread(self.writer.append_mode, mode)
        else:
            async with self.writing("a mode change"):
                await asyncio.to_thread(self.writer.append_mode, mode)
        self.emit(ModeEvent(mode))

    # -- the task list and the plan (what update_tasks and exit_plan_mode reach) -------------
    async def set_tasks(self, tasks: list[tuple[str, str]]) -> None:
        """Replace the task list: logged (a ``tasks`` line), told (a ``tasks`` event)."""
        self.tasks = list(tasks)
        await asyncio.to_thread(self.writer.append_tasks, self.tasks)
        self.emit_tasks()

    def emit_tasks(self) -> None:
        self.emit(TasksEvent([Task(content, status) for content, status in self.tasks]))

    async def ask_plan(self, plan: str, call_id: str) -> PlanAnswer:
        """Ask the user to approve ``plan``; approved, the session switches to the mode they
        chose (``default`` unless ``acceptEdits``)."""
        request = ApprovalRequest.plan_of(plan, call_id, self.id)
        try:
            answer = await self.ws.approver.ask(request)
        except ApprovalUnavailable as exc:
            return PlanAnswer(False, feedback=f"the plan could not be shown to the user ({exc})")
        decision = answer.decision if isinstance(answer, Answer) else answer
        if decision != "approve":
            said = answer.message if isinstance(answer, Answer) else None
            return PlanAnswer(False, feedback=said or "")
        chosen = answer.mode if isinstance(answer, Answer) else None
        mode = chosen if chosen in PLAN_EXITS else "default"
        await self.set_mode(mode)
        return PlanAnswer(True, mode=mode)

    def reminder(self, round_: int) -> str | None:
        """What the next request carries after the conversation, never logged: in plan mode
        the plan reminder (in full on rounds 1, 5, 9…), the task list when there is one, and
        what its hooks said since its last request (their context, once)."""
        parts = []
        if self.mode == "plan":
            parts.append(plan_reminder(round_))
        if self.tasks:
            parts.append(tasks_reminder(self.tasks))
        said = self.hooks.take_context()  # what its hooks said since the last request
        if said:
            parts.append(block(said))
        return "\n\n".join(parts) or None

    async def environment(self, provider: Provider) -> str:
        """The environment block of its next request: where it works (its worktree for a
        worktree session), the date, git, the model it talks to and its mode."""
        facts = await environment(self.root, version=__version__, provider=provider.name,
                                  model=provider.model, mode=self.mode)
        self.last_environment = facts.render()
        return self.last_environment

    def carried(self) -> str:
        """What a summary must keep: the task list."""
        return tasks_instruction(self.tasks) if self.tasks else ""

    def track_files(self) -> None:
        """A new record of the files the session read and wrote, by which its stale writes are
        refused; filled from its log on first use (its results' ``sha256``), so what it read
        before a restart or in another process counts."""
        log = self.ws.store.log_path(self.id)

        def load() -> Iterator[tuple[str, str]]:
            return ledger_entries(tool_results(log, containing=DIGEST_KEY.encode()),
                                  self.tools.workspace)

        self.tools.set_files(FileLedger(self.id, self.ws.file_writes, load))

    def track_instructions(self) -> None:
        """A new record of the subfolders' instruction files the session joined (a read
        under their folder), filled from its log on first use, so a resume keeps them."""
        log = self.ws.store.log_path(self.id)
        self.instructions = NestedInstructions(lambda: logged_instructions(log))
        self.tools.set_instructions(self.instructions)

    def track_skills(self) -> None:
        """A new record of the skills the session loaded, filled from its log on first use,
        so a resume keeps them (and the tools they brought)."""
        log = self.ws.store.log_path(self.id)
        folder = self.ws.skills
        self.skills = SessionSkills(folder.scan, folder.cached(),
                                    load=lambda: logged_skills(log), session_id=self.id,
                                    workspace=self.root, install_dir=folder.install_dir)
        self.tools.set_skills(self.skills)

    async def invoke_skill(self, prompt: str) -> str:
        """What a prompt sends: ``/<skill> [arguments]`` of a skill the user may run becomes
        that line and the skill's instructions with the arguments (the skill is loaded from
        then on); any other prompt is sent as it is."""
        found = command(prompt)
        if found is None:
            return prompt
        name, arguments = found
        skill = (await asyncio.to_thread(self.skills.catalog)).get(name)
        if skill is None or not skill.user_invocable:
            return prompt
        self.skills.mark(skill.name)
        return invocation(skill, prompt, arguments, session_id=self.id,
                          folder_label=self.skills.folder_label(skill))

    def build_prompt(self, agents: bool = True) -> SystemPrompt:
        """Its system prompt now: the folder's, with the subfolders' instruction files it
        joined (read in its worktree for a worktree session) and the skills (read again: the
        tools of those it loaded follow), and the sub-agent types (``agents``). Blocking."""
        prompt = self.ws.build_system_prompt(self.instructions.joined(), self.root,
                                             self.skills.catalog())
        return with_section(prompt, self.agents.section()) if agents else prompt

    # -- what its sub-agents reach (pseudoclaude.agents.host.AgentHost) --------------------
    @property
    def store(self) -> SessionStore:
        return self.ws.store

    @property
    def settings(self) -> Settings:
        return self.ws.settings

    @property
    def session_model(self) -> str:
        return self.model

    async def provider_for(self, model: str) -> Provider:
        return await self.ws.provider(model)

    def compact_config(self) -> CompactConfig:
        return self.ws.compact_config()

    def spill_dir(self) -> Path:
        return self.ws.store.spill_dir(self.id)

    def secrets(self) -> list[str]:
        return self.ws.secrets()

    def knows_files(self, paths: list[str]) -> None:
        """The files (relative) a rewind of code and conversation put back: the session knows
        their bytes (what it had seen before the prompt it went back to), as if it had written
        them. Blocking (reads them)."""
        ledger = self.tools.files
        if ledger is None:
            return
        for relative in paths:
            target = (self.root / relative).resolve()
            with contextlib.suppress(OSError):
                ledger.wrote(target, digest(target.read_bytes()))

    @property
    def conversation(self) -> Conversation:
        return self.opened.conversation

    @property
    def writer(self) -> SessionWriter:
        return self.opened.writer

    def _runtime(self, opened: OpenSession) -> CompactRuntime:
        loaded = opened.loaded
        ledger = None if loaded is None else Ledger(dict(loaded.offloads), set(loaded.kept))
        spill_dir = self.ws.store.spill_dir(self.id)
        self.tools.set_extra_read_roots([spill_dir,
                                         *(store.dir for store in self.ws.memory.stores),
                                         self.ws.skills.install_dir])  # a skill's other files
        runtime = CompactRuntime(
            opened.conversation, config=self.ws.compact_config(), spill_dir=spill_dir,
            workspace=self.root, provider=self.summary_provider,
            prefix=self.request_prefix, ledger=ledger, emit=self.emit)
        runtime.hooks = self.hooks  # PreCompact, PostCompact
        return runtime

    def emit(self, event: Event) -> None:
        self.ws.emit_of(self.id, event)

    # -- the log -----------------------------------------------------------------------------
    def log_size(self) -> int:
        try:
            return self.ws.store.log_path(self.id).stat().st_size
        except OSError:
            return 0

    def grew(self) -> bool:
        """Whether the log changed since this process last read or wrote it."""
        return self.log_size() != self.known_size

    async def restore_estimate(self) -> None:
        """The estimate of a resumed history: from its usage anchor, else counted (off the
        loop), and what the next request carries besides the messages."""
        loaded = self.opened.loaded
        if loaded is not None:
            anchor = loaded.anchor
            if anchor is not None:
                await asyncio.to_thread(self.runtime.restore_anchor, anchor.tokens,
                                        anchor.count, anchor.saved)
            else:
                await asyncio.to_thread(self.runtime.estimate)
        self.set_request_overhead(await asyncio.to_thread(self.build_prompt))

    async def reload(self) -> None:
        """The session again from its log (another client wrote it): a new conversation and
        runtime over what the log holds now; the gate's answers of this process stay. Only
        while holding the lock (a repair is written)."""
        opened = await asyncio.to_thread(
            resume_session, self.ws.store, self.id, model=self.ws.settings.model,
            workspace=str(self.ws.root))
        self.writer.close()
        self.opened = opened
        self.track_files()
        self.track_instructions()
        self.track_skills()
        self.runtime = self._runtime(opened)
        logged = opened.loaded.mode if opened.loaded is not None else None
        if logged in MODES and logged != self.mode:
            with contextlib.suppress(PermissionsError):
                self.engine.set_mode(logged)  # another client switched it
                self.tools.set_plan(logged == "plan")
        self.tasks = list(opened.loaded.tasks or []) if opened.loaded is not None else []
        self.runtime.carry = self.carried
        self.runs = self.turns_known = None
        self.known_size = self.log_size()
        await self.restore_estimate()

    @contextlib.asynccontextmanager
    async def writing(self, doing: str) -> AsyncIterator[None]:
        """Write the session (a run, a compaction, an undo, a rewind): refused at once while
        another writer has it (:class:`SessionBusy`); reloaded first when the log grew."""
        if self.busy is not None:
            raise SessionBusy(self.id, os.getpid())
        self.lock.acquire()
        self.busy = doing
        try:
            announce_write(self.id, doing)  # the front end's request hears which session
            if self.grew():
                await self.reload()
            if self.mode_unlogged:
                self.mode_unlogged = False
                await asyncio.to_thread(self.writer.append_mode, self.mode)
            yield
        finally:
            self.known_size = self.log_size()
            self.busy = None
            self.lock.release()

    # -- the requests' parts -----------------------------------------------------------------
    async def system_prompt(self) -> str:
        """The system prompt of a run (its parts also go to the context estimate)."""
        prompt = await asyncio.to_thread(self.build_prompt)
        self.set_request_overhead(prompt)
        self.last_system = prompt.text
        return prompt.text

    async def request_prefix(self) -> RequestPrefix:
        """What the session's turns send before the messages, for a cache-friendly summary:
        the last run's system prompt (built now when no run has been made in this process),
        the tools and the session's model."""
        system = self.last_system
        if system is None:
            system = (await asyncio.to_thread(self.build_prompt)).text
        return RequestPrefix(model=(await self.provider()).model, system=system,
                             tools=self.tools.specs(), environment=self.last_environment)

    def set_request_overhead(self, prompt: SystemPrompt) -> None:
        offered = tuple(self.tools.names)
        if self.tools_bytes is None or offered != self.offered:  # a skill brought tools
            self.offered = offered
            self.tools_bytes = json_bytes([
                {"name": s.name, "description": s.description, "input_schema": s.input_schema}
                for s in self.tools.specs()])
        system, rules, memory, skills = prompt.sizes()
        self.rule_sizes = prompt.rule_sizes()
        self.runtime.set_request_overhead(system=system, rules=rules, memory=memory,
                                          skills=skills, tools=self.tools_bytes)

    async def offer_mcp_tools(self) -> None:
        """The MCP servers' tools for the next run (servers started as needed; a broken one
        is left out), with the servers' own approval entries in the gate."""
        tools = await self.ws.mcp.tools()
        if [t.name for t in tools] != [t.name for t in self.mcp_offered]:
            self.tools_bytes = None  # the schemas in the breakdown changed
        self.mcp_offered = tools
        self.tools.set_mcp_tools(tools)
        self.gate.mcp_servers = dict(self.ws.mcp.approvals())

    async def provider(self) -> Provider:
        """The provider of its runs: its model (:attr:`model`), else the ``model`` setting's."""
        return await self.ws.provider(self.model)

    async def summary_provider(self) -> Provider:
        """The provider of its summaries: ``compact.model``, else its own model's."""
        return await self.ws.provider(self.ws.settings.compact.model or self.model)

    async def stop_tasks(self, reason: str) -> None:
        """Stop its background sub-agents (their logs say ``canceled`` and ``reason``)."""
        await self.agents.stop_all(reason)

    def close(self) -> None:
        self.writer.close()
        self.lock.release()


def logged_instructions(log: Path) -> list[str]:
    """The subfolders' instruction files a session joined, as its log says (blocking: one
    read of the log)."""
    return logged_nested(tool_results(log, containing=INSTRUCTIONS_KEY.encode()))
