"""The context and the memory as text: the views the CLI prints and ACP's ``/context`` and
``/memory`` show (one wording, over the wire results)."""

from __future__ import annotations

from pseudoclaude.api import protocol as p
from pseudoclaude.memory.index import same_text
from pseudoclaude.words import plural


def describe_context(c: p.ContextResult) -> str:
    share = c.estimated_tokens / c.context_window if c.context_window else 0.0
    lines = [f"session: {c.session_id or '(none yet)'} · {plural(c.message_count, 'message')}",
             f"context: {c.estimated_tokens:,} of {c.context_window:,} tokens ({share:.0%}); "
             f"automatic compaction at {c.auto_compact_threshold:,}"]
    if c.auto_compact_tripped:
        lines.append(f"automatic compaction is off after {c.auto_compact_failures} failures "
                     "in a row (a manual compact turns it back on)")
    elif c.auto_compact_failures:
        lines.append("automatic compaction failed "
                     f"{plural(c.auto_compact_failures, 'time')} in a row")
    lines.append("")
    lines.extend(breakdown_table(c.breakdown, c.context_window))
    return "\n".join(lines)


BREAKDOWN_ROWS = (
    ("system", "system"), ("rules", "rules"), ("memory", "memory"), ("tools", "tools"),
    ("summary", "summary"), ("messages", "messages"), ("tool calls", "tool_calls"),
    ("tool results", "tool_results"), ("spilled", "spilled"), ("free", "free"),
    ("reserved", "reserved"))
"""Label and field of each row of the breakdown table, in the order of SPEC §11."""


def breakdown_table(b: p.Breakdown, window: int) -> list[str]:
    """What fills the context, one row per category: tokens and share of the window (the
    first nine add up to the estimate; ``free`` and ``reserved`` are beside them)."""
    rows = [(label, getattr(b, name)) for label, name in BREAKDOWN_ROWS]
    width = max(len(f"{tokens:,}") for _, tokens in rows)
    lines = [f"{'category':<13} {'tokens':>{width}}   share"]
    for label, tokens in rows:
        share = tokens / window if window else 0.0
        lines.append(f"{label:<13} {tokens:>{width},} {share:>7.1%}")
    return lines


def describe_memory(m: p.MemoryShowResult) -> str:
    lines: list[str] = []
    for store in m.stores:
        lines.append(f"{store.level} memory ({store.dir}): {plural(len(store.notes), 'note')}")
        lines += [f"  [{n.type}] {n.title}"
                  + ("" if not n.summary or same_text(n.title, n.summary) else f" — {n.summary}")
                  + f" ({n.filename})" for n in store.notes]
    lines.append("")
    lines.append("index in the system prompt"
                 + (" (truncated):" if m.truncated else ":") if m.index else
                 "the memory index is empty")
    if m.index:
        lines.append(m.index.rstrip("\n"))
    h = m.health
    share = max(h.lines / h.max_lines, h.bytes / h.max_bytes) if h.max_lines and h.max_bytes \
        else 0.0
    lines += ["", f"index size: {h.lines}/{h.max_lines} lines, {h.bytes:,}/{h.max_bytes:,} "
                  f"bytes ({share:.0%} of the limit)"]
    return "\n".join(lines)
