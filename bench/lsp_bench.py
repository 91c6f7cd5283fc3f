"""LSP server benchmark (`make bench`): cold ``initialize``, ``pseudoclaude/context`` latency.

Every server is a real ``python -m pseudoclaude lsp`` process over stdio, with one workspace
folder in a temporary directory, a private ``HOME``, no API key from the environment, and the
scripted fake model on loopback (``python -m pseudoclaude fake-model --port 0``, its own
process, scripted before each run with ``POST /_script``; ``--fake-model thread`` runs it in
the bench's process instead, as this bench did before).

The same measurements are made by two clients, so the report can say how much of a figure is
the client's:

- ``plain``: a tiny JSON-RPC client, standard library only. A reader thread parses the
  ``Content-Length`` frames and timestamps each one as soon as its body is read; a latency is
  that timestamp minus the moment the request was written. It is as close to the server's own
  answer time as an outside process can see.
- ``pygls``: pygls's ``LanguageClient`` (custom results kept as dicts), as editors' test
  harnesses drive the server; a latency is the ``await`` of ``send_request_async``, so it
  includes the client's decoding of every notification that arrives in between.

Phases, for each client:

1. ``first_run``: a fresh server, ``initialize``, ``initialized``, one ``pseudoclaude/context``
   (the workspace exists), then at once a run whose model turn streams ``--events`` text chunks
   (the provider SDK is imported during it: the server starts importing it in the background at
   ``initialized``), ``pseudoclaude/context`` asked every ``--interval`` seconds until the run
   answers. ``--spawns`` fresh servers, samples pooled.
2. ``idle``: on the last of those servers, once it is quiet, ``--idle`` round trips one after
   the other.
3. ``paced``: one run of ``--events`` chunks, the fake model waiting 2 ms before each (a fast
   real model sends a few hundred a second), polled as above.
4. ``burst``: ``--bursts`` runs of ``--events`` chunks with no pause at all (the whole turn
   arrives in well under a second), the worst case for the event loop, polled as above.

For every streamed run the client checks that the text it was sent, in order, is exactly the
scripted text (the server may merge consecutive deltas into one ``pseudoclaude/event``, so the
number of ``text`` notifications is reported, not required). Also: cold start (pygls client,
spawn to ``InitializeResult``, median of ``--cold`` fresh processes) and the server's peak RSS
(``VmHWM``).

Prints a table and writes ``bench/out/lsp_bench.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

OUT = Path(__file__).resolve().parent / "out"
SERVER = [sys.executable, "-m", "pseudoclaude", "lsp"]
FAKE_MODEL = [sys.executable, "-m", "pseudoclaude", "fake-model", "--port", "0"]
TIMEOUT = 60.0
MEMORY_REPLY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}
CREDENTIALS = ("ANTHROPIC_", "OPENAI_")


def server_env(home: Path) -> dict[str, str]:
    """The environment without provider credentials, with a private HOME."""
    env = {key: value for key, value in os.environ.items()
           if not key.upper().startswith(CREDENTIALS)
           and not key.upper().endswith(("_API_KEY", "_APIKEY", "_AUTH_TOKEN"))}
    return env | {"HOME": str(home)}


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil(n * q / 100)
    return ordered[int(rank) - 1]


def summary(seconds: list[float]) -> dict[str, Any]:
    ms = [s * 1000 for s in seconds] or [0.0]
    return {"samples": len(seconds), "p50_ms": round(percentile(ms, 50), 3),
            "p99_ms": round(percentile(ms, 99), 3), "max_ms": round(max(ms), 3),
            "mean_ms": round(statistics.fmean(ms), 3)}


def init_options(tmp: Path, base_url: str) -> dict[str, Any]:
    return {"provider": "anthropic", "apiKey": "sk-bench-0123456789", "baseUrl": base_url,
            "maxRetries": 0, "memory": {"userDir": str(tmp / "user-memory")}}


# -- the fake model ----------------------------------------------------------------------------

class FakeModel:
    """The scripted model: its own process (``process``) or a thread of this one (``thread``);
    scripted over HTTP either way."""

    def __init__(self, mode: str) -> None:
        self._thread: Any = None
        self._process: subprocess.Popen[str] | None = None
        if mode == "thread":
            from pseudoclaude.fake_model import FakeModelServer

            self._thread = FakeModelServer({"rules": [MEMORY_REPLY]})
            self._thread.start()
            self.base_url: str = self._thread.base_url
        else:
            script = Path(tempfile.mkdtemp(prefix="lsp-bench-fake-")) / "script.json"
            script.write_text(json.dumps({"rules": [MEMORY_REPLY]}))
            self._process = subprocess.Popen([*FAKE_MODEL, "--script", str(script)],
                                             stdout=subprocess.PIPE, text=True,
                                             env=server_env(script.parent))
            self._script_dir = script.parent
            assert self._process.stdout is not None
            self.base_url = self._process.stdout.readline().strip()
            assert self.base_url.startswith("http://"), self.base_url

    def script(self, turn: dict[str, Any]) -> None:
        """The next model request (with tools) answers ``turn``; memory updates get ``[]``."""
        body = json.dumps({"rules": [MEMORY_REPLY], "turns": [turn]}).encode()
        request = urllib.request.Request(self.base_url + "/_script", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=TIMEOUT) as answer:
            assert answer.status == 200

    def close(self) -> None:
        if self._thread is not None:
            self._thread.stop()
        if self._process is not None:
            self._process.terminate()
            self._process.wait(TIMEOUT)
            shutil.rmtree(self._script_dir, ignore_errors=True)


# -- the plain client (standard library only) ----------------------------------------------------

class PlainClient:
    """A JSON-RPC client over a server's stdio, standard library only.

    A reader thread parses the ``Content-Length`` frames; a response is timestamped as soon as
    its body has been read, before it is decoded. Requests from the server are answered with
    ``null``; ``pseudoclaude/event`` notifications are counted per kind and their text kept."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path, log: IO[bytes]) -> None:
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=log, env=env, cwd=cwd)
        self._write_lock = threading.Lock()
        self._ids = 0
        self._answered = threading.Condition()
        self._answers: dict[int, tuple[float, dict[str, Any]]] = {}
        self.kinds: Counter[str] = Counter()
        self.text: list[str] = []
        self.frames = 0
        self._reader = threading.Thread(target=self._read, name="plain-client-reader",
                                        daemon=True)
        self._reader.start()

    # the wire
    def _write(self, message: dict[str, Any]) -> float:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        frame = b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        stdin = self.process.stdin
        assert stdin is not None
        with self._write_lock:
            sent = time.perf_counter()
            stdin.write(frame)
            stdin.flush()
        return sent

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = -1
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = stream.read(length)
            at = time.perf_counter()
            if len(body) < length:
                return
            self.frames += 1
            self._dispatch(at, json.loads(body))

    def _dispatch(self, at: float, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method is not None and "id" in message:  # a request from the server
            self._write({"id": message["id"], "result": None})
        elif method == "pseudoclaude/event":
            params = message["params"]
            self.kinds[params["kind"]] += 1
            if params["kind"] == "text":
                self.text.append(params["delta"])
        elif method is None:
            with self._answered:
                self._answers[message["id"]] = (at, message)
                self._answered.notify_all()

    # requests
    def send(self, method: str, params: Any = None) -> tuple[int, float]:
        self._ids += 1
        request_id = self._ids
        # always a params member: pygls answers a request without one with no response
        return request_id, self._write({"id": request_id, "method": method, "params": params})

    def answered(self, request_id: int) -> bool:
        with self._answered:
            return request_id in self._answers

    def wait(self, request_id: int, timeout: float = TIMEOUT) -> tuple[float, Any]:
        """When the answer was read, and its result (raises on an error answer)."""
        with self._answered:
            if not self._answered.wait_for(lambda: request_id in self._answers, timeout):
                raise TimeoutError(f"request {request_id} not answered in {timeout} s")
            at, message = self._answers.pop(request_id)
        if "error" in message:
            raise RuntimeError(f"request {request_id} failed: {message['error']}")
        return at, message.get("result")

    def request(self, method: str, params: Any = None) -> tuple[float, Any]:
        """The seconds from writing the request to reading its answer, and the result."""
        request_id, sent = self.send(method, params)
        at, result = self.wait(request_id)
        return at - sent, result

    def notify(self, method: str, params: Any = None) -> None:
        self._write({"method": method, "params": params})

    # life
    def start(self, folder: Path, options: dict[str, Any]) -> float:
        """``initialize``: seconds from now to the answer; then ``initialized``."""
        started = time.perf_counter()
        uri = folder.as_uri()
        _, result = self.request("initialize", {
            "processId": os.getpid(), "rootUri": uri, "capabilities": {},
            "workspaceFolders": [{"uri": uri, "name": folder.name}],
            "initializationOptions": options})
        assert "capabilities" in result, result
        elapsed = time.perf_counter() - started
        self.notify("initialized", {})
        return elapsed

    def close(self) -> None:
        try:
            self.request("shutdown")
            self.notify("exit")
            self.process.wait(TIMEOUT)
        except (OSError, TimeoutError, RuntimeError):
            self.process.kill()
            self.process.wait(TIMEOUT)
        self._reader.join(TIMEOUT)


# -- the pygls client --------------------------------------------------------------------------

class PyglsClient:
    """One server process driven by pygls's ``LanguageClient`` (custom results as dicts)."""

    def __init__(self, tmp: Path) -> None:
        from lsprotocol import types
        from lsprotocol.converters import get_converter
        from pygls.lsp.client import LanguageClient

        self.tmp = tmp
        self.client = LanguageClient("pseudoclaude-bench", "1", converter_factory=get_converter)
        self.process: asyncio.subprocess.Process | None = None
        self.kinds: Counter[str] = Counter()
        self.text: list[str] = []
        self._drain: asyncio.Task[None] | None = None

        @self.client.feature("pseudoclaude/event")
        def on_event(params: Any) -> None:
            self.kinds[params["kind"]] += 1
            if params["kind"] == "text":
                self.text.append(params["delta"])

        for method in ("pseudoclaude/contextUsage", "pseudoclaude/memoryChanged",
                       types.WINDOW_LOG_MESSAGE):
            self.client.feature(method)(lambda params: None)

    async def start(self, folder: Path, options: dict[str, Any]) -> float:
        """Spawn and initialize; the seconds from spawn to the ``InitializeResult``."""
        from lsprotocol import types

        started = time.perf_counter()
        await self.client.start_io(*SERVER, env=server_env(self.tmp / "home"),
                                   cwd=str(self.tmp))
        self.process = self.client._server  # pygls keeps the process it spawned here
        assert self.process is not None and self.process.stderr is not None
        self._drain = asyncio.ensure_future(self._discard(self.process.stderr))
        workspace = types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)
        await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), process_id=os.getpid(),
            root_uri=workspace.uri, workspace_folders=[workspace],
            initialization_options=options)), TIMEOUT)
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


# -- the measurements ------------------------------------------------------------------------------

class Setup:
    """What every measurement shares: the folder, the fake model, the scripted turns."""

    def __init__(self, args: argparse.Namespace, tmp: Path, fake: FakeModel) -> None:
        self.args = args
        self.tmp = tmp
        self.folder = tmp / "ws"
        self.fake = fake
        self.chunks = [f"chunk {i:04d} " for i in range(args.events)]
        self.expected = "".join(self.chunks)
        self.options = init_options(tmp, fake.base_url)

    def burst(self) -> dict[str, Any]:
        return {"text": self.chunks}

    def paced(self) -> dict[str, Any]:
        return {"text": self.chunks, "delay": 0.002}


class Runs:
    """Polled runs of one phase: latencies, durations, and what each run's text looked like."""

    def __init__(self) -> None:
        self.latencies: list[float] = []
        self.durations: list[float] = []
        self.text_events: list[int] = []
        self.text_ok: list[bool] = []

    def add_run(self, duration: float, deltas: list[str], expected: str,
                stop_reason: str) -> None:
        assert stop_reason == "completed", stop_reason
        self.durations.append(duration)
        self.text_events.append(len(deltas))
        self.text_ok.append("".join(deltas) == expected)

    def as_json(self) -> dict[str, Any]:
        return {"runs": len(self.durations),
                "run_s": round(statistics.median(self.durations), 3) if self.durations else 0,
                "text_events_per_run": self.text_events,
                "all_text_arrived_in_order": all(self.text_ok), **summary(self.latencies)}


def plain_poll(client: PlainClient, setup: Setup, turn: dict[str, Any], runs: Runs,
               prompt: str) -> None:
    """One run answered by ``turn``; ``pseudoclaude/context`` every ``interval`` meanwhile."""
    interval = setup.args.interval
    setup.fake.script(turn)
    client.text = []
    stops = client.kinds["stop"]
    run_id, started = client.send("pseudoclaude/run", {"prompt": prompt})
    while not client.answered(run_id):
        tick = time.perf_counter()
        latency, answer = client.request("pseudoclaude/context")
        assert isinstance(answer, dict) and "messageCount" in answer, answer
        runs.latencies.append(latency)
        time.sleep(max(0.0, interval - (time.perf_counter() - tick)))
    at, result = client.wait(run_id)
    assert client.kinds["stop"] == stops + 1, "the stop event must precede the run's answer"
    runs.add_run(at - started, client.text, setup.expected, result["stopReason"])


def quiet(seconds: float = 0.5) -> None:
    """Let the run's background work (the memory update) finish before the next phase."""
    time.sleep(seconds)


def plain_bench(setup: Setup) -> dict[str, Any]:
    args, tmp = setup.args, setup.tmp
    first, paced, burst = Runs(), Runs(), Runs()
    idle: list[float] = []
    rss: dict[str, int] = {}
    with open(tmp / "plain-server.log", "ab") as log:
        for spawn in range(args.spawns):
            client = PlainClient(SERVER, server_env(tmp / "home"), tmp, log)
            try:
                client.start(setup.folder, setup.options)
                client.request("pseudoclaude/context")
                plain_poll(client, setup, setup.burst(), first, f"first {spawn}")
                if spawn < args.spawns - 1:
                    continue
                quiet()
                for _ in range(20):
                    client.request("pseudoclaude/context")
                idle = [client.request("pseudoclaude/context")[0] for _ in range(args.idle)]
                quiet()
                plain_poll(client, setup, setup.paced(), paced, "paced")
                for i in range(args.bursts):
                    quiet(0.2)
                    plain_poll(client, setup, setup.burst(), burst, f"burst {i}")
                rss = peak_rss_kib(client.process.pid)
            finally:
                client.close()
    return {"first_run": first.as_json(), "idle": summary(idle),
            "streaming_paced": paced.as_json(), "streaming_burst": burst.as_json(),
            "server_rss_kib": rss}


async def pygls_poll(client: PyglsClient, setup: Setup, turn: dict[str, Any], runs: Runs,
                     prompt: str) -> None:
    interval = setup.args.interval
    await asyncio.to_thread(setup.fake.script, turn)
    client.text = []
    stops = client.kinds["stop"]
    started = time.perf_counter()
    run = asyncio.ensure_future(client.request("pseudoclaude/run", {"prompt": prompt}))
    while not run.done():
        tick = time.perf_counter()
        runs.latencies.append(await client.context())
        await asyncio.sleep(max(0.0, interval - (time.perf_counter() - tick)))
    result = await run
    duration = time.perf_counter() - started
    deadline = time.monotonic() + TIMEOUT  # notifications precede the response; be sure
    while client.kinds["stop"] == stops and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    runs.add_run(duration, client.text, setup.expected, result["stopReason"])


async def pygls_bench(setup: Setup) -> dict[str, Any]:
    args, tmp = setup.args, setup.tmp
    first, paced, burst = Runs(), Runs(), Runs()
    idle: list[float] = []
    for spawn in range(args.spawns):
        client = PyglsClient(tmp)
        try:
            await client.start(setup.folder, setup.options)
            await client.context()
            await pygls_poll(client, setup, setup.burst(), first, f"first {spawn}")
            if spawn < args.spawns - 1:
                continue
            await asyncio.sleep(0.5)
            for _ in range(20):
                await client.context()
            idle = [await client.context() for _ in range(args.idle)]
            await asyncio.sleep(0.5)
            await pygls_poll(client, setup, setup.paced(), paced, "paced")
            for i in range(args.bursts):
                await asyncio.sleep(0.2)
                await pygls_poll(client, setup, setup.burst(), burst, f"burst {i}")
        finally:
            await client.close()
    return {"first_run": first.as_json(), "idle": summary(idle),
            "streaming_paced": paced.as_json(), "streaming_burst": burst.as_json()}


async def cold_start(setup: Setup) -> dict[str, Any]:
    initialize: list[float] = []
    first_context: list[float] = []
    for _ in range(setup.args.cold):
        client = PyglsClient(setup.tmp)
        started = time.perf_counter()
        try:
            initialize.append(await client.start(setup.folder, setup.options))
            await client.context()
            first_context.append(time.perf_counter() - started)
        finally:
            await client.close()
    return {"spawns": setup.args.cold,
            "initialize_ms": [round(s * 1000, 1) for s in initialize],
            "initialize_median_ms": round(statistics.median(initialize) * 1000, 1),
            "first_context_median_ms": round(statistics.median(first_context) * 1000, 1)}


def peak_rss_kib(pid: int) -> dict[str, int]:
    found: dict[str, int] = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmHWM", "VmRSS"):
                found[key] = int(value.split()[0])
    except OSError:
        pass
    return found


def load_average() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except OSError:
        return []


@contextmanager
def environment(args: argparse.Namespace) -> Iterator[tuple[Path, FakeModel]]:
    tmp = Path(tempfile.mkdtemp(prefix="lsp-bench-"))
    fake: FakeModel | None = None
    try:
        folder = tmp / "ws"
        folder.mkdir()
        (folder / "README.md").write_text("# ws\nA small sample project for the LSP benchmark.\n")
        (tmp / "home").mkdir()
        fake = FakeModel(args.fake_model)
        yield tmp, fake
    finally:
        if fake is not None:
            fake.close()
        if args.keep_logs and (tmp / "plain-server.log").exists():
            OUT.mkdir(exist_ok=True)
            shutil.copy(tmp / "plain-server.log", OUT / "lsp_bench-server.log")
        shutil.rmtree(tmp, ignore_errors=True)


def bench(args: argparse.Namespace) -> dict[str, Any]:
    data: dict[str, Any] = {"events": args.events, "interval_s": args.interval,
                            "fake_model": args.fake_model, "python": sys.version.split()[0],
                            "cpus": os.cpu_count(), "load_average_before": load_average()}
    with environment(args) as (tmp, fake):
        setup = Setup(args, tmp, fake)
        if "plain" in args.clients:
            data["plain"] = plain_bench(setup)
        if "pygls" in args.clients:
            data["pygls"] = asyncio.run(pygls_bench(setup))
        if args.cold:
            data["cold_start"] = asyncio.run(cold_start(setup))
    data["load_average_after"] = load_average()
    return data


PHASES = (("idle", "idle"), ("streaming_paced", "while {events:,} chunks stream, paced"),
          ("streaming_burst", "while {events:,} chunks stream, burst"),
          ("first_run", "during a server's first run"))


def report(data: dict[str, Any], out: Callable[[str], None] = print) -> None:
    events = data["events"]
    clients = [c for c in ("plain", "pygls") if c in data]
    out(f"pseudoclaude/context every {data['interval_s'] * 1000:g} ms; fake model: "
        f"{data['fake_model']}; load average {data['load_average_before']} -> "
        f"{data['load_average_after']}")
    out(f"{'':<40}" + "".join(f" {c + ' p50':>10} {c + ' p99':>10} {c + ' max':>10} {'n':>5}"
                              for c in clients))
    for key, label in PHASES:
        line = f"{label.format(events=events):<40}"
        for c in clients:
            row = data[c][key]
            line += (f" {row['p50_ms']:>7.2f} ms {row['p99_ms']:>7.2f} ms {row['max_ms']:>7.1f} ms"
                     f" {row['samples']:>5}")
        out(line)
    if len(clients) == 2:
        out("the pygls client's share (pygls p99 - plain p99): " + ", ".join(
            f"{key} {data['pygls'][key]['p99_ms'] - data['plain'][key]['p99_ms']:+.1f} ms"
            for key, _ in PHASES))
    for c in clients:
        for key in ("first_run", "streaming_paced", "streaming_burst"):
            row = data[c][key]
            ok = "all text arrived, in order" if row["all_text_arrived_in_order"] else (
                "TEXT MISSING OR OUT OF ORDER")
            counts = row["text_events_per_run"]
            out(f"{c} {key}: {row['runs']} run(s) of {row['run_s']} s (median); text "
                f"notifications per run {min(counts, default=0)}-{max(counts, default=0)} for "
                f"{events:,} chunks; {ok}")
    if "cold_start" in data:
        cold = data["cold_start"]
        out(f"cold start, spawn -> InitializeResult: median {cold['initialize_median_ms']} ms "
            f"of {cold['spawns']} {cold['initialize_ms']}; spawn -> first context answer: "
            f"median {cold['first_context_median_ms']} ms")
    rss = data.get("plain", {}).get("server_rss_kib")
    if rss:
        out(f"server RSS: peak {rss.get('VmHWM', 0) / 1024:.1f} MiB, "
            f"now {rss.get('VmRSS', 0) / 1024:.1f} MiB")


def complete(data: dict[str, Any]) -> bool:
    return all(data[c][key]["all_text_arrived_in_order"]
               for c in ("plain", "pygls") if c in data
               for key in ("first_run", "streaming_paced", "streaming_burst"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--clients", default="plain,pygls",
                        help="comma-separated: plain, pygls (default both)")
    parser.add_argument("--spawns", type=int, default=5,
                        help="fresh servers measured during their first run (default 5)")
    parser.add_argument("--cold", type=int, default=5,
                        help="cold starts timed with the pygls client (default 5; 0: none)")
    parser.add_argument("--idle", type=int, default=500, help="idle requests (default 500)")
    parser.add_argument("--events", type=int, default=1000,
                        help="text chunks of the streamed turn (default 1000)")
    parser.add_argument("--bursts", type=int, default=30,
                        help="unpaced streaming runs (default 30)")
    parser.add_argument("--interval", type=float, default=0.005,
                        help="context polling interval while a run streams (default 0.005 s)")
    parser.add_argument("--fake-model", choices=("process", "thread"), default="process",
                        help="the fake model in its own process (default) or in this one")
    parser.add_argument("--keep-logs", action="store_true",
                        help="copy the plain client's server stderr to bench/out/")
    parser.add_argument("--out", type=Path, default=OUT / "lsp_bench.json")
    args = parser.parse_args()
    args.clients = {c.strip() for c in args.clients.split(",") if c.strip()}
    unknown = args.clients - {"plain", "pygls"}
    if unknown:
        parser.error(f"unknown client(s): {', '.join(sorted(unknown))}")
    data = bench(args)
    report(data)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"wrote {args.out}")
    return 0 if complete(data) else 1


if __name__ == "__main__":
    sys.exit(main())
