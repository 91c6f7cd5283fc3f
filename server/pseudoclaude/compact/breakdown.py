"""What fills the context (SPEC §11 "Context breakdown"): token counts per category.

The nine categories add up to the estimate of the whole next request; ``free`` and
``reserved`` are beside them.
"""

from __future__ import annotations

from array import array
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass

import msgspec

from pseudoclaude.compact.estimate import message_parts
from pseudoclaude.conversation.summary import is_summary
from pseudoclaude.llm.types import Message

CATEGORIES = ("system", "rules", "memory", "tools", "summary", "messages", "tool_calls",
              "tool_results", "spilled")
"""The nine categories, in the order of :meth:`TokenBreakdown.scaled`'s byte counts."""


class TokenBreakdown(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What fills the context, in tokens: the nine categories add up to ``estimatedTokens``;
    ``free`` and ``reserved`` are beside them (the wire's ``Breakdown``)."""

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

    @classmethod
    def scaled(cls, byte_counts: Sequence[int], estimate: int, *, window: int,
               reserved: int) -> TokenBreakdown:
        """The nine categories' byte counts (in :data:`CATEGORIES` order) scaled to
        ``estimate`` tokens with largest-remainder rounding: they add up to it exactly and
        none is negative. ``free`` is ``window − estimate``, not below 0."""
        (system, rules, memory, tools, summary, messages, tool_calls, tool_results,
         spilled) = scale(byte_counts, estimate)
        return cls(system=system, rules=rules, memory=memory, tools=tools, summary=summary,
                   messages=messages, tool_calls=tool_calls, tool_results=tool_results,
                   spilled=spilled, free=max(0, window - estimate), reserved=max(0, reserved))


def scale(counts: Sequence[int], total: int) -> list[int]:
    """Split ``total`` in proportion to ``counts`` (negative counts as 0): whole numbers that
    add up to ``total`` exactly, the rounding going to the largest remainders (ties: the
    earlier category). With nothing to go by, all of it goes to ``messages``."""
    weights = [max(0, c) for c in counts]
    total = max(0, total)
    whole = sum(weights)
    if whole == 0:
        out = [0] * len(weights)
        if total:
            out[CATEGORIES.index("messages") if len(out) == len(CATEGORIES) else 0] = total
        return out
    shares = [divmod(w * total, whole) for w in weights]
    out = [q for q, _ in shares]
    left = total - sum(out)  # < len(counts)
    by_remainder = sorted(range(len(shares)), key=lambda i: -shares[i][1])
    for i in by_remainder[:left]:
        out[i] += 1
    return out


@dataclass(frozen=True, kw_only=True)
class RequestOverhead:
    """What a request carries besides the messages, in bytes: the system prompt's parts and
    the tool schemas."""

    system: int = 0
    rules: int = 0
    memory: int = 0
    tools: int = 0

    @property
    def total(self) -> int:
        return self.system + self.rules + self.memory + self.tools


SUMMARY, MESSAGES, TOOL_CALLS, TOOL_RESULTS, SPILLED = range(4, 9)
"""Indexes in :data:`CATEGORIES` of the message categories."""


class MessageSizes:
    """The bytes of a conversation's messages, in total and by category, kept incrementally:
    :meth:`add` the new messages (O(new messages)), :meth:`save` what a Layer-1 offload
    saved, :meth:`reset` after a replace.

    A message counts as a whole under ``summary`` (the summary an earlier compaction put
    first, and the assistant message right after it), ``tool_results`` (a result carried
    verbatim or not decided yet) or ``spilled`` (a result whose call id is in the spilled
    set: its preview); any other message is split between ``messages`` (role and text) and
    ``tool_calls`` (ids, names, arguments; also the role of a message with calls and no
    text).
    """

    __slots__ = ("_after_summary", "by_category", "kinds", "sizes", "total")

    def __init__(self) -> None:
        self.sizes: array[int] = array("q")
        """Bytes of each message, by index."""
        self.kinds = bytearray()
        """Category of each message (``MESSAGES`` for one split between two)."""
        self.by_category = [0] * len(CATEGORIES)
        self.total = 0
        self._after_summary = False

    def __len__(self) -> int:
        return len(self.sizes)

    def reset(self) -> None:
        self.sizes, self.kinds = array("q"), bytearray()
        self.by_category = [0] * len(CATEGORIES)
        self.total, self._after_summary = 0, False

    def add(self, messages: Iterable[Message], spilled: Container[str]) -> None:
        """Count ``messages``, appended after those counted so far; a result is ``spilled``
        when its call id is in ``spilled`` (the Layer-1 ledger's offloads)."""
        sizes, kinds, by = self.sizes, self.kinds, self.by_category
        after_summary = self._after_summary
        total = 0
        for m in messages:
            text, calls, result = message_parts(m)
            size = text + calls + result
            total += size
            summary = is_summary(m)
            if summary or (after_summary and m.role == "assistant"):
                kind = SUMMARY
                by[SUMMARY] += size
            elif m.tool_result is not None:
                kind = SPILLED if m.tool_result.call_id in spilled else TOOL_RESULTS
                by[kind] += size
            elif calls and not m.content:
                kind = TOOL_CALLS
                by[TOOL_CALLS] += size
            else:
                kind = MESSAGES
                by[MESSAGES] += text + result
                by[TOOL_CALLS] += calls
            after_summary = summary
            sizes.append(size)
            kinds.append(kind)
        self.total += total
        self._after_summary = after_summary

    def save(self, index: int, n: int) -> None:
        """Layer 1 replaced the result at ``index`` by its preview, ``n`` bytes smaller: it
        now counts under ``spilled``."""
        if not 0 <= index < len(self.sizes):
            return
        size, kind = self.sizes[index], self.kinds[index]
        new = size - n
        self.sizes[index] = new
        self.total -= n
        self.by_category[kind] -= size
        if kind == TOOL_RESULTS:
            kind = self.kinds[index] = SPILLED
        self.by_category[kind] += new

    def prefix(self, count: int) -> int:
        """Bytes of the first ``count`` messages (O(count): for a restored anchor)."""
        return sum(self.sizes[:count])
