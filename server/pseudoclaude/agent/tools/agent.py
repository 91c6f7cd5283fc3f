"""``agent``: start a sub-agent (SPEC §13 "Sub-agents"), the Go original's ``Agent`` tool with its
parameters: ``prompt`` (required), ``description``, ``subagent_type``, ``isolation``,
``run_in_background``, ``name``.

The sub-agent works with a conversation, a compaction runtime and a log of its own; its calls
ask like its parent's (the same permission engine and approval UI, the question naming it).
The result is its final text and the files it changed. Several ``agent`` calls of one model turn
run at once (``agents.maxParallel``). What runs it is the session's
(:class:`AgentLauncher`, :mod:`pseudoclaude.agents`); a sub-agent has none: its ``agent`` call
is ``nested_agent_forbidden``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from pseudoclaude.agent.tools.base import (
    ApprovalClass,
    Param,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
)
from pseudoclaude.llm.provider import ToolSpec

NAME = "agent"
NESTED = "nested_agent_forbidden"


class AgentLauncher(Protocol):
    """What runs a sub-agent for a session."""

    def listing(self) -> str:
        """The types it may start, ``- <name>: <description>`` each."""
        ...

    async def launch(self, args: dict[str, Any], call_id: str) -> ToolOutput:
        """Run one sub-agent to its end; :class:`ToolError` for a call that cannot start."""
        ...


DESCRIPTION = (
    "Start a sub-agent: another agent with its own conversation that works on a task you "
    "give it and answers with its final text (and the files it changed). Use it for a search "
    "or a piece of work whose details you do not need in your own context, or to run "
    "independent tasks at the same time (several agent calls in one turn run in parallel). "
    "Give it a complete, self-contained prompt: it does not see this conversation. "
    "subagent_type chooses its role (default general-purpose); the types are:\n")


class AgentTool(Tool):
    name: ClassVar[str] = NAME
    description: ClassVar[str] = DESCRIPTION
    params: ClassVar[tuple[Param, ...]] = (
        Param("prompt", "string", "The task, self-contained: what to do, where, and what to "
              "report.", required=True, non_empty=True),
        Param("description", "string", "A short (3-5 word) description of the task, shown to "
              "the user."),
        Param("subagent_type", "string", "The role of the sub-agent (see the list above); "
              "default general-purpose."),
        Param("isolation", "string", "\"worktree\": run it in a git worktree of its own (its "
              "changes stay there until the user applies them; the result names the branch)."),
        Param("run_in_background", "boolean", "Start it and go on at once (you get its "
              "taskId); its result comes later as a <task-notification>. See task_list, "
              "task_get, task_stop."),
        Param("name", "string", "A name for it, shown to the user."),
    )
    read_only: ClassVar[bool] = False
    approval_class: ClassVar[ApprovalClass] = "none"

    def __init__(self, launcher: AgentLauncher | None = None) -> None:
        self.launcher = launcher

    def spec(self) -> ToolSpec:
        spec = super().spec()
        listing = self.launcher.listing() if self.launcher is not None else ""
        return ToolSpec(spec.name, spec.description + listing, spec.input_schema)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        if self.launcher is None:
            raise ToolError(NESTED, "Sub Agents cannot start another Agent: do the work "
                            "yourself with your own tools")
        return await self.launcher.launch(args, ctx.call_id)
