"""Crash campaign: a real server killed with SIGKILL at random moments, resumed every time.

One *lane* is one workspace folder worked on by a succession of server processes
(``pseudoclaude lsp`` over stdio, driven by pygls's ``LanguageClient`` as an editor would) against
the scripted fake model. A lane starts with one run on a server that is not killed (it
creates the session and times two runs); then each cycle:

1. a NEW server starts and resumes ``latest`` (``pseudoclaude/sessions/resume``);
2. operations follow back to back: ``pseudoclaude/run`` (1-3 tool rounds reading files, one of
   them a 60,000-byte file whose result is spilled to ``tool-results/``; the final turn
   sometimes streams slowly) and, one time in four, a manual ``pseudoclaude/compact``.
   ``contextWindow`` is small (40,000 tokens) so automatic compaction happens every few runs;
   every completed run schedules a memory update whose reply creates or updates a project note
   and a user note;
3. at a random moment after the first operation started (uniform in 0 .. the mean duration of
   a server's first run + 3x that of a later run, over the lane's recent completed runs) the
   server is killed with SIGKILL — during streaming, tool execution, spills, compaction, memory
   writes or between them;
4. the client drains what the server sent before it died, then the campaign checks the disk:
   the session (``load_session``), what was acknowledged, the memory stores and spill files.

After the last kill every lane resumes once more and shuts its server down cleanly.

Checks (their counts are the campaign's targets: all zero):

- ``servers that failed to start``, ``servers that died before the kill`` (on their own),
  ``resumes failed`` (the resume request errored or timed out) and ``resume mismatches`` (it
  answered another session, or a message count different from what ``load_session`` gave for
  the same bytes just before);
- ``sessions unloadable`` and ``protocol-invalid histories``:
  ``pseudoclaude.session.repair.is_valid(load_session(store, "latest").messages)``;
- ``acknowledged messages lost``. A message is *acknowledged* when the client has received
  something the server sends only after the message's log line was written and fsynced:

  * a run's user prompt: any ``pseudoclaude/event`` of that run (the runner appends the prompt
    before it emits anything), or the run's response;
  * an assistant turn (identified by a unique marker in its text): the ``usage`` event of that
    turn (emitted right after the append), or the run's response;
  * a tool round (the assistant's tool calls together with all their results): the first event
    of the run after the round's ``toolResult`` events that is not itself a ``toolResult``
    (the next turn's ``text``/``toolCall``/``usage``, a ``compact``, ``warning`` or ``error``
    from context management, or ``stop``), or the run's response. A ``toolResult`` event alone
    does not acknowledge anything: the runner emits it when the tool finishes and appends the
    round's results after the last call of the round has finished, and a round cut short by a
    crash is dropped on resume by design (SPEC §3, a dangling tool call at the tail). Rounds
    whose ``toolResult`` events had arrived, unacknowledged, when the kill came are counted
    (information, not a failure) as kept or dropped on resume;
  * ``memory`` events from the background memory update are not run events and acknowledge
    no message.

  After every kill each acknowledged item must be in the reloaded history, unless a committed
  ``replace`` line of reason ``compact`` (automatic or manual) summarised it: the campaign
  follows the log line by line and records which items each compact replace dropped. A compact
  replace must keep a suffix of the history verbatim after its summary pair, otherwise it is
  counted in ``compact replaces not keeping a suffix`` (and a replace of any reason other than
  ``compact`` or ``repair`` in ``unexpected replaces``).
- ``memory files corrupt``: every file of both memory stores that the loader reads as a note
  (``unsafe_filename(name) is None``) parses with ``parse_note`` without a problem; every
  non-blank line of ``MEMORY.md`` is valid UTF-8 and parses with ``parse_line``; temporary
  files left by a kill start with ``.`` (the loader ignores them) and are reported separately.
  ``acknowledged memory changes lost``: after a ``memory`` event with status ``updated``, each
  changed note holds the content of that update or a later one (the fake model's memory reply
  carries a revision number) and ``MEMORY.md`` lists it.
- ``spill files missing or short``: every offload of the reloaded ledger names a spill file of
  exactly the recorded size.
- Memory with consent (SPEC §11): every second lane (odd numbers) runs with ``memory.mode:
  confirm``, so its memory updates queue proposals in ``<dataDir>/proposals/``; one operation
  in four of such a lane (instead of a run or a compaction) reviews the oldest proposal: accept
  (sometimes with an edited body), or reject. Checks: ``proposal files corrupt`` (every
  ``*.json`` of the folder loads as a proposal: a kill leaves each one whole or absent; temp
  files of a kill start with ``.`` and are counted apart), ``accepted proposals still
  pending`` (an acknowledged accept removed its proposal) and ``accepted notes half-applied``
  (a proposal marked as being accepted has its note either as proposed-from or as accepted,
  nothing else); an acknowledged accept also counts in ``acknowledged memory changes lost``
  (the note holds that revision or a later one, and ``MEMORY.md`` lists it). At the end such a
  lane's last server accepts what is left (an accept a kill interrupted is finished when the
  next server starts), and the folder must then be empty.

The servers are started in one of two ways (``--launch``):

- ``exec``: ``python -m pseudoclaude lsp`` for every cycle, as an editor does. Each start pays
  for importing pygls and, at the first run, the provider SDK (about 1.5-2.5 s of CPU), so
  1,000 kills take about an hour on 2 cores;
- ``fork`` (default): a pre-imported *zygote* process (``--zygote``) forks each server: the
  child puts the pipes it was handed on fds 0-2 and calls ``pseudoclaude.cli.main(["lsp"])``,
  the same code path as ``python -m pseudoclaude lsp`` minus the imports. The client still
  starts a process over stdio (a 20-line launcher that hands its stdio to the zygote and exits
  with the server's status) and the kill still hits the server process itself. What this mode
  cannot land a kill in is the first run's import of the provider SDK.

The schedule (operations, rounds, kill delays) comes from ``--seed``; the moment a kill lands
is a matter of timing and differs between runs of the same seed.

Run: ``.venv/bin/python bench/crash_campaign.py [--kills 1000] [--lanes 2] [--launch fork]
[--rewind-kills 200]``. Prints progress and a table; writes ``bench/out/crash_campaign.json``.
``--rewind-kills N`` (default 0) then runs the rewind lane (``bench/crash_rewind.py``: servers
killed in the middle of code rewinds of 300 files) with N kills, prints its table too and puts
its report under ``rewind`` in the same JSON (``ok`` covers both). ``--two-process-kills N``
(default 0) then runs the two-process lane (``bench/crash_sessions.py``: two servers on one
folder taking turns on one session, one of them killed) with N kills, under ``two_process``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import random
import re
import select
import shutil
import signal
import socket
import statistics
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

from pseudoclaude.fake_model import FakeModelServer, Script
from pseudoclaude.fake_model.script import request_facts
from pseudoclaude.memory.atomic import read_bytes
from pseudoclaude.memory.index import parse_line
from pseudoclaude.memory.notes import INDEX_NAME, parse_note, unsafe_filename
from pseudoclaude.memory.proposals import ABSENT, accept_state, decode_proposal
from pseudoclaude.redact import without_credentials
from pseudoclaude.session import SessionError, SessionStore, list_sessions, load_session
from pseudoclaude.session.repair import is_valid

OUT = Path(__file__).resolve().parent / "out"
THIS_FILE = Path(__file__).resolve()
SERVER_ARGS = ["-m", "pseudoclaude", "lsp"]
TIMEOUT = 60.0  # generous: a loaded 2-core machine
PID_LINE = b"pseudoclaude-pid "
ZYGOTE_PRELOAD = ("pseudoclaude.cli", "pseudoclaude.lsp.server", "pseudoclaude.llm.anthropic",
                  "pseudoclaude.llm.openai", "anthropic", "openai", "watchdog.observers")
# The launcher: hands its stdin/stdout/stderr to the zygote, waits for the server's exit status.
LAUNCHER = r"""
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
socket.send_fds(s, [b"spawn"], [0, 1, 2])
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
data = b""
while not data.endswith(b"\n"):
    chunk = s.recv(64)
    if not chunk:
        break
    data += chunk
code = int(data.strip() or b"1")
sys.exit(128 - code if code < 0 else code)
"""
MARK = re.compile(r"<<([PT]\d+\.\d+)>>")
SUMMARY_MARK = "CAMPAIGN-SUMMARY"
BIG_BYTES = 60_000  # over the 50,000-byte single-result limit: spilled
MEDIUM_BYTES = 14_000
LATER_RUNS = 3  # kills land in 0 .. (a server's first run + LATER_RUNS later runs), on average


# -- launching servers ---------------------------------------------------------------------

def zygote_main(path: str) -> int:
    """``--zygote PATH``: pre-import the server, then fork one server per launcher connection.

    Single-threaded on purpose (forking a process with threads is unsafe). Reads stdin only to
    notice that the campaign is gone (EOF), then kills the servers it still has.
    """
    for module in ZYGOTE_PRELOAD:
        importlib.import_module(module)
    assert threading.active_count() == 1, "the zygote must not have threads before forking"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    waiting: dict[int, socket.socket] = {}  # server pid -> its launcher's connection
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    try:
        while True:
            readable, _, _ = select.select([listener.fileno(), 0], [], [], 0.02)
            _reap(waiting)
            if 0 in readable and not os.read(0, 64):
                return 0
            if listener.fileno() not in readable:
                continue
            conn, _ = listener.accept()
            _, fds, _, _ = socket.recv_fds(conn, 64, 3)
            if len(fds) != 3:
                for fd in fds:
                    os.close(fd)
                conn.close()
                continue
            pid = os.fork()
            if pid == 0:
                _serve_child(listener, conn, waiting, fds)  # never returns
            for fd in fds:
                os.close(fd)
            waiting[pid] = conn
    finally:
        for pid in waiting:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 5
        while waiting and time.monotonic() < deadline:
            _reap(waiting)
            time.sleep(0.01)


def _reap(waiting: dict[int, socket.socket]) -> None:
    while waiting:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        conn = waiting.pop(pid, None)
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.sendall(b"%d\n" % os.waitstatus_to_exitcode(status))
            conn.close()


def _serve_child(listener: socket.socket, conn: socket.socket,
                 waiting: dict[int, socket.socket], fds: list[int]) -> None:
    code = 1
    try:
        listener.close()
        conn.close()
        for other in waiting.values():
            other.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.write(2, PID_LINE + b"%d\n" % os.getpid())
        from pseudoclaude.cli import main

        code = main(["lsp"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        with contextlib.suppress(Exception):
            os.write(2, traceback.format_exc().encode())
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        os._exit(code)


def server_env(home: Path) -> dict[str, str]:
    """The environment without real API keys, with a private HOME."""
    return without_credentials() | {"HOME": str(home)}


class Launcher:
    """How server processes are started: ``exec`` (a fresh interpreter) or ``fork`` (zygote)."""

    def __init__(self, mode: str, root: Path, env: dict[str, str]) -> None:
        if mode not in ("exec", "fork"):
            raise ValueError(f"unknown launch mode {mode!r}")
        self.mode = mode
        self.root = root
        self.env = env
        self.socket_path = str(root / "zygote.sock")
        self._zygote: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        if self.mode != "fork":
            return
        self._zygote = await asyncio.create_subprocess_exec(
            sys.executable, str(THIS_FILE), "--zygote", self.socket_path,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=self.env,
            cwd=str(self.root))
        assert self._zygote.stdout is not None
        line = await asyncio.wait_for(self._zygote.stdout.readline(), TIMEOUT)
        if line.strip() != b"ready":
            raise RuntimeError(f"the zygote did not start: {line!r}")

    def command(self) -> list[str]:
        if self.mode == "exec":
            return [sys.executable, *SERVER_ARGS]
        return [sys.executable, "-I", "-S", "-c", LAUNCHER, self.socket_path]

    async def close(self) -> None:
        zygote, self._zygote = self._zygote, None
        if zygote is None:
            return
        assert zygote.stdin is not None
        zygote.stdin.close()  # EOF: the zygote kills what is left and exits
        try:
            await asyncio.wait_for(zygote.wait(), 10)
        except TimeoutError:
            zygote.kill()
            await zygote.wait()


# -- one server, driven as an editor would -------------------------------------------------

class ServerDied(Exception):
    """The server process is gone (killed, or crashed)."""


class Editor:
    """One server process over stdio and what it sent back."""

    def __init__(self, name: str, on_event: Callable[[dict[str, Any]], None] | None = None
                 ) -> None:
        self.client = LanguageClient(name, "1", converter_factory=get_converter)
        self.process: asyncio.subprocess.Process | None = None
        self.pid: int | None = None
        self.stderr = bytearray()
        self.events: list[dict[str, Any]] = []
        self._on_event = on_event
        self._drain: asyncio.Task[None] | None = None
        self._pid_known = asyncio.Event()
        self.killed = False
        self.context_usage = 0
        self.memory_changed = 0
        self.proposals_changed = 0

        @self.client.feature("pseudoclaude/event")
        def event(params: Any) -> None:
            self.events.append(params)
            if self._on_event is not None:
                self._on_event(params)

        @self.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        def approve(params: types.ShowMessageRequestParams) -> types.MessageActionItem:
            return types.MessageActionItem(title="Allow once")

        @self.client.feature("pseudoclaude/contextUsage")
        def context_usage(params: Any) -> None:
            self.context_usage += 1

        @self.client.feature("pseudoclaude/memoryChanged")
        def memory_changed(params: Any) -> None:
            self.memory_changed += 1

        @self.client.feature("pseudoclaude/memoryProposals")
        def memory_proposals(params: Any) -> None:
            self.proposals_changed += 1

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def log_message(params: types.LogMessageParams) -> None:
            self.stderr.extend(f"[logMessage] {params.message}\n".encode())

    async def start(self, launcher: Launcher, folders: list[Path], options: dict[str, Any],
                    cwd: Path) -> None:
        command = launcher.command()
        await self.client.start_io(command[0], *command[1:], env=launcher.env, cwd=str(cwd))
        self.process = self.client._server  # pygls keeps the process it started here
        assert self.process is not None and self.process.stderr is not None
        if launcher.mode == "exec":
            self.pid = self.process.pid
            self._pid_known.set()
        self._drain = asyncio.ensure_future(self._read_stderr(self.process.stderr))
        await asyncio.wait_for(self._pid_known.wait(), TIMEOUT)
        workspace_folders = [types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders]
        await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(), process_id=os.getpid(),
            root_uri=workspace_folders[0].uri, workspace_folders=workspace_folders,
            initialization_options=options)), TIMEOUT)
        self.client.initialized(types.InitializedParams())

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self.stderr.extend(chunk)
            if self.pid is None:
                head, sep, _ = self.stderr.partition(b"\n")
                if sep and head.startswith(PID_LINE):
                    self.pid = int(head[len(PID_LINE):])
                    self._pid_known.set()
        self._pid_known.set()

    def send(self, method: str, params: Any = None) -> asyncio.Future[Any]:
        request = self.client.protocol.send_request_async(method, params)
        return asyncio.ensure_future(request)  # type: ignore[no-any-return]

    async def request(self, method: str, params: Any = None, timeout: float = TIMEOUT) -> Any:
        future = self.send(method, params)
        try:
            return await asyncio.wait_for(future, timeout)
        except RuntimeError as exc:  # pygls fails pending requests when the process exits
            raise ServerDied(str(exc)) from None

    def diagnostics(self) -> str:
        return self.stderr.decode(errors="replace")[-3000:]

    def peak_rss_kib(self) -> int | None:
        """VmHWM of the server process (KiB), None when it cannot be read."""
        if self.pid is None:
            return None
        try:
            for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
        except OSError:
            return None
        return None

    async def kill(self) -> None:
        """SIGKILL the server, then read everything it sent before it died."""
        self.killed = True
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        await self.stop()

    async def stop(self) -> None:
        if self.process is not None:
            await asyncio.wait_for(self.process.wait(), TIMEOUT)
        await asyncio.wait_for(self.client.stop(), TIMEOUT)  # type: ignore[no-untyped-call]
        if self._drain is not None:
            await asyncio.wait_for(self._drain, TIMEOUT)

    async def shutdown(self) -> None:
        """``shutdown`` + ``exit``, as an editor closes a server."""
        await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        await self.stop()


# -- the scripted model --------------------------------------------------------------------

SUMMARY_REPLY = (
    "<analysis>Reading the campaign transcript.</analysis>\n<summary>\n" + SUMMARY_MARK +
    "\n1. Primary request and intent: read the project files repeatedly.\n2. Key technical "
    "concepts: none.\n3. Files and code: big.txt, medium files.\n4. Errors and fixes: none.\n"
    "5. Problem solving: none.\n6. All user messages: see the log.\n7. Pending tasks: none.\n"
    "8. Current work: reading files.\n9. Next step: continue.\n</summary>")


def kind_of_request(facts: dict[str, Any]) -> str:
    """``memory``, ``summary`` (either form) or ``agent``, from the fake model's facts."""
    if "long-term memory" in facts["system"]:
        return "memory"
    if facts["summary"]:
        return "summary"
    return "agent"


def memory_ops(rev: int) -> list[dict[str, Any]]:
    fact, pref = rev % 4, rev % 3
    return [
        {"action": "create", "level": "project", "type": "project_knowledge",
         "title": f"Campaign fact {fact}", "summary": f"fact {fact}, revision {rev}",
         "content": f"Campaign fact {fact}.\nmemory rev {rev}\n"},
        {"action": "create", "level": "user", "type": "user_preference",
         "title": f"Campaign preference {pref}", "summary": f"preference {pref}, revision {rev}",
         "content": f"Campaign preference {pref}.\nmemory rev {rev}\n"},
    ]


class CampaignScript(Script):
    """The fake model's answers for one lane: memory and summary requests by their system
    prompt, agent turns from the queue of the current run (replaced at each run)."""

    def __init__(self) -> None:
        super().__init__({})
        self.lock = threading.Lock()
        self.queue: deque[dict[str, Any]] = deque()
        self.memory_rev = 0
        self.served: Counter[str] = Counter()
        self.memory_served: deque[int] = deque()  # revisions served, not yet matched to events

    def set_turns(self, turns: list[dict[str, Any]]) -> None:
        with self.lock:
            self.queue = deque(turns)

    def choose(self, facts: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        kind = kind_of_request(facts)
        with self.lock:
            self.served[kind] += 1
            if kind == "memory":
                self.memory_rev += 1
                self.memory_served.append(self.memory_rev)
                return "memory", {"text": "Operations:\n" + json.dumps(
                    memory_ops(self.memory_rev)) + "\nDone."}
            if kind == "summary":
                return "summary", {"text": SUMMARY_REPLY, "chunks": 4}
            if self.queue:
                return "turn", self.queue.popleft()
            return "default", {"text": "Nothing scripted is left; stopping here."}


class CampaignModel(FakeModelServer):
    """The fake model with a count of requests in flight by kind, and without keeping request
    bodies (a long campaign would otherwise hold gigabytes of them)."""

    def __init__(self, script: CampaignScript) -> None:
        super().__init__(script)
        self.campaign_script = script
        self.inflight: Counter[str] = Counter()
        self.completed: Counter[str] = Counter()
        self._count_lock = threading.Lock()

    def serve(self, handler: Any, protocol: str, path: str, body: dict[str, Any]) -> None:
        kind = kind_of_request(request_facts(protocol, body))
        with self._count_lock:
            self.inflight[kind] += 1
        try:
            super().serve(handler, protocol, path, body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server was killed while it was being answered
        finally:
            with self._count_lock:
                self.inflight[kind] -= 1
                self.completed[kind] += 1
            with self._lock:
                self._records.clear()

    def busy(self) -> list[str]:
        with self._count_lock:
            return [k for k, n in self.inflight.items() if n > 0]


# -- acknowledgements ----------------------------------------------------------------------

def ids_of_message(role: str, content: str, call_ids: list[str], result_id: str | None
                   ) -> tuple[str, ...]:
    """The identities a message carries: prompt/turn markers, tool calls, a tool result."""
    out = list(MARK.findall(content or ""))
    out += ["C" + c for c in call_ids]
    if result_id is not None:
        out.append("R" + result_id)
    return tuple(out)


def ids_of_json(m: dict[str, Any]) -> tuple[str, ...]:
    calls = [str(c.get("id", "")) for c in m.get("tool_calls") or [] if isinstance(c, dict)]
    result = m.get("tool_result")
    result_id = str(result.get("call_id", "")) if isinstance(result, dict) else None
    content = m.get("content")
    return ids_of_message(str(m.get("role", "")), content if isinstance(content, str) else "",
                          calls, result_id)


def ids_of_loaded(messages: list[Any]) -> set[str]:
    out: set[str] = set()
    for m in messages:
        result = m.tool_result.call_id if m.tool_result is not None else None
        out.update(ids_of_message(m.role, m.content, [c.id for c in m.tool_calls], result))
    return out


@dataclass
class RunTrack:
    prompt_id: str
    prompt_acked: bool = False
    text: str = ""
    calls: list[str] = field(default_factory=list)
    round_calls: list[str] = field(default_factory=list)  # the round awaiting its ack
    round_results: bool = False
    last_kind: str = ""


class AckTracker:
    """What the server has acknowledged (see the module docstring for the definition)."""

    def __init__(self) -> None:
        self.acked: set[str] = set()
        self.run: RunTrack | None = None
        self.memory_acked: dict[tuple[str, str], int] = {}  # (level, filename) -> revision
        self.memory_events: Counter[str] = Counter()
        self.compact_events: Counter[int] = Counter()
        self.spills = 0
        self.errors: list[str] = []
        self.shown_round: list[str] = []  # see server_gone

    def start_run(self, prompt_id: str) -> None:
        self.run = RunTrack(prompt_id)

    def _ack_round(self, run: RunTrack) -> None:
        if run.round_calls and run.round_results:
            self.acked.update("C" + c for c in run.round_calls)
            self.acked.update("R" + c for c in run.round_calls)
            run.round_calls, run.round_results = [], False

    def on_event(self, event: dict[str, Any], script: CampaignScript) -> None:
        kind = event.get("kind", "")
        if kind == "memory":
            self._on_memory(event, script)
            return
        if kind == "compact":
            self.compact_events[int(event.get("layer", 0))] += 1
            if event.get("layer") == 1:
                self.spills += int(event.get("offloaded", 0))
        if kind == "error":
            self.errors.append(str(event.get("message", "")))
        run = self.run
        if run is None:
            return
        run.last_kind = kind
        if not run.prompt_acked:
            self.acked.add(run.prompt_id)
            run.prompt_acked = True
        if kind == "toolResult":
            if run.round_calls:
                run.round_results = True
            return
        self._ack_round(run)
        if kind == "text":
            run.text += str(event.get("delta", ""))
        elif kind == "toolCall":
            run.calls.append(str(event.get("id", "")))
        elif kind == "usage":
            self.acked.update(MARK.findall(run.text))
            run.round_calls, run.round_results = run.calls, False
            run.text, run.calls = "", []

    def on_response(self) -> None:
        """The run answered: everything it appended is acknowledged."""
        run = self.run
        if run is None:
            return
        self.acked.add(run.prompt_id)
        self.acked.update(MARK.findall(run.text))
        run.round_results = run.round_results or bool(run.round_calls)
        self._ack_round(run)
        self.run = None

    def _on_memory(self, event: dict[str, Any], script: CampaignScript) -> None:
        status = str(event.get("status", ""))
        self.memory_events[status] += 1
        with script.lock:
            rev = script.memory_served.popleft() if script.memory_served else None
            if status == "failed":
                script.memory_served.clear()  # it may not have reached the model: resync
        if status != "updated" or rev is None:
            return
        for change in event.get("changes") or []:
            if change.get("action") in ("create", "update"):
                key = (str(change.get("level")), str(change.get("filename")))
                self.memory_acked[key] = max(rev, self.memory_acked.get(key, 0))

    def server_gone(self, script: CampaignScript) -> None:
        """After a kill (and after draining what the server sent): forget what is pending, but
        remember a round whose ``toolResult`` events arrived without an acknowledgement."""
        run = self.run
        self.shown_round = list(run.round_calls) if run is not None and run.round_results else []
        self.run = None
        with script.lock:
            script.memory_served.clear()


# -- following the log ---------------------------------------------------------------------

class LogFollower:
    """Replays a session log incrementally (only identities): which items compact replaces
    summarised, and whether every compact replace kept a suffix of the history."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pos = 0
        self.state: list[tuple[str, ...]] = []
        self.summarised: set[str] = set()
        self.replaces: Counter[str] = Counter()
        self.bad_lines = 0
        self.not_suffix = 0
        self.unexpected = 0

    def follow(self) -> None:
        """Read everything appended since the last call (the server is dead: the tail, if it
        does not end with a newline, is a torn line or a complete line without its newline)."""
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return
        self.pos += len(data)
        for line in data.split(b"\n"):
            if not line.strip():
                continue
            try:
                entry = json.loads(line)
            except ValueError:  # also invalid UTF-8
                self.bad_lines += 1
                continue
            if isinstance(entry, dict):
                self._apply(entry)
            else:
                self.bad_lines += 1

    def _apply(self, entry: dict[str, Any]) -> None:
        kind = entry.get("type")
        if kind == "message":
            self.state.append(ids_of_json(entry))
        elif kind == "replace":
            reason = str(entry.get("reason", ""))
            self.replaces[reason] += 1
            messages = [m for m in entry.get("messages") or [] if isinstance(m, dict)]
            new = [ids_of_json(m) for m in messages]
            old_ids = {i for ids in self.state for i in ids}
            new_ids = {i for ids in new for i in ids}
            if reason == "compact":
                head_ok = len(messages) >= 2 and SUMMARY_MARK in str(messages[0].get("content"))
                tail = new[2:]
                if not head_ok or (tail and self.state[-len(tail):] != tail):
                    self.not_suffix += 1
                self.summarised |= old_ids - new_ids
            elif reason != "repair":
                self.unexpected += 1
            self.state = new


# -- checks on disk ------------------------------------------------------------------------

@dataclass
class MemoryCheck:
    corrupt: list[str] = field(default_factory=list)
    temp_files: int = 0
    lost: list[str] = field(default_factory=list)
    notes: int = 0
    unlisted: int = 0  # note files MEMORY.md does not list (a kill between the two writes)
    dangling: int = 0  # MEMORY.md lines naming a note that does not exist


REV = re.compile(r"memory rev (\d+)")


def check_memory(stores: dict[str, Path], acked: dict[tuple[str, str], int]) -> MemoryCheck:
    out = MemoryCheck()
    indexes: dict[str, str] = {}
    for level, folder in stores.items():
        note_names: set[str] = set()
        try:
            names = sorted(os.listdir(folder))
        except FileNotFoundError:
            names = []
        indexes[level] = ""
        for name in names:
            path = folder / name
            if name == INDEX_NAME:
                data = path.read_bytes()
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    out.corrupt.append(f"{level}/{name}: not UTF-8")
                    continue
                indexes[level] = text
                for line in text.splitlines():
                    if line.strip() and parse_line(line) is None:
                        out.corrupt.append(f"{level}/{name}: bad line {line[:80]!r}")
            elif name.startswith(".") and name.endswith(".tmp"):
                out.temp_files += 1
            elif unsafe_filename(name) is None and path.is_file():
                out.notes += 1
                note_names.add(name)
                note = parse_note(path.read_bytes(), name)
                if note.problem or not note.title:
                    out.corrupt.append(f"{level}/{name}: {note.problem or 'no title'}")
            else:
                out.corrupt.append(f"{level}/{name}: unexpected file")
        listed = {entry.filename for line in indexes[level].splitlines()
                  if (entry := parse_line(line)) is not None}
        out.unlisted += len(note_names - listed)
        out.dangling += len(listed - note_names)
    for (level, filename), rev in sorted(acked.items()):
        note_path = stores[level] / filename if level in stores else None
        if note_path is None or not note_path.is_file():
            out.lost.append(f"{level}/{filename}: missing (acknowledged revision {rev})")
            continue
        found = REV.search(parse_note(note_path.read_bytes(), filename).body)
        if found is None or int(found.group(1)) < rev:
            out.lost.append(f"{level}/{filename}: holds revision "
                            f"{found.group(1) if found else '?'} < acknowledged {rev}")
        if f"({filename})" not in indexes.get(level, ""):
            out.lost.append(f"{level}/{filename}: not in MEMORY.md")
    return out


def check_spills(loaded: Any, workspace: Path) -> list[str]:
    problems = []
    for offload in loaded.offloads.values():
        path = Path(offload.path)
        if not path.is_absolute():
            path = workspace / path
        try:
            size = path.stat().st_size
        except OSError:
            problems.append(f"{offload.call_id}: {offload.path} missing")
            continue
        if size != offload.bytes:
            problems.append(f"{offload.call_id}: {offload.path} has {size} bytes, "
                            f"expected {offload.bytes}")
    return problems


@dataclass
class ProposalCheck:
    corrupt: list[str] = field(default_factory=list)
    lingering: list[str] = field(default_factory=list)  # ids of acknowledged accepts on disk
    half_applied: list[str] = field(default_factory=list)
    pending: int = 0
    temp_files: int = 0
    interrupted: int = 0  # accepts cut by a kill after the note was written (finished later)


def check_proposals(folder: Path, stores: dict[str, Path], accepted: set[str]) -> ProposalCheck:
    """Every file of ``<dataDir>/proposals/`` after a kill (see the module docstring)."""
    out = ProposalCheck()
    try:
        names = sorted(os.listdir(folder))
    except FileNotFoundError:
        names = []
    for name in names:
        if name.startswith(".") and name.endswith(".tmp"):
            out.temp_files += 1
            continue
        stem, _, ext = name.rpartition(".")
        if ext != "json":
            out.corrupt.append(f"{name}: unexpected file")
            continue
        try:
            proposal = decode_proposal((folder / name).read_bytes(), stem)
        except ValueError as exc:
            out.corrupt.append(f"{name}: {exc}")
            continue
        out.pending += 1
        if proposal.id in accepted:
            out.lingering.append(proposal.id)
        if proposal.accepting:
            state = accept_state(read_bytes(stores[proposal.level] / proposal.filename))
            if state == proposal.accepting:
                out.interrupted += 1
            elif state != (proposal.before_digest or ABSENT):
                out.half_applied.append(f"{name}: {proposal.level}/{proposal.filename} is "
                                        "neither the proposed-from nor the accepted text")
    return out


# -- the campaign --------------------------------------------------------------------------

@dataclass
class Config:
    kills: int = 1000
    lanes: int = 2
    seed: int = 20261201
    launch: str = "fork"
    provider: str = "anthropic"
    context_window: int = 40_000
    compact_share: float = 0.25
    root: Path | None = None  # default: a temporary folder, removed at the end
    keep: bool = False
    progress: Callable[[str], None] | None = print
    progress_every: int = 25
    before_check: Callable[[Lane], None] | None = None  # a test seam: break something first
    consent_every: int = 2  # lanes whose number is odd (n % this == 1) use memory.mode confirm
    review_share: float = 0.25  # operations of such a lane that review a proposal


COUNTS = ("servers that failed to start", "servers that died before the kill",
          "resumes failed", "resume mismatches", "sessions unloadable",
          "protocol-invalid histories", "acknowledged messages lost", "memory files corrupt",
          "acknowledged memory changes lost", "spill files missing or short",
          "compact replaces not keeping a suffix", "unexpected replaces", "operations failed",
          "operations hung", "proposal files corrupt", "accepted proposals still pending",
          "accepted notes half-applied")


@dataclass
class Report:
    config: dict[str, Any]
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    kills: int = 0
    resumes: int = 0
    info: Counter[str] = field(default_factory=Counter)
    phases: Counter[str] = field(default_factory=Counter)
    problems: list[str] = field(default_factory=list)
    cycle_seconds: list[float] = field(default_factory=list)
    run_seconds: list[float] = field(default_factory=list)
    elapsed: float = 0.0

    def fail(self, count: str, detail: str) -> None:
        self.counts[count] += 1
        if len(self.problems) < 200:
            self.problems.append(f"{count}: {detail}")

    @property
    def ok(self) -> bool:
        return not any(self.counts.values())

    def as_json(self) -> dict[str, Any]:
        cycles, runs = self.cycle_seconds, self.run_seconds
        return {
            "config": self.config, "kills": self.kills, "resumes": self.resumes,
            "counts": self.counts, "ok": self.ok, "info": dict(sorted(self.info.items())),
            "kills_by_phase": dict(self.phases.most_common()),
            "elapsed_seconds": round(self.elapsed, 1),
            "cycle_seconds": {
                "mean": round(statistics.fmean(cycles), 3) if cycles else None,
                "p50": round(statistics.median(cycles), 3) if cycles else None,
                "max": round(max(cycles), 3) if cycles else None},
            "run_seconds": {
                "mean": round(statistics.fmean(runs), 3) if runs else None,
                "p50": round(statistics.median(runs), 3) if runs else None},
            "problems": self.problems,
        }


def make_files(folder: Path, rng: random.Random) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    line = "the quick brown fox jumps over the lazy dog; needle {i:06d} {pad}\n"
    with open(folder / "big.txt", "w") as f:
        i = 0
        while f.tell() < BIG_BYTES:
            f.write(line.format(i=i, pad="x" * 20))
            i += 1
    for n in range(4):
        words = " ".join(f"w{rng.randrange(10_000)}" for _ in range(MEDIUM_BYTES // 6))
        lines = [words[i:i + 90] for i in range(0, len(words), 90)]
        (folder / f"medium{n}.txt").write_text("\n".join(lines)[:MEDIUM_BYTES] + "\n")
    (folder / "README.md").write_text("# campaign\nA workspace the crash campaign works in.\n")


class Lane:
    """One workspace folder, its fake model and its succession of servers."""

    def __init__(self, number: int, config: Config, root: Path, launcher: Launcher,
                 report: Report, kills: Callable[[], bool]) -> None:
        self.number = number
        self.config = config
        self.rng = random.Random(config.seed * 1000 + number)
        self.root = root
        self.folder = root / f"ws{number}"
        self.user_memory = root / f"user-memory{number}"
        self.launcher = launcher
        self.report = report
        self.take_kill = kills
        self.script = CampaignScript()
        self.model = CampaignModel(self.script)
        self.acks = AckTracker()
        self.store = SessionStore(self.folder / ".PseudoClaude")
        self.follower: LogFollower | None = None
        self.session_id: str | None = None
        self.runs = 0
        # durations of recent completed runs: the first of a server, and later ones
        self.first_seconds: deque[float] = deque(maxlen=20)
        self.run_seconds: deque[float] = deque(maxlen=20)
        self.editor: Editor | None = None
        self.current_op = ""
        self.memory_temp_files = 0
        self.consent = config.consent_every > 1 and number % config.consent_every == 1
        self.proposals_dir = self.folder / ".PseudoClaude" / "proposals"
        self.accepted: set[str] = set()  # proposal ids whose accept was acknowledged
        self.stale: set[str] = set()
        self.proposal_temp_files = self.proposals_pending = 0
        self.memory_unlisted = self.memory_dangling = 0

    def on_event(self, event: dict[str, Any]) -> None:
        self.acks.on_event(event, self.script)

    def options(self) -> dict[str, Any]:
        return {"provider": self.config.provider, "apiKey": "sk-campaign-not-a-real-key-0000",
                "baseUrl": self.model.base_url, "maxRetries": 0,
                "contextWindow": self.config.context_window,
                "memory": {"userDir": str(self.user_memory),
                           "mode": "confirm" if self.consent else "auto"},
                "approvals": {"runCommand": "allow"}}

    # -- scripted work ---------------------------------------------------------------------
    def run_turns(self, n: int) -> list[dict[str, Any]]:
        rng, lane = self.rng, self.number
        turns: list[dict[str, Any]] = []
        rounds = rng.randint(1, 3)
        for r in range(rounds):
            calls: list[dict[str, Any]] = []
            if r == 0:
                calls.append({"id": f"c{lane}_{n}_{r}_0", "name": "read_file",
                              "arguments": {"path": "big.txt"}})
            calls.append({"id": f"c{lane}_{n}_{r}_1", "name": "read_file",
                          "arguments": {"path": f"medium{rng.randrange(4)}.txt"}})
            if rng.random() < 0.4:
                calls.append({"id": f"c{lane}_{n}_{r}_2", "name": "search_code",
                              "arguments": {"pattern": f"needle 0000{rng.randrange(10)}"}})
            turns.append({"text": f"Round {r}, reading. <<T{lane}.{n * 10 + r}>>",
                          "tool_calls": calls})
        final = f"All read; nothing else to do. <<T{lane}.{n * 10 + 9}>> " + "done " * 20
        turns.append({"text": final, "chunks": 12, "delay": rng.choice([0.0, 0.004])})
        return turns

    async def one_op(self, editor: Editor, first: bool = False, run: bool = False) -> None:
        if self.consent and not run and self.rng.random() < self.config.review_share:
            await self.review(editor)
            return
        can_compact = self.session_id is not None and not run
        if can_compact and self.rng.random() < self.config.compact_share:
            self.current_op = "compact"
            try:
                await editor.request("pseudoclaude/compact",
                                     {"instructions": "keep the file names"})
            except JsonRpcException as exc:
                # A summary that would not shrink the context is refused (SPEC §4): here when
                # the only old part is the previous summary pair.
                if "would not shrink" not in str(exc):
                    raise
                self.report.info["manual compactions refused (would not shrink)"] += 1
                return
            self.report.info["manual compactions answered"] += 1
            return
        self.runs += 1
        n = self.runs
        self.script.set_turns(self.run_turns(n))
        prompt_id = f"P{self.number}.{n}"
        self.acks.start_run(prompt_id)
        self.current_op = "run"
        started = time.monotonic()
        result = await editor.request("pseudoclaude/run", {
            "prompt": f"Read the files again and report. <<{prompt_id}>>"})
        self.acks.on_response()
        (self.first_seconds if first else self.run_seconds).append(time.monotonic() - started)
        self.report.run_seconds.append(time.monotonic() - started)
        self.session_id = self.session_id or result["sessionId"]
        if result["sessionId"] != self.session_id:
            self.report.fail("operations failed", f"lane {self.number}: run answered session "
                             f"{result['sessionId']}, expected {self.session_id}")
        if result["stopReason"] != "completed":
            self.report.fail("operations failed", f"lane {self.number}: run stopped with "
                             f"{result['stopReason']}: {result.get('error')}")
        self.report.info["runs completed"] += 1

    async def review(self, editor: Editor, decision: str | None = None) -> bool:
        """Review the oldest pending proposal (``decision``: else drawn at random); False when
        the queue was empty. An acknowledged accept is the note's new revision."""
        self.current_op = "review"
        listed = await editor.request("pseudoclaude/memory/proposals")
        proposals = listed.get("proposals") or []
        if not proposals:
            self.report.info["memory reviews with an empty queue"] += 1
            return False
        proposal = proposals[0]
        pick = decision or self.rng.choice(["accept"] * 6 + ["edit"] * 2 + ["reject"] * 2)
        if proposal["id"] in self.stale:
            pick = "reject"
        params: dict[str, Any] = {"id": proposal["id"],
                                  "decision": "reject" if pick == "reject" else "accept"}
        text = proposal["after"]
        if pick == "edit" and text:
            text = parse_note(text.encode(), proposal["filename"]).body + \
                "\nedited by the crash campaign\n"
            params["content"] = text
        try:
            result = await editor.request("pseudoclaude/memory/review", params)
        except JsonRpcException as exc:
            if "no pending memory proposal" in str(exc):  # a newer update replaced it
                self.report.info["memory reviews of a proposal replaced meanwhile"] += 1
                return True
            if "stale" not in str(exc):
                raise
            self.stale.add(proposal["id"])
            self.report.info["memory reviews refused as stale"] += 1
            return True
        if not result.get("applied"):
            self.report.info["memory reviews rejected"] += 1
            return True
        self.accepted.add(proposal["id"])
        self.report.info["memory reviews accepted" + (" with an edit" if "content" in params
                                                      else "")] += 1
        found = REV.search(text)
        if found is not None:
            key = (str(proposal["level"]), str(proposal["filename"]))
            self.acks.memory_acked[key] = max(int(found.group(1)),
                                              self.acks.memory_acked.get(key, 0))
        return True

    async def drive(self, editor: Editor) -> None:
        """Operations back to back until the server dies."""
        first = True
        while not editor.killed:
            try:
                await self.one_op(editor, first)
                first = False
            except ServerDied:
                return
            except TimeoutError:
                self.report.fail("operations hung", f"lane {self.number}: {self.current_op} "
                                 f"did not answer in {TIMEOUT:.0f} s")
                return
            except Exception as exc:
                if editor.killed:
                    return
                self.report.fail("operations failed",
                                 f"lane {self.number}: {self.current_op}: {exc!r}")
                await asyncio.sleep(0.05)

    def phase(self) -> str:
        """Roughly what the server was doing when the kill was sent."""
        busy = self.model.busy()
        if "memory" in busy:
            return "memory update: model call"
        if "summary" in busy:
            return "compaction: summary call"
        if "agent" in busy:
            return "model turn streaming"
        with self.script.lock:
            memory_pending = bool(self.script.memory_served)
        if memory_pending:
            return "memory update: writing notes"
        run = self.acks.run
        if self.current_op == "compact":
            return "manual compaction: spill / replace"
        if self.current_op == "review":
            return "memory review: accept / reject"
        if run is None:
            return "between operations"
        if not run.prompt_acked:
            return "run start: prompt, system prompt"
        if run.last_kind in ("toolCall", "usage") and run.round_calls:
            return "tools running"
        if run.last_kind == "toolResult":
            return "tool results: appending"
        return "context management: spill / compaction"

    # -- one cycle ---------------------------------------------------------------------------
    async def calibrate(self) -> None:
        """Two runs that are not killed, on a fresh server: the first estimates of how long a
        server's first run takes (with ``--launch exec`` it imports the provider SDK) and how
        long a later one takes."""
        editor = Editor(f"crash-campaign-calibration-{self.number}", self.on_event)
        self.editor = editor
        await editor.start(self.launcher, [self.folder], self.options(), self.root)
        await self.one_op(editor, first=True, run=True)
        await self.one_op(editor, run=True)
        await editor.shutdown()  # waits for the memory updates
        self.acks.server_gone(self.script)
        self.check()

    async def cycle(self) -> bool:
        """Start a server, resume, work, kill, check. False when there is nothing left to do."""
        if not self.take_kill():
            return False
        started = time.monotonic()
        expected = self._expected_resume()
        editor = Editor(f"crash-campaign-{self.number}", self.on_event)
        self.editor = editor
        try:
            await editor.start(self.launcher, [self.folder], self.options(), self.root)
        except Exception as exc:
            self.report.fail("servers that failed to start",
                             f"lane {self.number}: {exc!r} {editor.diagnostics()}")
            await editor.kill()
            return True
        if expected is not None:
            await self._resume(editor, expected)
        work = asyncio.ensure_future(self.drive(editor))
        span = statistics.fmean(self.first_seconds) + LATER_RUNS * statistics.fmean(
            self.run_seconds)
        delay = self.rng.uniform(0.0, span)
        await asyncio.sleep(delay)
        assert editor.process is not None
        if editor.process.returncode is not None or work.done():
            self.report.fail("servers that died before the kill", f"lane {self.number}: "
                             f"exit status {editor.process.returncode} "
                             f"{editor.diagnostics()[-1500:]}")
        self.report.phases[self.phase()] += 1
        await editor.kill()
        # Everything the server sent has been read: a request still pending never gets an
        # answer (pygls fails those pending at the exit; one sent after it would wait forever).
        work.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await work
        self.acks.server_gone(self.script)
        self.report.kills += 1
        self.check()
        self.report.cycle_seconds.append(time.monotonic() - started)
        return True

    def _expected_resume(self) -> tuple[str, int] | None:
        if not list_sessions(self.store):
            if self.acks.acked:
                self.report.fail("sessions unloadable", f"lane {self.number}: no session on "
                                 "disk although messages were acknowledged")
            return None
        try:
            loaded = load_session(self.store, "latest")
        except (SessionError, OSError) as exc:
            self.report.fail("sessions unloadable", f"lane {self.number}: {exc!r}")
            return None
        return loaded.session_id, len(loaded.messages)

    async def _resume(self, editor: Editor, expected: tuple[str, int]) -> None:
        try:
            resumed = await editor.request("pseudoclaude/sessions/resume",
                                           {"sessionId": "latest"})
        except Exception as exc:
            self.report.fail("resumes failed", f"lane {self.number}: {exc!r} "
                             f"{editor.diagnostics()[-500:]}")
            return
        self.report.resumes += 1
        self.report.info["repairs at resume"] += int(resumed.get("repaired", 0))
        self.report.info["bad lines at resume"] += int(resumed.get("badLines", 0))
        if (resumed.get("sessionId"), resumed.get("messageCount")) != expected:
            self.report.fail("resume mismatches", f"lane {self.number}: resume answered "
                             f"{resumed}, load_session gave {expected}")
        self.session_id = str(resumed.get("sessionId"))

    def check(self) -> None:
        """After a kill: the session, what was acknowledged, memory and spill files."""
        report, lane = self.report, self.number
        if self.config.before_check is not None:
            self.config.before_check(self)
        sessions = list_sessions(self.store)
        if sessions:
            if self.session_id is None:
                self.session_id = sessions[0].id
            if self.follower is None:
                self.follower = LogFollower(self.store.log_path(self.session_id))
            follower = self.follower
            before = (follower.not_suffix, follower.unexpected)
            follower.follow()
            if follower.not_suffix > before[0]:
                report.fail("compact replaces not keeping a suffix",
                            f"lane {lane}: {follower.path}")
            if follower.unexpected > before[1]:
                report.fail("unexpected replaces", f"lane {lane}: {follower.path}")
            try:
                loaded = load_session(self.store, "latest")
            except (SessionError, OSError) as exc:
                report.fail("sessions unloadable", f"lane {lane}: {exc!r}")
                loaded = None
            if loaded is not None:
                if loaded.session_id != self.session_id:
                    report.fail("resume mismatches", f"lane {lane}: latest is "
                                f"{loaded.session_id}, expected {self.session_id}")
                if not is_valid(loaded.messages):
                    report.fail("protocol-invalid histories", f"lane {lane}: "
                                f"{self.store.log_path(loaded.session_id)}")
                present = ids_of_loaded(loaded.messages)
                lost = self.acks.acked - present - follower.summarised
                for item in sorted(lost):
                    report.fail("acknowledged messages lost", f"lane {lane}: {item}")
                self.acks.acked -= lost  # report each loss once
                if self.acks.shown_round:
                    kept = all("R" + c in present for c in self.acks.shown_round)
                    report.info["unacknowledged rounds with toolResult events: "
                                + ("kept" if kept else "dropped")] += 1
                    self.acks.shown_round = []
                for problem in check_spills(loaded, self.folder):
                    report.fail("spill files missing or short", f"lane {lane}: {problem}")
        elif self.acks.acked:
            report.fail("sessions unloadable",
                        f"lane {lane}: no session although messages were acknowledged")
        memory = check_memory({"project": self.folder / ".PseudoClaude" / "memory",
                               "user": self.user_memory}, self.acks.memory_acked)
        for problem in memory.corrupt:
            report.fail("memory files corrupt", f"lane {lane}: {problem}")
        for problem in memory.lost:
            report.fail("acknowledged memory changes lost", f"lane {lane}: {problem}")
        self.memory_temp_files = memory.temp_files
        self.memory_unlisted, self.memory_dangling = memory.unlisted, memory.dangling
        proposals = check_proposals(self.proposals_dir, {"project": self.folder / ".PseudoClaude"
                                                         / "memory", "user": self.user_memory},
                                    self.accepted)
        for problem in proposals.corrupt:
            report.fail("proposal files corrupt", f"lane {lane}: {problem}")
        for proposal_id in proposals.lingering:
            report.fail("accepted proposals still pending", f"lane {lane}: {proposal_id}")
        for problem in proposals.half_applied:
            report.fail("accepted notes half-applied", f"lane {lane}: {problem}")
        self.accepted -= set(proposals.lingering)  # report each once
        self.proposal_temp_files, self.proposals_pending = (proposals.temp_files,
                                                            proposals.pending)
        if proposals.interrupted:
            report.info["checks finding an accept interrupted after its note was written"] += 1
        if memory.unlisted:
            report.info["checks finding a note not listed in MEMORY.md"] += 1
        if memory.dangling:
            report.info["checks finding a MEMORY.md line naming a missing note"] += 1

    def summary(self) -> dict[str, int]:
        follower = self.follower
        spill_dir = self.store.spill_dir(self.session_id) if self.session_id else None
        spill_temps = len(list(spill_dir.glob(".spill-*.tmp"))) if spill_dir and \
            spill_dir.is_dir() else 0
        return {
            "torn lines seen in the log": follower.bad_lines if follower else 0,
            "compact replaces": follower.replaces["compact"] if follower else 0,
            "repair replaces": follower.replaces["repair"] if follower else 0,
            "items summarised by compaction": len(follower.summarised) if follower else 0,
            "acknowledged items": len(self.acks.acked),
            "acknowledged memory notes": len(self.acks.memory_acked),
            "memory events updated": self.acks.memory_events["updated"],
            "memory events failed": self.acks.memory_events["failed"],
            "memory events proposed": self.acks.memory_events["proposed"],
            "proposal temp files left (ignored by the loader)": self.proposal_temp_files,
            "proposals pending, at the end": self.proposals_pending,
            "compact events layer 1": self.acks.compact_events[1],
            "compact events layer 2": self.acks.compact_events[2],
            "error events": len(self.acks.errors),
            "memory temp files left (ignored by the loader)": self.memory_temp_files,
            "memory notes not listed in MEMORY.md, at the end": self.memory_unlisted,
            "MEMORY.md lines naming a missing note, at the end": self.memory_dangling,
            "spill temp files left": spill_temps,
            "model requests (agent)": self.script.served["agent"],
            "model requests (summary)": self.script.served["summary"],
            "model requests (memory)": self.script.served["memory"],
        }


async def run_campaign(config: Config) -> Report:
    """Run the campaign; returns the report (does not print the table)."""
    report = Report(config={k: (str(v) if isinstance(v, Path) else v)
                            for k, v in asdict(config).items() if k != "progress"})
    root = Path(tempfile.mkdtemp(prefix="pc-crash-", dir=config.root))
    launcher = Launcher(config.launch, root, server_env(root / "home"))
    (root / "home").mkdir()
    remaining = [config.kills]
    started = time.monotonic()

    def take_kill() -> bool:
        if remaining[0] <= 0:
            return False
        remaining[0] -= 1
        return True

    lanes = [Lane(i, config, root, launcher, report, take_kill)
             for i in range(max(1, config.lanes))]
    for lane in lanes:
        make_files(lane.folder, lane.rng)
        lane.model.start()
    last_progress = [0]

    def progress() -> None:
        if config.progress is None:
            return
        done = report.kills
        if done - last_progress[0] < config.progress_every and done < config.kills:
            return
        last_progress[0] = done
        elapsed = time.monotonic() - started
        rate = done / elapsed if elapsed else 0.0
        eta = (config.kills - done) / rate if rate else 0.0
        bad = {k: v for k, v in report.counts.items() if v}
        config.progress(f"  {done:5d}/{config.kills} kills  {elapsed:7.1f} s  "
                        f"{rate:5.2f} kills/s  eta {eta:6.0f} s  "
                        f"{'problems: ' + json.dumps(bad) if bad else 'no problem so far'}")

    async def lane_loop(lane: Lane) -> None:
        while await lane.cycle():
            progress()

    try:
        await launcher.start()
        await asyncio.gather(*(lane.calibrate() for lane in lanes))
        await asyncio.gather(*(lane_loop(lane) for lane in lanes))
        # A last resume after the last kill, and a clean shutdown.
        for lane in lanes:
            editor = Editor(f"crash-campaign-final-{lane.number}", lane.on_event)
            try:
                await editor.start(launcher, [lane.folder], lane.options(), root)
            except Exception as exc:
                report.fail("servers that failed to start", f"final: {exc!r}")
                await editor.kill()
                continue
            expected = lane._expected_resume()
            if expected is not None:
                await lane._resume(editor, expected)
            if lane.consent:  # accept what is left (a stale proposal is rejected)
                try:
                    for _ in range(50):
                        if not await lane.review(editor, "accept"):
                            break
                except Exception as exc:
                    report.fail("operations failed", f"final review: {exc!r}")
            await editor.shutdown()
            lane.acks.server_gone(lane.script)
            lane.check()
            if lane.consent and lane.proposals_pending:
                report.fail("operations failed", f"lane {lane.number}: "
                            f"{lane.proposals_pending} proposal(s) left after the final review")
    finally:
        for lane in lanes:
            if lane.editor is not None and lane.editor.process is not None and \
                    lane.editor.process.returncode is None:
                with contextlib.suppress(Exception):
                    await lane.editor.kill()
            lane.model.stop()
        await launcher.close()
        report.elapsed = time.monotonic() - started
        for lane in lanes:
            report.info.update(lane.summary())
        if config.keep:
            report.info["kept"] = 0
            report.config["kept_root"] = str(root)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return report


def print_table(report: Report) -> None:
    data = report.as_json()
    print(f"\nCrash campaign: {report.kills} SIGKILLs, {report.resumes} resumes, "
          f"{report.config['lanes']} lane(s), launch={report.config['launch']}, "
          f"{report.elapsed:.0f} s ({data['cycle_seconds']['mean']} s per cycle)")
    print_counts(report, COUNTS, 44,
                 "kills by phase (approximate: what the client saw when it sent SIGKILL)")


def print_counts(report: Report, counts: tuple[str, ...], width: int, phases: str) -> None:
    """The checks against their target (0), the kills by phase, the context, the problems."""
    print(f"{'check':<{width}} {'count':>7}  target")
    for name in counts:
        value = report.counts[name]
        print(f"{name:<{width}} {value:>7}  0 {'ok' if value == 0 else 'FAIL'}")
    print(f"\n{phases}")
    for phase, n in report.phases.most_common():
        print(f"  {phase:<{width}} {n:>7}")
    print("\ncontext")
    for name, n in sorted(report.info.items()):
        print(f"  {name:<56} {n:>7}")
    for problem in report.problems[:20]:
        print(f"  ! {problem}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=1000)
    parser.add_argument("--lanes", type=int, default=2,
                        help="workspaces worked on at once, each by its own server (default 2)")
    parser.add_argument("--seed", type=int, default=Config.seed)
    parser.add_argument("--launch", choices=("fork", "exec"), default="fork")
    parser.add_argument("--provider", choices=("anthropic", "openai"), default="anthropic")
    parser.add_argument("--keep", action="store_true", help="keep the campaign's folder")
    parser.add_argument("--out", type=Path, default=OUT / "crash_campaign.json")
    parser.add_argument("--rewind-kills", type=int, default=0, metavar="N",
                        help="then run the rewind lane (bench/crash_rewind.py) with N kills")
    parser.add_argument("--two-process-kills", type=int, default=0, metavar="N",
                        help="then run the two-process lane (bench/crash_sessions.py: two "
                             "servers taking turns on one session) with N kills")
    parser.add_argument("--zygote", metavar="SOCKET", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.zygote:
        return zygote_main(args.zygote)
    config = Config(kills=args.kills, lanes=args.lanes, seed=args.seed, launch=args.launch,
                    provider=args.provider, keep=args.keep)
    print(f"crash campaign: {config.kills} kills, {config.lanes} lane(s), "
          f"launch={config.launch}, provider={config.provider}, seed={config.seed}")
    report = asyncio.run(run_campaign(config))
    print_table(report)
    data, ok = report.as_json(), report.ok
    if args.rewind_kills > 0:
        import crash_rewind  # bench/crash_rewind.py (it imports this module for its classes)

        print(f"\nrewind lane: {args.rewind_kills} kills")
        rewind = asyncio.run(crash_rewind.run_rewind_lane(crash_rewind.RewindConfig(
            kills=args.rewind_kills, seed=args.seed, launch=args.launch,
            provider=args.provider, keep=args.keep)))
        crash_rewind.print_table(rewind)
        data["rewind"] = rewind.as_json()
        ok = data["ok"] = ok and rewind.ok
    if args.two_process_kills > 0:
        import crash_sessions  # bench/crash_sessions.py (it imports this module for its classes)

        print(f"\ntwo-process lane: {args.two_process_kills} kills")
        two = asyncio.run(crash_sessions.run_two_process_lane(crash_sessions.TwoProcessConfig(
            kills=args.two_process_kills, seed=args.seed, launch=args.launch,
            provider=args.provider, keep=args.keep)))
        crash_sessions.print_table(two)
        data["two_process"] = two.as_json()
        ok = data["ok"] = ok and two.ok
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
