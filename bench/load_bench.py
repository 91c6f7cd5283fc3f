"""Load benchmark: 8 workspace folders in one server, each running a task at once; or N
sessions of one folder running at once.

One real server (``python -m pseudoclaude lsp`` over stdio, driven by pygls's ``LanguageClient``)
with 8 workspace folders and the scripted fake model. Every folder runs one task at the same
time: ``--rounds`` tool rounds (two ``read_file`` calls each; the first round reads a
60,000-byte file, so its result is spilled) and a final answer, each model turn streamed with
``--delay`` seconds before every stream event. Meanwhile the same client polls
``pseudoclaude/context`` every 10 ms, one folder after the other, until every run has answered.

Reported:

- latency of those ``pseudoclaude/context`` requests (send to answer): p50, p99, max, and how
  many took over 100 ms (target: p99 under 100 ms);
- ``pseudoclaude/event`` notifications received against the number the scripts imply, per
  folder and per kind (``toolCall``/``toolResult`` one per call, ``usage`` one per model turn,
  ``compact`` one for the spill, ``stop`` one per run, ``memory`` one for the memory update
  after the run): lost or extra events, target zero; and ``text``: the deltas of each folder,
  joined, must be exactly its scripted text (the server merges consecutive deltas, so the
  number of ``text`` notifications is reported, not checked);
- whether every run completed (``stopReason: completed``);
- the server's peak RSS (``VmHWM`` of ``/proc/<pid>/status``, read before shutdown).

The model's answers depend only on the request (which folder, which round: read from the
markers in the files already read), so the concurrent folders cannot take each other's turns.
Sessions (``--sessions-sweep 1,2,4``, after the folders; ``--folders 0`` skips those): for
each N, a new server with ONE workspace folder runs N sessions of it at once
(``pseudoclaude/sessions/new`` N times, then ``pseudoclaude/run`` with each ``sessionId``), each
the same scripted task as a folder's (its files in ``s<i>/`` of the folder), while
``pseudoclaude/context`` is polled every 10 ms with each session's ``sessionId`` in turn. The
figures are the same, per session instead of per folder: events are counted by the
``sessionId`` they carry (an event naming another session is lost for its own and extra for
the other), the target for the ``context`` p99 is 20 ms. Peak RSS is per N (one server each).

The whole measurement is repeated ``--repeats`` times (3; new sessions each time) for more
latency samples; events are counted per repeat. Before it, a short warm-up run in every folder
(``--warm-up all``) takes the provider SDK import and each workspace's first-run set-up out of
the figures; ``--warm-up one`` leaves the per-workspace set-up in, ``--warm-up none`` the
import too.

Run: ``.venv/bin/python bench/load_bench.py [--folders 8] [--rounds 12] [--delay 0.005]
[--sessions-sweep 1,2,4]``. Prints a table per measurement and writes ``bench/out/load_bench.json``
(the sweep under ``sessions``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from pseudoclaude.fake_model import FakeModelServer, Script

HERE = Path(__file__).resolve().parent
OUT = HERE / "out"
TASK = re.compile(r"LOAD-TASK-f(\d+)-X")
DONE = re.compile(r"LOADMARK-f(\d+)-r(\d+)-X")
BIG_BYTES = 60_000
TIMEOUT = 120.0
SLOW_MS = 100.0
SESSIONS_P99_MS = 20.0  # the target of the sessions mode


def sibling(name: str) -> ModuleType:
    """Import ``bench/<name>.py`` (the bench folder is not a package)."""
    key = f"pseudoclaude_bench_{name}"
    if key in sys.modules:
        return sys.modules[key]
    spec = importlib.util.spec_from_file_location(key, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[key] = module
    spec.loader.exec_module(module)
    return module


@dataclass
class Config:
    folders: int = 8
    rounds: int = 12
    text_chunks: int = 4  # per tool-round turn
    final_chunks: int = 12
    delay: float = 0.005  # seconds before every stream event
    poll_interval: float = 0.010
    repeats: int = 3  # the runs again (new sessions), for more latency samples
    provider: str = "anthropic"
    warm_up: str = "all"  # warm-up runs before the measurement: none, one or all folders
    root: Path | None = None
    sessions: int = 0  # > 0: that many sessions of ONE folder at once (``folders`` unused)

    @property
    def units(self) -> int:
        """What runs at once: sessions of one folder, or folders."""
        return self.sessions if self.sessions > 0 else self.folders


def marker(folder: int, rnd: int) -> str:
    return f"LOADMARK-f{folder}-r{rnd}-X"


class LoadScript(Script):
    """Answers by request content: memory updates get ``[]``; an agent request gets the next
    round of its folder (found from the markers of the files read so far)."""

    def __init__(self, config: Config) -> None:
        super().__init__({})
        self.config = config

    def turn(self, folder: int, rnd: int) -> dict[str, Any]:
        c = self.config
        if rnd >= c.rounds:
            return {"text": [f"Folder {folder}: all {c.rounds} rounds read. "] +
                    [f"part {i}. " for i in range(1, c.final_chunks)], "delay": c.delay}
        first = "big.txt" if rnd == 0 else f"r{rnd}a.txt"
        where = f"s{folder}/" if c.sessions > 0 else ""  # a session's files, in one folder
        return {"text": [f"Round {rnd} of folder {folder}, "] +
                [f"chunk {i}. " for i in range(1, c.text_chunks)],
                "tool_calls": [
                    {"name": "read_file", "arguments": {"path": where + first}},
                    {"name": "read_file", "arguments": {"path": f"{where}r{rnd}b.txt"}}],
                "delay": c.delay}

    def choose(self, facts: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        if "long-term memory" in facts["system"] or "working summary" in facts["system"]:
            return "memory", {"text": "[]"}
        body = facts["body"]
        task = TASK.search(body)
        if task is None:
            return "default", {"text": "no task found"}
        folder = int(task.group(1))
        done = [int(r) for f, r in DONE.findall(body) if int(f) == folder]
        return "turn", self.turn(folder, max(done) + 1 if done else 0)


def expected_events(config: Config) -> dict[str, int]:
    """What one folder's run must send besides its text, from the script."""
    c = config
    return {"toolCall": 2 * c.rounds, "toolResult": 2 * c.rounds, "usage": c.rounds + 1,
            "compact": 1, "stop": 1, "memory": 1}


def expected_text(config: Config, folder: int) -> str:
    """The text one folder's run streams: every turn's chunks, in order."""
    script = LoadScript(config)
    return "".join("".join(script.turn(folder, rnd)["text"]) for rnd in range(config.rounds + 1))


def make_folder(path: Path, number: int, rounds: int) -> None:
    path.mkdir(parents=True)
    (path / "README.md").write_text(f"# load folder {number}\n")
    with open(path / "big.txt", "w") as f:
        f.write(marker(number, 0) + "\n")
        i = 0
        while f.tell() < BIG_BYTES:
            f.write(f"line {i:06d} of a large file that is spilled to a file\n")
            i += 1
    for rnd in range(rounds):
        body = "".join(f"row {i} of round {rnd}\n" for i in range(80))
        (path / f"r{rnd}a.txt").write_text(marker(number, rnd) + "\n" + body)
        (path / f"r{rnd}b.txt").write_text(body + marker(number, rnd) + "\n")


async def until(predicate: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.01)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


@dataclass
class Result:
    config: dict[str, Any]
    latencies_ms: list[float] = field(default_factory=list)
    sent_at: list[float] = field(default_factory=list)  # seconds after the runs started
    events: dict[str, dict[str, int]] = field(default_factory=dict)  # unit -> kind -> count
    rounds: list[dict[str, dict[str, int]]] = field(default_factory=list)  # events, per repeat
    expected: dict[str, int] = field(default_factory=dict)  # per folder and repeat
    text: dict[str, list[str]] = field(default_factory=dict)  # folder -> text deltas
    text_rounds: list[dict[str, list[str]]] = field(default_factory=list)  # per repeat
    expected_text: dict[str, str] = field(default_factory=dict)  # folder -> its whole text
    stop_reasons: list[str] = field(default_factory=list)
    run_errors: list[str] = field(default_factory=list)
    peak_rss_kib: int | None = None
    context_usage: int = 0
    seconds: float = 0.0

    @property
    def lost(self) -> dict[str, dict[str, int]]:
        """Per repeat and folder, per kind: expected − received, where they differ."""
        out: dict[str, dict[str, int]] = {}
        for number, events in enumerate(self.rounds):
            for folder, counts in events.items():
                diff = {kind: n - counts.get(kind, 0) for kind, n in self.expected.items()
                        if counts.get(kind, 0) != n}
                diff |= {kind: -n for kind, n in counts.items() if kind not in self.expected}
                want = self.expected_text.get(folder, "")
                got = "".join(self.text_rounds[number].get(folder, []))
                if got != want:
                    diff["textCharacters"] = len(want) - len(got)
                    diff["textInOrder"] = 0
                if diff:
                    out[f"repeat {number + 1} {folder}"] = diff
        return out

    @property
    def units(self) -> int:
        """Folders, or sessions of one folder (``sessions`` mode)."""
        return int(self.config["sessions"] or self.config["folders"])

    @property
    def target_ms(self) -> float:
        return SESSIONS_P99_MS if self.config["sessions"] else SLOW_MS

    @property
    def completed(self) -> bool:
        runs = self.units * self.config["repeats"]
        return (len(self.stop_reasons) == runs and not self.run_errors
                and all(r == "completed" for r in self.stop_reasons))

    def as_json(self) -> dict[str, Any]:
        lat = self.latencies_ms
        received = sum(sum(c.values()) for events in self.rounds for c in events.values())
        text_notifications = sum(len(d) for text in self.text_rounds for d in text.values())
        text_received = sum(len(t) for text in self.text_rounds for d in text.values()
                            for t in d)
        by_kind: Counter[str] = Counter()
        for events in self.rounds:
            for counts in events.values():
                by_kind.update(counts)
        return {
            "config": self.config, "seconds": round(self.seconds, 2),
            "context_requests": len(lat),
            "latency_ms": {"p50": round(percentile(lat, 0.50), 2),
                           "p99": round(percentile(lat, 0.99), 2),
                           "max": round(max(lat), 2) if lat else None,
                           "mean": round(statistics.fmean(lat), 2) if lat else None,
                           "over_100ms": sum(1 for v in lat if v > SLOW_MS),
                           "over_20ms": sum(1 for v in lat if v > SESSIONS_P99_MS),
                           "slowest": [{"ms": round(v, 1), "at_s": round(t, 3)} for v, t in
                                       sorted(zip(lat, self.sent_at, strict=True),
                                              reverse=True)[:5]]},
            "events_expected": sum(self.expected.values()) * self.units * len(self.rounds),
            "events_received": received,
            "events_by_kind": dict(by_kind),
            "text_characters_expected": sum(len(t) for t in self.expected_text.values()) *
            len(self.text_rounds),
            "text_characters_received": text_received,
            "text_notifications": text_notifications,
            "events_lost_or_extra": self.lost,
            "runs_completed": self.completed, "stop_reasons": self.stop_reasons,
            "runs_per_second": round(sum(r == "completed" for r in self.stop_reasons)
                                     / self.seconds, 2) if self.seconds else None,
            "run_errors": self.run_errors,
            "peak_rss_mib": round(self.peak_rss_kib / 1024, 1) if self.peak_rss_kib else None,
            "context_usage_notifications": self.context_usage,
        }


@dataclass
class Unit:
    """What runs one task: a folder (its URI is its label), or a session of the one folder."""

    label: str  # the key of its events in the result: the folder's URI, or "session <i>"
    number: int  # the task's number (LOAD-TASK-f<number>-X, its files' markers)
    workspace: str
    session_id: str | None = None  # sessions mode: the session made for this repeat

    def run_params(self) -> dict[str, Any]:
        return {"workspace": self.workspace, "sessionId": self.session_id or "new",
                "prompt": f"Read every round's files. LOAD-TASK-f{self.number}-X"}

    def context_params(self) -> dict[str, Any]:
        if self.session_id is None:
            return {"workspace": self.workspace}
        return {"workspace": self.workspace, "sessionId": self.session_id}


async def measure(editor: Any, units: list[Unit], config: Config, result: Result,
                  started: float) -> None:
    """One repeat: every unit runs its task at once while ``pseudoclaude/context`` is polled
    every ``poll_interval``, one unit after the other; then the memory events are awaited."""
    result.events = {u.label: {} for u in units}
    result.rounds.append(result.events)
    result.text = {u.label: [] for u in units}
    result.text_rounds.append(result.text)
    runs = [editor.send("pseudoclaude/run", u.run_params()) for u in units]
    all_runs = asyncio.gather(*runs, return_exceptions=True)
    polled = 0
    began = time.monotonic()
    next_at = began
    while not all_runs.done():
        unit = units[polled % len(units)]
        polled += 1
        result.sent_at.append(time.monotonic() - started)
        sent = time.perf_counter()
        await editor.request("pseudoclaude/context", unit.context_params())
        result.latencies_ms.append((time.perf_counter() - sent) * 1000)
        next_at += config.poll_interval
        pause = next_at - time.monotonic()
        if pause > 0:
            await asyncio.sleep(pause)
        else:
            next_at = time.monotonic()  # behind: no burst to catch up
        if time.monotonic() - began > TIMEOUT:
            raise TimeoutError(f"the runs did not finish in {TIMEOUT:.0f} s")
    for answer in await all_runs:
        if isinstance(answer, BaseException):
            result.run_errors.append(repr(answer))
        else:
            result.stop_reasons.append(str(answer.get("stopReason")))
    # The memory update runs after each run has answered: wait for its events, as many as
    # runs (one under another unit's label is then reported as lost and extra).
    events = result.events
    with contextlib.suppress(TimeoutError):
        await until(lambda: sum(c.get("memory", 0) for c in events.values()) >= len(units),
                    "the memory events", 30)
    await asyncio.sleep(0.2)  # anything late or duplicated would arrive now


async def run_load(config: Config) -> Result:
    cc = sibling("crash_campaign")
    result = Result(config={k: (str(v) if isinstance(v, Path) else v)
                            for k, v in asdict(config).items()})
    result.expected = expected_events(config)
    root = Path(tempfile.mkdtemp(prefix="pc-load-", dir=config.root))
    sessions = config.sessions > 0
    folders = [root / "folder0"] if sessions else [root / f"folder{i}"
                                                    for i in range(config.folders)]
    if sessions:  # one folder, each session's files in s<i>/
        folders[0].mkdir()
        for i in range(config.sessions):
            make_folder(folders[0] / f"s{i}", i, config.rounds)
    else:
        for i, folder in enumerate(folders):
            make_folder(folder, i, config.rounds)
    (root / "home").mkdir()
    uris = [f.as_uri() for f in folders]
    if sessions:
        units = [Unit(f"session {i}", i, uris[0]) for i in range(config.sessions)]
    else:
        units = [Unit(uri, i, uri) for i, uri in enumerate(uris)]
    labels: dict[str, str] = {}  # sessions mode: session id -> its unit's label
    result.events = {u.label: {} for u in units}
    result.expected_text = {u.label: expected_text(config, u.number) for u in units}
    model = FakeModelServer(LoadScript(config)).start()
    launcher = cc.Launcher("exec", root, cc.server_env(root / "home"))

    def label_of(event: dict[str, Any]) -> str:
        if not sessions:
            return str(event.get("workspace"))
        sid = str(event.get("sessionId"))
        return labels.get(sid, f"another session ({sid})")

    def on_event(event: dict[str, Any]) -> None:
        kind = str(event.get("kind"))
        if kind == "text":
            result.text.setdefault(label_of(event), []).append(str(event.get("delta")))
            return
        counts = result.events.setdefault(label_of(event), {})
        counts[kind] = counts.get(kind, 0) + 1

    editor = cc.Editor("load-bench", on_event)
    options = {"provider": config.provider, "apiKey": "sk-load-not-a-real-key-000000",
               "baseUrl": model.base_url, "maxRetries": 0,
               "memory": {"userDir": str(root / "user-memory")},
               "approvals": {"runCommand": "allow"}}
    if config.sessions > 4:  # sessions.maxParallel is 4 by default
        options["sessions"] = {"maxParallel": config.sessions}
    try:
        await editor.start(launcher, folders, options, root)
        # Warm-up runs (one short turn each) before the measurement: "one" takes the provider
        # SDK import (1-2 s of CPU in a worker thread, holding the GIL most of the time) out
        # of the figures, "all" also each workspace's first-run set-up (its SDK client). In
        # sessions mode both are one run, in a session of its own.
        warm = {"none": [], "one": uris[:1], "all": uris}[config.warm_up]
        for uri in warm:
            await editor.request("pseudoclaude/run", {"workspace": uri, "prompt": "warm up",
                                                      "sessionId": "new"}, TIMEOUT)
        await until(lambda: sum(c.get("memory", 0) for c in result.events.values())
                    >= len(warm), "the warm-up runs' memory events")
        for uri in uris:
            await editor.request("pseudoclaude/context", {"workspace": uri})
        started = time.monotonic()
        for _ in range(config.repeats):
            if sessions:  # new sessions each time, made before the clock matters
                labels.clear()
                for unit in units:
                    made = await editor.request("pseudoclaude/sessions/new",
                                                {"workspace": unit.workspace})
                    unit.session_id = str(made["sessionId"])
                    labels[unit.session_id] = unit.label
            await measure(editor, units, config, result, started)
        result.seconds = time.monotonic() - started
        result.peak_rss_kib = editor.peak_rss_kib()
        result.context_usage = editor.context_usage
        await editor.shutdown()
    except Exception as exc:
        raise RuntimeError(f"load bench: {exc!r}\nserver stderr (end):\n"
                           f"{editor.diagnostics()}") from exc
    finally:
        if editor.process is not None and editor.process.returncode is None:
            await editor.kill()
        model.stop()
        shutil.rmtree(root, ignore_errors=True)
    return result


def print_table(result: Result) -> None:
    data = result.as_json()
    lat = data["latency_ms"]
    c = result.config
    units, target = result.units, result.target_ms
    what = (f"{units} session(s) of one folder in one server" if c["sessions"] else
            f"{units} folders in one server")
    print(f"\nLoad: {what}, each running a task at once "
          f"({c['rounds']} tool rounds, {c['delay'] * 1000:.0f} ms per stream event), "
          f"{c['repeats']} time(s); warm-up {c['warm_up']}; {data['seconds']} s")
    print(f"{'figure':<46} {'value':>10}  target")
    p99_ok = lat["p99"] < target
    print(f"{'pseudoclaude/context requests':<46} {data['context_requests']:>10}")
    print(f"{'  latency p50 (ms)':<46} {lat['p50']:>10}")
    print(f"{'  latency p99 (ms)':<46} {lat['p99']:>10}  < {target:.0f} "
          f"{'ok' if p99_ok else 'FAIL'}")
    print(f"{'  latency max (ms)':<46} {lat['max']:>10}")
    slow = "over_20ms" if c["sessions"] else "over_100ms"
    print(f"{f'  requests over {target:.0f} ms':<46} {lat[slow]:>10}")
    print(f"{'pseudoclaude/event expected':<46} {data['events_expected']:>10}")
    lost = data["events_lost_or_extra"]
    print(f"{'pseudoclaude/event received':<46} {data['events_received']:>10}  all "
          f"{'ok' if not lost else 'FAIL'}")
    for kind, n in sorted(data["events_by_kind"].items()):
        print(f"{'  ' + kind:<46} {n:>10}  "
              f"{result.expected.get(kind, 0) * units * c['repeats']}")
    print(f"{'text characters (every unit, in order)':<46} "
          f"{data['text_characters_received']:>10}  {data['text_characters_expected']}")
    print(f"{'  in text notifications (merged deltas)':<46} {data['text_notifications']:>10}")
    print(f"{'runs completed':<46} {sum(r == 'completed' for r in result.stop_reasons):>10}"
          f"  {units * c['repeats']} {'ok' if result.completed else 'FAIL'}")
    print(f"{'server peak RSS (MiB, VmHWM)':<46} {data['peak_rss_mib']!s:>10}")
    if lost:
        print(f"  ! lost (+) or extra (-) events: {json.dumps(lost)}")
    for error in result.run_errors:
        print(f"  ! {error}")


def passed(result: Result) -> bool:
    return (not result.lost and result.completed
            and result.as_json()["latency_ms"]["p99"] < result.target_ms)


def print_sweep(results: list[Result]) -> None:
    """One line per N of the sessions sweep."""
    print(f"\nSessions of one folder at once, one server (context p99 target "
          f"< {SESSIONS_P99_MS:.0f} ms, events lost/extra 0, every run completed)")
    print("(lost/extra: events missing from, or extra in, a session's count, by the sessionId "
          "they carry; text: sessions whose text is not whole and in order)")
    print(f"{'N':>3} {'context':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'>20 ms':>6} "
          f"{'events':>11} {'run lost/extra':>14} {'memory lost/extra':>17} {'text':>5} "
          f"{'runs':>7} {'runs/s':>6} {'RSS MiB':>8} {'s':>6}  ok")
    for result in results:
        data = result.as_json()
        lat = data["latency_ms"]
        diffs = data["events_lost_or_extra"].values()
        run_lost = sum(abs(n) for diff in diffs for kind, n in diff.items()
                       if kind not in ("memory", "textCharacters", "textInOrder"))
        memory_lost = sum(abs(diff.get("memory", 0)) for diff in diffs)
        text_bad = sum("textInOrder" in diff for diff in diffs)
        runs = f"{sum(r == 'completed' for r in result.stop_reasons)}/" \
               f"{result.units * result.config['repeats']}"
        print(f"{result.units:>3} {data['context_requests']:>8} {lat['p50']:>7} {lat['p99']:>7} "
              f"{lat['max']:>7} {lat['over_20ms']:>6} "
              f"{data['events_received']:>5}/{data['events_expected']:<5} {run_lost:>14} "
              f"{memory_lost:>17} {text_bad:>5} {runs:>7} {data['runs_per_second']!s:>6} "
              f"{data['peak_rss_mib']!s:>8} "
              f"{data['seconds']:>6}  {'ok' if passed(result) else 'FAIL'}")


def sweep_counts(text: str) -> list[int]:
    counts = [int(n) for n in text.split(",") if n.strip()]
    if not counts or any(n < 1 for n in counts):
        raise argparse.ArgumentTypeError(f"a list of positive numbers, e.g. 1,2,4 (got {text!r})")
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folders", type=int, default=Config.folders,
                        help="folders running at once (default 8; 0: only the sessions sweep)")
    parser.add_argument("--sessions-sweep", type=sweep_counts, default=[], metavar="N,N,...",
                        help="then, for each N, N sessions of one folder at once in a new "
                             "server (e.g. 1,2,4)")
    parser.add_argument("--sessions", type=int, default=0, metavar="N",
                        help="only N sessions of one folder at once (--folders 0 "
                             "--sessions-sweep N)")
    parser.add_argument("--repeats", type=int, default=Config.repeats,
                        help="run the folders' tasks this many times, in new sessions, for "
                             "more latency samples (default 3)")
    parser.add_argument("--rounds", type=int, default=Config.rounds)
    parser.add_argument("--delay", type=float, default=Config.delay,
                        help="seconds before every stream event (default 0.005)")
    parser.add_argument("--provider", choices=("anthropic", "openai"), default="anthropic")
    parser.add_argument("--warm-up", choices=("all", "one", "none"), default="all",
                        help="short runs before the measurement in every folder (default), "
                             "in one (the SDK import is then not measured) or none")
    parser.add_argument("--out", type=Path, default=OUT / "load_bench.json")
    args = parser.parse_args(argv)
    sweep: list[int] = args.sessions_sweep
    folders = args.folders
    if args.sessions > 0:
        folders, sweep = 0, [args.sessions]
    config = Config(folders=folders, rounds=args.rounds, delay=args.delay,
                    repeats=args.repeats, provider=args.provider, warm_up=args.warm_up)
    data: dict[str, Any] = {}
    ok = True
    if folders > 0:
        result = asyncio.run(run_load(config))
        print_table(result)
        data = result.as_json()
        ok = passed(result)
    if sweep:
        results = []
        for n in sweep:
            result = asyncio.run(run_load(replace(config, sessions=n)))
            print_table(result)
            results.append(result)
        print_sweep(results)
        data["sessions"] = [r.as_json() | {"ok": passed(r)} for r in results]
        ok = ok and all(passed(r) for r in results)
    data["ok"] = ok
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
