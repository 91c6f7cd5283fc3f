"""Typed events of a run (SPEC §8 ``pseudoclaude/event`` kinds) and the stop reasons.

Every layer that reports progress (the runner, compaction, memory) emits these through a plain
callback; the LSP server forwards them as notifications, the CLI prints them (or writes them as
JSON lines). They are msgspec structs tagged on ``kind`` with camelCase names, so an event's
encoding is its wire payload (:func:`pseudoclaude.api.protocol.event_params` adds
``workspace`` and ``sessionId``). Optional fields are left out of the payload when unset.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Literal

from msgspec import UNSET, Struct, UnsetType
from msgspec.structs import replace


class StopReason(StrEnum):
    """Why a run ended (SPEC §6)."""

    COMPLETED = "completed"
    MAX_ITERATIONS = "max_iterations"
    CANCELED = "canceled"
    UNKNOWN_TOOL_LIMIT = "unknown_tool_limit"
    ERROR = "error"
    BLOCKED = "blocked"
    """A ``UserPromptSubmit`` hook refused the prompt: nothing was sent or logged."""


ToolStatus = Literal["done", "error", "denied", "canceled", "pending"]
"""A tool call as the user lived it: finished, failed, denied by the user, canceled (the run
was cancelled, or interrupted by a crash), or still waiting for its result."""


class Event(Struct, frozen=True, tag_field="kind", rename="camel", kw_only=True):
    """Base of every event; ``kind`` is the tag."""

    agent_id: str | UnsetType = UNSET
    """Set on the events of a sub-agent (the ``agent`` tool): its id (SPEC §13); absent on
    the session's own."""

    @property
    def kind(self) -> str:
        """The event's kind on the wire (``text``, ``toolCall``, ...)."""
        return str(self.__struct_config__.tag)


class TextEvent(Event, frozen=True, tag="text"):
    delta: str


class ToolCallEvent(Event, frozen=True, tag="toolCall"):
    id: str
    name: str
    arguments: Any


class ToolResultEvent(Event, frozen=True, tag="toolResult"):
    id: str
    name: str
    is_error: bool
    bytes: int
    preview: str
    """The first 200 characters of the result (the JSON envelope of SPEC §6)."""
    error: str | UnsetType = UNSET
    """A failed tool's own error message (the envelope's ``error``), for one-line displays."""
    status: ToolStatus = "done"
    """As the transcript's ``toolCall``: ``done``, ``error``, ``denied`` or ``canceled``."""
    display: str = ""
    """The first lines of the result (or its error), readable: what a tool card shows (the
    transcript's ``preview``)."""


class FactCheck(Struct, frozen=True, rename="camel"):
    """What the server checked in a summary against the part it replaces (SPEC §11): items
    (user prompts, changed paths, the last prompt) checked, missing from the summary, and
    carried into it."""

    checked: int = 0
    missing: int = 0
    added: int = 0


class CompactEvent(Event, frozen=True, tag="compact"):
    layer: int
    before_tokens: int
    after_tokens: int
    offloaded: int = 0
    fact_check: FactCheck | UnsetType = UNSET
    """Layer 2 only."""


class MemoryChange(Struct, frozen=True):
    action: str  # create | update | delete
    level: str
    filename: str


class MemoryEvent(Event, frozen=True, tag="memory"):
    status: str  # updated | unchanged | proposed | failed
    changes: list[MemoryChange] = []
    error: str | UnsetType = UNSET


class UsageUpdate(Event, frozen=True, tag="usage"):
    input_tokens: int
    output_tokens: int
    cache_read: int = 0
    cache_write: int = 0


class WarningEvent(Event, frozen=True, tag="warning"):
    message: str
    attempt: int | UnsetType = UNSET
    """Set on a provider retry: the attempt that failed (the CLI shows these with -v)."""


class ErrorEvent(Event, frozen=True, tag="error"):
    message: str


class StopEvent(Event, frozen=True, tag="stop"):
    stop_reason: StopReason


class Task(Struct, frozen=True):
    """One item of a session's task list."""

    content: str
    status: str  # pending | in_progress | completed


class TasksEvent(Event, frozen=True, tag="tasks"):
    """The session's task list changed (or was restored by a resume, a fork or a rewind)."""

    tasks: list[Task]


class ModeEvent(Event, frozen=True, tag="mode"):
    """The session's permission mode changed (by a request, a command or an approved plan)."""

    mode: str


class TaskEvent(Event, frozen=True, tag="task"):
    """A background sub-agent (``agent`` with ``run_in_background``) started or ended; its
    ``agentId`` is its ``taskId``."""

    task_id: str
    status: str
    """``running`` (it started), then ``completed``, ``failed``, ``canceled`` or
    ``max_turns``."""
    subagent_type: str
    description: str
    name: str | UnsetType = UNSET
    result: str | UnsetType = UNSET
    """Once it ended: its result as the model reads it (at most 2,000 characters)."""


AnyEvent = (TextEvent | ToolCallEvent | ToolResultEvent | CompactEvent | MemoryEvent
            | UsageUpdate | WarningEvent | ErrorEvent | StopEvent | ModeEvent
            | TasksEvent | TaskEvent)
"""Every event kind (a tagged union, for decoding)."""

Emit = Callable[[Event], None]


def of_agent(event: Event, agent_id: str) -> Event:
    """``event`` as a sub-agent's (its ``agentId`` set)."""
    return replace(event, agent_id=agent_id)


def ignore(event: Event) -> None:
    """An ``Emit`` that drops everything."""
