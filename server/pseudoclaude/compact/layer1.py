"""Layer 1: spill large tool results to files, no model call (SPEC §4).

Before every model request, among the results not yet decided:
1. any result over the single limit is spilled;
2. then, per round (one assistant tool-call message and its results), the largest undecided
   results are spilled until the round's total is under the aggregate limit;
3. every other undecided result is frozen as kept: the request about to be sent carries it
   verbatim, so it stays verbatim from now on.
A spill writes the file first; only then is the decision recorded. A failed write leaves the
result undecided (it is retried next time) and is reported, never fatal.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pseudoclaude.compact.preview import make_preview, safe_name
from pseudoclaude.config import COMPACT_ROUND_BYTES, COMPACT_SINGLE_RESULT_BYTES
from pseudoclaude.conversation import Offload
from pseudoclaude.durable import atomic_write
from pseudoclaude.llm.types import Message


@dataclass
class Ledger:
    """Sticky Layer-1 decisions, by call id (restored from the session log on resume)."""

    offloads: dict[str, Offload] = field(default_factory=dict)
    kept: set[str] = field(default_factory=set)

    def decided(self, call_id: str) -> bool:
        return call_id in self.offloads or call_id in self.kept


@dataclass
class Layer1Result:
    offloads: list[Offload] = field(default_factory=list)
    keep: list[str] = field(default_factory=list)
    saved: dict[int, int] = field(default_factory=dict)  # message index -> bytes saved
    failed: dict[str, int] = field(default_factory=dict)  # call id -> index of its round
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Result:
    index: int
    round_start: int
    call_id: str
    content: str
    size: int


def _rounds(messages: Sequence[Message], base: int) -> list[list[_Result]]:
    """Tool results grouped by round; a result outside any round is a round of its own."""
    rounds: list[list[_Result]] = []
    current: list[_Result] | None = None
    current_start = base
    for offset, message in enumerate(messages):
        result = message.tool_result
        if result is None:
            current = None
            if message.tool_calls:
                current, current_start = [], base + offset
                rounds.append(current)
            continue
        item = _Result(base + offset, current_start if current is not None else base + offset,
                       result.call_id, result.content,
                       len(result.content.encode("utf-8", "surrogatepass")))
        if current is None:
            rounds.append([item])
        else:
            current.append(item)
    return rounds


class SpillWriter:
    """Writes spill files into one session's ``tool-results/`` folder."""

    def __init__(self, spill_dir: Path, label: Callable[[Path], str]) -> None:
        self.spill_dir = spill_dir
        self.label = label

    def write(self, call_id: str, content: str) -> Path:
        """Write ``content`` durably; never overwrite another result's file."""
        os.makedirs(self.spill_dir, mode=0o700, exist_ok=True)
        data = content.encode("utf-8", "surrogatepass")
        stem = safe_name(call_id)
        for n in range(1, 1000):
            path = self.spill_dir / (f"{stem}.txt" if n == 1 else f"{stem}-{n}.txt")
            if not path.exists():
                break
            if path.read_bytes() == data:
                return path  # the same result spilled before (e.g. a retry after a crash)
        atomic_write(path, data)
        return path


class DryRunSpill(SpillWriter):
    """A writer that writes nothing: the path a spill would get (for the preview)."""

    def write(self, call_id: str, content: str) -> Path:
        return self.spill_dir / f"{safe_name(call_id)}.txt"


def plan(
    messages: Sequence[Message],
    base: int,
    ledger: Ledger,
    spill: SpillWriter,
    *,
    single_limit: int = COMPACT_SINGLE_RESULT_BYTES.default,
    round_limit: int = COMPACT_ROUND_BYTES.default,
) -> Layer1Result:
    """Decide (and spill) the undecided results of ``messages`` (which start at ``base``).
    The limits are ``compact.singleResultBytes`` and ``compact.roundBytes``."""
    out = Layer1Result()
    spilled: set[str] = set()
    tried: set[str] = set()

    def offload(item: _Result) -> bool:
        tried.add(item.call_id)
        try:
            path = spill.write(item.call_id, item.content)
        except OSError as exc:
            out.failed[item.call_id] = item.round_start
            out.warnings.append(
                f"could not spill the result of {item.call_id} to {spill.spill_dir}: "
                f"{exc.strerror or exc}; it stays in the context for now"
            )
            return False
        label = spill.label(path)
        preview = make_preview(item.content, label)
        out.offloads.append(Offload(item.call_id, label, item.size, preview))
        out.saved[item.index] = item.size - len(preview.encode("utf-8", "surrogatepass"))
        spilled.add(item.call_id)
        return True

    rounds = _rounds(messages, base)
    for group in rounds:
        for item in group:
            known = ledger.offloads.get(item.call_id)
            if known is not None and item.content != known.preview:
                # decided before (e.g. the history was imported again): same preview, always
                out.offloads.append(known)
                out.saved[item.index] = item.size - len(known.preview.encode(
                    "utf-8", "surrogatepass"))
            elif not ledger.decided(item.call_id) and item.size > single_limit:
                offload(item)
    for group in rounds:
        total = sum(
            item.size for item in group
            if item.call_id not in ledger.offloads and item.call_id not in spilled
        )
        candidates = sorted(
            (i for i in group if not ledger.decided(i.call_id) and i.call_id not in spilled
             and i.call_id not in tried),
            key=lambda i: i.size, reverse=True,
        )
        for item in candidates:
            if total <= round_limit:
                break
            if offload(item):
                total -= item.size
    keep: dict[str, None] = {}  # ordered, and O(1) membership
    for group in rounds:
        for item in group:
            if (not ledger.decided(item.call_id) and item.call_id not in spilled
                    and item.call_id not in out.failed):
                keep[item.call_id] = None
    out.keep = list(keep)
    return out
