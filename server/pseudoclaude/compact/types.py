"""Compaction's limits (:class:`CompactConfig`), results and errors, and its constants."""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from pseudoclaude.compact import layer2
from pseudoclaude.compact.breakdown import RuleFile, TokenBreakdown
from pseudoclaude.compact.estimate import estimate_messages
from pseudoclaude.compact.plan import PreviewReason
from pseudoclaude.config import (
    COMPACT_AUTO,
    COMPACT_ROUND_BYTES,
    COMPACT_SAFETY_MARGIN_TOKENS,
    COMPACT_SINGLE_RESULT_BYTES,
    Settings,
)
from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.events import FactCheck

SUMMARY_RESERVE_TOKENS = 20_000
BREAKER_LIMIT = 3
# What an empty summary costs (the boundary reminder and the acknowledgement), in tokens.
SUMMARY_OVERHEAD = estimate_messages(layer2.assemble("", []))
SUMMARY_RETRIES = 3
ASSUMED_SUMMARY_TOKENS = 2_000
"""The planner's guess of a summary's size: min(half the summarised tokens, this); an old
part no larger than its guessed summary plus the summary pair is not summarised (no model
call), so a preview that would summarise always estimates fewer tokens after than before."""
MIN_CHUNK_TOKENS = 500
"""Below this a summary request cannot hold a useful chunk: the compaction fails."""


@dataclass(frozen=True)
class CompactConfig:
    """One session's compaction limits: the ``compact.*`` settings (whose defaults these are)
    and the window. Build it with :meth:`from_settings`."""

    window: int
    single_result_bytes: int = COMPACT_SINGLE_RESULT_BYTES.default
    round_bytes: int = COMPACT_ROUND_BYTES.default
    safety_margin_tokens: int = COMPACT_SAFETY_MARGIN_TOKENS.default
    auto: bool = COMPACT_AUTO.default
    reserve_tokens: int = SUMMARY_RESERVE_TOKENS
    recent_tokens: int = layer2.RECENT_TOKENS
    recent_messages: int = layer2.RECENT_MESSAGES
    fact_check: bool = True
    """Check each summary against the part it replaces (SPEC §11); off only for the
    fidelity bench's comparison."""

    @classmethod
    def from_settings(cls, settings: Settings, window: int | None = None) -> CompactConfig:
        """The settings' limits for ``window`` (default: ``settings.context_window``)."""
        c = settings.compact
        return cls(window=settings.context_window if window is None else window,
                   single_result_bytes=c.single_result_bytes, round_bytes=c.round_bytes,
                   safety_margin_tokens=c.safety_margin_tokens, auto=c.auto)

    @property
    def summary_budget(self) -> int:
        """Tokens a summary request may use: window − reserve − margin (capped, see above)."""
        reserve = min(self.reserve_tokens, self.window // 4)
        margin = min(self.safety_margin_tokens, self.window // 8)
        return self.window - reserve - margin

    @property
    def threshold(self) -> int:
        """The auto-compaction threshold (``autoCompactThreshold``): the summary budget."""
        return self.summary_budget

    @property
    def reserved(self) -> int:
        """Summary reserve plus safety margin, as applied after the small-window caps."""
        return self.window - self.summary_budget

    @property
    def undo_threshold(self) -> int:
        """After an undo, automatic compaction waits until window − reserve (capped)."""
        return self.window - min(self.reserve_tokens, self.window // 4)

    @property
    def keep_tokens(self) -> int:
        return min(self.recent_tokens, self.threshold // 4)


class CompactOutcome(msgspec.Struct, kw_only=True, rename="camel"):
    """What a compaction did (the wire's ``CompactResult`` adds the line a person reads)."""

    before_tokens: int
    after_tokens: int
    offloaded: int
    summarized: bool
    fact_check: FactCheck = msgspec.field(default_factory=FactCheck)
    """All zero when nothing was summarised."""
    reason: PreviewReason | msgspec.UnsetType = msgspec.UNSET
    """With ``summarized: false``: why (the preview's reasons; ``would not shrink`` also when
    the model's summary turned out no smaller, and was not applied)."""


class ContextState(msgspec.Struct, kw_only=True, rename="camel"):
    """The context of a session now (the wire's ``ContextResult`` adds its id)."""

    message_count: int
    estimated_tokens: int
    context_window: int
    auto_compact_threshold: int
    auto_compact_failures: int
    auto_compact_tripped: bool
    breakdown: TokenBreakdown = msgspec.field(default_factory=TokenBreakdown)
    rules: list[RuleFile] = msgspec.field(default_factory=list)
    """The instruction files of the system prompt, in its order: their tokens add up to
    ``breakdown.rules``."""


class CompactError(PseudoClaudeError):
    """A summary could not be made or applied; the message is for the user."""


class NoGain(CompactError):
    """The summary would not make the conversation smaller (e.g. it is one already)."""
