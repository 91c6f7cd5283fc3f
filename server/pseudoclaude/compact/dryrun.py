"""The preview of a compaction (SPEC §11): Layer 1 simulated on a copy (nothing written), then
the same planner as the real compaction; no model call."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import msgspec

from pseudoclaude.compact.estimate import tokens_for_bytes
from pseudoclaude.compact.layer1 import DryRunSpill, Ledger, plan
from pseudoclaude.compact.plan import CompactPlan, PreviewReason, SpillPreview
from pseudoclaude.compact.summarize import estimated_summary, plan_summary
from pseudoclaude.compact.types import CompactConfig
from pseudoclaude.llm.types import Message


@dataclass(frozen=True, slots=True, kw_only=True)
class SimulatedLayer1:
    """Layer 1 on a copy: the messages with previews, the results it would spill, their
    bytes, and the bytes it would save."""

    messages: list[Message]
    spilled: int
    spilled_bytes: int
    saved_bytes: int


def simulate_layer1(messages: list[Message], ledger: Ledger, config: CompactConfig, *,
                    spill_dir: Path, label: Callable[[Path], str]) -> SimulatedLayer1:
    dry = DryRunSpill(spill_dir, label)
    result = plan(messages, 0, ledger, dry, single_limit=config.single_result_bytes,
                  round_limit=config.round_bytes)
    fresh = [o for o in result.offloads if o.call_id not in ledger.offloads]
    previews = {o.call_id: o.preview for o in result.offloads}
    out = [msgspec.structs.replace(m, tool_result=msgspec.structs.replace(
               m.tool_result, content=previews[m.tool_result.call_id]))
           if m.tool_result is not None and m.tool_result.call_id in previews else m
           for m in messages]
    return SimulatedLayer1(messages=out, spilled=len(fresh),
                           spilled_bytes=sum(o.bytes for o in fresh),
                           saved_bytes=sum(result.saved.values()))


def preview_plan(messages: list[Message], ledger: Ledger, before: int, config: CompactConfig, *,
                 spill_dir: Path, label: Callable[[Path], str]) -> CompactPlan:
    """What a compaction would do to ``messages`` (estimated at ``before`` tokens)."""
    sim = simulate_layer1(messages, ledger, config, spill_dir=spill_dir, label=label)
    simulated = sim.messages
    planned = plan_summary(simulated, config)
    start = planned.start
    after_layer1 = max(0, before - tokens_for_bytes(sim.saved_bytes))
    kept = len(simulated) - start
    spill = SpillPreview(results=sim.spilled, bytes=sim.spilled_bytes)
    if planned.reason:
        return CompactPlan(would_summarize=False, before_tokens=before,
                           estimated_after_tokens=after_layer1, summarized_messages=0,
                           kept_messages=len(simulated), first_kept_index=0,
                           spill=spill, reason=cast(PreviewReason, planned.reason))
    # The same decision the compaction makes before its model call: the estimated summary is
    # smaller than the old part (the compaction then applies the real summary only if it
    # shrinks the conversation, which no preview can know).
    after = max(0, after_layer1 - planned.old_tokens + estimated_summary(planned.old_tokens))
    return CompactPlan(would_summarize=True, before_tokens=before, estimated_after_tokens=after,
                       summarized_messages=start, kept_messages=kept, first_kept_index=start,
                       spill=spill)
