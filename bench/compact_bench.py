"""Compaction benchmark (`make bench`).

1. ``manage_context()`` when nothing needs doing, at 1k, 10k and 100k messages: the history is
   already scanned and anchored, one new user message arrives, the estimate stays under the
   threshold. Median of 200 calls (each after appending one message). Also the first pass over
   a history nobody has scanned yet (as after a resume), which is O(all messages).
2. Layer 1 on one round with 100 results of 100 KB: every result is spilled (file written and
   fsynced, then one ``offload`` line each and the previews in place).

Prints a table and writes ``bench/out/compact_bench.json``.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pseudoclaude.compact import CompactConfig, CompactRuntime
from pseudoclaude.conversation import Conversation
from pseudoclaude.llm.types import Message, ToolCall, ToolResult, Usage
from pseudoclaude.session import SessionStore, new_session

OUT = Path(__file__).resolve().parent / "out"


def history(n: int) -> list[Message]:
    out: list[Message] = []
    i = 0
    while len(out) < n:
        out.append(Message(role="user", content=f"question {i} " + "q" * 200))
        out.append(Message(role="assistant", tool_calls=[ToolCall(f"c{i}", "read_file",
                                                                  {"path": f"f{i}.py"})]))
        out.append(Message(role="user", tool_result=ToolResult(f"c{i}", "read_file",
                                                               "r" * 400)))
        out.append(Message(role="assistant", content="answer " + "a" * 300))
        i += 1
    return out[:n]


def bench_idle(n: int, tmp: Path) -> dict[str, float]:
    conversation = Conversation(history(n))
    runtime = CompactRuntime(conversation, config=CompactConfig(window=10**9),
                             spill_dir=tmp / "spill", workspace=tmp)
    t = time.perf_counter()
    asyncio.run(runtime.manage_context())
    first = time.perf_counter() - t
    runtime.record_usage(Usage(input_tokens=n * 100, output_tokens=10))

    async def steady() -> list[float]:
        times = []
        for i in range(200):
            conversation.add_user(f"next {i}")
            t = time.perf_counter()
            await runtime.manage_context()
            times.append(time.perf_counter() - t)
        return times

    times = asyncio.run(steady())
    return {"messages": n, "first_pass_ms": round(first * 1000, 2),
            "idle_median_us": round(statistics.median(times) * 1e6, 1),
            "idle_p99_us": round(sorted(times)[int(len(times) * 0.99)] * 1e6, 1)}


def bench_layer1(tmp: Path) -> dict[str, float]:
    store = SessionStore(tmp / "ws" / ".PseudoClaude")
    opened = new_session(store, model="bench")
    conversation = opened.conversation
    conversation.add_user("read everything")
    conversation.append(Message(role="assistant", tool_calls=[
        ToolCall(f"c{i}", "read_file", {"path": f"f{i}"}) for i in range(100)]))
    for i in range(100):
        conversation.append(Message(role="user", tool_result=ToolResult(
            f"c{i}", "read_file", f"{i} " + "x" * 100_000)))
    runtime = CompactRuntime(conversation, config=CompactConfig(window=200_000),
                             spill_dir=store.spill_dir(opened.session_id),
                             workspace=tmp / "ws")
    before = runtime.estimate()
    t = time.perf_counter()
    asyncio.run(runtime.manage_context())
    elapsed = time.perf_counter() - t
    opened.writer.close()
    spilled = len(list(store.spill_dir(opened.session_id).iterdir()))
    return {"results": 100, "result_bytes": 100_002, "spilled": spilled,
            "layer1_ms": round(elapsed * 1000, 1), "tokens_before": before,
            "tokens_after": runtime.estimate()}


def main() -> int:
    tmp = Path(tempfile.mkdtemp(prefix="compact-bench-", dir=OUT if OUT.exists() else None))
    try:
        idle = [bench_idle(n, tmp / str(n)) for n in (1_000, 10_000, 100_000)]
        layer1 = bench_layer1(tmp / "layer1")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'messages':>10} {'first pass':>12} {'idle median':>12} {'idle p99':>10}")
    for row in idle:
        print(f"{row['messages']:>10,} {row['first_pass_ms']:>10} ms "
              f"{row['idle_median_us']:>9} µs {row['idle_p99_us']:>7} µs")
    ok = idle[1]["idle_median_us"] < 1000
    print(f"target: idle manage_context under 1 ms at 10k messages: {'ok' if ok else 'MISSED'}")
    print(f"Layer 1, one round of 100 results of 100 KB: {layer1['spilled']} spilled in "
          f"{layer1['layer1_ms']} ms ({layer1['tokens_before']:,} -> "
          f"{layer1['tokens_after']:,} estimated tokens)")
    OUT.mkdir(exist_ok=True)
    (OUT / "compact_bench.json").write_text(
        json.dumps({"idle": idle, "layer1": layer1, "python": sys.version.split()[0]},
                   indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
