"""``task_list``, ``task_get {taskId}`` and ``task_stop {taskId}``: the session's background
sub-agents (SPEC §13 "Sub-agents and background tasks"; the Go original's TaskList, TaskGet and
TaskStop).

An ``agent`` call with ``run_in_background: true`` returns at once with ``{"taskId", "status":
"running"}``; these tools see the tasks of the session (started in this process) and stop one.
``task_list`` and ``task_get`` only read (offered in plan mode); ``task_stop`` cancels the
sub-agent (its log ends ``canceled``). What answers them is the session's
(:class:`TaskBoard`, :mod:`pseudoclaude.agents`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

from pseudoclaude.agent.tools.base import (
    ApprovalClass,
    Param,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
)


@dataclass
class TaskInfo:
    """One background task as the tools tell it."""

    task_id: str
    name: str
    subagent_type: str
    description: str
    started: str
    status: str = "running"
    """``running`` | ``completed`` | ``failed`` | ``canceled`` | ``max_turns``."""
    result: str = ""
    """Its final answer (or why it stopped), once it ended."""
    files: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0

    def line(self) -> str:
        label = self.name or self.description
        return f"- {self.task_id} [{self.status}] {self.subagent_type}: {label}"

    def as_json(self) -> dict[str, Any]:
        return {"taskId": self.task_id, "name": self.name, "subagentType": self.subagent_type,
                "description": self.description, "status": self.status,
                "startedAt": self.started, "files": list(self.files),
                "usage": {"inputTokens": self.input_tokens,
                          "outputTokens": self.output_tokens}}


class TaskBoard(Protocol):
    """What keeps a session's background tasks."""

    def task_infos(self) -> list[TaskInfo]:
        """Every task of the session started in this process, oldest first."""
        ...

    async def stop_task(self, task_id: str, reason: str) -> TaskInfo:
        """Stop a running task (:class:`ToolError`: unknown, or not running) and wait until
        it ended."""
        ...


def _board(ctx: ToolContext, board: TaskBoard | None, tool: str) -> TaskBoard:
    if board is None:
        raise ToolError("not_available", f"{tool} is not available here (no session)")
    return board


def find(board: TaskBoard, task_id: str) -> TaskInfo:
    for info in board.task_infos():
        if info.task_id == task_id:
            return info
    known = ", ".join(i.task_id for i in board.task_infos()) or "none"
    raise ToolError("not_found", f"no background task {task_id[:80]!r} in this session "
                    f"(the tasks: {known})")


class TaskList(Tool):
    name: ClassVar[str] = "task_list"
    description: ClassVar[str] = (
        "List the background tasks of this session (sub-agents started with "
        "run_in_background): id, status, type and description each.")
    params: ClassVar[tuple[Param, ...]] = ()
    read_only: ClassVar[bool] = True
    approval_class: ClassVar[ApprovalClass] = "none"

    def __init__(self, board: TaskBoard | None = None) -> None:
        self.board = board

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        infos = _board(ctx, self.board, self.name).task_infos()
        if not infos:
            return ToolOutput("No background tasks.", {"tasks": []})
        running = sum(1 for i in infos if i.status == "running")
        head = f"Background tasks ({len(infos)}, {running} running):"
        return ToolOutput("\n".join([head, *(i.line() for i in infos)]),
                          {"tasks": [i.as_json() for i in infos]})


class TaskGet(Tool):
    name: ClassVar[str] = "task_get"
    description: ClassVar[str] = (
        "Get one background task: its status and, once it ended, its result (the "
        "sub-agent's final answer and the files it changed).")
    params: ClassVar[tuple[Param, ...]] = (
        Param("taskId", "string", "The task's id (from the agent call or task_list).",
              required=True, non_empty=True),
    )
    read_only: ClassVar[bool] = True
    approval_class: ClassVar[ApprovalClass] = "none"

    def __init__(self, board: TaskBoard | None = None) -> None:
        self.board = board

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        info = find(_board(ctx, self.board, self.name), args["taskId"].strip())
        lines = [f"Task {info.task_id} ({info.subagent_type}): {info.status}",
                 f"Description: {info.description}"]
        if info.name:
            lines.append(f"Name: {info.name}")
        lines.append(f"Started: {info.started}")
        if info.status == "running":
            lines.append("It is still running; its result comes when it ends.")
        else:
            lines.append(f"Result:\n{info.result or '(no answer)'}")
        return ToolOutput("\n".join(lines), info.as_json())


class TaskStop(Tool):
    name: ClassVar[str] = "task_stop"
    description: ClassVar[str] = (
        "Stop a running background task (a sub-agent started with run_in_background). Its "
        "work so far stays; its log ends canceled.")
    params: ClassVar[tuple[Param, ...]] = (
        Param("taskId", "string", "The task's id.", required=True, non_empty=True),
    )
    read_only: ClassVar[bool] = False
    approval_class: ClassVar[ApprovalClass] = "none"

    def __init__(self, board: TaskBoard | None = None) -> None:
        self.board = board

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        info = await _board(ctx, self.board, self.name).stop_task(
            args["taskId"].strip(), "stopped by task_stop")
        return ToolOutput(f"Task {info.task_id} stopped ({info.status}).", info.as_json())
