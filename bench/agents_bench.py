"""Sub-agents: "explore 40 files" done directly versus by an ``explore`` sub-agent (`make bench`).

A workspace of 40 generated Python modules (2-6 KB each, the same bytes on every run) and one
scripted task on the real workspace (agent loop, ``agent`` tool, sub-agent runtime) against the
fake model with its prompt-cache simulation on (Anthropic semantics, one model for both):

- ``direct``: the session's model reads the 40 files itself with ``read_file``, 8 calls a
  turn (5 tool turns), then answers;
- ``delegated``: the session's model calls ``agent {subagent_type: "explore"}``; the sub-agent
  (its own conversation: its requests are the ones whose system prompt starts with the explore
  role's instructions) reads the same 40 files 8 a turn, answers a one-line-a-file summary, and
  the session's model answers from it.

Both then get the same follow-up prompt: that request is the parent's next-request size.
Reported for each: the parent's context at the end of the task (``pseudoclaude/context``'s
``estimatedTokens``) and its last request's prompt, the next request's prompt, the requests,
and the billed input of the task (the follow-up left out) of the parent and of the sub-agent:
prompt tokens (input + cache read + cache write: the bill without a cache) and base-token
equivalents (input 1×, cache read 0.1×, cache write 1.25×).

Prints a table and writes ``bench/out/agents_bench.json`` (``--json``: prints it instead of
the table).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pseudoclaude.agent.approvals import ApprovalRequest, Decision
from pseudoclaude.config import load_settings
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.workspace import Workspace

OUT = Path(__file__).resolve().parent / "out"
FILES = 40
PER_TURN = 8
WINDOW = 200_000
WRITE, READ = 1.25, 0.1
EXPLORE = "You are an explore sub-agent"  # the start of the explore role's system prompt
TASK = ("Find where the services of src/shop validate their input and which of them retry "
        "on failure: read all 40 modules under src/shop and tell me.")
SUB_TASK = ("Read every module under src/shop (module_00.py to module_39.py) and report, one "
            "line a file, what it does, whether it validates its input and whether it retries.")
FOLLOW_UP = "Thanks. Which of them should I change first?"
WORDS = ("order", "cart", "price", "stock", "invoice", "refund", "coupon", "customer",
         "payment", "shipment", "tax", "review", "catalog", "warehouse", "session", "report")


def paths() -> list[str]:
    return [f"src/shop/module_{i:02d}.py" for i in range(FILES)]


def module(i: int) -> str:
    """A module of 2-6 KB: a docstring, imports, a dataclass and functions (deterministic)."""
    rng = random.Random(i)
    target = rng.randint(2_048, 6_144)
    noun = WORDS[i % len(WORDS)]
    lines = [f'"""The {noun} service, part {i}: loads, checks and stores {noun} records."""',
             "", "from __future__ import annotations", "", "import logging",
             "from dataclasses import dataclass, field", "",
             "log = logging.getLogger(__name__)", "", "", "@dataclass",
             f"class {noun.capitalize()}Record:",
             f'    """One {noun} as the store keeps it."""', "", "    key: str",
             "    amount: int = 0", "    tags: list[str] = field(default_factory=list)", ""]
    n = 0
    while sum(len(line) + 1 for line in lines) < target:
        verb = rng.choice(("load", "check", "store", "merge", "split", "retry", "render"))
        name = f"{verb}_{noun}_{n}"
        limit = rng.randint(2, 99)
        lines += ["", f"def {name}(record: {noun.capitalize()}Record, limit: int = {limit}) "
                  f"-> {noun.capitalize()}Record:",
                  f'    """{verb.capitalize()} a {noun} record; at most {limit} items."""',
                  "    if not record.key:",
                  f'        raise ValueError("a {noun} needs a key")',
                  f"    if record.amount > limit * {rng.randint(10, 999)}:",
                  f'        log.warning("%s: amount %d over the limit", "{name}", '
                  "record.amount)",
                  "        record.amount = limit",
                  f"    record.tags = sorted(set(record.tags) | {{{verb!r}}})",
                  "    return record"]
        n += 1
    return "\n".join(lines) + "\n"


def make_workspace(root: Path) -> int:
    (root / "src" / "shop").mkdir(parents=True)
    size = 0
    for i, path in enumerate(paths()):
        text = module(i)
        (root / path).write_text(text)
        size += len(text.encode())
    return size


def reads(prefix: str) -> list[dict[str, Any]]:
    """The 40 ``read_file`` replies, ``PER_TURN`` calls each (ids fixed: the bytes repeat)."""
    all_paths = paths()
    return [{"text": "Reading the next modules.",
             "tool_calls": [{"id": f"{prefix}{k:02d}", "name": "read_file",
                             "arguments": {"path": p}}
                            for k, p in enumerate(all_paths[start:start + PER_TURN], start)]}
            for start in range(0, FILES, PER_TURN)]


SUMMARY = "\n".join(
    f"- src/shop/module_{i:02d}.py: the {WORDS[i % len(WORDS)]} service; validates its input "
    f"(ValueError on a missing key){'; retries' if i % 7 == 0 else ''}" for i in range(FILES))
ANSWER = ("All 40 services validate their input the same way: each function raises ValueError "
          "when a record has no key and caps the amount at its limit. The ones that retry on "
          "failure are module_00, module_07, module_14, module_21, module_28 and module_35. "
          + "The validation is duplicated in every function; one shared check would do. " * 4)
FOLLOW_ANSWER = "Start with module_00.py: the other retrying services copy its loop."


def script(delegated: bool) -> dict[str, Any]:
    sub_reads = [{"when": {"system_contains": EXPLORE}, "times": 1, "reply": reply}
                 for reply in reads("s")]
    rules = [*sub_reads,
             {"when": {"system_contains": EXPLORE}, "reply": {"text": SUMMARY}},
             {"when": {"has_tools": False}, "reply": {"text": "[]"}}] if delegated else [
             {"when": {"has_tools": False}, "reply": {"text": "[]"}}]
    if delegated:
        turns = [{"text": "I'll have an explore agent read the modules.",
                  "tool_calls": [{"id": "a00", "name": "agent", "arguments": {
                      "subagent_type": "explore", "description": "read the 40 modules",
                      "prompt": SUB_TASK}}]}]
    else:
        turns = reads("d")
    return {"cache": True, "rules": rules,
            "turns": [*turns, {"text": ANSWER}, {"text": FOLLOW_ANSWER}]}


class Allow:
    async def ask(self, request: ApprovalRequest) -> Decision | None:
        return "allow_once"


def is_sub(record: dict[str, Any]) -> bool:
    return EXPLORE in json.dumps(record["body"].get("system", ""))


def prompt_of(record: dict[str, Any]) -> int:
    u = record["usage"]
    return int(u["input"] + u["cache_read"] + u["cache_write"])


def bill(records: list[dict[str, Any]]) -> dict[str, float]:
    out = {"requests": len(records), "input": 0, "cache_read": 0, "cache_write": 0,
           "prompt": 0, "weighted": 0.0}
    for r in records:
        u = r["usage"]
        out["input"] += u["input"]
        out["cache_read"] += u["cache_read"]
        out["cache_write"] += u["cache_write"]
        out["prompt"] += prompt_of(r)
        out["weighted"] += u["input"] + READ * u["cache_read"] + WRITE * u["cache_write"]
    out["weighted"] = round(out["weighted"], 1)
    return out


async def session(root: Path, fake: FakeModelServer) -> tuple[int, int, str]:
    settings = load_settings(root, {
        "provider": "anthropic", "baseUrl": fake.base_url, "apiKey": "sk-bench",
        "model": "session-model", "contextWindow": WINDOW, "maxRetries": 0,
        "memory.enabled": False}, home=root.parent / "home", env={})
    ws = Workspace(root, settings, approver=Allow())
    try:
        sid, result = await ws.run(TASK)
        if result.stop_reason != "completed" or result.text != ANSWER:
            raise SystemExit(f"the task stopped: {result.stop_reason} {result.error} "
                             f"{result.text[:200]!r}")
        context = ws.context(sid).estimated_tokens
        task_requests = len(fake.requests)
        _, result = await ws.run(FOLLOW_UP, session=sid)
        if result.stop_reason != "completed" or result.text != FOLLOW_ANSWER:
            raise SystemExit(f"the follow-up stopped: {result.stop_reason} {result.error}")
    finally:
        await ws.close()
    return context, task_requests, sid


def measure(delegated: bool) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="pseudoclaude-agents-"))
    try:
        root = tmp / "ws"
        size = make_workspace(root)
        with FakeModelServer(script(delegated)) as fake:
            context, task_requests, _ = asyncio.run(session(root, fake))
            records = list(fake.requests)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if any(r["reply"] == "default" or not r.get("usage") for r in records):
        raise SystemExit("a request went unscripted: "
                         + ", ".join(r["reply"] for r in records))
    task, follow = records[:task_requests], records[task_requests:]
    parent = [r for r in task if not is_sub(r)]
    sub = [r for r in task if is_sub(r)]
    if len(follow) != 1 or (delegated and not sub) or (not delegated and sub):
        raise SystemExit(f"unexpected requests: {len(follow)} follow-up, {len(sub)} sub-agent")
    # the files are in the context of whoever read them, and the parent's gets the summary
    head = "The order service, part 0:"  # module_00.py's docstring
    reader = sub if delegated else parent
    if head not in json.dumps(reader[-1]["body"]["messages"]):
        raise SystemExit("the reader's last request does not hold the files")
    if delegated and (head in json.dumps(parent[-1]["body"]["messages"])
                      or "module_39.py: the customer service" not in json.dumps(
                          parent[-1]["body"]["messages"])):
        raise SystemExit("the parent's last request holds the files or not the summary")
    parent_bill, sub_bill = bill(parent), bill(sub)
    total = {k: parent_bill[k] + sub_bill[k] for k in parent_bill}
    total["weighted"] = round(total["weighted"], 1)
    return {"mode": "delegated" if delegated else "direct", "files": FILES,
            "file_bytes": size, "context_tokens": context,
            "last_parent_prompt": prompt_of(parent[-1]), "next_prompt": prompt_of(follow[0]),
            "next_weighted": bill(follow)["weighted"],
            "with_next_weighted": round(total["weighted"] + bill(follow)["weighted"], 1),
            "parent": parent_bill, "subagent": sub_bill, "total": total}


def show(rows: list[dict[str, Any]], seconds: float) -> None:
    direct, delegated = rows
    print(f"explore {FILES} files ({direct['file_bytes']:,} bytes), {PER_TURN} reads a turn; "
          "tokens; billed = input + 0.1 x read + 1.25 x write")
    figures: list[tuple[str, Callable[[dict[str, Any]], Any]]] = [
        ("parent context at the end (estimatedTokens)", lambda r: r["context_tokens"]),
        ("parent's last request, prompt", lambda r: r["last_parent_prompt"]),
        ("parent's next request, prompt", lambda r: r["next_prompt"]),
        ("parent's next request, billed", lambda r: r["next_weighted"]),
        ("requests: parent", lambda r: r["parent"]["requests"]),
        ("requests: sub-agent", lambda r: r["subagent"]["requests"]),
        ("parent: prompt (input+read+write)", lambda r: r["parent"]["prompt"]),
        ("parent: cache read / write", lambda r: f"{r['parent']['cache_read']:,} / "
                                                 f"{r['parent']['cache_write']:,}"),
        ("parent: billed", lambda r: r["parent"]["weighted"]),
        ("sub-agent: prompt (input+read+write)", lambda r: r["subagent"]["prompt"]),
        ("sub-agent: cache read / write", lambda r: f"{r['subagent']['cache_read']:,} / "
                                                    f"{r['subagent']['cache_write']:,}"),
        ("sub-agent: billed", lambda r: r["subagent"]["weighted"]),
        ("total: prompt (input+read+write)", lambda r: r["total"]["prompt"]),
        ("total: billed", lambda r: r["total"]["weighted"]),
        ("total + the next request: billed", lambda r: r["with_next_weighted"]),
    ]
    print(f"{'':<42} {'direct':>17} {'delegated':>17} {'ratio':>6}")
    for name, get in figures:
        a, b = get(direct), get(delegated)
        if isinstance(a, str):
            print(f"{name:<42} {a:>17} {b:>17}")
            continue
        ratio = f"{b / a:.2f}" if a else ""
        print(f"{name:<42} {a:>17,.0f} {b:>17,.0f} {ratio:>6}")
    print(f"({seconds:.1f} s)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print the JSON only")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    rows = [measure(delegated=False), measure(delegated=True)]
    seconds = time.perf_counter() - start
    data = {"files": FILES, "per_turn": PER_TURN, "window": WINDOW,
            "weights": {"input": 1, "cache_read": READ, "cache_write": WRITE},
            "seconds": round(seconds, 2), "rows": rows}
    OUT.mkdir(exist_ok=True)
    (OUT / "agents_bench.json").write_text(json.dumps(data, indent=2) + "\n")
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        show(rows, seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
