"""The compaction runtime of one session: estimate, Layer 1, Layer 2, the breaker (SPEC §4).

:class:`CompactRuntime` is the facade; the breaker is :mod:`.breaker`, the undo's walk over
the log's past :mod:`.undo`, the preview :mod:`.dryrun`, the summary :mod:`.summarize`.

``manage_context()`` runs before every model request: Layer 1, then Layer 2 when the anchored
estimate reaches the threshold. ``compact()`` is the manual form: Layer 1, then Layer 2
whatever the threshold or the breaker says. Blocking work (spill files, the log's fsync) runs
in a worker thread; the summary is one model call without tools.

Thresholds for small windows: the spec's reserve (20,000) and margin (13,000) would make the
threshold of a window under 33,000 tokens negative, and compaction would run before every
request. They are therefore capped at a quarter and an eighth of the window (which changes
nothing for windows of 104,000 tokens and more), and the recent window kept verbatim is capped
at a quarter of the threshold, so a compacted history sits well under the threshold.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, cast

from msgspec import UNSET

from pseudoclaude.compact import factcheck, layer2
from pseudoclaude.compact.breakdown import (
    SKILLS,
    SUMMARY,
    MessageSizes,
    RequestOverhead,
    TokenBreakdown,
)
from pseudoclaude.compact.breaker import Breaker
from pseudoclaude.compact.dryrun import preview_plan
from pseudoclaude.compact.estimate import (
    Anchor,
    estimate_messages,
    tokens_for_bytes,
)
from pseudoclaude.compact.layer1 import Layer1Result, Ledger, SpillWriter, plan
from pseudoclaude.compact.plan import WOULD_NOT_SHRINK, CompactPlan, PreviewReason, UndoOutcome
from pseudoclaude.compact.summarize import (
    NotCacheFriendly,
    RequestPrefix,
    plan_summary,
    smaller_budget,
    summarize_chunks,
    summarize_in_place,
)
from pseudoclaude.compact.types import (
    ASSUMED_SUMMARY_TOKENS,
    BREAKER_LIMIT,
    MIN_CHUNK_TOKENS,
    SUMMARY_OVERHEAD,
    SUMMARY_RESERVE_TOKENS,
    SUMMARY_RETRIES,
    CompactConfig,
    CompactError,
    CompactOutcome,
    ContextState,
    NoGain,
)
from pseudoclaude.compact.undo import restore_decisions, undo_plan
from pseudoclaude.conversation import Conversation, PastReplace
from pseudoclaude.events import CompactEvent, Emit, FactCheck, WarningEvent, ignore
from pseudoclaude.llm.errors import PromptTooLong, ProviderError
from pseudoclaude.llm.provider import Provider
from pseudoclaude.llm.types import Message, Usage

ProviderSource = Callable[[], Awaitable[Provider]]
PrefixSource = Callable[[], Awaitable[RequestPrefix | None]]
"""What the session's turns send before the messages (None: not known), for summaries that
read the provider's prompt cache."""
log = logging.getLogger(__name__)


class CompactHooks(Protocol):
    """Told before and after a summary (the ``PreCompact`` and ``PostCompact`` hooks);
    ``trigger`` is ``auto`` or ``manual``."""

    async def compacting(self, trigger: str, before_tokens: int, instructions: str) -> None: ...

    async def compacted(self, trigger: str, before_tokens: int, after_tokens: int) -> None: ...


__all__ = [  # the public names, re-exported from the modules they now live in
    "ASSUMED_SUMMARY_TOKENS", "BREAKER_LIMIT", "MIN_CHUNK_TOKENS", "SUMMARY_OVERHEAD",
    "SUMMARY_RESERVE_TOKENS", "SUMMARY_RETRIES", "CompactConfig", "CompactError",
    "CompactHooks", "CompactOutcome", "CompactRuntime", "ContextState", "Layer1Pending", "NoGain",
    "PrefixSource", "ProviderSource", "RequestPrefix", "Summarized", "smaller_budget",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class Layer1Pending:
    """The messages Layer 1 has not decided yet: ``messages`` from index ``start`` of
    generation ``generation``, whose length was ``length``."""

    start: int
    generation: int
    length: int
    messages: list[Message]


@dataclass(frozen=True, slots=True, kw_only=True)
class Summarized:
    """A summary applied: the estimates around it and its fact check."""

    before_tokens: int
    after_tokens: int
    fact_check: FactCheck


class CompactRuntime:
    """The facade of one session's compaction: the estimate and its anchor, Layer 1 (spills),
    Layer 2 (:mod:`.summarize`), the preview (:mod:`.dryrun`), undo and the breaker."""

    def __init__(
        self,
        conversation: Conversation,
        *,
        config: CompactConfig,
        spill_dir: Path,
        workspace: Path | None = None,
        provider: ProviderSource | None = None,
        prefix: PrefixSource | None = None,
        ledger: Ledger | None = None,
        emit: Emit = ignore,
    ) -> None:
        self.conversation = conversation
        self.config = config
        self.carry: Callable[[], str] = lambda: ""
        """What every summary must carry besides the conversation (the session's task
        list), added to its instructions."""
        self.ledger = ledger or Ledger()
        self.emit = emit
        self._provider = provider
        self._prefix = prefix
        self._spill = SpillWriter(spill_dir, self._label)
        self._workspace = workspace.resolve() if workspace else None
        # sizes: bytes (by category) of the first `_sized` messages of generation `_sized_gen`
        self._sized_gen, self._sized = -1, 0
        self._sizes = MessageSizes()
        self._overhead = RequestOverhead()  # the system prompt's parts and the tool schemas
        self._lock = threading.RLock()  # sizes and anchor: Layer 1 runs in a worker thread
        # the anchor: provider tokens for the first `count` messages, and their bytes then
        self._anchor: Anchor | None = None
        self._anchor_gen, self._anchor_bytes = -1, 0
        # Layer 1 has decided everything before `_scanned` (in generation `_scanned_gen`)
        self._scanned_gen, self._scanned = -1, 0
        self._retry_from: int | None = None  # earliest round with a failed spill
        self.breaker = Breaker()
        self._undone = False  # after an undo, automatic compaction waits for window − reserve
        self.hooks: CompactHooks | None = None
        """Told before and after each summary (the session's hooks)."""

    # -- estimate ----------------------------------------------------------------------------
    def _label(self, path: Path) -> str:
        if self._workspace is not None:
            with contextlib.suppress(ValueError):
                return path.resolve().relative_to(self._workspace).as_posix()
        return str(path)

    def _sync_sizes(self) -> int:
        """Bring the byte counts up to date with the conversation (O(new messages))."""
        with self._lock:
            generation = self.conversation.generation
            start = self._sized if generation == self._sized_gen else 0
            got, length, tail = self.conversation.tail(start)
            if got != generation and start:  # a replace came in between: count afresh
                start = 0
                got, length, tail = self.conversation.tail(0)
            if start == 0:
                self._sizes.reset()
            self._sizes.add(tail, self.ledger.offloads)
            self._sized_gen, self._sized = got, length
            return length

    def _live_anchor(self) -> Anchor | None:
        anchor = self._anchor
        if anchor is not None and self._anchor_gen == self._sized_gen and (
                anchor.count <= self._sized):
            return anchor
        return None

    def estimate(self) -> int:
        """The whole next request (SPEC §4, §11): anchored, the provider's tokens for the
        messages up to the anchor (system prompt and tools included) plus the estimate of
        the messages after it; else the byte estimate of the request overhead and all
        messages."""
        with self._lock:
            self._sync_sizes()
            anchor = self._live_anchor()
            if anchor is not None:
                return anchor.tokens + tokens_for_bytes(self._sizes.total - self._anchor_bytes)
            return tokens_for_bytes(self._sizes.total + self._overhead.total)

    def record_usage(self, usage: Usage | None) -> None:
        """Anchor the estimate to a model turn just appended (no usage: keep the old one)."""
        if usage is None:
            return
        with self._lock:
            length = self._sync_sizes()
            anchor = Anchor.from_usage(usage, length)
            if anchor is not None:
                self._anchor, self._anchor_gen, self._anchor_bytes = (
                    anchor, self._sized_gen, self._sizes.total)

    def restore_anchor(self, tokens: int, count: int, saved: Sequence[int] = ()) -> None:
        """The anchor a resumed session had: ``tokens`` (a usage total) for its first
        ``count`` messages, less the estimate of each later Layer-1 saving in ``saved``
        (bytes), as :meth:`record_usage` and Layer 1 left it in the live session."""
        with self._lock:
            length = self._sync_sizes()
            if tokens <= 0 or not 0 < count <= length:
                return
            for n in saved:
                tokens = max(0, tokens - tokens_for_bytes(n))
            self._anchor, self._anchor_gen, self._anchor_bytes = (
                Anchor(tokens, count), self._sized_gen, self._sizes.prefix(count))

    def set_request_overhead(self, *, system: int | None = None, rules: int | None = None,
                             memory: int | None = None, tools: int | None = None,
                             skills: int | None = None) -> None:
        """What the next request carries besides the messages, in bytes: the system prompt's
        identity and tool instructions, its ``PSEUDOCLAUDE.md`` rules, its memory index, its
        skill list, and the tool schemas (None: unchanged). Counted by the byte estimate and
        the breakdown; an anchored estimate already holds them (the provider counted them)."""
        old = self._overhead
        self._overhead = RequestOverhead(
            system=old.system if system is None else system,
            rules=old.rules if rules is None else rules,
            memory=old.memory if memory is None else memory,
            skills=old.skills if skills is None else skills,
            tools=old.tools if tools is None else tools)

    @property
    def request_overhead(self) -> RequestOverhead:
        return self._overhead

    @property
    def failures(self) -> int:
        """Automatic compactions failed in a row (the breaker's count)."""
        return self.breaker.failures

    @failures.setter
    def failures(self, value: int) -> None:
        self.breaker.failures = value

    @property
    def tripped(self) -> bool:
        return self.breaker.tripped

    def state(self) -> ContextState:
        """The context state with its breakdown: O(new messages) (the sizes are kept)."""
        with self._lock:
            estimate = self.estimate()
            overhead = self._overhead
            by = self._sizes.by_category
            counts = [overhead.system, overhead.rules, overhead.memory,
                      overhead.skills + by[SKILLS], overhead.tools, *by[SUMMARY:]]
        return ContextState(
            message_count=len(self.conversation),
            estimated_tokens=estimate,
            context_window=self.config.window,
            auto_compact_threshold=self.config.threshold,
            auto_compact_failures=self.failures,
            auto_compact_tripped=self.tripped,
            breakdown=TokenBreakdown.scaled(counts, estimate, window=self.config.window,
                                       reserved=self.config.reserved),
        )

    # -- Layer 1 -----------------------------------------------------------------------------
    def _layer1_pending(self) -> Layer1Pending | None:
        """What Layer 1 has not looked at yet, or None when that holds no tool result (then the
        cursor simply moves on)."""
        generation = self.conversation.generation
        start = self._scanned if generation == self._scanned_gen else 0
        if self._retry_from is not None:
            start = min(start, self._retry_from)
        generation, length, tail = self.conversation.tail(start)
        if not any(m.tool_result is not None for m in tail):
            self._scanned_gen, self._scanned = generation, length
            return None
        return Layer1Pending(start=start, generation=generation, length=length, messages=tail)

    def _layer1(self, pending: Layer1Pending) -> int:
        """Spill and freeze the undecided results (blocking: run in a thread)."""
        generation = pending.generation
        before = self.estimate()
        result: Layer1Result = plan(
            pending.messages, pending.start, self.ledger, self._spill,
            single_limit=self.config.single_result_bytes, round_limit=self.config.round_bytes,
        )
        for message in result.warnings:
            self.emit(WarningEvent(message))
        changed = 0
        if result.offloads or result.keep:
            changed = self.conversation.apply_offloads(result.offloads, result.keep)
            for offload in result.offloads:
                self.ledger.offloads[offload.call_id] = offload
            self.ledger.kept.update(result.keep)
            self._account_savings(result.saved, generation)
        self._scanned_gen, self._scanned = generation, pending.length
        self._retry_from = min(result.failed.values()) if result.failed else None
        if result.offloads:
            self.emit(CompactEvent(layer=1, before_tokens=before, after_tokens=self.estimate(),
                                   offloaded=len(result.offloads)))
        return changed

    async def _run_layer1(self) -> None:
        pending = self._layer1_pending()  # O(new messages), on the loop
        if pending is not None:  # spill files and log lines: off the loop
            await asyncio.to_thread(self._layer1, pending)

    def _account_savings(self, saved: dict[int, int], generation: int) -> None:
        with self._lock:
            if self._sized_gen != generation:
                return  # sizes will be recomputed from scratch
            for index, n in saved.items():
                self._sizes.save(index, n)  # the result now counts as spilled
                anchor = self._anchor
                if anchor is not None and self._anchor_gen == generation and (
                        index < anchor.count):
                    self._anchor_bytes -= n
                    self._anchor = Anchor(max(0, anchor.tokens - tokens_for_bytes(n)),
                                          anchor.count)

    # -- Layer 2 -----------------------------------------------------------------------------
    async def _summarize(self, instructions: str, trigger: str = "manual"
                         ) -> Summarized | PreviewReason:
        """Replace old context with a summary; else why nothing is summarised (nothing old, or
        an old part too small for a summary to shrink: no model call then).

        Raises CompactError (or a ProviderError) when no summary could be made or applied.
        """
        if self._provider is None:
            raise CompactError("no model is configured to write the summary")
        generation, length, messages = self.conversation.tail(0)
        before = self.estimate()
        planned = plan_summary(messages, self.config)
        if planned.reason:
            return cast(PreviewReason, planned.reason)
        start = planned.start
        old = messages[:start]
        if self.hooks is not None:
            await self.hooks.compacting(trigger, before, instructions)
        provider = await self._provider()
        carried = self.carry()
        if carried:
            instructions = f"{instructions}\n\n{carried}".strip()
        summary = await self._summary_in_place(provider, messages, before, instructions)
        if summary is None:
            summary = await summarize_chunks(provider, layer2.units(old), instructions,
                                             self.config)
        counts = FactCheck()
        if self.config.fact_check:
            checked = factcheck.check(summary, factcheck.gather(old))
            summary, counts = checked.summary, checked.counts
        new = layer2.assemble(summary, messages[start:])
        # Compare like with like: the anchored estimate also counts the system prompt and the
        # tools (and whatever usage the provider reported), the new history is estimated.
        whole, new_size = estimate_messages(messages), estimate_messages(new)
        if new_size >= whole:
            raise NoGain(
                f"the summary would not shrink the conversation ({whole} -> {new_size} "
                "estimated tokens); not applied")
        if not await asyncio.to_thread(self._replace, generation, length, new):
            raise CompactError("the conversation changed while it was being summarised")
        self._undone = False
        after = self.estimate()
        self.emit(CompactEvent(layer=2, before_tokens=before, after_tokens=after,
                               fact_check=counts))
        if self.hooks is not None:
            await self.hooks.compacted(trigger, before, after)
        return Summarized(before_tokens=before, after_tokens=after, fact_check=counts)

    async def _summary_in_place(self, provider: Provider, messages: list[Message],
                                before: int, instructions: str) -> str | None:
        """The summary from one cache-friendly request (the conversation as the session's
        turns send it, the instruction last), or None when it cannot be used: another model
        than the session's (its cache would not have the prefix), a conversation too large for
        one request with room for the answer, or a reply without a summary. The transcript
        form (:func:`summarize_chunks`) then makes it."""
        prefix = await self._prefix() if self._prefix is not None else None
        if prefix is None or prefix.model != provider.model:
            return None
        prompt = tokens_for_bytes(len(layer2.cached_prompt(instructions).encode()))
        if before + prompt > self.config.undo_threshold:
            return None
        try:
            return await summarize_in_place(provider, prefix, messages, instructions)
        except (NotCacheFriendly, PromptTooLong) as exc:
            log.info("cache-friendly summary not used (%s); summarising the transcript", exc)
            return None

    # -- preview and undo ----------------------------------------------------------------------
    async def preview(self, instructions: str = "") -> CompactPlan:
        """What :meth:`compact` would do now: Layer 1 simulated (nothing written), then the
        same planner. No model call; the conversation and the log are untouched."""
        _, _, messages = self.conversation.tail(0)
        before = self.estimate()
        ledger = Ledger(dict(self.ledger.offloads), set(self.ledger.kept))
        return await asyncio.to_thread(  # O(history)
            preview_plan, messages, ledger, before, self.config,
            spill_dir=self._spill.spill_dir, label=self._label)

    async def undo(self, history: Callable[[], list[PastReplace]]) -> UndoOutcome:
        """Bring back what the last compaction summarised, in place of its summary pair
        (messages added since stay after them), committed as one ``undo`` replace. A second
        undo goes one compaction further back. ``history`` reads the log's replaces."""
        before = self.estimate()
        past = await asyncio.to_thread(history)
        generation, length, current = self.conversation.tail(0)
        planned = undo_plan(past, current)
        if planned.restored is None or planned.target is None:
            return UndoOutcome(restored=False, before_tokens=before, after_tokens=before,
                               message_count=len(current), reason=planned.reason or UNSET)
        if not await asyncio.to_thread(self._apply_undo, generation, length, planned.restored,
                                       planned.target):
            raise CompactError("the conversation changed during the undo; try again")
        after = self.estimate()  # no compact event: editors learn of it from the result and
        return UndoOutcome(restored=True, before_tokens=before, after_tokens=after,  # contextUsage
                           message_count=len(self.conversation))

    def _apply_undo(self, generation: int, length: int, restored: list[Message],
                    target: PastReplace) -> bool:
        current_gen, _, appended = self.conversation.tail(length)
        if current_gen != generation:
            return False
        history = [*restored, *appended]
        restore_decisions(self.ledger, target, history)
        self._commit(history, "undo")
        self._undone = True
        return True

    def _replace(self, generation: int, length: int, new: list[Message]) -> bool:
        current_gen, _, appended = self.conversation.tail(length)
        if current_gen != generation:
            return False
        self._commit([*new, *appended], "compact")
        return True

    def rewind_to(self, messages: list[Message], turn: int) -> None:
        """The conversation taken back to before prompt ``turn``: one ``replace`` of reason
        ``rewind`` naming it (blocking: the log's fsync)."""
        self._commit(list(messages), "rewind", turn=turn)
        self._undone = False

    def _commit(self, history: list[Message], reason: str, *, turn: int | None = None) -> None:
        """One ``replace`` line, then the Layer-1 decisions that still matter again."""
        self.conversation.replace(reason, history, turn=turn)
        # The log's ledger restarts at a replace: record again the decisions that still
        # matter, so a resumed session keeps them; forget the others.
        present = {m.tool_result.call_id for m in history if m.tool_result is not None}
        self.ledger.offloads = {k: v for k, v in self.ledger.offloads.items() if k in present}
        self.ledger.kept &= present
        self.conversation.apply_offloads(list(self.ledger.offloads.values()),
                                         sorted(self.ledger.kept))
        self._anchor = None  # a replace resets the estimate to a full one
        self._scanned_gen, self._scanned = -1, 0  # re-scan once: decided results are skipped
        self._retry_from = None

    # -- entry points ------------------------------------------------------------------------
    async def manage_context(self) -> None:
        """Before every model request. Never raises for a compaction problem: failures are
        reported as events and the request goes ahead uncompacted."""
        try:
            await self._run_layer1()
        except Exception as exc:  # a bug or a log write failure: report, do not end the run
            self.emit(WarningEvent(f"tool-result offloading failed: {exc}"))
        if not self.config.auto or self.tripped:
            return
        threshold = self.config.undo_threshold if self._undone else self.config.threshold
        if self.estimate() < threshold:
            return
        try:
            done = await self._summarize("", "auto")
        except (CompactError, ProviderError) as exc:
            self.breaker.failed(exc, self.emit)
            return
        if isinstance(done, Summarized):
            self.breaker.succeeded()

    async def compact(self, instructions: str = "") -> CompactOutcome:
        """Manual compaction: bypasses the threshold and the breaker; a success re-arms it."""
        before = self.estimate()
        offloaded = len(self.ledger.offloads)
        await self._run_layer1()
        offloaded = len(self.ledger.offloads) - offloaded
        try:
            done = await self._summarize(instructions)
        except NoGain as exc:  # the model's summary was no smaller: the outcome says so
            log.info("manual compaction: %s", exc)
            done = WOULD_NOT_SHRINK
        if not isinstance(done, Summarized):
            return CompactOutcome(before_tokens=before, after_tokens=self.estimate(),
                                  offloaded=offloaded, summarized=False, reason=done)
        self.breaker.rearm()
        return CompactOutcome(before_tokens=before, after_tokens=done.after_tokens,
                              offloaded=offloaded, summarized=True, fact_check=done.fact_check)
