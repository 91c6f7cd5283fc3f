"""The session's own bookkeeping: ``update_tasks{tasks}`` and ``exit_plan_mode{plan}`` (SPEC §13
"Plan, then act; a task list").

``update_tasks`` replaces the session's task list (at most :data:`MAX_TASKS` items, each a
non-empty ``content`` and a ``status`` of ``pending``, ``in_progress`` or ``completed``); the
session logs it (a ``tasks`` line), tells the editors (a ``tasks`` event) and shows it to the
model with each later request, so it survives compaction. A bad item is an error the model can
correct, naming the item; nothing changes.

``exit_plan_mode`` is offered in plan mode only: it asks the user to approve the plan (an
approval of kind ``plan``, the plan as Markdown). Approved, the session switches to the mode
the user chose and the model is told to carry the plan out, in the same run; otherwise the
model reads the user's feedback and keeps planning. Called outside plan mode, it is an error.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pseudoclaude.agent.tools.base import (
    TASK_STATUSES,
    ApprovalClass,
    Param,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
)

MAX_TASKS = 100
MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


def parse_tasks(value: list[Any]) -> list[tuple[str, str]]:
    """``(content, status)`` of each item, or :class:`ToolError` naming the first bad one."""
    if len(value) > MAX_TASKS:
        raise ToolError("invalid_arguments",
                        f"update_tasks: at most {MAX_TASKS} tasks (got {len(value)}): keep the "
                        "list to the steps that matter, merging small ones")
    tasks: list[tuple[str, str]] = []
    for index, item in enumerate(value):
        where = f"update_tasks: `tasks[{index}]"
        if not isinstance(item, dict):
            raise ToolError("invalid_arguments", f"{where}` must be an object with `content` "
                                                 "and `status`")
        content, status = item.get("content"), item.get("status")
        if not isinstance(content, str) or not content.strip():
            raise ToolError("invalid_arguments", f"{where}.content` must be a non-empty "
                                                 "string")
        if status not in TASK_STATUSES:
            raise ToolError("invalid_arguments", f"{where}.status` must be one of "
                                                 f"{', '.join(TASK_STATUSES)}, got {status!r}")
        tasks.append((" ".join(content.split()), str(status)))
    return tasks


def render_tasks(tasks: list[tuple[str, str]]) -> str:
    """The list as the model reads it: one ``- [x] content`` line each."""
    return "\n".join(f"- {MARKS.get(status, '[ ]')} {content}" for content, status in tasks)


def _state(ctx: ToolContext, tool: str) -> Any:
    if ctx.state is None:
        raise ToolError("not_available", f"{tool} is not available here (no session)")
    return ctx.state


class UpdateTasks(Tool):
    name: ClassVar[str] = "update_tasks"
    description: ClassVar[str] = (
        "Keep a task list for the current work: give the WHOLE list each time (it replaces "
        "the previous one), each item with `content` (what to do) and `status` (pending, "
        "in_progress or completed). Use it for work of three steps or more: write the steps "
        "first, mark one in_progress before you start it and completed as soon as it is done. "
        "The list is shown to you with each request and survives compaction."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("tasks", "task_array", "The whole task list, in order.", required=True),
    )
    read_only: ClassVar[bool] = True
    approval_class: ClassVar[ApprovalClass] = "none"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        tasks = parse_tasks(args["tasks"])
        await _state(ctx, self.name).set_tasks(tasks)
        done = sum(1 for _, status in tasks if status == "completed")
        head = f"Task list updated ({done} of {len(tasks)} completed)." if tasks else \
            "Task list cleared."
        return ToolOutput(f"{head}\n{render_tasks(tasks)}".strip(), {"tasks": len(tasks)})


class ExitPlanMode(Tool):
    name: ClassVar[str] = "exit_plan_mode"
    description: ClassVar[str] = (
        "In plan mode, when your plan is ready: present it (Markdown: the files to change, the "
        "steps, how to check the result) for the user to approve. Approved, you leave plan "
        "mode and carry the plan out at once; otherwise you get the user's feedback and keep "
        "planning. Only in plan mode."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("plan", "string", "The plan, in Markdown.", required=True, non_empty=True),
    )
    read_only: ClassVar[bool] = True
    approval_class: ClassVar[ApprovalClass] = "none"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        state = _state(ctx, self.name)
        if state.mode != "plan":
            raise ToolError("not_in_plan_mode", "exit_plan_mode: the session is not in plan "
                            f"mode (it is in {state.mode} mode): go ahead with the work")
        answer = await state.ask_plan(args["plan"], ctx.call_id)
        if answer.approved:
            return ToolOutput(f"The user approved the plan; the session is now in {answer.mode} "
                              "mode. Carry the plan out now, step by step, keeping the task "
                              "list up to date.", {"approved": True, "mode": answer.mode})
        feedback = answer.feedback.strip() or "(no feedback given)"
        return ToolOutput(f"The user wants you to keep planning. Their feedback: {feedback}\n"
                          "Stay in plan mode: refine the plan and present it again with "
                          "exit_plan_mode.", {"approved": False})
