"""The tool registry: specs for the model, and ``execute(call) -> ToolResult`` (SPEC §6).

:meth:`ToolRegistry.execute` never raises for anything a model can send: whatever happens, it
returns a :class:`~pseudoclaude.llm.types.ToolResult` whose ``content`` is the JSON envelope
(:mod:`pseudoclaude.agent.tools.base`) and whose ``is_error`` is ``not ok``. An unknown tool is
``unknown_tool``; arguments that are not a JSON object, unknown keys, missing required keys and
wrong types are ``invalid_arguments`` naming the field; an unexpected exception is
``internal_error`` with a one-line message (never a traceback). ``asyncio.CancelledError``
propagates (a running command's process group is killed first); the runner records the
``canceled`` result.

Approvals are not checked here: the runner asks the
:class:`~pseudoclaude.agent.approvals.Gate` first (after :meth:`ToolRegistry.validate`, so that
nobody is asked to approve a call that cannot run). When the gate asks, it first gets what the
user must see from :meth:`ToolRegistry.prepare` (a diff for a write, which fails without asking
when the change cannot apply), and the approved call runs with that preview
(``execute(call, preview)``): it writes exactly what was shown, or fails with ``changed``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pseudoclaude.agent.editor import Editor
from pseudoclaude.agent.instructions import NestedInstructions
from pseudoclaude.agent.skills import SessionSkills
from pseudoclaude.agent.tools.agent import NAME as AGENT
from pseudoclaude.agent.tools.agent import NESTED, AgentLauncher, AgentTool
from pseudoclaude.agent.tools.base import (
    ApprovalClass,
    Preview,
    SessionState,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
    envelope,
)
from pseudoclaude.agent.tools.command import RunCommand
from pseudoclaude.agent.tools.diagnostics import GetDiagnostics, add_problems, baseline, settle
from pseudoclaude.agent.tools.files import EditFile, ReadFile, WriteFile
from pseudoclaude.agent.tools.freshness import FileLedger
from pseudoclaude.agent.tools.paths import Confinement
from pseudoclaude.agent.tools.plan import ExitPlanMode, UpdateTasks
from pseudoclaude.agent.tools.search import FindFiles, SearchCode
from pseudoclaude.agent.tools.skills import InstallSkill, LoadSkill, SkillCommand, skill_tool
from pseudoclaude.agent.tools.tasks import TaskBoard, TaskGet, TaskList, TaskStop
from pseudoclaude.llm.editor import Diagnostic
from pseudoclaude.llm.provider import ToolSpec
from pseudoclaude.llm.types import ToolCall, ToolResult
from pseudoclaude.mcp import McpTool
from pseudoclaude.sandbox import Sandbox

log = logging.getLogger("pseudoclaude.agent.tools")


_UPDATE_TASKS = UpdateTasks()
_EXIT_PLAN_MODE = ExitPlanMode()
_LOAD_SKILL = LoadSkill()
_INSTALL_SKILL = InstallSkill()


def default_tools() -> list[Tool]:
    """The six tools of SPEC §6, in the order the model sees them, then ``get_diagnostics``
    (offered only with an editor that answers diagnostics)."""
    return [ReadFile(), WriteFile(), EditFile(), RunCommand(), FindFiles(), SearchCode(),
            GetDiagnostics()]


class ToolRegistry:
    """The tools of one workspace.

    ``extra_read_roots`` are folders ``read_file`` and ``search_code`` may also read (never
    write) even outside the workspace: the current session's spill folder. Change them with
    :meth:`set_extra_read_roots` when the session changes. Constructing a registry resolves
    the workspace (a few ``stat`` calls).
    """

    def __init__(
        self,
        workspace: Path,
        *,
        extra_read_roots: Sequence[Path] = (),
        tools: Iterable[Tool] | None = None,
    ) -> None:
        self._paths = Confinement(workspace, extra_read_roots)
        self._tools: dict[str, Tool] = {}
        for tool in default_tools() if tools is None else tools:
            self._tools[tool.name] = tool
        self._mcp: dict[str, McpTool] = {}
        self._editor: Editor | None = None
        self._files: FileLedger | None = None
        self._sandbox: Sandbox | None = None
        self._state: SessionState | None = None
        self._instructions: NestedInstructions | None = None
        self._skills: SessionSkills | None = None
        self._plan = False
        self._agent: AgentTool | None = None
        self._tasks: tuple[Tool, ...] = ()
        self._nested = False
        self._allowed: Callable[[str], bool] | None = None

    @property
    def editor(self) -> Editor | None:
        return self._editor

    @property
    def files(self) -> FileLedger | None:
        return self._files

    def set_files(self, files: FileLedger | None) -> None:
        """The session's record of the files it read and wrote: with one, ``write_file`` and
        ``edit_file`` refuse (``stale``) an existing file the session does not know as it is
        now (:mod:`~pseudoclaude.agent.tools.freshness`); calls already running keep the
        old one."""
        self._files = files

    def set_instructions(self, instructions: NestedInstructions | None) -> None:
        """The session's record of the subfolders' instruction files it joined: ``read_file``
        joins those of the folders above the file it reads (``None``: it joins none)."""
        self._instructions = instructions

    def set_sandbox(self, sandbox: Sandbox | None) -> None:
        """Run commands in ``sandbox`` from now on (``None``: unsandboxed)."""
        self._sandbox = sandbox

    def set_editor(self, editor: Editor | None) -> None:
        """The editor whose open documents reads and writes go through (SPEC §12); with one
        that answers diagnostics, ``get_diagnostics`` is offered and a write's result adds the
        file's new problems."""
        self._editor = editor

    def _offered(self) -> dict[str, Tool]:
        diagnose = self._editor is not None and self._editor.can_diagnose
        offered = {name: tool for name, tool in self._tools.items()
                   if diagnose or not tool.needs_diagnostics}
        if self._state is not None:  # a session's own bookkeeping
            offered[UpdateTasks.name] = _UPDATE_TASKS
            offered[ExitPlanMode.name] = _EXIT_PLAN_MODE
        if self._skills is not None:  # then the tools of the skills it loaded
            offered[LoadSkill.name] = _LOAD_SKILL
            offered[InstallSkill.name] = _INSTALL_SKILL
            for tool in self._skills.tools():
                if tool.name not in offered:
                    offered[tool.name] = skill_tool(tool)
        if self._agent is not None:
            offered[AGENT] = self._agent
            for task_tool in self._tasks:
                offered[task_tool.name] = task_tool
        if self._allowed is not None:
            offered = {name: tool for name, tool in offered.items() if self._allowed(name)}
        return offered

    def set_agents(self, launcher: AgentLauncher | None, board: TaskBoard | None = None
                   ) -> None:
        """The session's sub-agents: ``agent`` is offered (``None``: it is not), and with a
        ``board`` of background tasks ``task_list``, ``task_get`` and ``task_stop``."""
        self._agent = AgentTool(launcher) if launcher is not None else None
        self._tasks = (TaskList(board), TaskGet(board), TaskStop(board)) \
            if launcher is not None and board is not None else ()

    def child(self, allowed: Callable[[str], bool]) -> ToolRegistry:
        """A sub-agent's registry: this one's folder, editor, sandbox, file record,
        instructions, skills and MCP tools, offering only what ``allowed`` accepts, never
        ``agent``, ``update_tasks`` or ``exit_plan_mode``."""
        child = ToolRegistry(self.workspace, extra_read_roots=self.extra_read_roots,
                             tools=self._tools.values())
        child._editor, child._files, child._sandbox = self._editor, self._files, self._sandbox
        child._instructions, child._skills = self._instructions, self._skills
        child.set_nested()
        child.set_allowed(allowed)
        child.set_mcp_tools(self._mcp.values())
        return child

    def set_nested(self) -> None:
        """A sub-agent's registry: ``agent`` is not offered, and a call to it is
        ``nested_agent_forbidden`` (not ``unknown_tool``)."""
        self._nested = True
        self._agent = None
        self._tasks = ()

    def set_allowed(self, allowed: Callable[[str], bool] | None) -> None:
        """Offer only the tools ``allowed`` accepts (a sub-agent's role; ``None``: all)."""
        self._allowed = allowed

    def is_agent(self, name: str) -> bool:
        """Whether ``name`` is the ``agent`` tool (its calls of one turn run at once)."""
        return name == AGENT and self._agent is not None

    @property
    def mcp_tools(self) -> list[McpTool]:
        return list(self._mcp.values())

    def set_skills(self, skills: SessionSkills | None) -> None:
        """The session's skills: ``load_skill`` and ``install_skill`` are offered, and the
        ``tools.json`` tools of the skills it loaded (``None``: none of them)."""
        self._skills = skills

    def as_command(self, call: ToolCall) -> ToolCall:
        """The call the permission engine judges: a skill's tool as the ``run_command`` of its
        program (its rules, the dangerous-command list, ``approvals.runCommand``); any other
        call as it is."""
        tool = self.get(call.name)
        if isinstance(tool, SkillCommand):
            return ToolCall(call.id, "run_command", tool.as_command())
        return call

    def set_state(self, state: SessionState | None) -> None:
        """The session whose task list and mode ``update_tasks`` and ``exit_plan_mode``
        change (``None``: they are not offered)."""
        self._state = state

    def set_plan(self, plan: bool) -> None:
        """Plan mode: the model is offered only what may run in it (reading tools, read-only
        MCP tools, the session's bookkeeping and ``exit_plan_mode``); outside it,
        ``exit_plan_mode`` is not offered."""
        self._plan = plan

    def _context(self, call_id: str = "") -> ToolContext:
        return ToolContext(self._paths, self._editor, self._files, self._sandbox, self._state,
                           call_id, self._instructions, self._skills)

    def set_mcp_tools(self, tools: Iterable[McpTool]) -> None:
        """The tools of the MCP servers from now on (after the built-in ones; a name that is
        a built-in tool's is left out)."""
        self._mcp = {t.name: t for t in tools if t.name not in self._tools
                     and (self._allowed is None or self._allowed(t.name))}

    def mcp_tool(self, name: str) -> McpTool | None:
        return self._mcp.get(name)

    @property
    def workspace(self) -> Path:
        """The resolved workspace root."""
        return self._paths.workspace

    @property
    def extra_read_roots(self) -> tuple[Path, ...]:
        return self._paths.extra_read_roots

    def set_workspace(self, workspace: Path) -> None:
        """Work in another folder from now on (a worktree session's own copy, or the folder
        again); calls already running keep the old one."""
        self._paths = Confinement(workspace, self._paths.extra_read_roots)

    def set_extra_read_roots(self, roots: Sequence[Path]) -> None:
        """Replace the extra read roots (calls already running keep the old ones)."""
        self._paths = Confinement(self._paths.workspace, roots)

    @property
    def names(self) -> list[str]:
        return [*self._offered(), *self._mcp]

    def specs(self) -> list[ToolSpec]:
        """The tools as the model sees them (the built-in ones, then the MCP servers'), as
        the mode offers them (:meth:`set_plan`)."""
        if self._plan:
            return [tool.spec() for tool in self._offered().values()
                    if tool.read_only or tool.name == AGENT] + [
                tool.spec() for tool in self._mcp.values() if tool.read_only_hint]
        return [tool.spec() for name, tool in self._offered().items()
                if name != ExitPlanMode.name] + [tool.spec() for tool in self._mcp.values()]

    def get(self, name: str) -> Tool | None:
        """A built-in tool the model is offered (the MCP servers' are :meth:`mcp_tool`)."""
        return self._offered().get(name)

    def has(self, name: str) -> bool:
        """Whether the model may call ``name`` (a built-in tool or an MCP server's)."""
        return name in self._offered() or name in self._mcp or (self._nested and name == AGENT)

    def is_read_only(self, name: str) -> bool:
        """Whether the tool has no side effects (may run concurrently). False when unknown."""
        tool = self.get(name)
        return tool is not None and tool.read_only

    def approval_class(self, name: str) -> ApprovalClass:
        """``write``, ``runCommand``, ``mcp``, or ``none`` (read-only and unknown tools)."""
        if name in self._mcp:
            return "mcp"
        tool = self.get(name)
        return "none" if tool is None else tool.approval_class

    def _result(self, call: ToolCall, output: ToolOutput | ToolError) -> ToolResult:
        text, ok = envelope(call.name, output)
        return ToolResult(call_id=call.id, name=call.name, content=text, is_error=not ok)

    def _unknown(self, call: ToolCall) -> ToolResult:
        known = ", ".join(self.names) or "none"
        return self._result(call, ToolError(
            "unknown_tool", f"unknown tool {call.name!r}; the available tools are: {known}"))

    def validate(self, call: ToolCall) -> ToolResult | None:
        """The error result a call would get for its name or arguments, or ``None`` when it
        can run (so the runner asks for approval only for calls that can run)."""
        if call.name in self._mcp:
            return None if isinstance(call.arguments, Mapping) else self._result(
                call, ToolError("invalid_arguments",
                                f"{call.name}: the arguments are not a JSON object"))
        tool = self.get(call.name)
        if tool is None and self._nested and call.name == AGENT:
            return self._result(call, ToolError(
                NESTED, "Sub Agents cannot start another Agent: do the work yourself with "
                "your own tools"))
        if tool is None:
            return self._unknown(call)
        try:
            tool.validate(call.arguments)
        except ToolError as exc:
            return self._result(call, exc)
        return None

    def error_result(self, call: ToolCall, error: ToolError) -> ToolResult:
        """The result of a call that failed before it ran (e.g. in :meth:`prepare`)."""
        return self._result(call, error)

    async def prepare(self, call: ToolCall) -> Preview:
        """What the user must see to approve a call (:meth:`Tool.prepare`), computed on the
        files as they are now; :class:`ToolError` when the call cannot apply (unknown tool and
        bad arguments included; an unexpected exception is ``internal_error``)."""
        if call.name in self._mcp:
            return Preview()  # the server, the tool and the arguments say it all
        tool = self.get(call.name)
        if tool is None:
            known = ", ".join(self._offered()) or "none"
            raise ToolError("unknown_tool",
                            f"unknown tool {call.name!r}; the available tools are: {known}")
        try:
            return await tool.prepare(tool.validate(call.arguments), self._context())
        except ToolError:
            raise
        except Exception as exc:  # CancelledError is a BaseException: it propagates
            raise self._internal(call, exc) from exc

    async def execute(self, call: ToolCall, preview: Preview | None = None) -> ToolResult:
        """Validate and run one call; always a result (see the module docstring). With the
        ``preview`` that was approved, the tool applies exactly that (:meth:`Tool.apply`)."""
        mcp = self._mcp.get(call.name)
        if mcp is not None:
            answer = await mcp.call(call.arguments)  # cancelling the run cancels the call
            return self._result(call, ToolOutput(
                answer.text,
                error_type=(answer.error_type or "tool_error") if answer.is_error else None,
                error=answer.text[:2000] if answer.is_error else None, whole=True))
        tool = self.get(call.name)
        if tool is None:
            return self._unknown(call)
        ctx = self._context(call.id)
        output: ToolOutput | ToolError
        watched: tuple[str, list[Diagnostic]] | None = None
        try:
            args = tool.validate(call.arguments)
            watched = await self._watch(tool, args, ctx)
            if preview is None:
                output = await tool.run(args, ctx)
            else:
                output = await tool.apply(args, ctx, preview)
        except ToolError as exc:
            output = exc
        except Exception as exc:  # CancelledError is a BaseException: it propagates
            output = self._internal(call, exc)
        if watched is not None and isinstance(output, ToolOutput) and output.error_type is None:
            assert ctx.editor is not None
            label, before = watched
            problems, waited = await settle(ctx.editor, label, before)
            add_problems(output, label, problems, waited)
        return self._result(call, output)

    async def _watch(self, tool: Tool, args: dict[str, Any], ctx: ToolContext
                     ) -> tuple[str, list[Diagnostic]] | None:
        """For a write with an editor that answers diagnostics: the file (relative) and its
        diagnostics before the write, to tell the new ones after it."""
        editor = ctx.editor
        path = args.get("path")
        if (tool.approval_class != "write" or editor is None or not editor.can_diagnose
                or not isinstance(path, str)):
            return None
        try:
            label = (await asyncio.to_thread(ctx.paths.locate, path, write=True)).label
        except ToolError:
            return None  # the tool says why
        before = await baseline(editor, label)
        return None if before is None else (label, before)

    @staticmethod
    def _internal(call: ToolCall, exc: Exception) -> ToolError:
        log.exception("tool %s failed", call.name)
        first = (str(exc).strip().splitlines() or [""])[0]
        message = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
        return ToolError("internal_error", f"{call.name} failed: {message}")
