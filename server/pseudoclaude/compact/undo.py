"""Undo of a compaction (SPEC §11 "Undo"): which messages come back, from the log's past.

Walking back over the log's replaces: an ``undo`` hides the compaction before it (so a second
undo goes one compaction further back), a ``repair`` is passed over, a ``clear`` or ``import``
stops the walk (the whole conversation was replaced since). The messages the target
compaction summarised come back in place of its summary pair; everything after that pair in
the current conversation (the recent window it kept and what was added since) stays after
them.
"""

from __future__ import annotations

from collections.abc import Sequence

from pseudoclaude.compact.layer2 import is_summary
from pseudoclaude.conversation import PastReplace
from pseudoclaude.llm.types import Message

TRANSPARENT = frozenset({"repair"})

NOTHING_TO_UNDO = "no compaction to undo in this session"


def undo_plan(history: Sequence[PastReplace], current: Sequence[Message]
              ) -> tuple[list[Message] | None, str, PastReplace | None]:
    """``(restored history, "", target)`` or ``(None, reason, None)``."""
    hidden = 0
    for past in reversed(history):
        if past.reason == "undo":
            hidden += 1
            continue
        if past.reason in TRANSPARENT:
            continue
        if past.reason != "compact":
            return None, (f"the conversation was replaced since ({past.reason}); there is no "
                          "compaction to undo after that"), None
        if hidden:
            hidden -= 1
            continue
        kept = len(past.after) - 2
        if kept < 0 or not past.after or not is_summary(past.after[0]):
            return None, "the last compaction left no summary to undo", None
        if not current or not is_summary(current[0]) or current[0].content != past.after[0].content:
            return None, ("the conversation no longer starts with that compaction's summary; "
                          "nothing was changed"), None
        old = list(past.before[: len(past.before) - kept])
        return [*old, *current[2:]], "", past
    return None, NOTHING_TO_UNDO, None
