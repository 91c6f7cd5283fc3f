"""What a compaction would do, and what an undo did (SPEC §11): plain results of the
planner that the preview and the real compaction share."""

from __future__ import annotations

from typing import Final, Literal

import msgspec
from msgspec import UNSET, UnsetType

NO_SESSION: Final = "no session"
NOTHING_TO_SUMMARIZE: Final = "nothing to summarize"
WOULD_NOT_SHRINK: Final = "would not shrink"


PreviewReason = Literal["no session", "nothing to summarize", "would not shrink"]
"""Why a preview would summarise nothing (``wouldSummarize: false``), or a compaction
summarised nothing (``summarized: false``): no conversation, nothing older than the recent
window, or a summary that would not be smaller than the older messages it replaces."""


class SpillPreview(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """Tool results a compaction would offload to files (Layer 1)."""

    results: int = 0
    bytes: int = 0


class CompactPlan(msgspec.Struct, kw_only=True, rename="camel"):
    """What ``pseudoclaude/compact`` would do now; nothing is written, no model is called (the
    wire's ``CompactPreviewResult`` adds the line a person reads)."""

    would_summarize: bool
    before_tokens: int
    estimated_after_tokens: int
    summarized_messages: int
    kept_messages: int
    first_kept_index: int
    spill: SpillPreview = msgspec.field(default_factory=SpillPreview)
    reason: PreviewReason | UnsetType = UNSET
    """With ``wouldSummarize: false``: why."""


class UndoOutcome(msgspec.Struct, kw_only=True, rename="camel"):
    """What ``pseudoclaude/compact/undo`` did (the wire's ``UndoResult`` adds the line a
    person reads)."""

    restored: bool
    before_tokens: int
    after_tokens: int
    message_count: int
    reason: str | UnsetType = UNSET
    """Why nothing was restored (``restored: false``)."""
