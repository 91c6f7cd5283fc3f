"""Context-state benchmark (`make bench`): what ``pseudoclaude/context`` costs.

At 1k, 10k and 100k messages (a summary pair first, then rounds of a user prompt, a tool call,
its result — every fifth one spilled — and an answer; an anchor from the provider's usage; the
request overhead of a real workspace: system prompt, rules, memory, tool schemas):

- ``first``: the first ``CompactRuntime.state()`` (as after a resume): O(all messages), once;
- ``idle``: ``state()`` with nothing new (a meter refreshed while nothing happens);
- ``append``: ``state()`` right after one new message (the meter during a run);
- ``request``: ``state()`` plus the LSP result (``ContextResult`` with its breakdown) encoded
  to JSON: the server's whole work for a ``pseudoclaude/context`` request, transport aside.

Each is 1,000 calls; median and p99. Target (issue 13): p99 of ``request`` under 5 ms at 10k
messages. Prints a table and writes ``bench/out/context_bench.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from pseudoclaude.agent.prompt import system_prompt_parts
from pseudoclaude.agent.tools import ToolRegistry
from pseudoclaude.api import protocol as p
from pseudoclaude.compact import CompactConfig, CompactRuntime, Ledger, layer2
from pseudoclaude.compact.estimate import json_bytes
from pseudoclaude.compact.preview import make_preview
from pseudoclaude.conversation import Conversation, Offload
from pseudoclaude.llm.types import Message, ToolCall, ToolResult, Usage

OUT = Path(__file__).resolve().parent / "out"
CALLS = 1_000
SIZES = (1_000, 10_000, 100_000)
TARGET_US = 5_000.0


def history(n: int) -> tuple[list[Message], Ledger]:
    out = layer2.assemble("the summary of earlier work " * 40, [])
    ledger = Ledger()
    i = 0
    while len(out) < n:
        call = f"c{i}"
        content = "r" * 400
        if i % 5 == 0:  # spilled: its preview in place, its decision in the ledger
            path = f".PseudoClaude/sessions/s/tool-results/{call}.txt"
            content = make_preview("r" * 60_000, path)
            ledger.offloads[call] = Offload(call, path, 60_000, content)
        else:
            ledger.kept.add(call)
        out += [Message(role="user", content=f"question {i} " + "q" * 200),
                Message(role="assistant", tool_calls=[ToolCall(call, "read_file",
                                                               {"path": f"f{i}.py"})]),
                Message(role="user", tool_result=ToolResult(call, "read_file", content)),
                Message(role="assistant", content="answer " + "a" * 300)]
        i += 1
    return out[:n], ledger


def overhead(root: Path) -> dict[str, int]:
    (root / "PSEUDOCLAUDE.md").write_text("Run the tests with make test.\n" * 20)
    prompt = system_prompt_parts(root, memory_index="- [Build](build.md): make build\n" * 30)
    system, rules, memory, skills = prompt.sizes()
    tools = json_bytes([{"name": s.name, "description": s.description,
                         "input_schema": s.input_schema} for s in ToolRegistry(root).specs()])
    return {"system": system, "rules": rules, "memory": memory, "skills": skills,
            "tools": tools}


def percentiles(times: list[float]) -> dict[str, float]:
    times = sorted(times)
    return {"median_us": round(statistics.median(times) * 1e6, 1),
            "p99_us": round(times[min(len(times) - 1, int(len(times) * 0.99))] * 1e6, 1)}


def timed(calls: int, step: Callable[[], object], before: Callable[[], object] | None = None
          ) -> list[float]:
    times = []
    for _ in range(calls):
        if before is not None:
            before()
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return times


def bench(n: int, tmp: Path, calls: int) -> dict[str, Any]:
    tmp.mkdir(parents=True)
    messages, ledger = history(n)
    conversation = Conversation(messages)
    runtime = CompactRuntime(conversation, config=CompactConfig(window=10**9),
                             spill_dir=tmp / "spill", workspace=tmp, ledger=ledger)
    runtime.set_request_overhead(**overhead(tmp))
    t = time.perf_counter()
    first = runtime.state()
    first_ms = round((time.perf_counter() - t) * 1e3, 2)
    runtime.record_usage(Usage(input_tokens=first.estimated_tokens, output_tokens=40))

    idle = timed(calls, runtime.state)
    counter = iter(range(10**9))
    append = timed(calls, runtime.state, lambda: conversation.add_user(f"next {next(counter)}"))

    def request() -> None:
        state = runtime.state()
        p.encode_line(p.ContextResult(
            session_id="20260101-000000-abcd", message_count=state.message_count,
            estimated_tokens=state.estimated_tokens, context_window=state.context_window,
            auto_compact_threshold=state.auto_compact_threshold,
            auto_compact_failures=state.auto_compact_failures,
            auto_compact_tripped=state.auto_compact_tripped,
            breakdown=state.breakdown))

    full = timed(calls, request)
    state = runtime.state()
    assert state.breakdown.total == state.estimated_tokens
    return {"messages": n, "first_ms": first_ms, "idle": percentiles(idle),
            "append": percentiles(append), "request": percentiles(full),
            "breakdown": msgspec.to_builtins(state.breakdown)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=CALLS, help="calls per measurement")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="context-bench-"))
    try:
        rows = [bench(n, tmp / str(n), args.calls) for n in SIZES]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{'messages':>10} {'first':>10} {'idle med/p99 (µs)':>19} "
          f"{'append med/p99 (µs)':>21} {'request med/p99 (µs)':>22}")
    for row in rows:
        cells = [f"{row[k]['median_us']:>8} / {row[k]['p99_us']:<8}"
                 for k in ("idle", "append", "request")]
        print(f"{row['messages']:>10,} {row['first_ms']:>7} ms {cells[0]:>19} {cells[1]:>21} "
              f"{cells[2]:>22}")
    at_10k = next(r for r in rows if r["messages"] == 10_000)["request"]["p99_us"]
    ok = at_10k < TARGET_US
    print(f"target: a context request under 5 ms p99 at 10k messages: "
          f"{at_10k} µs, {'ok' if ok else 'MISSED'}")
    OUT.mkdir(exist_ok=True)
    (OUT / "context_bench.json").write_text(json.dumps(
        {"calls": args.calls, "rows": rows, "python": sys.version.split()[0]}, indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
