"""What fills the context (SPEC §11 "Context breakdown"): token counts per category.

The ten categories add up to the estimate of the whole next request; ``free`` and
``reserved`` are beside them.
"""

from __future__ import annotations

from array import array
from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec

from pseudoclaude.compact.estimate import message_parts
from pseudoclaude.conversation.summary import is_summary
from pseudoclaude.llm.types import Message
from pseudoclaude.skills import LOAD_SKILL, invoked

CATEGORIES = ("system", "rules", "memory", "skills", "tools", "summary", "messages",
              "tool_calls", "tool_results", "spilled")
"""The ten categories, in the order of :meth:`TokenBreakdown.scaled`'s byte counts."""


class TokenBreakdown(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """What fills the context, in tokens: the ten categories add up to ``estimatedTokens``;
    ``free`` and ``reserved`` are beside them (the wire's ``Breakdown``)."""

    system: int = 0
    """Identity and tool instructions of the system prompt."""
    rules: int = 0
    """Instruction files (``PSEUDOCLAUDE.md``, ``AGENTS.md``, ``CLAUDE.md``...): the sum of
    the context's ``rules`` list."""
    memory: int = 0
    """The injected memory index."""
    skills: int = 0
    """The skill list of the system prompt, the skills loaded (``load_skill`` results) and
    the ``/<skill>`` prompts."""
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
        """The ten categories: the estimate they describe."""
        return (self.system + self.rules + self.memory + self.skills + self.tools
                + self.summary + self.messages + self.tool_calls + self.tool_results
                + self.spilled)

    @classmethod
    def scaled(cls, byte_counts: Sequence[int], estimate: int, *, window: int,
               reserved: int) -> TokenBreakdown:
        """The ten categories' byte counts (in :data:`CATEGORIES` order) scaled to
        ``estimate`` tokens with largest-remainder rounding: they add up to it exactly and
        none is negative. ``free`` is ``window − estimate``, not below 0."""
        (system, rules, memory, skills, tools, summary, messages, tool_calls, tool_results,
         spilled) = scale(byte_counts, estimate)
        return cls(system=system, rules=rules, memory=memory, skills=skills, tools=tools,
                   summary=summary, messages=messages, tool_calls=tool_calls,
                   tool_results=tool_results, spilled=spilled, free=max(0, window - estimate),
                   reserved=max(0, reserved))


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


RuleSource = Literal["user", "project", "local", "nested"]
"""Where an instruction file comes from: ``user`` (the user folder's, for every project),
``project`` (the workspace root's shared files), ``local`` (``CLAUDE.local.md``: the user's own
file in the workspace), ``nested`` (a subfolder's, joined when the session read a file under
it)."""


@dataclass(frozen=True)
class RuleSize:
    """One instruction file of the system prompt: its bytes there (heading and separator
    included), under the name the context shows."""

    path: str
    source: RuleSource
    bytes: int


class RuleFile(msgspec.Struct, frozen=True, kw_only=True, rename="camel"):
    """One instruction file in the system prompt, its share of the breakdown's ``rules``."""

    path: str
    """Relative to the workspace for the project's files; ``~/...`` (or absolute) for the
    user's."""
    tokens: int
    """Its share of ``rules``: the files' tokens add up to ``breakdown.rules``."""
    source: RuleSource
    """``user``, ``project``, ``local`` (``CLAUDE.local.md``) or ``nested`` (a subfolder's
    ``AGENTS.md`` or ``CLAUDE.md``, joined when the session read a file under it)."""


def rule_files(sizes: Sequence[RuleSize], rules_tokens: int) -> list[RuleFile]:
    """``rules_tokens`` (the breakdown's ``rules``) split between the files in proportion to
    their bytes: the tokens add up to it exactly."""
    if not sizes:
        return []
    tokens = scale([max(1, s.bytes) for s in sizes], rules_tokens)
    return [RuleFile(path=s.path, tokens=t, source=s.source)
            for s, t in zip(sizes, tokens, strict=True)]


@dataclass(frozen=True, kw_only=True)
class RequestOverhead:
    """What a request carries besides the messages, in bytes: the system prompt's parts and
    the tool schemas."""

    system: int = 0
    rules: int = 0
    memory: int = 0
    skills: int = 0
    """The skill list of the system prompt."""
    tools: int = 0

    @property
    def total(self) -> int:
        return self.system + self.rules + self.memory + self.skills + self.tools


SKILLS = CATEGORIES.index("skills")
SUMMARY, MESSAGES, TOOL_CALLS, TOOL_RESULTS, SPILLED = range(SKILLS + 2, SKILLS + 7)
"""Indexes in :data:`CATEGORIES` of the message categories (``skills`` is one too: a loaded
skill's result, a ``/<skill>`` prompt)."""


def is_skill(message: Message) -> bool:
    """Whether a message counts under ``skills``: a ``load_skill`` result that loaded one, or
    the prompt of a ``/<skill>`` command."""
    result = message.tool_result
    if result is not None:
        return result.name == LOAD_SKILL and not result.is_error
    return message.role == "user" and invoked(message.content) is not None


class MessageSizes:
    """The bytes of a conversation's messages, in total and by category, kept incrementally:
    :meth:`add` the new messages (O(new messages)), :meth:`save` what a Layer-1 offload
    saved, :meth:`reset` after a replace.

    A message counts as a whole under ``summary`` (the summary an earlier compaction put
    first, and the assistant message right after it), ``spilled`` (a result whose call id is
    in the spilled set: its preview), ``skills`` (a ``load_skill`` result, a ``/<skill>``
    prompt: :func:`is_skill`) or ``tool_results`` (another result, carried verbatim or not
    decided yet); any other message is split between ``messages`` (role and text) and
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
                kind = SPILLED if m.tool_result.call_id in spilled else \
                    SKILLS if is_skill(m) else TOOL_RESULTS
                by[kind] += size
            elif m.role == "user" and is_skill(m):
                kind = SKILLS
                by[SKILLS] += size
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
        if kind in (TOOL_RESULTS, SKILLS):
            kind = self.kinds[index] = SPILLED
        self.by_category[kind] += new

    def prefix(self, count: int) -> int:
        """Bytes of the first ``count`` messages (O(count): for a restored anchor)."""
        return sum(self.sizes[:count])
