"""Session log benchmark (`make bench`): fast resume, full replay, durable appends.

1. Builds a ~1 GiB log (``--size-mb``) of ~1 KiB entries (user and assistant text, tool calls,
   tool results, offload and keep lines) with one ``replace`` 1,000 entries from the end.
2. Resume time with the fast path (backward scan to the last replace, then repair), median of
   several runs; full-replay throughput, median of several runs each in a fresh process (as a
   resume after a restart), beside the raw read throughput of the same file (1 MiB reads).
   The file is in the page cache for every measurement.
3. Durable appends per second (SessionWriter, fsync per line, 1 KiB messages) beside a bare
   ``os.write`` + ``os.fsync`` loop of the same bytes on the same disk.
4. Fast resume of a log another encoder wrote (every line with ``json.dumps`` default
   separators and its keys reversed, so ``type`` comes last): the same size of history, a
   replace, 1,000 live entries, against a log of that live state alone (header, replace,
   tail). The resume must not depend on the history: target within 1.5x.
   ``--only spaced`` runs just this case (and writes ``session_bench_spaced.json``).

Prints a table and writes ``bench/out/session_bench.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from pseudoclaude.llm.types import Message, ToolCall, ToolResult
from pseudoclaude.session import SessionStore, SessionWriter, load_session, replay_file
from pseudoclaude.session.codec import (
    KeepEntry,
    MessageEntry,
    OffloadEntry,
    ReplaceEntry,
    SessionEntry,
    encode,
)

OUT = Path(__file__).resolve().parent / "out"
SID = "20260101-000000-beef"
SID_SPACED = "20260101-000000-cafe"  # history + replace + tail, spelled by another encoder
SID_LIVE = "20260101-000001-cafe"  # the same replace + tail alone
Spell = Callable[[Any], bytes]


def spaced(entry: object) -> bytes:
    """The line another encoder could write: ``json.dumps`` default separators (``", "``,
    ``": "``) and the keys reversed, so ``type`` comes last."""
    d = msgspec.to_builtins(entry)
    rest = {k: d[k] for k in reversed(d) if k != "type"}
    return (json.dumps({**rest, "type": d["type"]}) + "\n").encode()


def _entries(rng: random.Random, n: int, start: int,
             spell: Spell = encode) -> list[bytes]:
    """A realistic mix averaging about 1 KiB a line: prompts, answers, tool rounds with
    results of a few KiB, an offload (a 2 KiB preview) and a keep line per round."""
    lines = []
    text = "lorem ipsum dolor sit amet, consectetur adipiscing elit; "
    for i in range(start, start + n):
        kind = i % 8
        ts = 1.7e9 + i
        if kind == 0:
            e: object = MessageEntry(role="user", content=text * rng.randint(2, 12), ts=ts)
        elif kind in (1, 4):
            e = MessageEntry(role="assistant", content=text * rng.randint(0, 4), ts=ts,
                             tool_calls=(ToolCall(f"call_{i}", "read_file",
                                                  {"path": f"src/m{i}.py", "limit": 200}),))
        elif kind in (2, 5):
            e = MessageEntry(role="user", ts=ts, tool_result=ToolResult(
                f"call_{i - 1}", "read_file", text * rng.randint(5, 40)))
        elif kind == 3:
            e = OffloadEntry(f"call_{i - 1}", f"tool-results/call_{i - 1}.txt", 60000,
                             text * 36, ts)
        elif kind == 6:
            e = KeepEntry([f"call_{i - 1}"], ts)
        else:
            e = MessageEntry(role="assistant", content=text * rng.randint(4, 30), ts=ts)
        lines.append(spell(e))
    return lines


def build_log(path: Path, size_mb: int, spell: Spell = encode,
              live_only: Path | None = None) -> tuple[int, int]:
    """Write the benchmark log, each line made by ``spell``; returns (entries, bytes).
    With ``live_only``, also write there a log of the header and the live part alone."""
    rng = random.Random(1)
    path.parent.mkdir(parents=True, exist_ok=True)
    target = size_mb * 1024 * 1024
    count = 0
    with open(path, "wb") as f:
        header = spell(SessionEntry(version=1, id=path.parent.name,
                                    created="2026-01-01T00:00:00+00:00"))
        f.write(header)
        written = 0
        tail_entries = 1000
        while written < target - tail_entries * 1000:
            chunk = b"".join(_entries(rng, 8000, count, spell))
            f.write(chunk)
            written += len(chunk)
            count += 8000
        summary = [Message(role="user", content="summary of the work so far " * 20),
                   Message(role="assistant", content="Understood.")]
        live = spell(ReplaceEntry(reason="compact", messages=summary, ts=1.8e9)) + b"".join(
            _entries(rng, tail_entries, count, spell))
        f.write(live)
        count += tail_entries + 1
    if live_only is not None:
        live_only.parent.mkdir(parents=True, exist_ok=True)
        live_only.write_bytes(spell(SessionEntry(version=1, id=live_only.parent.name,
                                                 created="2026-01-01T00:00:00+00:00")) + live)
    return count, path.stat().st_size


def median_time(fn: object, runs: int) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def replay_in_fresh_process(path: Path) -> float:
    """Seconds for a full replay in a new interpreter, as a resume after a restart would be
    (interpreter start-up excluded): the memory the replay holds is fresh from the kernel."""
    code = (
        "import sys, time\n"
        "from pseudoclaude.session import replay_file\n"
        "t = time.perf_counter()\n"
        "replay_file(sys.argv[1], fast=False)\n"
        "print(time.perf_counter() - t)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(path)], check=True,
                         capture_output=True, text=True).stdout
    return float(out)


def raw_read(path: Path) -> int:
    n = 0
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(1 << 20):
            n += len(chunk)
    return n


def bench_appends(root: Path, count: int, rounds: int = 30) -> tuple[float, float]:
    """Median rates over interleaved rounds (ours, then bare, alternating which goes first),
    both appending to the same file, so both see the same disk weather and the same inode
    (two files on one disk differ by several per cent on their own)."""
    store = SessionStore(root / ".PseudoClaude")
    message = Message(role="user", content="x" * 1000)
    line = encode(MessageEntry.from_message(message, time.time()))
    per_round = max(1, count // rounds)
    ours_rates, bare_rates = [], []
    with SessionWriter.create(store, model="bench") as writer:
        writer.append_message(message)  # creates the file and its header
        fd = os.open(writer.path, os.O_WRONLY | os.O_APPEND)

        def ours() -> float:
            t = time.perf_counter()
            for _ in range(per_round):
                writer.append_message(message)
            return per_round / (time.perf_counter() - t)

        def bare() -> float:
            t = time.perf_counter()
            for _ in range(per_round):
                os.write(fd, line)
                os.fsync(fd)
            return per_round / (time.perf_counter() - t)

        try:
            for n in range(rounds):
                if n % 2:
                    bare_rates.append(bare())
                    ours_rates.append(ours())
                else:
                    ours_rates.append(ours())
                    bare_rates.append(bare())
        finally:
            os.close(fd)
    return statistics.median(ours_rates), statistics.median(bare_rates)


def bench_spaced_resume(store: SessionStore, size_mb: int, runs: int) -> dict[str, object]:
    """Resume of a spaced, key-reordered log with a big history against its live state alone.

    The two resumes alternate, so both see the same machine; each is the median of its runs.
    """
    log, live = store.log_path(SID_SPACED), store.log_path(SID_LIVE)
    t = time.perf_counter()
    entries, size = build_log(log, size_mb, spaced, live_only=live)
    print(f"built {log} : {entries:,} entries, {size / 2**20:,.0f} MiB, spaced, type last "
          f"in {time.perf_counter() - t:.1f} s", flush=True)
    raw_read(log)
    start = replay_file(log).start_offset
    assert start > 0, "the fast resume did not find the spaced replace"
    big_state, live_state = load_session(store, SID_SPACED), load_session(store, SID_LIVE)
    assert big_state.messages == live_state.messages, "spaced log and live state disagree"
    times: dict[str, list[float]] = {SID_SPACED: [], SID_LIVE: []}
    for n in range(max(runs, 11)):
        for sid in (SID_SPACED, SID_LIVE) if n % 2 else (SID_LIVE, SID_SPACED):
            t = time.perf_counter()
            load_session(store, sid)
            times[sid].append(time.perf_counter() - t)
    big, alone = statistics.median(times[SID_SPACED]), statistics.median(times[SID_LIVE])
    return {
        "spaced_log_bytes": size,
        "spaced_replay_start": start,
        "spaced_resume_ms": round(big * 1000, 2),
        "live_alone_resume_ms": round(alone * 1000, 2),
        "spaced_resume_ratio": round(big / alone, 3),
    }


def spaced_rows(results: dict[str, object]) -> list[tuple[str, str, str, bool | None]]:
    ratio = float(results["spaced_resume_ratio"])  # type: ignore[arg-type]
    return [
        ("fast resume, spaced log with type last (history+tail)",
         f"{results['spaced_resume_ms']} ms", "", None),
        ("fast resume of the same live state alone", f"{results['live_alone_resume_ms']} ms",
         "", None),
        ("spaced log / live state alone", f"{ratio:.2f}x", "<= 1.5x", ratio <= 1.5),
    ]


def print_rows(rows: list[tuple[str, str, str, bool | None]]) -> None:
    for name, value, target, ok in rows:
        mark = "" if ok is None else ("  ok" if ok else "  MISSED")
        print(f"{name:55} {value:>26} {target:>12}{mark}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=int, default=1024)
    parser.add_argument("--appends", type=int, default=3000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="keep the generated log")
    parser.add_argument("--only", choices=["spaced"],
                        help="run just one case: spaced = resume of a spaced, reordered log")
    args = parser.parse_args(argv)

    work = OUT / "session-bench"
    shutil.rmtree(work, ignore_errors=True)
    store = SessionStore(work / ".PseudoClaude")
    if args.only == "spaced":
        spaced_results = bench_spaced_resume(store, args.size_mb, args.runs)
        print_rows(spaced_rows(spaced_results))
        OUT.mkdir(exist_ok=True)
        (OUT / "session_bench_spaced.json").write_text(
            json.dumps({**spaced_results, "python": sys.version.split()[0]}, indent=2) + "\n")
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        return 0
    log = store.log_path(SID)
    t = time.perf_counter()
    entries, size = build_log(log, args.size_mb)
    print(f"built {log} : {entries:,} entries, {size / 2**20:,.0f} MiB "
          f"in {time.perf_counter() - t:.1f} s", flush=True)

    raw_read(log)  # warm the page cache for every measurement alike
    fast = median_time(lambda: load_session(store, SID), args.runs)
    fast_state = load_session(store, SID)
    full = statistics.median(replay_in_fresh_process(log) for _ in range(args.runs))
    full_state = replay_file(log, fast=False)
    assert full_state.messages == fast_state.messages, "fast and full replay disagree"
    raw = median_time(lambda: raw_read(log), args.runs)
    mb = size / 1e6
    ours, bare = bench_appends(work, args.appends)
    if not args.keep:
        log.unlink()  # room for the next log
    spaced_results = bench_spaced_resume(store, args.size_mb, args.runs)
    results = {
        "log_bytes": size,
        "log_entries": entries,
        "live_messages": len(fast_state.messages),
        "fast_resume_ms": round(fast * 1000, 2),
        "full_replay_s": round(full, 3),
        "full_replay_mb_s": round(mb / full, 1),
        "raw_read_mb_s": round(mb / raw, 1),
        "appends_per_s": round(ours),
        "bare_write_fsync_per_s": round(bare),
        "append_ratio": round(ours / bare, 3),
        **spaced_results,
        "python": sys.version.split()[0],
    }
    rows = [
        ("fast resume (load + repair, tail from last replace)", f"{results['fast_resume_ms']} ms",
         "< 100 ms", fast < 0.1),
        ("full replay", f"{results['full_replay_mb_s']} MB/s ({full:.2f} s)", ">= 250 MB/s",
         mb / full >= 250),
        ("raw read of the same file (1 MiB reads)", f"{results['raw_read_mb_s']} MB/s", "", None),
        ("durable appends (fsync per line)", f"{results['appends_per_s']}/s", "", None),
        ("bare write+fsync loop", f"{results['bare_write_fsync_per_s']}/s", "", None),
        ("appends / bare", f"{results['append_ratio']}", ">= 0.9", ours / bare >= 0.9),
        *spaced_rows(spaced_results),
    ]
    print_rows(rows)
    OUT.mkdir(exist_ok=True)
    (OUT / "session_bench.json").write_text(json.dumps(results, indent=2) + "\n")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
