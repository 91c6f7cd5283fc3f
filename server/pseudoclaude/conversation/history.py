"""The past of a conversation as its log tells it: every ``replace`` with the history it
replaced, so a compaction can be undone after a restart (SPEC §11 "Undo")."""

from __future__ import annotations

from dataclasses import dataclass, field

from pseudoclaude.conversation.conversation import Offload
from pseudoclaude.llm.types import Message


@dataclass(frozen=True)
class PastReplace:
    """One ``replace`` of the log: ``before`` is the live history just before it (with the
    Layer-1 ledger of that moment), ``after`` what it put in place."""

    reason: str
    before: list[Message]
    after: list[Message]
    offloads: dict[str, Offload] = field(default_factory=dict)
    kept: frozenset[str] = frozenset()
