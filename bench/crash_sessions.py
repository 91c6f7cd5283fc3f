"""Crash campaign, two-process lane: two servers on one folder take turns on ONE session, and
one of them is SIGKILLed at random moments.

Two "editors" (server processes ``A`` and ``B``, ``pseudoclaude lsp`` over stdio, started by
the crash campaign's :class:`~crash_campaign.Launcher` and driven by its
:class:`~crash_campaign.Editor`) have the same workspace folder open, each with its own
scripted fake model (the campaign's script: tool rounds reading files, one of them sometimes a
60,000-byte file whose result is spilled; a summary for compactions). The lane works ONE
session (always named by its ``sessionId``): operations back to back, each by one process, the
*writer*, the two alternating:

- a ``pseudoclaude/run`` of 0-2 tool rounds and a final answer, or (when the live history has
  over ``compact_over`` messages, and otherwise one time in seven) a manual
  ``pseudoclaude/compact``; automatic compaction is out of the way (a 1,000,000-token window),
  so the history only changes by the lane's operations;
- while the writer holds the session (its first model request of the operation has reached
  its fake model, which holds it there until the probe below has its answer), the OTHER
  process lists the sessions (the session must be ``running``) and sends a *probe*: a
  ``pseudoclaude/run`` of the same session (one time in four a ``pseudoclaude/compact``). It
  must fail with -32011 ``SessionBusy`` whose data names the session and the writer's pid
  (counted as expected), and write nothing (a probe answered after a kill of its writer
  legitimately runs: the lock died with the writer);
- the first model request of every run carries the session exactly as the log held it just
  before (read in the fake model's requests: each prompt and turn carries a unique marker):
  the live history's prompts and turns, in order, the summary left out, then its own prompt,
  and no refused probe. The next operation is the other process's, so this checks that a
  process reloads what the other wrote; after a run of the other process, that run's prompt
  and final answer must be in it.

At a random moment (uniform in 0 .. ``later_runs`` x the mean duration of recent unkilled
operations) one of the two processes, drawn at random, is SIGKILLed: while it writes, while it
waits for the other's probe, while it probes, or while it is idle. The other one finishes the
operation it is in (nothing new starts); then the lane checks the disk with no writer left:

- the session's lock is free (``pseudoclaude.session.lock.holder``: the kernel releases an
  ``flock`` with its holder; a lock that outlived its holder would block every later writer);
- the log loads (``load_session``) into a protocol-valid history; there is one session in the
  folder;
- no acknowledged message lost (acknowledged as in the crash campaign: a prompt by any event
  of its run, a turn by its ``usage`` event, a tool round by the next event, everything by the
  run's answer) unless a committed compaction summarised it (the campaign's
  :class:`~crash_campaign.LogFollower`); every compaction kept a verbatim suffix;
- no turn split into two conversations: each prompt appears at most once in the history and
  the prompts are in the order they were sent; every turn, tool call and tool result lies
  after its own prompt and before the next one; no probe's prompt is in the log;
- every spill file of the ledger is there with its size.

Then the killed process is started again (a fresh process) and resumes the session: its
``messageCount`` must be what ``load_session`` gives; the next operation is its own (a write
right after the holder died must not be refused: -32011 with no other writer counts as a
failure). After the last kill both processes run once more and shut down cleanly.

Counts (the lane's targets: all zero): see ``COUNTS``. Information: busy refusals (expected),
hand-offs checked (a run right after a run of the other process), kills by phase (what the
killed process was doing when the kill was sent).

Run: ``.venv/bin/python bench/crash_sessions.py [--kills 100] [--launch fork]`` (writes
``bench/out/crash_sessions.json``), or as part of the campaign:
``bench/crash_campaign.py --two-process-kills 100`` (its table and JSON then include this
lane's).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from pygls.exceptions import JsonRpcException

sys.path.insert(0, str(Path(__file__).resolve().parent))  # crash_campaign.py, next to this file

from crash_campaign import (
    MARK,
    SUMMARY_MARK,
    TIMEOUT,
    AckTracker,
    CampaignModel,
    CampaignScript,
    Editor,
    Launcher,
    LogFollower,
    Report,
    ServerDied,
    check_spills,
    ids_of_loaded,
    kind_of_request,
    make_files,
    print_counts,
    server_env,
)
from pseudoclaude.session import SessionError, SessionStore, list_sessions, load_session
from pseudoclaude.session.lock import holder
from pseudoclaude.session.repair import is_valid

OUT = Path(__file__).resolve().parent / "out"
SESSION_BUSY = -32011
PROBE = re.compile(r"<<(Q\d+)>>")
CALL = re.compile(r"^c(\d+)_")
NAMES = ("A", "B")


@dataclass
class TwoProcessConfig:
    kills: int = 100
    seed: int = 20261203
    launch: str = "fork"
    provider: str = "anthropic"
    context_window: int = 1_000_000  # no automatic compaction: the lane's own only
    compact_over: int = 40  # live messages: the next operation compacts
    compact_share: float = 1 / 7  # and otherwise this share of the operations
    probe_compact_share: float = 0.25  # probes that are a compaction, not a run
    later_runs: float = 3.0  # kills land in 0 .. this x the mean operation
    root: Path | None = None  # default: a temporary folder, removed at the end
    keep: bool = False
    progress: Callable[[str], None] | None = print
    progress_every: int = 25
    before_check: Callable[[TwoProcessLane], None] | None = None
    """A test seam: called with the lane before each check, to break something on purpose."""


COUNTS = ("servers that failed to start", "servers that died before the kill",
          "resumes failed", "resume mismatches", "sessions unloadable",
          "protocol-invalid histories", "sessions split (more than one session)",
          "acknowledged messages lost", "prompts more than once in the history",
          "prompts out of order", "turns under another prompt",
          "refused writes that wrote (a probe in the log)",
          "writes not refused while the other process wrote",
          "busy answers naming the wrong session or writer",
          "sessions listed as not running while written",
          "writes refused with no other writer", "locks held after the holder died",
          "requests missing turns the log holds",
          "requests with turns the log does not hold, twice or out of order",
          "hand-offs without the other process's last prompt and answer",
          "requests carrying a probe", "spill files missing or short",
          "compact replaces not keeping a suffix", "unexpected replaces", "operations failed",
          "operations hung")


@dataclass
class TwoProcessReport(Report):
    """The campaign's report with this lane's counts."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))


class SlotScript(CampaignScript):
    """The campaign's script for one process, which also keeps the markers of every agent
    request it answers and can hold the first model request of an operation (``arm``) until
    the lane releases it."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[list[str]] = []  # markers of each agent request, in order
        self.gate: threading.Event | None = None
        self.arrived = threading.Event()

    def arm(self) -> threading.Event:
        """Hold the next model request until the returned event is set; forget the requests
        seen so far."""
        gate = threading.Event()
        with self.lock:
            self.gate = gate
            self.requests = []
        self.arrived.clear()
        return gate

    def choose(self, facts: dict[str, Any]) -> tuple[str, dict[str, Any]]:
        kind = kind_of_request(facts)
        with self.lock:
            if kind == "agent":
                self.requests.append(request_markers(facts["body"]))
            gate, self.gate = self.gate, None
        if gate is not None:
            self.arrived.set()
            gate.wait(TIMEOUT)
        return super().choose(facts)


def request_markers(body: str) -> list[str]:
    """The markers of a request's messages, in order, the summary message's left out (it
    quotes the prompts it summarised, newest first)."""
    out: list[str] = []
    for message in json.loads(body).get("messages") or []:
        text = json.dumps(message, ensure_ascii=False)
        if SUMMARY_MARK not in text:
            out += MARK.findall(text) + PROBE.findall(text)
    return out


class Slot:
    """One of the two editors: its fake model, its acknowledgements, its current server."""

    def __init__(self, index: int) -> None:
        self.index = index
        self.name = NAMES[index]
        self.script = SlotScript()
        self.model = CampaignModel(self.script)
        self.acks = AckTracker()
        self.editor: Editor | None = None
        self.starts = 0
        self.doing = ""  # "" (idle), "run", "compact", "probe"

    @property
    def alive(self) -> bool:
        editor = self.editor
        return editor is not None and not editor.killed and editor.process is not None and \
            editor.process.returncode is None

    def on_event(self, event: dict[str, Any]) -> None:
        self.acks.on_event(event, self.script)


def number_of(item: str) -> int | None:
    """The run number of an identity (``P12.0``, ``T12.9``, ``Cc12_0_1``, ``Rc12_0_1``)."""
    if item[:1] in ("P", "T"):
        return int(item[1:].split(".")[0])
    found = CALL.match(item[1:]) if item[:1] in ("C", "R") else None
    return int(found.group(1)) if found else None


class TwoProcessLane:
    """The folder, its two editors and the one session they share."""

    def __init__(self, config: TwoProcessConfig, root: Path, launcher: Launcher,
                 report: TwoProcessReport) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        self.root = root
        self.folder = root / "ws"
        self.launcher = launcher
        self.report = report
        self.slots = [Slot(0), Slot(1)]
        self.store = SessionStore(self.folder / ".PseudoClaude")
        self.session_id: str | None = None
        self.follower: LogFollower | None = None
        self.runs = 0  # runs sent (their number is in their prompt's marker)
        self.probes = 0
        self.refused_probes: list[str] = []
        self.ran_probes: set[str] = set()  # answered after their writer was killed: they ran
        self.next_writer = 0
        self.last_writer: int | None = None  # the process of the last operation answered
        self.last_run = ""  # the prompt of the last run answered
        self.stopping = False
        self.op_seconds: deque[float] = deque(maxlen=20)
        self.gates: list[threading.Event] = []

    # -- processes -----------------------------------------------------------------------
    def options(self, slot: Slot) -> dict[str, Any]:
        return {"provider": self.config.provider, "apiKey": "sk-campaign-not-a-real-key-0000",
                "baseUrl": slot.model.base_url, "maxRetries": 0,
                "contextWindow": self.config.context_window,
                "memory": {"userDir": str(self.root / "user-memory"), "mode": "off"},
                "approvals": {"runCommand": "allow"}}

    async def start(self, slot: Slot) -> bool:
        """A fresh server for ``slot``; it resumes the session (checked against the disk)."""
        slot.starts += 1
        editor = Editor(f"crash-sessions-{slot.name}{slot.starts}", slot.on_event)
        slot.editor = editor
        try:
            await editor.start(self.launcher, [self.folder], self.options(slot), self.root)
        except Exception as exc:
            self.report.fail("servers that failed to start",
                             f"{slot.name}: {exc!r} {editor.diagnostics()[-1500:]}")
            await editor.kill()
            return False
        if self.session_id is None:
            return True
        try:
            expected = len(load_session(self.store, self.session_id).messages)
        except (SessionError, OSError) as exc:
            self.report.fail("sessions unloadable", f"before {slot.name} resumes: {exc!r}")
            return True
        try:
            resumed = await editor.request("pseudoclaude/sessions/resume",
                                           {"sessionId": self.session_id})
        except Exception as exc:
            self.report.fail("resumes failed", f"{slot.name}: {exc!r} "
                             f"{editor.diagnostics()[-500:]}")
            return True
        self.report.resumes += 1
        self.report.info["repairs at resume"] += int(resumed.get("repaired", 0))
        if (resumed.get("sessionId"), resumed.get("messageCount")) != (self.session_id,
                                                                       expected):
            self.report.fail("resume mismatches", f"{slot.name}: resume answered {resumed}, "
                             f"load_session gave {expected} messages")
        return True

    # -- what the model is told to do ----------------------------------------------------
    def run_turns(self, n: int) -> list[dict[str, Any]]:
        rng = self.rng
        turns: list[dict[str, Any]] = []
        for r in range(rng.choice((0, 1, 1, 2))):
            calls: list[dict[str, Any]] = []
            if rng.random() < 0.3:
                calls.append({"id": f"c{n}_{r}_0", "name": "read_file",
                              "arguments": {"path": "big.txt"}})
            calls.append({"id": f"c{n}_{r}_1", "name": "read_file",
                          "arguments": {"path": f"medium{rng.randrange(4)}.txt"}})
            turns.append({"text": f"Round {r}, reading. <<T{n}.{r}>>", "tool_calls": calls})
        turns.append({"text": f"Read; nothing else to do. <<T{n}.9>> " + "done " * 20,
                      "chunks": 12, "delay": rng.choice([0.0, 0.004])})
        return turns

    def acked(self) -> set[str]:
        return self.slots[0].acks.acked | self.slots[1].acks.acked

    def follow(self) -> LogFollower | None:
        """Bring the log follower up to date (only while nobody writes the session)."""
        if self.session_id is None:
            return None
        if self.follower is None:
            self.follower = LogFollower(self.store.log_path(self.session_id))
        follower = self.follower
        before = (follower.not_suffix, follower.unexpected)
        follower.follow()
        if follower.not_suffix > before[0]:
            self.report.fail("compact replaces not keeping a suffix", str(follower.path))
        if follower.unexpected > before[1]:
            self.report.fail("unexpected replaces", str(follower.path))
        return follower

    # -- one operation -------------------------------------------------------------------
    async def answer(self, slot: Slot, future: asyncio.Future[Any]) -> Any:
        try:
            return await asyncio.wait_for(future, TIMEOUT)
        except RuntimeError as exc:  # pygls fails pending requests when the process exits
            raise ServerDied(str(exc)) from None

    def release(self) -> None:
        for gate in self.gates:
            gate.set()
        self.gates.clear()

    async def operation(self, writer: Slot, other: Slot) -> None:
        """One run or compaction by ``writer``, probed by ``other`` while it writes."""
        assert writer.editor is not None
        follower = self.follow()
        live = len(follower.state) if follower is not None else 0
        compact = self.session_id is not None and (
            live > self.config.compact_over or self.rng.random() < self.config.compact_share)
        logged = self.logged_markers()
        gate = writer.script.arm()
        self.gates = [gate]
        started = time.monotonic()
        prompt_id = ""
        if compact:
            self.last_run = ""  # (it may summarise that run, answered or not)
            writer.doing = "compact"
            future = writer.editor.send("pseudoclaude/compact", {
                "sessionId": self.session_id, "instructions": "keep the file names"})
        else:
            self.runs += 1
            n = self.runs
            prompt_id = f"P{n}.{writer.index}"
            writer.script.set_turns(self.run_turns(n))
            writer.acks.start_run(prompt_id)
            writer.doing = "run"
            future = writer.editor.send("pseudoclaude/run", {
                "sessionId": self.session_id or "new",
                "prompt": f"Read the files again and report. <<{prompt_id}>>"})
        try:
            with contextlib.suppress(TimeoutError):
                await until(lambda: writer.script.arrived.is_set() or future.done()
                            or not writer.alive, TIMEOUT)
            if writer.script.arrived.is_set() and not future.done() and writer.alive and \
                    other.alive and not self.stopping and self.session_id is not None:
                await self.probe(other, writer, future)
        finally:
            gate.set()
        try:
            result = await self.answer(writer, future)
        except ServerDied:
            return
        except JsonRpcException as exc:
            if not writer.alive:
                return
            if exc.code == SESSION_BUSY:
                self.report.fail("writes refused with no other writer",
                                 f"{writer.name}: {exc} data={exc.data}")
                return
            if compact and "would not shrink" in str(exc):
                self.report.info["manual compactions refused (would not shrink)"] += 1
                return
            self.report.fail("operations failed", f"{writer.name} {writer.doing}: {exc!r}")
            return
        except TimeoutError:
            self.report.fail("operations hung", f"{writer.name} {writer.doing} did not answer "
                             f"in {TIMEOUT:.0f} s")
            return
        finally:
            writer.doing = ""
        self.op_seconds.append(time.monotonic() - started)
        self.report.run_seconds.append(time.monotonic() - started)
        previous = self.last_run if self.last_writer != writer.index else ""
        self.last_writer = writer.index
        if compact:
            self.report.info["manual compactions answered"] += 1
            return
        writer.acks.on_response()
        self.report.info["runs completed"] += 1
        self.session_id = self.session_id or str(result["sessionId"])
        if result["sessionId"] != self.session_id:
            self.report.fail("sessions split (more than one session)",
                             f"{writer.name}'s run answered session {result['sessionId']}, "
                             f"expected {self.session_id}")
        if result["stopReason"] != "completed":
            self.report.fail("operations failed", f"{writer.name}: run stopped with "
                             f"{result['stopReason']}: {result.get('error')}")
        self.last_run = prompt_id
        if logged is not None:
            self.check_request(writer, prompt_id, logged, previous)

    async def probe(self, other: Slot, writer: Slot, writing: asyncio.Future[Any]) -> None:
        """``other`` asks to write the session ``writer`` is writing: -32011 naming it."""
        assert other.editor is not None and writer.editor is not None
        self.probes += 1
        probe_id = f"Q{self.probes}"
        compact = self.rng.random() < self.config.probe_compact_share
        method = "pseudoclaude/compact" if compact else "pseudoclaude/run"
        params: dict[str, Any] = {"sessionId": self.session_id}
        if compact:
            params["instructions"] = f"a probe <<{probe_id}>>"
        else:
            params["prompt"] = f"Me too. <<{probe_id}>>"
        writer_pid = writer.editor.pid
        other.doing = "probe"
        try:
            listed = await other.editor.request("pseudoclaude/sessions/list")
            running = [s.get("running") for s in listed.get("sessions") or []
                       if s.get("id") == self.session_id]
            if running != [True] and writer.alive and not writing.done():
                self.report.fail("sessions listed as not running while written",
                                 f"{other.name}: {listed}")
            answer = await other.editor.request(method, params)
        except ServerDied:
            return
        except JsonRpcException as exc:
            if exc.code != SESSION_BUSY:
                if other.alive:
                    self.report.fail("operations failed", f"{other.name}'s probe ({method}): "
                                     f"{exc!r}")
                return
            data = exc.data if isinstance(exc.data, dict) else {}
            if data.get("sessionId") != self.session_id or data.get("pid") != writer_pid:
                self.report.fail("busy answers naming the wrong session or writer",
                                 f"{other.name}'s probe: {exc} data={exc.data}, the writer is "
                                 f"{writer.name} (pid {writer_pid}) of {self.session_id}")
            self.refused_probes.append(probe_id)
            self.report.info["busy refusals (expected): " +
                             ("compaction" if compact else "run")] += 1
            return
        except TimeoutError:
            self.report.fail("operations hung", f"{other.name}'s probe did not answer")
            return
        finally:
            other.doing = ""
        if writer.alive and not writing.done():
            self.report.fail("writes not refused while the other process wrote",
                             f"{other.name}'s {method} was answered {answer} while "
                             f"{writer.name} (pid {writer_pid}) was writing")
        else:
            self.ran_probes.add(probe_id)
            self.report.info["probes answered after the writer was killed"] += 1

    def logged_markers(self) -> list[str] | None:
        """The prompts and turns of the session as its log holds them now (repaired, as a
        process resuming it sees them), the summary left out; None before the session."""
        if self.session_id is None:
            return None
        try:
            loaded = load_session(self.store, self.session_id)
        except (SessionError, OSError):
            return None  # counted by the checks
        return [i for m in loaded.messages if SUMMARY_MARK not in (m.content or "")
                for i in MARK.findall(m.content or "")]

    def check_request(self, writer: Slot, prompt_id: str, logged: list[str],
                      previous: str) -> None:
        """The first model request of ``writer``'s run carries the session exactly as the log
        held it before the run (its prompts and turns, in order) and then its own prompt; no
        probe. After a run of the other process (``previous``, its prompt): that prompt and
        its final answer."""
        with writer.script.lock:
            requests = list(writer.script.requests)
        if not requests:
            self.report.fail("operations failed", f"{writer.name}: no model request seen")
            return
        first = requests[0]
        for probe in (m for m in first if m.startswith("Q") and m not in self.ran_probes):
            self.report.fail("requests carrying a probe", f"{writer.name}'s request for "
                             f"{prompt_id}: {probe}")
        sent = [m for m in first if not m.startswith("Q")]
        want = [*logged, prompt_id]
        if sent != want:
            missing = sorted(set(want) - set(sent))
            if missing:
                self.report.fail("requests missing turns the log holds",
                                 f"{writer.name}'s request for {prompt_id} lacks {missing}")
            if not missing or len(sent) != len(want):
                self.report.fail("requests with turns the log does not hold, twice or out of "
                                 "order", f"{writer.name}'s request for {prompt_id}: {sent}, "
                                 f"the log: {logged}")
        if previous:
            final = "T" + previous[1:].split(".")[0] + ".9"
            if previous not in sent or final not in sent:
                self.report.fail("hand-offs without the other process's last prompt and "
                                 "answer", f"{writer.name}'s request for {prompt_id} lacks "
                                 f"{previous} or {final}")
            self.report.info["hand-offs checked (a run after the other process's run)"] += 1

    async def drive(self) -> None:
        """Operations back to back, the writers alternating, until ``stopping``."""
        while not self.stopping:
            writer = self.slots[self.next_writer]
            other = self.slots[1 - self.next_writer]
            if not writer.alive:
                return
            try:
                await self.operation(writer, other)
            except Exception as exc:
                self.report.fail("operations failed", f"{writer.name}: {exc!r}")
                return
            self.next_writer = 1 - self.next_writer

    def phase(self, victim: Slot) -> str:
        """What the victim was doing when the kill was sent."""
        if victim.doing == "probe":
            return "probing (the other writes)"
        if victim.doing in ("run", "compact"):
            what = "writing a run" if victim.doing == "run" else "compacting"
            busy = victim.model.busy()
            if victim.script.arrived.is_set() and any(not g.is_set() for g in self.gates):
                return f"{what}: held while the other probes"
            if "summary" in busy:
                return f"{what}: summary call"
            if "agent" in busy:
                return f"{what}: model turn streaming"
            run = victim.acks.run
            if victim.doing == "run" and (run is None or not run.prompt_acked):
                return f"{what}: start (lock, reload, prompt)"
            return f"{what}: tools, appends, replace"
        other = self.slots[1 - victim.index]
        return "idle (the other writes)" if other.doing else "idle (between operations)"

    # -- a cycle -------------------------------------------------------------------------
    async def calibrate(self) -> None:
        """Runs that are not killed: A makes the session, then B, then A (timed)."""
        for slot in self.slots:
            if not await self.start(slot):
                raise RuntimeError(f"{slot.name} did not start")
        for index in (0, 1, 0):
            self.next_writer = index
            await self.operation(self.slots[index], self.slots[1 - index])
        self.next_writer = 1
        self.check("calibration")

    async def cycle(self) -> None:
        for slot in self.slots:
            if not slot.alive and not await self.start(slot):
                return
        started = time.monotonic()
        self.stopping = False
        work = asyncio.ensure_future(self.drive())
        span = self.config.later_runs * statistics.fmean(self.op_seconds)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(work), self.rng.uniform(0.0, span))
        victim = self.slots[self.rng.randrange(2)]
        if not all(s.alive for s in self.slots):
            self.report.fail("servers that died before the kill",
                             "; ".join(f"{s.name}: {s.editor.diagnostics()[-800:]}"
                                       for s in self.slots if s.editor and not s.alive))
        self.report.phases[self.phase(victim)] += 1
        self.stopping = True
        assert victim.editor is not None
        await victim.editor.kill()
        self.release()  # a model request the victim's operation held
        try:
            await asyncio.wait_for(work, 2 * TIMEOUT)  # the survivor finishes its operation
        except TimeoutError:
            self.report.fail("operations hung", "the survivor's operation did not end")
        victim.acks.server_gone(victim.script)
        self.report.kills += 1
        self.next_writer = victim.index  # the fresh process writes first
        self.check(f"after killing {victim.name}")
        self.report.cycle_seconds.append(time.monotonic() - started)

    async def finish(self) -> None:
        """After the last kill: both run once more (the fresh one first), then shut down."""
        for slot in self.slots:
            if not slot.alive:
                await self.start(slot)
        for index in (self.next_writer, 1 - self.next_writer):
            writer, other = self.slots[index], self.slots[1 - index]
            if writer.alive:
                await self.operation(writer, other)
        for slot in self.slots:
            if slot.alive and slot.editor is not None:
                try:
                    await slot.editor.shutdown()
                except Exception as exc:
                    self.report.fail("operations failed", f"{slot.name} shutdown: {exc!r}")
                    await slot.editor.kill()
                slot.acks.server_gone(slot.script)
        self.check("at the end")

    # -- the checks ----------------------------------------------------------------------
    def check(self, when: str) -> None:
        """With no writer left (see the module docstring)."""
        report = self.report
        if self.config.before_check is not None:
            self.config.before_check(self)
        sessions = [s.id for s in list_sessions(self.store)]
        if self.session_id is None:
            if self.acked():
                report.fail("sessions unloadable", f"{when}: no session although messages "
                            "were acknowledged")
            return
        if sessions != [self.session_id]:
            report.fail("sessions split (more than one session)", f"{when}: {sessions}")
        held = holder(self.store.session_dir(self.session_id))
        if held is not None:
            pids = ", ".join(f"{s.name}: {s.editor.pid if s.editor else None}"
                             for s in self.slots)
            report.fail("locks held after the holder died", f"{when}: pid {held} ({pids})")
        follower = self.follow()
        try:
            loaded = load_session(self.store, self.session_id)
        except (SessionError, OSError) as exc:
            report.fail("sessions unloadable", f"{when}: {exc!r}")
            return
        if not is_valid(loaded.messages):
            report.fail("protocol-invalid histories", f"{when}: "
                        f"{self.store.log_path(self.session_id)}")
        present = ids_of_loaded(loaded.messages)
        summarised = follower.summarised if follower is not None else set()
        acked = self.acked()
        lost = acked - present - summarised
        for item in sorted(lost):
            report.fail("acknowledged messages lost", f"{when}: {item}")
        for slot in self.slots:
            slot.acks.acked -= lost  # report each loss once
        self.check_order(loaded.messages, when)
        data = self.store.log_path(self.session_id).read_bytes()
        for probe in self.refused_probes:
            if f"<<{probe}>>".encode() in data:
                report.fail("refused writes that wrote (a probe in the log)", f"{when}: {probe}")
        self.refused_probes = []  # checked once each: they were refused before this check
        for problem in check_spills(loaded, self.folder):
            report.fail("spill files missing or short", f"{when}: {problem}")

    def check_order(self, messages: list[Any], when: str) -> None:
        """Each prompt once, in order; every turn, call and result after its own prompt."""
        report = self.report
        seen: set[int] = set()
        last = 0
        current: int | None = None
        for m in messages:
            ids = ids_of_loaded([m])
            if SUMMARY_MARK in (m.content or ""):  # quotes the prompts it summarised
                current = None
                continue
            if m.role == "user" and m.tool_result is None:
                prompts = [number_of(i) for i in ids if i.startswith("P")]
                if not prompts:  # a probe that ran after its writer died: its turns have no
                    current = -1  # marker, nothing marked may follow before the next prompt
                    continue
                n = prompts[0] or 0
                if n in seen:
                    report.fail("prompts more than once in the history", f"{when}: P{n}")
                if n < last:
                    report.fail("prompts out of order", f"{when}: P{n} after P{last}")
                seen.add(n)
                last, current = max(last, n), n
                continue
            for item in ids:
                of = number_of(item)
                if of is not None and current is not None and of != current:
                    report.fail("turns under another prompt",
                                f"{when}: {item} after the prompt of run {current}")
                    break

    def summary(self) -> dict[str, int]:
        follower = self.follower
        return {
            "torn lines seen in the log": follower.bad_lines if follower else 0,
            "compact replaces": follower.replaces["compact"] if follower else 0,
            "repair replaces": follower.replaces["repair"] if follower else 0,
            "items summarised by compaction": len(follower.summarised) if follower else 0,
            "acknowledged items": len(self.acked()),
            "runs sent": self.runs,
            "probes sent": self.probes,
            "servers started": sum(s.starts for s in self.slots),
            "model requests (agent)": sum(s.script.served["agent"] for s in self.slots),
            "model requests (summary)": sum(s.script.served["summary"] for s in self.slots),
        }


async def until(predicate: Callable[[], bool], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError
        await asyncio.sleep(0.005)


async def run_two_process_lane(config: TwoProcessConfig) -> TwoProcessReport:
    """Run the lane; returns the report (does not print the table)."""
    report = TwoProcessReport(config={k: (str(v) if isinstance(v, Path) else v)
                                      for k, v in asdict(config).items()
                                      if k not in ("progress", "before_check")})
    root = Path(tempfile.mkdtemp(prefix="pc-crash-sessions-", dir=config.root))
    (root / "home").mkdir()
    launcher = Launcher(config.launch, root, server_env(root / "home"))
    lane = TwoProcessLane(config, root, launcher, report)
    make_files(lane.folder, lane.rng)
    for slot in lane.slots:
        slot.model.start()
    started = time.monotonic()
    last = 0
    try:
        await launcher.start()
        await lane.calibrate()
        failed_cycles = 0
        while report.kills < config.kills and failed_cycles <= 20:
            before = report.kills
            await lane.cycle()
            if report.kills == before:  # a server did not start
                failed_cycles += 1
                report.info["cycles without a kill (a server did not start)"] += 1
            done = report.kills
            if config.progress is not None and (done - last >= config.progress_every
                                                or done == config.kills):
                last = done
                elapsed = time.monotonic() - started
                bad = {k: v for k, v in report.counts.items() if v}
                config.progress(f"  {done:5d}/{config.kills} two-process kills  "
                                f"{elapsed:7.1f} s  "
                                f"{'problems: ' + json.dumps(bad) if bad else 'no problem'}")
        await lane.finish()
    finally:
        lane.release()
        for slot in lane.slots:
            if slot.alive and slot.editor is not None:
                with contextlib.suppress(Exception):
                    await slot.editor.kill()
            slot.model.stop()
        await launcher.close()
        report.elapsed = time.monotonic() - started
        report.info.update(lane.summary())
        if config.keep:
            report.config["kept_root"] = str(root)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return report


def print_table(report: TwoProcessReport) -> None:
    data = report.as_json()
    print(f"\nTwo-process lane: {report.kills} SIGKILLs of one of two servers sharing a session, "
          f"{report.resumes} resumes, launch={report.config['launch']}, "
          f"{report.elapsed:.0f} s ({data['cycle_seconds']['mean']} s per cycle)")
    print_counts(report, COUNTS, 50, "kills by phase (what the killed process was doing)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=TwoProcessConfig.kills)
    parser.add_argument("--seed", type=int, default=TwoProcessConfig.seed)
    parser.add_argument("--launch", choices=("fork", "exec"), default="fork")
    parser.add_argument("--provider", choices=("anthropic", "openai"), default="anthropic")
    parser.add_argument("--keep", action="store_true", help="keep the lane's folder")
    parser.add_argument("--out", type=Path, default=OUT / "crash_sessions.json")
    args = parser.parse_args(argv)
    config = TwoProcessConfig(kills=args.kills, seed=args.seed, launch=args.launch,
                              provider=args.provider, keep=args.keep)
    print(f"two-process lane: {config.kills} kills, launch={config.launch}, seed={config.seed}")
    report = asyncio.run(run_two_process_lane(config))
    print_table(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report.as_json(), indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
