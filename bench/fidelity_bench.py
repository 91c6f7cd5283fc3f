"""Summary fidelity benchmark (`make bench`; SPEC §11 "Summary fact check", issue 13 "Show").

1. Scripted long sessions with planted facts are driven through repeated automatic
   compactions on a small window (``--window``, default 24,000 tokens) by the real
   :class:`CompactRuntime` and the real Anthropic provider, against the fake model. Each task of
   a session is one user prompt with a unique marker (``REQUEST-007``, and for some a
   ``CONSTRAINT-007: never touch vendor/lib007/``; a few are long pasted specifications, so
   the 4,000-token budget of carried prompts matters), then the agent's seven turns (5,000 to
   9,000 tokens, so a compaction often lands mid-task and summarises the current request): it
   reads a module and its tests, writes a new file, edits the module (unique paths, successful
   results), runs the tests (they fail), edits again, runs them again, answers. The loop is
   the runner's: ``manage_context()`` before every model request, the request with the whole
   history and the six tools, the reply appended, ``record_usage``, the tool results
   appended.
2. After each compaction the NEXT model request (what the provider received, read from the fake
   model's recorded requests) is searched for the planted facts, whitespace collapsed:
   - every changed path so far (successful ``write_file``/``edit_file``);
   - the summarised user prompts within the budget: those no longer in the history verbatim,
     newest first, up to the first that no longer fits 4,000 tokens (UTF-8 bytes ÷ 3.5), and
     the newest one always (it is outside the budget);
   - every user prompt so far (shown for contrast: older prompts past the budget are dropped
     by design);
   - the last user prompt (the request the agent is working on; marked when that compaction
     summarised it away).
   Two fake models: ``bare`` (``<summary>Work continues.</summary>``, a summary that omits
   everything) and ``partial`` (a summary of bounded size that keeps some of the facts
   verbatim — of every other changed path the 20 newest, of every third user prompt the 6
   newest — and only paraphrases the current request). Each session runs with the
   fact check (``CompactConfig(fact_check=True)``, the default) and without it. Target with
   the check: 100% of changed paths, 100% of the summarised prompts within the budget, and the
   last prompt after every compaction.
3. The task list (SPEC §13): a session on the real workspace (``Workspace.run``: the runner,
   the session's reminder, automatic compaction, ``--task-list-runs`` runs, default 24) whose
   scripted model writes a list of six tasks (two ``completed``, one ``in_progress``, three
   ``pending``) with ``update_tasks`` in its first run and updates it half-way (three done,
   the fourth under way); every run reads two ~7 KB notes and answers, and the summaries are
   bare, so the list can survive only by what the session adds. After each compaction the next
   model request is searched for every ``- [x] …``/``- [~] …``/``- [ ] …`` line of the list
   the session holds then: in the whole request, in its trailing ``<system-reminder>`` block,
   and, for contrast, in the rest of it; a line of an earlier list whose status has changed
   must not be in the reminder. Every summary request's instructions (the text after
   "Keep the session's current task list…") are searched for the same lines. Target: at least
   5 compactions, 100% of the lines after each and in each summary request, no stale line.
4. The cost of ``CompactRuntime.state()`` (what ``pseudoclaude/context`` answers from) at 1k,
   10k and 100k messages: the first call on a history nobody has sized yet (as after a
   resume), then the median and p99 of 200 calls each after one new message (issue 13: under
   5 ms p99 at 10k messages).

Prints the tables and writes ``bench/out/fidelity_bench.json``. Exits 1 when a target is
missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pseudoclaude.agent.approvals import ApprovalRequest, Decision
from pseudoclaude.agent.reminders import OPEN as REMINDER_OPEN
from pseudoclaude.agent.reminders import tasks_instruction
from pseudoclaude.agent.tools.base import ToolOutput, envelope
from pseudoclaude.agent.tools.plan import render_tasks
from pseudoclaude.agent.tools.registry import default_tools
from pseudoclaude.compact import CompactConfig, CompactRuntime
from pseudoclaude.compact.estimate import tokens_for_bytes
from pseudoclaude.config import load_settings
from pseudoclaude.conversation import Conversation
from pseudoclaude.conversation.summary import is_summary
from pseudoclaude.events import (
    CompactEvent,
    ErrorEvent,
    Event,
    FactCheck,
    TasksEvent,
    WarningEvent,
)
from pseudoclaude.fake_model import FakeModelServer, Script
from pseudoclaude.llm.provider import complete
from pseudoclaude.llm.types import Message, ToolResult
from pseudoclaude.workspace import Hooks, Workspace

OUT = Path(__file__).resolve().parent / "out"
PROMPT_BUDGET_TOKENS = 4_000
MIN_TASK_COMPACTIONS = 5
WRITE_TOOLS = ("write_file", "edit_file")
SPECS = [tool.spec() for tool in default_tools()]
SYSTEM = (
    "You are PseudoClaude, a coding agent working in the user's workspace. Use the tools to "
    "read, write and edit files and to run commands; keep changes minimal; follow every "
    "constraint the user states for the whole session.\n" + "Workspace conventions: " +
    "Python 3.11, ruff, mypy --strict, pytest. " * 12
)
BARE_SUMMARY = "<summary>Work continues.</summary>"
WORDS = ("parser lexer token stream buffer cache index schema record field value handler "
         "request response retry window budget chunk layer spill ledger anchor").split()


# -- the scripted session --------------------------------------------------------------------
@dataclass
class Step:
    """One model turn: the fake model's reply, and the results of its tool calls."""

    reply: dict[str, Any]
    results: list[tuple[str, bool]] = field(default_factory=list)  # (content, is_error)


@dataclass
class Task:
    prompt: str
    steps: list[Step]


def _words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def _file_text(rng: random.Random, lines: int) -> str:
    return "\n".join(f"{i + 1:>5}\t    {_words(rng, rng.randint(4, 12))}" for i in range(lines))


def _ok(tool: str, content: str, metadata: dict[str, Any] | None = None,
        error_type: str | None = None) -> tuple[str, bool]:
    text, ok = envelope(tool, ToolOutput(content, metadata, error_type,
                                         "exit status 1" if error_type else None))
    return text, not ok


def _prompt(rng: random.Random, k: int) -> str:
    marker = f"REQUEST-{k:03d}"
    text = f"{marker}: make the {rng.choice(WORDS)} of package pkg{k:03d} handle " \
           f"{_words(rng, 6)}."
    if k % 3 == 0:
        text += f" CONSTRAINT-{k:03d}: never touch vendor/lib{k:03d}/ and keep its API stable."
    if k % 7 == 3:  # a pasted specification: 500 to 1,100 tokens
        spec = "\n".join(f"- spec {k:03d}.{i}: {_words(rng, 14)}"
                         for i in range(rng.randint(20, 45)))
        text += f"\nFollow this specification exactly:\n{spec}"
    return text


def _tests(rng: random.Random, k: int, failing: bool) -> tuple[str, bool]:
    lines = [f"tests/pkg{k:03d}/test_{w}.py::test_{w}_{i} PASSED"
             for i, w in enumerate(rng.choice(WORDS) for _ in range(rng.randint(20, 50)))]
    if failing:
        lines += ["=" * 30 + " FAILURES " + "=" * 30, f"def test_{rng.choice(WORDS)}():"]
        lines += [f">       assert {_words(rng, 8)}" for _ in range(rng.randint(80, 200))]
        lines.append("E       AssertionError: 1 failed")
        return _ok("run_command", "\n".join(lines), {"exit_status": 1}, "exit_status")
    return _ok("run_command", "\n".join(lines) + "\n===== all passed =====",
               {"exit_status": 0})


def _task(rng: random.Random, k: int) -> Task:
    """One user prompt and seven model turns: reads, a new file, an edit, a failing test run,
    a fix, a passing run, the answer."""
    pkg = f"src/pkg{k:03d}"
    new_path = f"{pkg}/{rng.choice(WORDS)}_{k:03d}.py"
    edit_path = f"{pkg}/core_{k:03d}.py"
    test_path = f"tests/pkg{k:03d}/test_core.py"
    body = _file_text(rng, rng.randint(8, 30)).replace("\t", " ")
    source = _file_text(rng, rng.randint(30, 70))

    def call(name: str, suffix: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return {"name": name, "id": f"{suffix}{k:03d}", "arguments": arguments}

    def edit(suffix: str) -> Step:
        return Step({"text": "Wiring it in.", "tool_calls": [call(
                        "edit_file", suffix, {"path": edit_path, "old_string": _words(rng, 5),
                                              "new_string": _words(rng, 9)})]},
                    [_ok("edit_file", f"edited {edit_path} at line {rng.randint(2, 60)}",
                         {"path": edit_path, "line": 3, "bytes": len(source)})])

    def run(suffix: str, failing: bool) -> Step:
        return Step({"text": "Running the tests.", "tool_calls": [call(
                        "run_command", suffix, {"command": f"pytest -q tests/pkg{k:03d}"})]},
                    [_tests(rng, k, failing)])

    return Task(_prompt(rng, k), [
        Step({"text": "Let me read the module and its tests first.", "tool_calls": [
                 call("read_file", "r", {"path": edit_path}),
                 call("read_file", "t", {"path": test_path})]},
             [_ok("read_file", source, {"path": edit_path, "offset": 1}),
              _ok("read_file", _file_text(rng, rng.randint(20, 50)),
                  {"path": test_path, "offset": 1})]),
        Step({"text": "I'll add the new module.", "tool_calls": [call(
                 "write_file", "w", {"path": new_path, "content": body})]},
             [_ok("write_file", f"created {new_path} ({len(body)} bytes)",
                  {"path": new_path, "bytes": len(body), "created": True})]),
        edit("e"),
        run("c", True),
        edit("f"),
        run("d", False),
        Step({"text": f"Done: {_words(rng, 30)}."}),
    ])


def session(tasks: int, seed: int) -> list[Task]:
    rng = random.Random(seed)
    return [_task(rng, k) for k in range(1, tasks + 1)]


# -- measuring a request ---------------------------------------------------------------------
def _collapse(text: str) -> str:
    return " ".join(text.split())


def request_text(body: dict[str, Any]) -> str:
    """Every text the provider received in an Anthropic Messages request."""
    parts: list[str] = []

    def add(value: Any) -> None:
        if isinstance(value, str):
            parts.append(value)
        elif isinstance(value, list):
            for block in value:
                add(block)
        elif isinstance(value, dict):
            kind = value.get("type")
            if kind == "text":
                parts.append(str(value.get("text", "")))
            elif kind == "tool_use":
                parts.append(json.dumps(value.get("input"), ensure_ascii=False))
            elif kind == "tool_result":
                add(value.get("content"))

    add(body.get("system"))
    for message in body.get("messages") or []:
        add(message.get("content"))
    return _collapse("\n".join(parts))


def budgeted(summarised: list[str]) -> list[str]:
    """The summarised prompts the check must carry: newest first within the budget (the
    newest always, outside it)."""
    if not summarised:
        return []
    newest, *older = reversed(summarised)
    out, used = [newest], 0
    for prompt in older:
        used += tokens_for_bytes(len(prompt.encode()))
        if used > PROMPT_BUDGET_TOKENS:
            break
        out.append(prompt)
    return out


def share(items: list[str], text: str) -> tuple[int, int]:
    return sum(_collapse(item) in text for item in items), len(items)


def pct(hit: int, total: int) -> float:
    return 100.0 if total == 0 else round(100.0 * hit / total, 1)


# -- driving the runtime ---------------------------------------------------------------------
def partial_summary(prompts: list[str], paths: list[str]) -> str:
    """A summary that keeps some facts: of the facts so far, every other changed path (the 20
    newest of them) and every third user prompt (the 6 newest of them) verbatim."""
    kept_paths = paths[::2][-20:]
    kept_prompts = prompts[::3][-6:]
    lines = ["<analysis>Going through the transcript.</analysis>", "<summary>",
             "1. Primary request and intent: the user asked for a series of package changes.",
             "3. Files and code: " + ", ".join(kept_paths) + ".",
             "6. All user messages:"]
    lines += [f"   - {p}" for p in kept_prompts]
    lines += ["8. Current work: the latest request (in progress).", "</summary>"]
    return "\n".join(lines)


async def drive(tasks: list[Task], mode: str, fact_check: bool, window: int, tmp: Path
                ) -> dict[str, Any]:
    events: list[Event] = []
    conversation = Conversation()
    prompts: list[str] = []
    paths: list[str] = []
    rows: list[dict[str, Any]] = []
    with FakeModelServer() as fake:
        source = fake.provider_source(model="claude-bench")

        runtime = CompactRuntime(
            conversation, config=CompactConfig(window=window, fact_check=fact_check),
            spill_dir=tmp / "spill", workspace=tmp, provider=source, emit=events.append)
        provider = await source()
        try:
            for task in tasks:
                conversation.add_user(task.prompt)
                prompts.append(task.prompt)
                for step in task.steps:
                    summary = (BARE_SUMMARY if mode == "bare"
                               else partial_summary(prompts, paths))
                    fake.script = Script({"rules": [{"when": {"has_tools": False},
                                                     "reply": {"text": summary}}]})
                    seen = len(events)
                    await runtime.manage_context()
                    compactions = [e for e in events[seen:]
                                   if isinstance(e, CompactEvent) and e.layer == 2]
                    fake.add_turns(step.reply)
                    done = await complete(provider, SYSTEM, conversation.messages(), SPECS)
                    if compactions:
                        rows.append(_measure(fake.requests[-1]["body"], conversation,
                                             prompts, paths, compactions[-1], len(rows) + 1))
                    conversation.append(done.message)
                    runtime.record_usage(done.usage)
                    for call, (content, is_error) in zip(done.message.tool_calls, step.results,
                                                         strict=True):
                        conversation.append(Message(role="user", tool_result=ToolResult(
                            call.id, call.name, content, is_error)))
                        path = call.arguments.get("path") if isinstance(
                            call.arguments, dict) else None
                        if call.name in WRITE_TOOLS and not is_error and path not in paths:
                            paths.append(str(path))
        finally:
            await provider.aclose()
        summary_requests = sum(1 for r in fake.requests if not r["body"].get("tools"))
    failures = [e.message for e in events if isinstance(e, ErrorEvent)]
    warnings = [e.message for e in events if isinstance(e, WarningEvent)]
    return {"mode": mode, "fact_check": fact_check, "compactions": rows,
            "summary_requests": summary_requests, "failures": failures, "warnings": warnings,
            **_totals(rows)}


def _measure(body: dict[str, Any], conversation: Conversation, prompts: list[str],
             paths: list[str], event: CompactEvent, index: int) -> dict[str, Any]:
    text = request_text(body)
    verbatim = {m.content for m in conversation.messages()
                if m.role == "user" and m.tool_result is None and not is_summary(m)}
    summarised = [p for p in prompts if p not in verbatim]
    in_budget = budgeted(summarised)
    check = event.fact_check
    return {
        "compaction": index,
        "before_tokens": event.before_tokens, "after_tokens": event.after_tokens,
        "paths": share(paths, text),
        "prompts_in_budget": share(in_budget, text),
        "prompts_all": share(prompts, text),
        "last_prompt": _collapse(prompts[-1]) in text,
        "last_prompt_summarised": prompts[-1] not in verbatim,
        "fact_check": {"checked": check.checked, "missing": check.missing,
                       "added": check.added} if isinstance(check, FactCheck) else None,
    }


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    def worst(key: str) -> float:
        return min((pct(*r[key]) for r in rows), default=100.0)

    def mean(key: str) -> float:
        return round(statistics.fmean(pct(*r[key]) for r in rows), 1) if rows else 100.0

    return {
        "paths_min": worst("paths"), "paths_mean": mean("paths"),
        "prompts_in_budget_min": worst("prompts_in_budget"),
        "prompts_in_budget_mean": mean("prompts_in_budget"),
        "prompts_all_mean": mean("prompts_all"),
        "last_prompt": [sum(r["last_prompt"] for r in rows), len(rows)],
        "last_prompt_summarised": [sum(r["last_prompt"] for r in rows
                                       if r["last_prompt_summarised"]),
                                   sum(r["last_prompt_summarised"] for r in rows)],
    }


def met(run: dict[str, Any]) -> bool:
    return (bool(run["compactions"]) and run["paths_min"] == 100.0
            and run["prompts_in_budget_min"] == 100.0
            and run["last_prompt"][0] == run["last_prompt"][1] and not run["failures"])


# -- the task list lane ----------------------------------------------------------------------
TASKS_FIRST = [
    ("Read the design notes", "completed"),
    ("List the parser's entry points", "completed"),
    ("Trace the token stream through the lexer", "in_progress"),
    ("Write the cache invalidation tests", "pending"),
    ("Refactor the retry window handling", "pending"),
    ("Update the changelog", "pending"),
]
TASKS_LATER = [(content, "completed" if i < 3 else "in_progress" if i == 3 else status)
               for i, (content, status) in enumerate(TASKS_FIRST)]
"""The list after the second ``update_tasks`` (half-way): three done, the fourth under way."""
TASK_SUMMARY_RULE = "rule 0"


class Allow:
    async def ask(self, request: ApprovalRequest) -> Decision | None:
        return "allow_once"


def _update(tasks: list[tuple[str, str]], run: int) -> dict[str, Any]:
    return {"text": "Updating the task list.", "tool_calls": [{
        "name": "update_tasks", "id": f"u{run:03d}",
        "arguments": {"tasks": [{"content": c, "status": s} for c, s in tasks]}}]}


def _reads(run: int) -> dict[str, Any]:
    return {"text": "Reading the next notes.", "tool_calls": [
        {"name": "read_file", "id": f"r{run:03d}{j}",
         "arguments": {"path": f"notes/part{run:03d}{j}.md"}} for j in "ab"]}


def _reminder(body: dict[str, Any]) -> str:
    """The request's trailing ``<system-reminder>`` text blocks (what ``Session.reminder``
    added), whitespace collapsed."""
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    content = last.get("content") if last.get("role") == "user" else None
    if not isinstance(content, list):
        return ""
    found = []
    for block in reversed(content):
        text = block.get("text") if block.get("type") == "text" else None
        if not isinstance(text, str) or not text.startswith(REMINDER_OPEN):
            break
        found.append(text)
    return _collapse("\n".join(reversed(found)))


def _lines(tasks: list[tuple[str, str]]) -> list[str]:
    return render_tasks(tasks).splitlines()


async def _task_session(root: Path, fake: FakeModelServer, runs: int, window: int
                        ) -> dict[str, Any]:
    """Drive the real workspace: run 1 writes the list, run ``runs // 2`` updates it, every
    run reads two ~7 KB notes and answers. Returns where (in ``fake.requests``) each list
    took effect and each compaction happened."""
    settings = load_settings(root, {
        "provider": "anthropic", "baseUrl": fake.base_url, "apiKey": "sk-bench",
        "model": "claude-bench", "contextWindow": window, "maxRetries": 0,
        "memory.enabled": False}, home=root.parent / "home", env={})
    lists: list[tuple[int, list[tuple[str, str]]]] = []
    compactions: list[tuple[int, CompactEvent]] = []
    failures: list[str] = []

    def heard(_: str, event: Any) -> None:
        if isinstance(event, TasksEvent):
            lists.append((len(fake.requests), [(t.content, t.status) for t in event.tasks]))
        elif isinstance(event, CompactEvent) and event.layer == 2:
            compactions.append((len(fake.requests), event))
        elif isinstance(event, ErrorEvent):
            failures.append(event.message)

    ws = Workspace(root, settings, approver=Allow(), hooks=Hooks(events=heard))
    try:
        for run in range(1, runs + 1):
            turns = [_reads(run), {"text": f"Run {run}: the notes describe {run} parts."}]
            if run == 1:
                turns.insert(0, _update(TASKS_FIRST, run))
            elif run == runs // 2:
                turns.insert(0, _update(TASKS_LATER, run))
            fake.add_turns(*turns)
            _, result = await ws.run(f"run {run:03d}: read the next notes and go on with the "
                                     "task list.")
            if result.stop_reason != "completed":
                failures.append(f"run {run} stopped: {result.stop_reason} {result.error}")
    finally:
        await ws.close()
    return {"lists": lists, "compactions": compactions, "failures": failures}


def task_lane(runs: int, window: int, tmp: Path) -> dict[str, Any]:
    """The task list lane: after each compaction, the next model request carries every task
    with its status, and every summary request's instructions carry the list."""
    root = tmp / "ws"
    (root / "notes").mkdir(parents=True)
    rng = random.Random(runs)
    for run in range(1, runs + 1):
        for j in "ab":
            (root / "notes" / f"part{run:03d}{j}.md").write_text(
                f"# Notes {run}{j}\n" + _file_text(rng, 100).replace("\t", " ") + "\n")
    script = {"rules": [{"when": {"summary": True}, "reply": {"text": BARE_SUMMARY}},
                        {"when": {"has_tools": False}, "reply": {"text": "[]"}}]}
    with FakeModelServer(script) as fake:
        heard = asyncio.run(_task_session(root, fake, runs, window))
        requests = fake.requests

    def current(index: int) -> tuple[int, list[tuple[str, str]]]:
        """Which list (1, 2, …) the session held when request ``index`` was sent, and it."""
        held: tuple[int, list[tuple[str, str]]] = (0, [])
        for number, (since, tasks) in enumerate(heard["lists"], 1):
            if since <= index:
                held = (number, tasks)
        return held

    stale_lines = {line for _, tasks in heard["lists"] for line in _lines(tasks)}
    header = _collapse(tasks_instruction([]))
    rows: list[dict[str, Any]] = []
    for since, event in heard["compactions"]:
        index = next((i for i in range(since, len(requests))
                      if str(requests[i]["reply"]).startswith("turn")), None)
        number, tasks = current(index) if index is not None else (0, [])
        if index is None or not tasks:
            continue
        body = requests[index]["body"]
        text, reminder = request_text(body), _reminder(body)
        lines = _lines(tasks)
        rows.append({
            "compaction": len(rows) + 1, "request": index, "list": number,
            "before_tokens": event.before_tokens, "after_tokens": event.after_tokens,
            "tasks": share(lines, text),
            "in_reminder": share(lines, reminder),
            "outside_reminder": share(lines, text.replace(reminder, "")),
            "stale_in_reminder": sum(line in reminder
                                     for line in stale_lines.difference(lines)),
        })
    summaries: list[dict[str, Any]] = []
    for index, record in enumerate(requests):
        number, tasks = current(index)
        if record["reply"] != TASK_SUMMARY_RULE or not tasks:
            continue
        text = request_text(record["body"])
        at = text.rfind(header)
        summaries.append({"request": index, "list": number,
                          "tasks": share(_lines(tasks), text[at:] if at >= 0 else "")})

    def worst(items: list[dict[str, Any]], key: str) -> float:
        return min((pct(*r[key]) for r in items), default=0.0)

    intact = sum(r["tasks"][0] for r in rows), sum(r["tasks"][1] for r in rows)
    carried = sum(r["tasks"][0] for r in summaries), sum(r["tasks"][1] for r in summaries)
    return {
        "runs": runs, "window": window, "tasks": len(TASKS_FIRST), "updates": len(heard["lists"]),
        "compactions": rows, "summary_requests": summaries, "failures": heard["failures"],
        "intact": list(intact), "intact_pct": pct(*intact), "intact_min": worst(rows, "tasks"),
        "reminder_min": worst(rows, "in_reminder"),
        "outside_reminder_mean": round(statistics.fmean(
            pct(*r["outside_reminder"]) for r in rows), 1) if rows else 0.0,
        "stale_in_reminder": sum(r["stale_in_reminder"] for r in rows),
        "summary_carried": list(carried), "summary_pct": pct(*carried),
        "summary_min": worst(summaries, "tasks"),
    }


def task_lane_met(lane: dict[str, Any]) -> bool:
    return (len(lane["compactions"]) >= MIN_TASK_COMPACTIONS
            and len(lane["summary_requests"]) >= len(lane["compactions"])
            and lane["intact_min"] == 100.0 and lane["reminder_min"] == 100.0
            and lane["summary_min"] == 100.0 and lane["stale_in_reminder"] == 0
            and not lane["failures"])


# -- the cost of state() ---------------------------------------------------------------------
def history(n: int) -> list[Message]:
    out: list[Message] = []
    i = 0
    while len(out) < n:
        out += [Message(role="user", content=f"question {i} " + "q" * 200),
                Message(role="assistant", content="answer " + "a" * 300)]
        i += 1
    return out[:n]


def bench_state(n: int, tmp: Path) -> dict[str, Any]:
    conversation = Conversation(history(n))
    runtime = CompactRuntime(conversation, config=CompactConfig(window=10**9),
                             spill_dir=tmp / "spill", workspace=tmp)
    t = time.perf_counter()
    runtime.state()
    first = time.perf_counter() - t
    times = []
    for i in range(200):
        conversation.add_user(f"next {i}")
        t = time.perf_counter()
        runtime.state()
        times.append(time.perf_counter() - t)
    times.sort()
    return {"messages": n, "first_ms": round(first * 1e3, 2),
            "median_us": round(statistics.median(times) * 1e6, 1),
            "p99_us": round(times[int(len(times) * 0.99) - 1] * 1e6, 1)}


# -- report ----------------------------------------------------------------------------------
def _cell(hit_total: list[int]) -> str:
    return f"{hit_total[0]}/{hit_total[1]}"


def show_task_lane(lane: dict[str, Any], verbose: bool) -> bool:
    print(f"\ntask list lane: {lane['runs']} runs on the real workspace, {lane['tasks']} tasks "
          f"(mixed statuses; {lane['updates']} versions of the list), bare summaries; every "
          "task line in the request after each compaction, and in each summary request's "
          "instructions")
    print(f"{'compactions':>11} {'tasks intact':>14} {'(min)':>7} {'in reminder':>11} "
          f"{'without it':>10} {'stale':>5} {'summary requests':>16} {'carried':>9} "
          f"{'(min)':>7}")
    print(f"{len(lane['compactions']):>11} {lane['intact_pct']:>12.1f} % "
          f"{lane['intact_min']:>5.1f} % {lane['reminder_min']:>9.1f} % "
          f"{lane['outside_reminder_mean']:>8.1f} % {lane['stale_in_reminder']:>5} "
          f"{len(lane['summary_requests']):>16} {lane['summary_pct']:>7.1f} % "
          f"{lane['summary_min']:>5.1f} %")
    for failure in lane["failures"]:
        print(f"    failed: {failure}")
    if verbose:
        for r in lane["compactions"]:
            print(f"    #{r['compaction']:<3} {r['before_tokens']:>6} -> {r['after_tokens']:>6}"
                  f"  list {r['list']}  tasks {_cell(r['tasks'])}  reminder "
                  f"{_cell(r['in_reminder'])}  without it {_cell(r['outside_reminder'])}  "
                  f"stale {r['stale_in_reminder']}")
    ok = task_lane_met(lane)
    print(f"target: at least {MIN_TASK_COMPACTIONS} compactions, every task with its status "
          "after each, in each summary's instructions, no stale status: "
          f"{'ok' if ok else 'MISSED'}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--window", type=int, default=24_000, help="context window (tokens)")
    parser.add_argument("--tasks", type=int, default=40, help="tasks per session")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--no-state", action="store_true", help="skip the state() timing")
    parser.add_argument("--task-list-runs", type=int, default=24,
                        help="runs of the task list lane's session")
    parser.add_argument("--no-task-list", action="store_true", help="skip the task list lane")
    parser.add_argument("--verbose", action="store_true", help="one line per compaction")
    args = parser.parse_args()
    tasks = session(args.tasks, args.seed)
    tmp = Path(tempfile.mkdtemp(prefix="fidelity-bench-"))
    try:
        runs = [asyncio.run(drive(tasks, mode, check, args.window, tmp / f"{mode}-{check}"))
                for mode in ("bare", "partial") for check in (True, False)]
        lane = None if args.no_task_list else task_lane(args.task_list_runs, args.window,
                                                        tmp / "task-list")
        state = [] if args.no_state else [bench_state(n, tmp / f"state{n}")
                                          for n in (1_000, 10_000, 100_000)]
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    print(f"window {args.window:,} tokens, {args.tasks} tasks, {len(tasks) * 2} changed paths; "
          "share of planted facts in the request after each compaction (min / mean)")
    print(f"{'summary':<8} {'check':<6} {'compactions':>11} {'paths':>13} "
          f"{'prompts in budget':>18} {'all prompts':>11} {'last prompt':>11} "
          f"{'(summarised)':>12}")
    for run in runs:
        print(f"{run['mode']:<8} {'on' if run['fact_check'] else 'off':<6} "
              f"{len(run['compactions']):>11} "
              f"{run['paths_min']:>5.1f}/{run['paths_mean']:>5.1f} % "
              f"{run['prompts_in_budget_min']:>8.1f}/{run['prompts_in_budget_mean']:>5.1f} % "
              f"{run['prompts_all_mean']:>9.1f} % {_cell(run['last_prompt']):>11} "
              f"{_cell(run['last_prompt_summarised']):>12}")
        for failure in run["failures"]:
            print(f"    compaction failed: {failure}")
        if args.verbose:
            for r in run["compactions"]:
                print(f"    #{r['compaction']:<3} {r['before_tokens']:>6} -> "
                      f"{r['after_tokens']:>6}  paths {r['paths'][0]}/{r['paths'][1]}  "
                      f"budget {r['prompts_in_budget'][0]}/{r['prompts_in_budget'][1]}  "
                      f"all {r['prompts_all'][0]}/{r['prompts_all'][1]}  "
                      f"last {'yes' if r['last_prompt'] else 'NO'}"
                      f"{' (summarised)' if r['last_prompt_summarised'] else ''}  "
                      f"check {r['fact_check']}")
    checked = [run for run in runs if run["fact_check"]]
    ok = all(met(run) for run in checked)
    print("target with the check (100% of changed paths and of summarised prompts within the "
          f"budget, the last prompt, after every compaction): {'ok' if ok else 'MISSED'}")
    if lane is not None:
        ok = show_task_lane(lane, args.verbose) and ok
    if state:
        print(f"\n{'messages':>10} {'first state()':>14} {'median':>10} {'p99':>10}")
        for row in state:
            print(f"{row['messages']:>10,} {row['first_ms']:>11} ms {row['median_us']:>7} µs "
                  f"{row['p99_us']:>7} µs")
        fast = state[1]["p99_us"] < 5_000
        print(f"target: state() under 5 ms p99 at 10k messages: {'ok' if fast else 'MISSED'}")
        ok = ok and fast
    OUT.mkdir(exist_ok=True)
    (OUT / "fidelity_bench.json").write_text(json.dumps(
        {"window": args.window, "tasks": args.tasks, "seed": args.seed, "runs": runs,
         "task_list": lane, "state": state, "python": sys.version.split()[0]},
        indent=2) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
