"""A session's background sub-agents (SPEC §13 "Sub-agents and background tasks"): the board
``task_list``, ``task_get`` and ``task_stop`` read (:class:`Tasks`), and the notifications of the
tasks that ended.

A task's id is its sub-agent's ``agentId`` (its log is ``agents/<taskId>.jsonl``). A task runs in
an ``asyncio`` task of its own: the run that started it may end or be cancelled, it goes on. It
ends on its own (its result becomes a notification), by ``task_stop``, when its session is
closed or when the server exits (:meth:`Tasks.stop_all`; its log ends ``canceled`` with the
reason). A task that ended on its own tells the model with a ``<task-notification>`` that the
session's next request carries as a user message of the conversation (logged); one that was
stopped does not (whoever stopped it knows).
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from pseudoclaude.agent.tools import ToolError
from pseudoclaude.agent.tools.tasks import TaskInfo
from pseudoclaude.llm.types import NOTIFICATION_TAG

RESULT_CHARS = 2000
"""At most this many characters of a task's result reach the model in its notification."""
CUT = "...[truncated]"


def cut(text: str, limit: int = RESULT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit - len(CUT)] + CUT


def notification(info: TaskInfo) -> str:
    """The Go original's shape: ``<task-notification><task-id>…</task-id><name>…</name>
    <type>…</type><status>…</status><result>…</result></task-notification>``."""
    return (f"{NOTIFICATION_TAG}<task-id>{info.task_id}</task-id>"
            f"<name>{info.name or info.description}</name><type>{info.subagent_type}</type>"
            f"<status>{info.status}</status><result>{cut(info.result)}</result>"
            "</task-notification>")


@dataclass
class Running:
    info: TaskInfo
    task: asyncio.Task[None] | None = None
    reason: str = ""
    """Why it was stopped (``""``: it was not)."""


class Tasks:
    """The background tasks of one session started in this process."""

    def __init__(self) -> None:
        self.by_id: dict[str, Running] = {}
        self.notices: list[str] = []

    def add(self, info: TaskInfo, task: asyncio.Task[None]) -> None:
        self.by_id[info.task_id] = Running(info, task)

    def reason(self, task_id: str) -> str:
        running = self.by_id.get(task_id)
        return running.reason if running is not None else ""

    def ended(self, info: TaskInfo) -> None:
        """A task ended: on its own, its notification waits for the next request."""
        if not self.reason(info.task_id):
            self.notices.append(notification(info))

    def take_notices(self) -> str | None:
        """The notifications of the tasks that ended since the last request (then forgotten):
        one user message's text."""
        if not self.notices:
            return None
        text, self.notices = "\n".join(self.notices), []
        return text

    def task_infos(self) -> list[TaskInfo]:
        return [r.info for r in self.by_id.values()]

    async def stop_task(self, task_id: str, reason: str) -> TaskInfo:
        running = self.by_id.get(task_id)
        if running is None:
            known = ", ".join(self.by_id) or "none"
            raise ToolError("not_found", f"no background task {task_id[:80]!r} in this "
                            f"session (the tasks: {known})")
        if running.info.status != "running" or running.task is None or running.task.done():
            raise ToolError("not_running", f"task {task_id} is not running: it ended "
                            f"{running.info.status}", metadata=running.info.as_json())
        await self._stop(running, reason)
        return running.info

    async def _stop(self, running: Running, reason: str) -> None:
        task = running.task
        if task is None or task.done():
            return
        running.reason = reason
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait([task])

    async def stop_all(self, reason: str) -> None:
        """Stop every running task (its session is closed, the server exits) and wait until
        their logs say so."""
        await asyncio.gather(*(self._stop(r, reason) for r in list(self.by_id.values())))
