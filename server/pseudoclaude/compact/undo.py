"""Undo of a compaction (SPEC §11 "Undo"): which messages come back, from the log's past.

Walking back over the log's replaces: an ``undo`` hides the compaction before it (so a second
undo goes one compaction further back), a ``repair`` is passed over, a ``clear`` or ``import``
stops the walk (the whole conversation was replaced since). The messages the target
compaction summarised come back in place of its summary pair; everything after that pair in
the current conversation (the recent window it kept and what was added since) stays after
them. The Layer-1 decisions the target compaction had for the results that come back are
restored with them (:func:`restore_decisions`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pseudoclaude.compact.layer1 import Ledger
from pseudoclaude.conversation import PastReplace
from pseudoclaude.conversation.summary import is_summary
from pseudoclaude.llm.types import Message

TRANSPARENT = frozenset({"repair"})

NOTHING_TO_UNDO = "no compaction to undo in this session"


@dataclass(frozen=True, slots=True, kw_only=True)
class UndoPlan:
    """What an undo would bring back: the ``restored`` history and the ``target`` compaction,
    or (both None) the ``reason`` there is nothing to undo."""

    restored: list[Message] | None = None
    target: PastReplace | None = None
    reason: str = ""


def undo_plan(history: Sequence[PastReplace], current: Sequence[Message]) -> UndoPlan:
    """The undo of the last compaction of ``history`` not undone yet, on ``current``."""
    hidden = 0
    for past in reversed(history):
        if past.reason == "undo":
            hidden += 1
            continue
        if past.reason in TRANSPARENT:
            continue
        if past.reason != "compact":
            return UndoPlan(reason=f"the conversation was replaced since ({past.reason}); "
                                   "there is no compaction to undo after that")
        if hidden:
            hidden -= 1
            continue
        kept = len(past.after) - 2
        if kept < 0 or not past.after or not is_summary(past.after[0]):
            return UndoPlan(reason="the last compaction left no summary to undo")
        if not current or not is_summary(current[0]) or current[0].content != past.after[0].content:
            return UndoPlan(reason="the conversation no longer starts with that compaction's "
                                   "summary; nothing was changed")
        old = list(past.before[: len(past.before) - kept])
        return UndoPlan(restored=[*old, *current[2:]], target=past)
    return UndoPlan(reason=NOTHING_TO_UNDO)


def restore_decisions(ledger: Ledger, target: PastReplace, history: Sequence[Message]) -> None:
    """Bring back into ``ledger`` the Layer-1 decisions ``target`` had for the results of
    ``history`` (the history after the undo); decisions already taken stay."""
    present = {m.tool_result.call_id for m in history if m.tool_result is not None}
    for call_id, offload in target.offloads.items():
        if call_id in present:
            ledger.offloads.setdefault(call_id, offload)
    ledger.kept |= {c for c in target.kept if c in present}
