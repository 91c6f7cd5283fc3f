"""Running sub-agents of one session (SPEC §13 "Sub-agents"): :class:`SubAgents`.

Each sub-agent is a :class:`~pseudoclaude.agent.runner.Runner` over a conversation of its own,
logged to ``<session dir>/agents/<agentId>.jsonl`` (:mod:`pseudoclaude.agents.log`), with a
compaction runtime of its own and a tool registry limited to its role's tools. It asks through
the session's gate (the same engine, answers and approval UI; the question names it), reads
the session's instructions and skills, never updates memory. Its events carry its ``agentId``;
its usage is added to the parent run's. At most ``agents.maxParallel`` run at once; cancelling
the parent's run cancels them (the log gets an ``agentStop`` line ``canceled``).

``run_in_background`` starts one in a task of its own that outlives the run (:mod:`.tasks`);
``isolation: "worktree"`` runs one in a git worktree of its own (:mod:`.isolation`). Its tool
calls fire the session's ``PreToolUse`` and ``PostToolUse`` hooks (payloads with its
``agent_id``); it fires no ``Stop``: when one ends, the session's ``SubagentStop`` hooks run.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import secrets
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from msgspec import UNSET

from pseudoclaude import __version__
from pseudoclaude.agent.environment import environment
from pseudoclaude.agent.prompt import SEPARATOR, SystemPrompt
from pseudoclaude.agent.reminders import block
from pseudoclaude.agent.runner import Runner, RunOutcome
from pseudoclaude.agent.tools import ToolError, ToolOutput
from pseudoclaude.agent.tools.tasks import TaskInfo
from pseudoclaude.agents import isolation
from pseudoclaude.agents.host import AgentHost, ChangeHook
from pseudoclaude.agents.log import AgentWriter, now_iso
from pseudoclaude.agents.roles import MODEL_INHERIT, PLAN_TYPES, Role, Roles, load_roles
from pseudoclaude.agents.tasks import Tasks, cut
from pseudoclaude.compact import CompactRuntime
from pseudoclaude.compact.summarize import RequestPrefix
from pseudoclaude.conversation import Conversation
from pseudoclaude.events import (
    Event,
    StopEvent,
    StopReason,
    TaskEvent,
    WarningEvent,
    of_agent,
)
from pseudoclaude.llm.provider import Provider
from pseudoclaude.llm.types import Message, Usage
from pseudoclaude.session.codec import AgentEntry
from pseudoclaude.worktrees import Worktree

DEFAULT_TYPE = "general-purpose"
WRITES = ("write_file", "edit_file")
ALIASES = {"haiku": "claude-haiku-4-5", "sonnet": "claude-sonnet-4-5",
           "opus": "claude-opus-4-5"}
"""The Go original's model aliases, for an Anthropic provider."""
STATUS = {StopReason.COMPLETED: "completed", StopReason.MAX_ITERATIONS: "max_turns",
          StopReason.CANCELED: "canceled"}


@dataclass
class RunHooks:
    """What the parent's run gives its sub-agents: the checkpoint hooks of changes, and where
    their usage adds up."""

    before_change: ChangeHook | None = None
    after_change: ChangeHook | None = None
    add_usage: Callable[[Usage], None] | None = None


@dataclass
class Launch:
    """A sub-agent about to run."""

    role: Role
    prompt: str
    description: str
    name: str
    provider: Provider
    writer: AgentWriter
    live: Live
    worktree: Worktree | None = None
    """Its own git worktree (``isolation: "worktree"``)."""


@dataclass
class Live:
    """A sub-agent running in this process."""

    agent_id: str
    task: asyncio.Task[Any] | None = None
    runner: Runner | None = None
    usage: Usage = field(default_factory=Usage)
    stopped: str = ""
    """Why it was stopped alone, its run going on (``""``: it was not)."""
    model: str = ""
    """The model it talks to (:attr:`SubAgents.models`)."""


class SubAgents:
    """The sub-agents of one session (the ``agent`` tool's launcher)."""

    def __init__(self, host: AgentHost, home: Any = None) -> None:
        self.host = host
        self.home = home
        self.run_hooks = RunHooks()
        self.live: dict[str, Live] = {}
        self._limit: asyncio.Semaphore | None = None
        self._limit_size = 0
        self._roles: Roles | None = None
        self.tasks = Tasks()
        """Its background tasks (``run_in_background``)."""
        self.models: Counter[str] = Counter()
        """The models its sub-agents use now, each with how many: the workspace keeps their
        providers open (it closes those nothing names any more)."""
        self.warned: set[str] = set()

    # -- types ---------------------------------------------------------------------------
    def roles(self) -> Roles:
        """The types, read again each time (a role file edited applies at once). Blocking."""
        roles = load_roles(self.host.root, self.home)
        for problem in roles.problems:  # each problem said once per session
            text = f"sub-agent role {problem}"
            if text not in self.warned:
                self.warned.add(text)
                self.host.emit(WarningEvent(text))
        self._roles = roles
        return roles

    def listing(self) -> str:
        roles = self._roles if self._roles is not None else self.roles()
        return roles.listing(plan=self.host.mode == "plan")

    def section(self) -> str:
        """The system prompt's part that lists the types. Blocking."""
        return section(self.roles(), plan=self.host.mode == "plan")

    # -- running -------------------------------------------------------------------------
    def _semaphore(self) -> asyncio.Semaphore:
        size = self.host.settings.agents.max_parallel
        if self._limit is None or size != self._limit_size:
            self._limit, self._limit_size = asyncio.Semaphore(size), size
        return self._limit

    async def launch(self, args: dict[str, Any], call_id: str) -> ToolOutput:
        roles = await asyncio.to_thread(self.roles)
        kind = (args.get("subagent_type") or DEFAULT_TYPE).strip()
        role = roles.get(kind)
        if role is None:
            raise ToolError("unknown_subagent_type",
                            f"unknown subagent_type {kind[:80]!r}: the known types are "
                            f"{', '.join(roles.names)}", metadata={"known": roles.names})
        if self.host.mode == "plan" and role.name not in PLAN_TYPES:
            raise ToolError("tool_not_allowed", f"plan mode: only the {' and '.join(PLAN_TYPES)}"
                            " sub-agents run until the plan is approved")
        apart = args.get("isolation")
        if apart not in (None, "", "worktree"):
            raise ToolError("invalid_arguments",
                            f"agent: isolation must be \"worktree\", got {apart!r}")
        # the role's defaults, unless the call says otherwise
        args = {**args, "isolation": apart or role.isolation or None}
        if args.get("run_in_background") is None:
            args["run_in_background"] = role.background
        if args.get("run_in_background"):  # no limit: it returns at once
            return await self._background(role, args, call_id)
        async with self._semaphore():
            launch = await self._open(role, args, call_id)
            return await self._foreground(launch)

    async def _foreground(self, launch: Launch) -> ToolOutput:
        """Run it in a task of its own that this call awaits: cancelling the call (the run)
        cancels it; stopping it alone (:meth:`stop_live`) answers the call with what it did."""
        live = launch.live
        inner: asyncio.Task[ToolOutput] = asyncio.create_task(
            self._body(launch, self.run_hooks), name=f"pseudoclaude {live.agent_id}")
        live.task = inner
        try:
            return await inner
        except asyncio.CancelledError:
            me = asyncio.current_task()
            if not live.stopped or (me is not None and me.cancelling()):
                raise  # the run was cancelled
        said = live.runner.result.text.strip() if live.runner is not None else ""
        text = f"The sub-agent {live.agent_id} was {live.stopped} before it finished."
        if said:
            text += f" What it had said so far:\n{said}"
        return ToolOutput(text, {
            "agentId": live.agent_id, "subagentType": launch.role.name, "status": "canceled",
            "files": [], "usage": {"inputTokens": live.usage.input_all,
                                   "outputTokens": live.usage.output_tokens},
            **({"name": launch.name} if launch.name else {})},
            error_type="agent_stopped", error=text)

    async def stop_live(self, agent_id: str, reason: str) -> str:
        """Stop one foreground sub-agent alone: its ``agent`` call answers that it was stopped
        and the run goes on. Its status (``canceled``); :class:`ToolError` when it does not run
        here."""
        live = self.live.get(agent_id)
        if live is None or live.task is None or live.task.done():
            raise ToolError("not_running", f"sub-agent {agent_id[:80]} is not running in "
                            "this session")
        live.stopped = reason
        live.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait([live.task])
        return "canceled"

    def _model(self, role: Role, provider_name: str) -> str:
        settings = self.host.settings
        if role.model == "explore":
            return settings.agents.explore_model or settings.compact.model or \
                self.host.session_model
        if role.model in ("", MODEL_INHERIT):
            return self.host.session_model
        if role.model in ALIASES:
            return ALIASES[role.model] if provider_name == "anthropic" else \
                self.host.session_model
        return role.model

    async def _open(self, role: Role, args: dict[str, Any], call_id: str) -> Launch:
        """A sub-agent about to run: its id, provider and log (its first line written)."""
        host = self.host
        agent_id = "agent-" + secrets.token_hex(8)
        prompt: str = args["prompt"]
        description = (args.get("description") or "").strip() or " ".join(prompt.split())[:80]
        name = (args.get("name") or "").strip()
        base = await host.provider_for(host.session_model)
        model = self._model(role, base.name)
        self.models[model] += 1  # in use from now: its provider stays open
        try:
            provider = await host.provider_for(model)
            worktree = await isolation.make(host.root, host.store.data_dir, agent_id) \
                if args.get("isolation") == "worktree" else None
            writer = AgentWriter(host.store, AgentEntry(
                parent=host.id, agent_id=agent_id, call_id=call_id, subagent_type=role.name,
                description=description, name=name, model=provider.model, created=now_iso()),
                model=provider.model)
            await asyncio.to_thread(writer.touch)
        except BaseException:
            self._done_with(model)
            raise
        return Launch(role, prompt, description, name, provider, writer,
                      Live(agent_id, model=model), worktree)

    def _done_with(self, model: str) -> None:
        self.models[model] -= 1
        if self.models[model] <= 0:
            del self.models[model]

    async def _body(self, launch: Launch, hooks: RunHooks) -> ToolOutput:
        """Run it to its end: its answer (:class:`ToolError` when it failed;
        ``CancelledError`` when it was cancelled, its log saying so)."""
        role, writer, live, name = launch.role, launch.writer, launch.live, launch.name
        agent_id, worktree = live.agent_id, launch.worktree
        prompt, root = launch.prompt, self.host.root
        if worktree is not None:  # its changes are in its worktree: no checkpoint of the run's
            hooks = RunHooks(add_usage=hooks.add_usage)
            prompt, root = isolation.notice(worktree) + prompt, worktree.workspace
        self.live[agent_id] = live
        try:
            outcome = await self._converse(role, prompt, launch.provider, writer, live,
                                           hooks, name, root)
        except asyncio.CancelledError:
            reason = live.stopped or self.tasks.reason(agent_id) or \
                "the run that started it was canceled"
            self._stop(writer, live, "canceled", reason, hooks)
            self._subagent_stop_later(live, role, StopReason.CANCELED)
            if worktree is not None:
                isolation.finish(self.host.root, worktree, agent_id)
            raise
        except Exception as exc:
            self._stop(writer, live, "failed", str(exc), hooks)
            self._subagent_stop_later(live, role, StopReason.ERROR)
            if worktree is not None:
                isolation.finish(self.host.root, worktree, agent_id)
            raise ToolError("agent_failed", f"the sub-agent failed: {exc}") from exc
        finally:
            self.live.pop(agent_id, None)
            self._done_with(live.model)
        status = STATUS.get(outcome.stop_reason, "failed")
        self._stop(writer, live, status, outcome.error or "", hooks)
        await self.host.hooks.subagent_stop(agent_id, role.name, str(outcome.stop_reason),
                                            outcome.iterations, outcome.text)
        files = changed_files(outcome.appended)
        text = outcome.text.strip() or "(the sub-agent gave no answer)"
        if status != "completed":
            text += (f"\n\nSub Agent stopped with {outcome.stop_reason}"
                     + (f": {outcome.error}" if outcome.error else ""))
        extra: dict[str, Any] = {}
        if worktree is not None:
            kept = await asyncio.to_thread(isolation.finish, self.host.root, worktree,
                                           agent_id)
            files = kept.files
            text += "\n\n" + kept.note
            extra["worktree"] = {"path": str(worktree.path), "branch": worktree.branch,
                                 "kept": bool(kept.files)}
        elif files:
            text += "\n\nFiles changed: " + ", ".join(files)
        return ToolOutput(text, {
            "agentId": agent_id, "subagentType": role.name, "status": status,
            "files": files, "usage": {"inputTokens": live.usage.input_all,
                                      "outputTokens": live.usage.output_tokens},
            **({"name": name} if name else {}), **extra},
            error_type=None if status in ("completed", "max_turns") else "agent_failed",
            error=None if status in ("completed", "max_turns") else text)

    def _subagent_stop_later(self, live: Live, role: Role, reason: StopReason) -> None:
        """The SubagentStop hooks of a sub-agent that ended by an exception: nothing waits."""
        result = live.runner.result if live.runner is not None else None
        self.host.hooks.fire_later(
            "SubagentStop", agent_id=live.agent_id, agent_type=role.name,
            stop_reason=str(reason), iter=result.iterations if result else 0,
            last_assistant_message=(result.text if result else "")[:2000])

    # -- background tasks ----------------------------------------------------------------
    async def _background(self, role: Role, args: dict[str, Any], call_id: str
                          ) -> ToolOutput:
        """Start it in a task of its own and answer at once ``{taskId, status: running}``."""
        launch = await self._open(role, args, call_id)
        header = launch.writer.header
        info = TaskInfo(header.agent_id, launch.name, role.name, launch.description,
                        header.created)
        task = asyncio.create_task(self._in_background(launch, info),
                                   name=f"pseudoclaude {header.agent_id}")
        launch.live.task = task
        self.tasks.add(info, task)
        self._tell(info)
        return ToolOutput(json.dumps({"taskId": info.task_id, "status": "running"}), {
            "agentId": info.task_id, "subagentType": role.name, "status": "running",
            "background": True, **({"name": launch.name} if launch.name else {})})

    async def _in_background(self, launch: Launch, info: TaskInfo) -> None:
        try:
            output = await self._body(launch, RunHooks())  # its changes are no run's
        except ToolError as exc:
            info.status, info.result = "failed", exc.message
        except asyncio.CancelledError:
            info.status = "canceled"
            info.result = self.tasks.reason(info.task_id) or "canceled"
            raise
        else:
            meta = output.metadata or {}
            info.status, info.result = str(meta.get("status", "failed")), output.content
            info.files = list(meta.get("files", []))
        finally:
            info.input_tokens = launch.live.usage.input_all
            info.output_tokens = launch.live.usage.output_tokens
            if info.status == "running":  # an unexpected exception
                info.status = "failed"
            self.tasks.ended(info)
            self._tell(info)

    def _tell(self, info: TaskInfo) -> None:
        ended = info.status != "running"
        self.host.emit(TaskEvent(
            agent_id=info.task_id, task_id=info.task_id, status=info.status,
            subagent_type=info.subagent_type, description=info.description,
            name=info.name or UNSET, result=cut(info.result) if ended else UNSET))

    def task_infos(self) -> list[TaskInfo]:
        return self.tasks.task_infos()

    async def stop_task(self, task_id: str, reason: str) -> TaskInfo:
        return await self.tasks.stop_task(task_id, reason)

    def take_notices(self) -> str | None:
        return self.tasks.take_notices()

    async def stop_all(self, reason: str) -> None:
        """Stop its background tasks (the session is closed, the server exits)."""
        await self.tasks.stop_all(reason)

    def _stop(self, writer: AgentWriter, live: Live, status: str, error: str = "",
              hooks: RunHooks | None = None) -> None:
        runner = live.runner
        if runner is not None:
            live.usage = runner.result.usage
        try:
            writer.append_stop(status, live.usage.input_all, live.usage.output_tokens,
                               error)
        finally:
            writer.close()
        if hooks is not None and hooks.add_usage is not None and live.usage.total > 0:
            hooks.add_usage(live.usage)

    async def _converse(self, role: Role, prompt: str, provider: Provider,
                        writer: AgentWriter, live: Live, hooks: RunHooks,
                        name: str = "", root: Path | None = None) -> RunOutcome:
        host = self.host
        root = root or host.root
        conversation = Conversation(hooks=writer.hooks())
        tools = host.tools.child(role.allows)
        if root != host.root:  # its own worktree
            tools.set_workspace(root)

        def emit(event: Event) -> None:
            if not isinstance(event, StopEvent):  # the parent's run goes on
                host.emit(of_agent(event, live.agent_id))

        async def system_prompt() -> str:
            parent = await asyncio.to_thread(host.build_prompt, False)
            return subagent_prompt(role, parent).text

        async def prefix() -> RequestPrefix:
            return RequestPrefix(model=provider.model, system=await system_prompt(),
                                 tools=tools.specs())

        async def summary_provider() -> Provider:
            return await host.provider_for(host.settings.compact.model or provider.model)

        async def env(p: Provider) -> str:
            facts = await environment(root, version=__version__, provider=p.name,
                                      model=p.model, mode=host.mode)
            return facts.render()

        async def source() -> Provider:
            return provider

        # The session's PreToolUse/PostToolUse hooks hold for its calls too (a blocking hook
        # is no way around by a sub-agent); no Stop (SubagentStop fires when it ends).
        agent_hooks = host.hooks.for_agent(live.agent_id, role.name, writer.path,
                                           root if root != host.root else None)

        def reminder(_round: int) -> str | None:
            said = agent_hooks.take_context()  # what its hooks said, for its next request
            return block(said) if said else None

        runtime = CompactRuntime(conversation, config=host.compact_config(),
                                 spill_dir=host.spill_dir(), workspace=root,
                                 provider=summary_provider, prefix=prefix, emit=emit)
        runner = live.runner = Runner(
            conversation, compact=runtime, provider=source, tools=tools,
            gate=host.gate.for_agent(
                live.agent_id, name or None,
                on_ask=lambda request: agent_hooks.notify("approval", request.summary),
                strict=role.mode == "strict"),
            system_prompt=system_prompt,
            emit=emit, max_iterations=role.max_turns or host.settings.max_iterations,
            before_change=hooks.before_change, after_change=hooks.after_change,
            secrets=host.secrets(), environment=env, hooks=agent_hooks, reminder=reminder)
        return await runner.run(prompt)


def section(roles: Roles, *, plan: bool) -> str:
    """The system prompt's part that lists the sub-agent types (in plan mode: those that run
    in it)."""
    return ("# Sub-agents\nThe agent tool starts a sub-agent of one of these types "
            "(subagent_type):\n" + roles.listing(plan=plan))


def with_section(prompt: SystemPrompt, listed: str) -> SystemPrompt:
    """A session's system prompt: the folder's, with the sub-agent types after its identity."""
    return dataclasses.replace(prompt, system=prompt.system + SEPARATOR + listed)


def subagent_prompt(role: Role, parent: SystemPrompt) -> SystemPrompt:
    """A sub-agent's system prompt: its role's instructions, then the session's (identity,
    rules, instruction files, skills), without memory."""
    return dataclasses.replace(parent, system=role.prompt + SEPARATOR + parent.system,
                               memory="")


def changed_files(appended: list[Message]) -> list[str]:
    """The files a sub-agent's successful writes and edits changed, in order, once each."""
    ok = {m.tool_result.call_id for m in appended
          if m.tool_result is not None and not m.tool_result.is_error}
    files: list[str] = []
    for message in appended:
        for call in message.tool_calls:
            path = call.arguments.get("path") if isinstance(call.arguments, dict) else None
            if call.name in WRITES and call.id in ok and isinstance(path, str) \
                    and path not in files:
                files.append(path)
    return files
