"""Layer 2's planning and its model calls: where the recent window starts, what is old enough
to summarise, and the summary of it in chunks that fit one request each (SPEC §4)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from pseudoclaude.compact import layer2
from pseudoclaude.compact.estimate import estimate_messages
from pseudoclaude.compact.plan import NOTHING_TO_SUMMARIZE, WOULD_NOT_SHRINK
from pseudoclaude.compact.types import (
    ASSUMED_SUMMARY_TOKENS,
    MIN_CHUNK_TOKENS,
    SUMMARY_OVERHEAD,
    SUMMARY_RETRIES,
    CompactConfig,
    CompactError,
)
from pseudoclaude.conversation.summary import is_summary
from pseudoclaude.llm.errors import PromptTooLong
from pseudoclaude.llm.provider import Provider, ToolSpec, complete
from pseudoclaude.llm.types import Message


@dataclass(frozen=True, slots=True)
class RequestPrefix:
    """What a turn of the session sends before its messages: the system prompt and the tools,
    and the model they go to (a provider's prompt cache is per model)."""

    model: str
    system: str
    tools: list[ToolSpec]
    environment: str = ""
    """The environment block the last turn sent after the system prompt."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SummaryPlan:
    """Where the recent window starts, the estimated tokens of the old part before it, and
    why there is nothing to summarise (``""`` when there is)."""

    start: int
    old_tokens: int
    reason: str = ""


def estimated_summary(old_tokens: int) -> int:
    """The planner's guess of what a summary of ``old_tokens`` costs: the summary itself, half
    of what it replaces and at most :data:`ASSUMED_SUMMARY_TOKENS`, plus the summary pair's
    fixed text (:data:`SUMMARY_OVERHEAD`)."""
    return SUMMARY_OVERHEAD + min(old_tokens // 2, ASSUMED_SUMMARY_TOKENS)


def plan_summary(messages: Sequence[Message], config: CompactConfig) -> SummaryPlan:
    """The one planner of the preview and of the real compaction (manual or automatic): a
    summary is asked of the model only when its estimate (:func:`estimated_summary`) is
    smaller than the old part it replaces; otherwise nobody pays for a model call whose
    summary would be thrown away."""
    start = layer2.recent_start(messages, config.keep_tokens, config.recent_messages)
    if start == 0 or (start <= 2 and is_summary(messages[0])):
        # nothing old, or the last summary
        return SummaryPlan(start=start, old_tokens=0, reason=NOTHING_TO_SUMMARIZE)
    old_size = estimate_messages(messages[:start])
    if estimated_summary(old_size) >= old_size:
        # no smaller than its summary would be
        return SummaryPlan(start=start, old_tokens=old_size, reason=WOULD_NOT_SHRINK)
    return SummaryPlan(start=start, old_tokens=old_size)


def smaller_budget(budget: int, error: str, config: CompactConfig) -> int:
    """The next chunk budget after a prompt-too-long answer: from the maximum the error states
    (the same caps as the configured window), else half; always smaller than before."""
    stated = layer2.stated_maximum(error)
    if stated is not None:
        from_stated = dataclasses.replace(config, window=stated).summary_budget
        if 0 < from_stated < budget:
            return from_stated
    return budget // 2


async def summarize_chunks(provider: Provider, groups: list[list[Message]], instructions: str,
                           config: CompactConfig) -> str:
    """One summary of ``groups``: in chunks, oldest first, each chunk's summary carried
    into the next request, when the whole does not fit one request. A prompt-too-long
    answer makes the failing chunk smaller (from the maximum the error states, else half)
    and tries again, at most :data:`SUMMARY_RETRIES` times per chunk."""
    budget = config.summary_budget
    queue = layer2.chunk(groups, budget, instructions)
    summary = ""
    retries = 0
    i = 0
    while i < len(queue):
        prompt = layer2.render(queue[i], 0, instructions, summary)
        try:
            completion = await complete(provider, layer2.SUMMARY_SYSTEM,  # never repeated:
                                        [Message(role="user", content=prompt)], [],
                                        cache=False)  # no cache write
        except PromptTooLong as exc:
            if retries >= SUMMARY_RETRIES:
                raise
            retries += 1
            budget = smaller_budget(budget, str(exc), config)
            if budget < MIN_CHUNK_TOKENS:
                raise CompactError("the provider accepts too little to summarise "
                                   f"anything ({exc})") from None
            queue[i:i + 1] = layer2.chunk(queue[i], budget, instructions)
            continue
        try:
            summary = layer2.extract_summary(completion.message.content)
        except layer2.SummaryError as exc:
            raise CompactError(str(exc)) from None
        i += 1
        retries = 0
    return summary


class NotCacheFriendly(Exception):
    """The cache-friendly request did not give a summary (it called a tool, or held no
    ``<summary>``); the transcript form is tried instead."""


async def summarize_in_place(provider: Provider, prefix: RequestPrefix,
                             messages: list[Message], instructions: str) -> str:
    """One summary of ``messages`` in a cache-friendly request: the system prompt, the tools
    and the conversation exactly as a turn of the session sends them (so the provider reads
    them from its prompt cache), then the instruction as the last user message."""
    prompt = layer2.cached_prompt(instructions, earlier_summary=bool(messages)
                                  and is_summary(messages[0]))
    completion = await complete(provider, prefix.system,
                                [*messages, Message(role="user", content=prompt)], prefix.tools,
                                environment=prefix.environment)
    if completion.message.tool_calls:
        raise NotCacheFriendly("the model called a tool instead of summarising")
    try:
        return layer2.extract_summary(completion.message.content)
    except layer2.SummaryError as exc:
        raise NotCacheFriendly(str(exc)) from None
