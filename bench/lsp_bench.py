"""LSP server benchmark (`make bench`): cold ``initialize``, ``pseudoclaude/context`` latency.

Every server is a real ``python -m pseudoclaude lsp`` process over stdio, driven by pygls's
``LanguageClient`` (custom results kept as dicts), with one workspace folder in a temporary
directory, a private ``HOME``, no API key from the environment, and the scripted fake model on
loopback.

1. Cold start: spawn to ``InitializeResult``, median of 5 fresh processes (also: spawn to the
   first ``pseudoclaude/context`` answer, which includes ``initialized`` and the workspace).
2. Idle: ``pseudoclaude/context`` round trips one after another, p50/p99.
3. Streaming: a run whose model turn streams 1,000 text chunks (one ``pseudoclaude/event`` each)
   while the client asks ``pseudoclaude/context`` every ~10 ms; p50/p99 of those round trips,
   how many events arrived, and how long the run took. ``paced``: the fake model waits 2 ms
   before each stream event (a fast real model sends a few hundred a second), so the run
   streams for about 2-3 s. ``burst``: no pause at all (the whole turn arrives in well under a
   second), repeated ``--bursts`` times to collect samples; the worst case for the event loop.
   A warm-up run first, so the provider SDK is already imported; the same measurement during
   that first run (the SDK import on a worker thread holds the GIL much of the time) is
   reported separately as ``first_run``.
4. The server's peak RSS (``VmHWM`` in ``/proc/PID/status``) after all of that.

Latencies are client round trips: they include the client's own decoding of the notifications
that arrive in between, as an editor would see them.

Prints a table and writes ``bench/out/lsp_bench.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.client import LanguageClient

from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.redact import without_credentials

OUT = Path(__file__).resolve().parent / "out"
SERVER = [sys.executable, "-m", "pseudoclaude", "lsp"]
TIMEOUT = 60.0
MEMORY_REPLY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}


def server_env(home: Path) -> dict[str, str]:
    return without_credentials() | {"HOME": str(home)}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil(n * q / 100)
    return ordered[int(rank) - 1]


def summary(seconds: list[float]) -> dict[str, Any]:
    ms = [s * 1000 for s in seconds]
    return {"samples": len(ms), "p50_ms": round(percentile(ms, 50), 3),
            "p99_ms": round(percentile(ms, 99), 3), "max_ms": round(max(ms), 3),
            "mean_ms": round(statistics.fmean(ms), 3)}


class Server:
    """One server process and a client that counts what it is sent."""

    def __init__(self, tmp: Path, folder: Path, fake: FakeModelServer) -> None:
        self.tmp = tmp
        self.folder = folder
        self.fake = fake
        self.client = LanguageClient("pseudoclaude-bench", "1", converter_factory=get_converter)
        self.process: asyncio.subprocess.Process | None = None
        self.events: Counter[str] = Counter()
        self._drain: asyncio.Task[None] | None = None

        @self.client.feature("pseudoclaude/event")
        def on_event(params: Any) -> None:
            self.events[params["kind"]] += 1

        for method in ("pseudoclaude/contextUsage", "pseudoclaude/memoryChanged",
                       types.WINDOW_LOG_MESSAGE):
            self.client.feature(method)(lambda params: None)

    async def start(self) -> float:
        """Spawn and initialize; the seconds from spawn to the ``InitializeResult``."""
        started = time.perf_counter()
        await self.client.start_io(*SERVER, env=server_env(self.tmp / "home"),
                                   cwd=str(self.tmp))
        self.process = self.client._server  # pygls keeps the process it spawned here
        assert self.process is not None and self.process.stderr is not None
        self._drain = asyncio.ensure_future(self._discard(self.process.stderr))
        folder = types.WorkspaceFolder(uri=self.folder.as_uri(), name=self.folder.name)
        await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), process_id=os.getpid(),
            root_uri=folder.uri, workspace_folders=[folder],
            initialization_options={"provider": "anthropic", "apiKey": "sk-bench-0123456789",
                                    "baseUrl": self.fake.base_url, "maxRetries": 0,
                                    "memory": {"userDir": str(self.tmp / "user-memory")}},
        )), TIMEOUT)
        elapsed = time.perf_counter() - started
        self.client.initialized(types.InitializedParams())
        return elapsed

    @staticmethod
    async def _discard(stream: asyncio.StreamReader) -> None:
        while await stream.read(65536):
            pass

    def request(self, method: str, params: Any = None) -> Awaitable[Any]:
        return asyncio.wait_for(self.client.protocol.send_request_async(method, params),
                                TIMEOUT)

    async def context(self) -> float:
        """One ``pseudoclaude/context`` round trip, in seconds."""
        started = time.perf_counter()
        answer = await self.request("pseudoclaude/context")
        elapsed = time.perf_counter() - started
        assert isinstance(answer, dict) and "messageCount" in answer, answer
        return elapsed

    def peak_rss_kib(self) -> dict[str, int]:
        assert self.process is not None
        found: dict[str, int] = {}
        try:
            for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
                key, _, value = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    found[key] = int(value.split()[0])
        except OSError:
            pass
        return found

    async def close(self) -> None:
        if self.process is not None and self.process.returncode is None:
            try:
                await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
                self.client.exit(None)
                await asyncio.wait_for(self.process.wait(), TIMEOUT)
            except (TimeoutError, RuntimeError):
                self.process.kill()
        await asyncio.wait_for(self.client.stop(), TIMEOUT)
        if self._drain is not None:
            await asyncio.wait_for(self._drain, TIMEOUT)


async def cold_start(tmp: Path, folder: Path, fake: FakeModelServer,
                     spawns: int) -> dict[str, Any]:
    initialize: list[float] = []
    first_context: list[float] = []
    for _ in range(spawns):
        server = Server(tmp, folder, fake)
        started = time.perf_counter()
        try:
            initialize.append(await server.start())
            await server.context()
            first_context.append(time.perf_counter() - started)
        finally:
            await server.close()
    return {"spawns": spawns,
            "initialize_ms": [round(s * 1000, 1) for s in initialize],
            "initialize_median_ms": round(statistics.median(initialize) * 1000, 1),
            "first_context_median_ms": round(statistics.median(first_context) * 1000, 1)}


async def poll_during_runs(server: Server, turn: dict[str, Any], runs: int,
                           interval: float) -> dict[str, Any]:
    """``runs`` runs answered by ``turn``; meanwhile ask ``pseudoclaude/context`` every
    ``interval`` seconds. Events are counted per run (the last run's count is reported)."""
    latencies: list[float] = []
    durations: list[float] = []
    counts: list[Counter[str]] = []
    for i in range(runs):
        server.fake.add_turns(turn)
        before = server.events.copy()
        started = time.perf_counter()
        run = asyncio.ensure_future(server.request("pseudoclaude/run", {"prompt": f"go {i}"}))
        while not run.done():
            tick = time.perf_counter()
            latencies.append(await server.context())
            await asyncio.sleep(max(0.0, interval - (time.perf_counter() - tick)))
        result = await run
        durations.append(time.perf_counter() - started)
        assert result["stopReason"] == "completed", result
        deadline = time.monotonic() + TIMEOUT  # notifications precede the response; be sure
        while server.events["stop"] == before["stop"] and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        counts.append(server.events - before)
    text = [c["text"] for c in counts]
    return {"runs": runs, "run_s": round(statistics.median(durations), 3),
            "events_per_run": dict(counts[-1]), "events_total": sum(c.total() for c in counts),
            "text_events_per_run": text, **summary(latencies)}


async def bench(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    folder = tmp / "ws"
    folder.mkdir()
    (folder / "README.md").write_text("# ws\nA small sample project for the LSP benchmark.\n")
    (tmp / "home").mkdir()
    chunks = [f"chunk {i:04d} " for i in range(args.events)]
    with FakeModelServer({"rules": [MEMORY_REPLY]}) as fake:
        cold = await cold_start(tmp, folder, fake, args.spawns)

        server = Server(tmp, folder, fake)
        try:
            await server.start()
            for _ in range(20):  # warm-up: the workspace, the first requests
                await server.context()
            idle = summary([await server.context() for _ in range(args.idle)])

            first_run = await poll_during_runs(server, {"text": "warm"}, 1, args.interval)
            paced = await poll_during_runs(server, {"text": chunks, "delay": 0.002}, 1,
                                           args.interval)
            burst = await poll_during_runs(server, {"text": chunks}, args.bursts,
                                           args.interval)
            rss = server.peak_rss_kib()
        finally:
            await server.close()
    for row in (paced, burst):
        row["all_text_events_arrived"] = all(n == args.events
                                             for n in row["text_events_per_run"])
    return {"cold_start": cold, "idle": idle, "streaming_paced": paced,
            "streaming_burst": burst, "first_run": first_run, "server_rss_kib": rss,
            "events": args.events, "python": sys.version.split()[0], "cpus": os.cpu_count()}


def report(data: dict[str, Any]) -> None:
    cold, events = data["cold_start"], data["events"]
    print(f"cold start, spawn -> InitializeResult: median {cold['initialize_median_ms']} ms "
          f"of {cold['spawns']} {cold['initialize_ms']}; spawn -> first context answer: "
          f"median {cold['first_context_median_ms']} ms")
    print(f"{'pseudoclaude/context':<40} {'samples':>7} {'p50':>9} {'p99':>9} {'max':>9}")
    rows = (("idle", data["idle"]),
            (f"while {events:,} events stream, paced", data["streaming_paced"]),
            (f"while {events:,} events stream, burst", data["streaming_burst"]),
            ("during the first run (SDK import)", data["first_run"]))
    for label, row in rows:
        print(f"{label:<40} {row['samples']:>7} {row['p50_ms']:>6.2f} ms "
              f"{row['p99_ms']:>6.2f} ms {row['max_ms']:>6.1f} ms")
    for name in ("paced", "burst"):
        row = data[f"streaming_{name}"]
        arrived = "all arrived" if row["all_text_events_arrived"] else "MISSING SOME"
        print(f"{name} streaming: {row['runs']} run(s) of {row['run_s']} s (median), "
              f"{row['events_total']:,} pseudoclaude/event notifications; text events per run "
              f"{sorted(set(row['text_events_per_run']))} of {events:,}: {arrived}")
    rss = data["server_rss_kib"]
    if rss:
        print(f"server RSS: peak {rss.get('VmHWM', 0) / 1024:.1f} MiB, "
              f"now {rss.get('VmRSS', 0) / 1024:.1f} MiB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--spawns", type=int, default=5, help="cold starts (default 5)")
    parser.add_argument("--idle", type=int, default=500, help="idle requests (default 500)")
    parser.add_argument("--events", type=int, default=1000,
                        help="text chunks of the streamed turn (default 1000)")
    parser.add_argument("--bursts", type=int, default=20,
                        help="unpaced streaming runs (default 20)")
    parser.add_argument("--interval", type=float, default=0.010,
                        help="context polling interval while a run streams (default 0.010 s)")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="lsp-bench-"))
    try:
        data = asyncio.run(bench(args, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    report(data)
    (OUT / "lsp_bench.json").write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {OUT / 'lsp_bench.json'}")
    complete = all(data[f"streaming_{n}"]["all_text_events_arrived"] for n in ("paced", "burst"))
    return 0 if complete else 1


if __name__ == "__main__":
    sys.exit(main())
