"""Typed events of a run (SPEC §8 ``pseudoclaude/event`` kinds).

Every layer that reports progress (the runner, compaction, memory) emits these through a plain
callback; the LSP layer forwards them as notifications and the CLI prints them. ``payload()``
is the wire shape: camelCase keys, without ``workspace``/``sessionId`` (added by whoever knows
them).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


@dataclass(frozen=True, slots=True)
class Event:
    kind: ClassVar[str] = ""

    def payload(self) -> dict[str, Any]:
        data = {_camel(f.name): getattr(self, f.name) for f in dataclasses.fields(self)}
        return {"kind": self.kind, **data}


@dataclass(frozen=True, slots=True)
class TextEvent(Event):
    kind: ClassVar[str] = "text"
    delta: str


@dataclass(frozen=True, slots=True)
class ToolCallEvent(Event):
    kind: ClassVar[str] = "toolCall"
    id: str
    name: str
    arguments: Any


@dataclass(frozen=True, slots=True)
class ToolResultEvent(Event):
    kind: ClassVar[str] = "toolResult"
    id: str
    name: str
    is_error: bool
    bytes: int
    preview: str


@dataclass(frozen=True, slots=True)
class CompactEvent(Event):
    kind: ClassVar[str] = "compact"
    layer: int
    before_tokens: int
    after_tokens: int
    offloaded: int = 0


@dataclass(frozen=True, slots=True)
class MemoryEvent(Event):
    kind: ClassVar[str] = "memory"
    status: str  # updated | unchanged | failed
    changes: list[dict[str, str]] = field(default_factory=list)
    error: str = ""


@dataclass(frozen=True, slots=True)
class UsageUpdate(Event):
    kind: ClassVar[str] = "usage"
    input_tokens: int
    output_tokens: int
    cache_read: int = 0
    cache_write: int = 0


@dataclass(frozen=True, slots=True)
class WarningEvent(Event):
    kind: ClassVar[str] = "warning"
    message: str


@dataclass(frozen=True, slots=True)
class ErrorEvent(Event):
    kind: ClassVar[str] = "error"
    message: str


@dataclass(frozen=True, slots=True)
class StopEvent(Event):
    kind: ClassVar[str] = "stop"
    stop_reason: str


Emit = Callable[[Event], None]


def ignore(event: Event) -> None:
    """An ``Emit`` that drops everything."""
