"""What fills the context (SPEC §11 "Context breakdown"): token counts per category.

The nine categories add up to the estimate of the whole next request; ``free`` and
``reserved`` are beside them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Breakdown:
    system: int = 0
    """Identity and tool instructions of the system prompt."""
    rules: int = 0
    """``PSEUDOCLAUDE.md`` files."""
    memory: int = 0
    """The injected memory index."""
    tools: int = 0
    """Tool schemas."""
    summary: int = 0
    """The compaction summary message and its acknowledgement."""
    messages: int = 0
    """User and assistant text."""
    tool_calls: int = 0
    """Tool-call ids, names and arguments."""
    tool_results: int = 0
    """Tool results carried verbatim (and undecided ones)."""
    spilled: int = 0
    """Previews of spilled results."""
    free: int = 0
    """The window minus the estimate, not below 0."""
    reserved: int = 0
    """Summary reserve plus safety margin, as applied after small-window caps."""

    @property
    def total(self) -> int:
        """The nine categories: the estimate they describe."""
        return (self.system + self.rules + self.memory + self.tools + self.summary
                + self.messages + self.tool_calls + self.tool_results + self.spilled)
