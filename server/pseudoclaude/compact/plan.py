"""What a compaction would do, and what an undo did (SPEC §11): plain results of the
planner that the preview and the real compaction share."""

from __future__ import annotations

from dataclasses import dataclass

NO_SESSION = "no session"
NOTHING_TO_SUMMARIZE = "nothing to summarize"
WOULD_NOT_SHRINK = "would not shrink"


@dataclass(frozen=True, kw_only=True)
class CompactPlan:
    """The preview of a compaction (``pseudoclaude/compact/preview``)."""

    would_summarize: bool
    before_tokens: int
    estimated_after_tokens: int
    summarized_messages: int
    kept_messages: int
    first_kept_index: int
    spill_results: int = 0
    spill_bytes: int = 0
    reason: str = ""
    """With ``would_summarize`` false: :data:`NO_SESSION`, :data:`NOTHING_TO_SUMMARIZE` or
    :data:`WOULD_NOT_SHRINK`."""


@dataclass(frozen=True)
class UndoOutcome:
    """What ``pseudoclaude/compact/undo`` did."""

    restored: bool
    before_tokens: int
    after_tokens: int
    message_count: int
    reason: str = ""
