"""What a session costs in input tokens, against the ideal for the same requests (`make bench`).

A scripted 40-run session on the real workspace (agent loop, automatic compaction, memory
updates after each run) against the fake model with its prompt-cache simulation on
(Anthropic semantics: breakpoints, the 20-block lookback, writes and reads, 1,024-token
minimum). Every run reads a ~6 KB file and answers; the context window (48,000 tokens) makes
the session compact three times; every run ends with a memory update, three of which write a
note (so the memory index in the system prompt changes three times).

Billed input is in base-token equivalents: uncached input 1×, cache writes 1.25×, cache reads
0.1×. The ideal bills the same requests as an oracle would: the longest prefix a request shares
with any earlier request is read (0.1×), the part a later request reuses is written (1.25×),
the rest is plain input (1×). Reported per request kind (turn, summary, memory), twice: with
the summaries on the session's model (cache-friendly: the conversation as the turns send it,
the instruction last), with ``compact.model`` set to another model (the transcript form,
which no cache can serve), and with no memory note written (the system prompt never changes:
what the three index changes cost). Targets: total within 1.15× of the ideal; summary
requests read at least half their prompt from the cache.

Prints a table and writes ``bench/out/cost_bench.json``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from pseudoclaude.agent.approvals import ApprovalRequest, Decision
from pseudoclaude.config import load_settings
from pseudoclaude.events import CompactEvent
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.fake_model.cache import prefix_of
from pseudoclaude.workspace import Hooks, Workspace

OUT = Path(__file__).resolve().parent / "out"
RUNS = 40
WINDOW = 48_000
WRITE, READ = 1.25, 0.1
NOTE_RUNS = (8, 20, 32)  # the memory updates after these runs write a note

SUMMARY = ("<analysis>The session so far.</analysis>\n<summary>\n" + "\n".join(
    f"{i}. Section {i}: " + "details of the work so far, files and decisions. " * 6
    for i in range(1, 10)) + "\n</summary>")
ANSWER = "I read notes/design.md. " + "It describes the module layout and its tests. " * 20


def note(run: int) -> dict[str, Any]:
    return {"action": "create", "level": "project", "type": "project_knowledge",
            "title": f"Fact {run}", "summary": f"learned in run {run}",
            "content": f"Something learned in run {run}."}


def script(note_runs: tuple[int, ...]) -> dict[str, Any]:
    memory_notes = [{"when": {"has_tools": False, "last_user_contains": f"run {run:02d}:"},
                     "times": 1, "reply": {"text": json.dumps([note(run)])}}
                    for run in note_runs]
    return {"cache": True, "rules": [
        {"when": {"summary": True}, "reply": {"text": SUMMARY}},
        *memory_notes,
        {"when": {"has_tools": False}, "reply": {"text": "[]"}},
        {"when": {"last_is_tool_result": True}, "reply": {"text": ANSWER}},
        {"when": {}, "reply": {"text": "Let me read the notes.", "tool_calls": [
            {"name": "read_file", "arguments": {"path": "notes/design.md"}}]}},
    ]}


class Allow:
    async def ask(self, request: ApprovalRequest) -> Decision | None:
        return "allow_once"


def kind(record: dict[str, Any]) -> str:
    if record["reply"] == "rule 0":
        return "summary"
    return "turn" if record["body"].get("tools") and record["reply"] != "rule 0" else "memory"


def ideal(bodies: list[dict[str, Any]]) -> list[float]:
    """The oracle's bill of each request: shared with an earlier one 0.1×, reused by a later
    one 1.25×, the rest 1×."""
    prefixes = [prefix_of(b) for b in bodies]

    def longest(order: list[int]) -> dict[int, int]:
        seen: set[str] = set()
        out: dict[int, int] = {}
        for i in order:
            p = prefixes[i]
            out[i] = next((p.tokens[k] for k in range(len(p.keys) - 1, -1, -1)
                           if p.keys[k] in seen), 0)
            seen.update(p.keys)
        return out

    earlier = longest(list(range(len(bodies))))
    later = longest(list(range(len(bodies) - 1, -1, -1)))
    bills = []
    for i, p in enumerate(prefixes):
        total = p.tokens[-1] if p.tokens else 0
        read = earlier[i]
        written = max(0, later[i] - read)
        bills.append(read * READ + written * WRITE + (total - read - written))
    return bills


async def session(root: Path, fake: FakeModelServer, compact_model: str) -> tuple[int, int]:
    settings = load_settings(root, {
        "provider": "anthropic", "baseUrl": fake.base_url, "apiKey": "sk-bench",
        "model": "session-model", "contextWindow": WINDOW, "maxRetries": 0,
        "memory.enabled": True, "memory.userDir": str(root.parent / "user-memory"),
        **({"compact.model": compact_model} if compact_model else {})},
        home=root.parent / "home", env={})
    compactions = 0

    def count(_: str, event: Any) -> None:
        nonlocal compactions
        if isinstance(event, CompactEvent) and event.layer == 2:
            compactions += 1

    ws = Workspace(root, settings, approver=Allow(), hooks=Hooks(events=count))
    try:
        for run in range(1, RUNS + 1):
            _, result = await ws.run(f"run {run:02d}: look at notes/design.md and tell me "
                                     f"what part {run} of the design says.")
            if result.stop_reason != "completed":
                raise SystemExit(f"run {run} stopped: {result.stop_reason} {result.error}")
            await ws.memory.drain(30)
        notes = len(ws.memory.project.list_notes())
    finally:
        await ws.close()
    return compactions, notes


def measure(compact_model: str, note_runs: tuple[int, ...] = NOTE_RUNS) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="pseudoclaude-cost-"))
    try:
        root = tmp / "ws"
        (root / "notes").mkdir(parents=True)
        (root / "notes" / "design.md").write_text(
            "".join(f"Part {i}: the module layout, its interfaces and its tests.\n"
                    for i in range(100)))
        with FakeModelServer(script(note_runs)) as fake:
            compactions, notes = asyncio.run(session(root, fake, compact_model))
            records = [r for r in fake.requests if r.get("usage")]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    bills = ideal([r["body"] for r in records])
    rows: dict[str, dict[str, float]] = {}
    for record, best in zip(records, bills, strict=True):
        u = record["usage"]
        row = rows.setdefault(kind(record), {"requests": 0, "prompt": 0, "read": 0,
                                             "billed": 0.0, "ideal": 0.0})
        row["requests"] += 1
        row["prompt"] += u["input"] + u["cache_read"] + u["cache_write"]
        row["read"] += u["cache_read"]
        row["billed"] += u["input"] + WRITE * u["cache_write"] + READ * u["cache_read"]
        row["ideal"] += best
    total = {key: sum(r[key] for r in rows.values())
             for key in ("requests", "prompt", "read", "billed", "ideal")}
    rows["total"] = total
    return {"compact_model": compact_model or "(the session's)", "compactions": compactions,
            "notes": notes, "rows": rows}


def show(result: dict[str, Any]) -> None:
    print(f"\nsummaries on {result['compact_model']} model: {result['compactions']} "
          f"compactions, {result['notes']} memory notes written")
    print(f"{'kind':<8} {'requests':>8} {'prompt':>10} {'read':>7} {'billed':>10} "
          f"{'ideal':>10} {'ratio':>6}")
    for name, r in result["rows"].items():
        read = r["read"] / r["prompt"] if r["prompt"] else 0.0
        ratio = r["billed"] / r["ideal"] if r["ideal"] else 0.0
        print(f"{name:<8} {r['requests']:>8.0f} {r['prompt']:>10,.0f} {read:>7.0%} "
              f"{r['billed']:>10,.0f} {r['ideal']:>10,.0f} {ratio:>6.2f}")


def main() -> int:
    cached = measure("")
    other = measure("other-model")
    stable = measure("", note_runs=())  # what the three index changes cost
    for result in (cached, other, stable):
        show(result)
    OUT.mkdir(exist_ok=True)
    (OUT / "cost_bench.json").write_text(json.dumps([cached, other, stable], indent=2))
    rows = cached["rows"]
    total_ratio = rows["total"]["billed"] / rows["total"]["ideal"]
    summary_read = rows["summary"]["read"] / rows["summary"]["prompt"]
    ok = (cached["compactions"] >= 3 and cached["notes"] == len(NOTE_RUNS)
          and total_ratio <= 1.15 and summary_read >= 0.5)
    print(f"\ntotal {total_ratio:.3f}× the ideal (target <= 1.15), summaries read "
          f"{summary_read:.0%} of their prompt from the cache (target >= 50%): "
          f"{'ok' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
