"""Hooks benchmark: what a no-op PreToolUse shell hook adds to a tool call.

One ``read_file`` call (a 1 KiB file) is run through the agent's real tool path — the runner's
``_execute``: the arguments checked, the PreToolUse hooks, the permission gate, the tool, the
PostToolUse hooks — ``--calls`` times for each of:

- ``no hook``: no hooks at all;
- ``hook: true``: one PreToolUse hook ``{type: shell, command: 'true'}`` (``/bin/sh -c true``
  in its own process group, the payload on its stdin, its answer read);
- ``hook: reads stdin``: the same with ``cat > /dev/null`` (it reads the whole payload, as a
  real hook script does);
- ``other events only``: five hooks on other events (none fires for a tool call: the cost of
  having hooks at all).

The variants are interleaved call by call (so a busy machine slows them alike); median, 95th
percentile and mean in milliseconds, and each one's median minus the ``no hook`` median (the
overhead). Prints a table and writes ``bench/out/hooks_bench.json`` (``--json``: prints it
instead). ``--quick``: fewer calls (a smoke run).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pseudoclaude.agent.approvals import Gate
from pseudoclaude.agent.runner import Runner
from pseudoclaude.agent.tools import ToolRegistry
from pseudoclaude.compact import CompactConfig, CompactRuntime
from pseudoclaude.conversation import Conversation
from pseudoclaude.hooks import Dispatcher, Hook, SessionHooks, parse_entries
from pseudoclaude.llm.provider import Provider
from pseudoclaude.llm.types import ToolCall
from pseudoclaude.permissions import PermissionEngine

OUT = Path(__file__).resolve().parent / "out"
VARIANTS: dict[str, list[dict[str, Any]]] = {
    "no hook": [],
    "hook: true": [{"name": "noop", "event": "PreToolUse",
                    "action": {"type": "shell", "command": "true"}}],
    "hook: reads stdin": [{"name": "reads", "event": "PreToolUse",
                           "action": {"type": "shell", "command": "cat > /dev/null"}}],
    "other events only": [{"name": f"other-{event}", "event": event,
                           "action": {"type": "shell", "command": "true"}}
                          for event in ("SessionStart", "SessionEnd", "Stop", "PreCompact",
                                        "UserPromptSubmit")],
}


class NeverAsked:
    async def ask(self, request: Any) -> Any:
        raise AssertionError("a read is never asked")


def runner(root: Path, hooks: list[Hook]) -> Runner:
    conversation = Conversation()

    async def no_provider() -> Provider:
        raise AssertionError("no model request in this bench")

    async def no_prompt() -> str:
        return ""

    session = SessionHooks(Dispatcher(print), lambda: hooks, session_id="bench",
                           transcript_path=root / "conversation.jsonl", cwd=lambda: root,
                           mode=lambda: "default")
    return Runner(conversation,
                  compact=CompactRuntime(conversation, config=CompactConfig(window=200_000),
                                         spill_dir=root / "spill", workspace=root),
                  provider=no_provider, tools=ToolRegistry(root),
                  gate=Gate(PermissionEngine(root), NeverAsked()), system_prompt=no_prompt,
                  emit=lambda event: None, hooks=session if hooks else None)


async def measure(calls: int) -> dict[str, list[float]]:
    with tempfile.TemporaryDirectory(prefix="pseudoclaude-hooks-bench-") as folder:
        root = Path(folder).resolve()
        (root / "a.txt").write_text("x" * 1023 + "\n")
        runners = {}
        for name, entries in VARIANTS.items():
            loaded = parse_entries(entries, "bench", "settings")
            assert not loaded.problems, loaded.problems
            runners[name] = runner(root, list(loaded.hooks))
        samples: dict[str, list[float]] = {name: [] for name in VARIANTS}
        call = ToolCall("bench", "read_file", {"path": "a.txt"})
        for _ in range(max(5, calls // 20)):  # warm up
            for run in runners.values():
                await run._execute(call)
        for _ in range(calls):
            for name, run in runners.items():
                started = time.perf_counter()
                result = await run._execute(call)
                samples[name].append((time.perf_counter() - started) * 1000)
                assert not result.is_error, result.content
        return samples


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def report(samples: dict[str, list[float]]) -> dict[str, Any]:
    base = statistics.median(samples["no hook"])
    rows = {name: {"median_ms": round(statistics.median(values), 3),
                   "p95_ms": round(percentile(values, 0.95), 3),
                   "mean_ms": round(statistics.fmean(values), 3),
                   "overhead_ms": round(statistics.median(values) - base, 3)}
            for name, values in samples.items()}
    return {"calls": len(samples["no hook"]), "python": platform.python_version(),
            "machine": platform.machine(), "results": rows}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="calls per variant (300)")
    parser.add_argument("--quick", action="store_true", help="30 calls per variant")
    parser.add_argument("--json", action="store_true", help="print the JSON only")
    args = parser.parse_args(argv)
    data = report(asyncio.run(measure(30 if args.quick else args.calls)))
    OUT.mkdir(exist_ok=True)
    (OUT / "hooks_bench.json").write_text(json.dumps(data, indent=2) + "\n")
    if args.json:
        print(json.dumps(data, indent=2))
        return 0
    print(f"read_file through the tool path, {data['calls']} calls per variant (ms)")
    print(f"{'variant':<20} {'median':>8} {'p95':>8} {'mean':>8} {'overhead':>9}")
    for name, row in data["results"].items():
        print(f"{name:<20} {row['median_ms']:>8.3f} {row['p95_ms']:>8.3f} "
              f"{row['mean_ms']:>8.3f} {row['overhead_ms']:>+9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
