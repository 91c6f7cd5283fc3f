"""Memory watcher benchmark: edit-to-event latency of hand edits (SPEC §5: within 300 ms).

A real watchdog observer watches a project and a user store in a temporary folder. Each sample
is one hand edit of a ``MEMORY.md`` — an in-place write (``open(..., "w")``), an editor-style
atomic save (temp file + ``os.replace``), or a new note file — timed from just before the
write to the ``on_change(level, "hand-edit")`` callback, by which time the cached index has
been refreshed. The next edit starts only after the previous one was reported. Also measured:
a burst of 50 writes (must be reported once) and the manager's own writes (must not be
reported as hand edits).

Prints a table and writes ``bench/out/memory_bench.json``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from pseudoclaude.memory import MemoryManager
from pseudoclaude.memory.watcher import DEBOUNCE, QUIET

OUT = Path(__file__).resolve().parent / "out"
SAMPLES = 40
TIMEOUT = 5.0


class Probe:
    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.events: list[tuple[float, str, str]] = []

    def __call__(self, level: str, source: str) -> None:
        with self.cond:
            self.events.append((time.perf_counter(), level, source))
            self.cond.notify_all()

    def wait_hand_edit(self, after: int) -> float | None:
        deadline = time.monotonic() + TIMEOUT
        with self.cond:
            while True:
                for stamp, _, source in self.events[after:]:
                    if source == "hand-edit":
                        return stamp
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)

    def hand_edits(self) -> int:
        with self.cond:
            return sum(1 for _, _, s in self.events if s == "hand-edit")


def in_place(path: Path, i: int) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(f"- [project_knowledge] In place {i} — edited (project_knowledge_a.md)\n")


def atomic_save(path: Path, i: int) -> None:
    fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".MEMORY.md.", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(f"- [user_preference] Atomic {i} — saved (user_preference_b.md)\n")
    os.replace(temp, path)


def new_note(path: Path, i: int) -> None:
    (path.parent / f"project_knowledge_hand-{i}.md").write_text(
        f"---\ntype: project_knowledge\ntitle: Hand {i}\n---\nbody\n", encoding="utf-8")


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(probe: Probe, edit: Callable[[Path, int], None], path: Path) -> list[float]:
    latencies = []
    for i in range(SAMPLES):
        seen = len(probe.events)
        start = time.perf_counter()
        edit(path, i)
        stamp = probe.wait_hand_edit(seen)
        if stamp is None:
            raise SystemExit(f"{edit.__name__}: no event within {TIMEOUT} s")
        latencies.append((stamp - start) * 1000)
        time.sleep(0.02)
    return latencies


def summary(values: list[float]) -> dict[str, float]:
    return {"samples": len(values), "p50_ms": round(statistics.median(values), 1),
            "p95_ms": round(percentile(values, 0.95), 1), "max_ms": round(max(values), 1)}


def main() -> int:
    OUT.mkdir(exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="memory-bench-", dir=OUT))
    probe = Probe()
    manager = MemoryManager(tmp / "project", tmp / "user", on_change=probe)
    watcher = manager.start_watching()
    try:
        rows = {
            "in_place": summary(measure(probe, in_place, manager.project.index_path)),
            "atomic_save": summary(measure(probe, atomic_save, manager.user.index_path)),
            "new_note": summary(measure(probe, new_note, manager.project.index_path)),
        }
        # a burst of 50 writes: reported once
        time.sleep(0.5)
        before, bursts = probe.hand_edits(), watcher.bursts
        for i in range(50):
            in_place(manager.project.index_path, 1000 + i)
        time.sleep(1.5)
        burst = {"writes": 50, "hand_edit_events": probe.hand_edits() - before,
                 "bursts": watcher.bursts - bursts}
        # own writes: never reported as hand edits
        before = probe.hand_edits()

        async def own() -> None:
            for i in range(10):
                await manager.remember(f"fact {i}", "project", title=f"Fact {i}")

        asyncio.run(own())
        time.sleep(1.5)
        own_writes = {"remembers": 10, "hand_edit_events": probe.hand_edits() - before}
    finally:
        manager.stop_watching()
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"memory watcher, debounce {DEBOUNCE * 1000:.0f} ms (quiet {QUIET * 1000:.0f} ms)")
    print(f"{'hand edit':>12} {'samples':>8} {'p50':>9} {'p95':>9} {'max':>9}")
    for name, row in rows.items():
        print(f"{name:>12} {row['samples']:>8} {row['p50_ms']:>6} ms {row['p95_ms']:>6} ms "
              f"{row['max_ms']:>6} ms")
    worst = max(r["p95_ms"] for r in rows.values())
    print(f"target: p95 edit-to-event within 300 ms: {'ok' if worst <= 300 else 'MISSED'}")
    print(f"burst of 50 writes: {burst['hand_edit_events']} hand-edit event(s), "
          f"{burst['bursts']} refresh(es)")
    print(f"own writes (10 remembers): {own_writes['hand_edit_events']} hand-edit event(s)")
    (OUT / "memory_bench.json").write_text(json.dumps({
        "debounce_ms": DEBOUNCE * 1000, "quiet_ms": QUIET * 1000, "latency": rows,
        "burst": burst, "own_writes": own_writes, "python": sys.version.split()[0],
    }, indent=2) + "\n")
    ok = worst <= 300 and burst["hand_edit_events"] == 1 and own_writes["hand_edit_events"] == 0
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
