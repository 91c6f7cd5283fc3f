"""What a request carries after the conversation and the log never keeps (SPEC §13 "Plan, then
act"): the plan-mode reminder and the session's task list, each a ``<system-reminder>`` block
(the providers leave such a last block outside the cached prefix), and the line a summary gets
so that it keeps the task list.
"""

from __future__ import annotations

from pseudoclaude.agent.tools.plan import render_tasks

OPEN, CLOSE = "<system-reminder>", "</system-reminder>"
PLAN_EVERY = 4
"""The full plan reminder goes out on rounds 1, 5, 9, …; the short one on the others."""
PLAN_FULL = (
    "You are in plan mode. Use only read-only tools (read_file, find_files, search_code, "
    "get_diagnostics and the like) to understand the task: do not edit files, run commands, "
    "install anything or change any state, and never claim a change was made. Ask a "
    "clarifying question when the task is broad; otherwise work out the plan: the files to "
    "change, the steps, how to check the result, the risks. Keep the steps in a task list "
    "(update_tasks). When the plan is ready, present it with exit_plan_mode and wait for the "
    "user's approval before making any change.")
PLAN_SHORT = ("Still in plan mode: use only read-only tools, avoid side effects, and produce or "
              "refine the plan (exit_plan_mode when it is ready) without making changes.")
PLAN_EXITS = ("default", "acceptEdits")
"""The modes an approved plan may be carried out in."""


def block(text: str) -> str:
    return f"{OPEN}\n{text}\n{CLOSE}"


def plan_reminder(round_: int) -> str:
    """The plan reminder of a run's model request number ``round_`` (from 1)."""
    return block(PLAN_FULL if (round_ - 1) % PLAN_EVERY == 0 else PLAN_SHORT)


def tasks_reminder(tasks: list[tuple[str, str]]) -> str:
    """The session's task list, as the model reads it with each request."""
    return block("The current task list (update_tasks replaces it; keep it up to date):\n"
                 + render_tasks(tasks))


def tasks_instruction(tasks: list[tuple[str, str]]) -> str:
    """What a summary is asked to keep of the task list."""
    return ("Keep the session's current task list in the summary, each item with its "
            "status:\n" + render_tasks(tasks))
