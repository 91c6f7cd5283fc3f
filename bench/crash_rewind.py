"""Crash campaign, rewind lane: a real server killed with SIGKILL in the middle of a code rewind.

One workspace folder holds a *base* state: ``--files`` files (300 by default, 30-60 KB each)
under ``src/`` and ten files under ``old/``. Every file's content is deterministic and names
its version: a first line ``v<k> <path> <sha256 of the rest>`` and a body derived from the path
and ``k``, so a file read back is either a whole version (its checksum holds) or torn. The lane
drives a succession of server processes (``pseudoclaude lsp`` over stdio, started by the crash
campaign's :class:`~crash_campaign.Launcher` and driven by its
:class:`~crash_campaign.Editor`) against the campaign's scripted fake model. Each cycle:

1. a NEW server starts. If the last kill left something to finish, it is made to: by
   ``pseudoclaude/rewind/preview`` or, one time in two, by a run of a prompt that changes
   nothing (an interrupted rewind is finished before a process's first checkpoint, rewind
   preview or rewind). Then the disk is checked again (below);
2. a run (not killed) of a prompt whose scripted model turn calls ``run_command``
   (``approvals.runCommand: allow``): a Python program that rewrites every ``src/`` file to
   version ``k`` (the cycle's number), deletes three files of ``old/`` and creates three under
   ``new/``. The lane computes what every file holds before the prompt (the base state, the
   rewind's target) and after it, and checks the disk holds the latter exactly; then
   ``pseudoclaude/sessions/turns`` must count the prompt's changes (so the checkpoint
   repository works after the previous kill) and ``pseudoclaude/context``'s ``checkpoints``
   must have no ``problem``;
3. ``pseudoclaude/rewind {turn: <that prompt>, mode: "code"}`` is sent and the server is
   SIGKILLed at a random moment: uniform in 0 .. ``--span`` (1.3) x the mean duration of the
   recent rewinds that were not killed (three measured first, on a calibration server; then,
   one cycle in five, the prompt is rewound unkilled, timed and checked, and rewritten again
   before the killed rewind; and every rewind the lane redoes), so kills land before the
   journal is written, during the restores, and after the rewind finished. One kill in five
   (``early``) is drawn in the first tenth of that mean instead: planning the rewind and
   writing its journal take only a few percent of it;
4. the client drains what the server sent, then the disk is checked BEFORE any new server
   starts: every file is byte for byte its *after* content (not yet restored) or its *before*
   content (restored) -- never torn, never a third content; a deleted or created file is
   present or absent as one of the two states has it; temporary files of interrupted atomic
   writes (``.<name>.<random>.tmp``) are counted apart; whether the journal
   (``<dataDir>/checkpoints/journal.json``) exists; the session log loads (``load_session``).

After the next start (step 1): when the journal existed at the kill, it must be gone and every
file in its before state (the rewind was finished); when the kill came before the journal was
written, every file must still be in its after state, untouched -- then the lane redoes the
rewind, unkilled (timed: the kill window follows these durations), and checks the before state.
A kill after the journal was removed must find everything in the before state and the start
must change nothing. At the end a last server finishes what the last kill left and shuts down
cleanly.

Counts (the lane's targets: all zero): ``torn files``, ``files in neither state``, ``rewinds
half-done without a journal`` (no journal at the kill, yet files of both states),
``journals not finished on the next start``, ``files not in the rewound state after the journal
finished``, ``files changed by a start with no rewind pending``, ``sessions unloadable``,
``checkpoint repository broken after a kill``, plus the campaign's ``servers that failed to
start``, ``servers that died before the kill``, ``operations failed`` and ``operations hung``.
Information: kills by phase (read from the disk: before the journal, journal written and no file
restored yet, during the restores, every file restored but the journal still there, the rewind
finished before or after its answer reached the client), temporary files left in the workspace
and in the data folder, interrupted rewinds finished by a preview or by a run.

Run: ``.venv/bin/python bench/crash_rewind.py [--kills 200] [--launch fork]`` (writes
``bench/out/crash_rewind.json``), or as part of the campaign:
``bench/crash_campaign.py --rewind-kills 200`` (its table and JSON then include this lane's).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # crash_campaign.py, next to this file

from crash_campaign import (
    TIMEOUT,
    CampaignModel,
    CampaignScript,
    Editor,
    Launcher,
    Report,
    print_counts,
    server_env,
)
from pseudoclaude.session import SessionError, SessionStore, list_sessions, load_session

OUT = Path(__file__).resolve().parent / "out"
DATA_DIR = ".PseudoClaude"
OLD_FILES = 10
# The program the scripted model runs with run_command (standard library only: it runs with
# ``python -I -S``), and the one definition of every file's content: the lane loads the same
# source to know what each file must hold.
REWRITER = r'''
import hashlib, json, os, sys

WORDS = ("alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india",
         "juliet", "kilo", "lima")


def content(path, version, low=30_000, high=60_000):
    """Version ``version`` of ``path``: "v<k> <path> <sha256 of the body>" then the body."""
    seed = hashlib.sha256(f"{path}\0{version}".encode()).digest()
    size = low + int.from_bytes(seed[:4], "big") % (high - low + 1)
    tag = seed.hex()[:12]
    body = "".join(f"{i:06d} v{version} {tag} {WORDS[i * seed[4] % 12]} "
                   f"{WORDS[(i + seed[5]) % 12]}\n"
                   for i in range(size // 40 + 1)).encode()[:size]
    return b"v%d %s %s\n" % (version, path.encode(), hashlib.sha256(body).hexdigest().encode()) \
        + body


def main(spec_path):
    with open(spec_path) as f:
        spec = json.load(f)
    for path in spec["write"]:
        os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        with open(path, "wb") as out:
            out.write(content(path, spec["version"], spec["low"], spec["high"]))
    for path in spec["delete"]:
        os.remove(path)
    print(f"version {spec['version']}: {len(spec['write'])} written, "
          f"{len(spec['delete'])} deleted")


if __name__ == "__main__":
    main(sys.argv[1])
'''
_rewriter: dict[str, Any] = {}
exec(compile(REWRITER, "rewriter", "exec"), _rewriter)
content: Callable[[str, int, int, int], bytes] = _rewriter["content"]

Digests = dict[str, str]
"""A state of the workspace: path (relative, ``/``) -> sha256 of its bytes; absent: no file."""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def whole_version(data: bytes) -> bool:
    """Whether ``data`` is a whole version of some file (its first line's checksum holds)."""
    head, sep, body = data.partition(b"\n")
    parts = head.split(b" ")
    return bool(sep) and len(parts) == 3 and parts[0].startswith(b"v") and \
        parts[2].decode("ascii", "replace") == digest(body)


def is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")


# -- the disk ------------------------------------------------------------------------------

@dataclass
class DiskCheck:
    """The workspace against two states (see :func:`check_disk`)."""

    before_only: int = 0  # files (or absences) that match the before state only
    after_only: int = 0
    both: int = 0  # files the two states agree on
    torn: list[str] = field(default_factory=list)
    neither: list[str] = field(default_factory=list)
    temp_files: list[str] = field(default_factory=list)  # in the workspace
    data_temp_files: list[str] = field(default_factory=list)  # in <dataDir>/checkpoints
    journal: bool = False

    @property
    def state(self) -> str:
        """``broken`` (torn or third content), ``before``, ``after`` or ``mixed``."""
        if self.torn or self.neither:
            return "broken"
        if not self.after_only:
            return "before"
        if not self.before_only:
            return "after"
        return "mixed"

    def not_in(self, state: str) -> int:
        """How many files are not as ``state`` (``before`` or ``after``) has them."""
        wrong = self.after_only if state == "before" else self.before_only
        return wrong + len(self.torn) + len(self.neither)


def check_disk(folder: Path, before: Digests, after: Digests) -> DiskCheck:
    """Every file of ``folder`` (its data folder aside) against ``before`` and ``after``: each
    must be byte for byte one of them; a file neither state has, or a path both have but the
    disk not, is in neither; a file whose bytes are not a whole version is torn."""
    out = DiskCheck()
    seen: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(folder):
        if Path(dirpath) == folder:
            dirnames[:] = [d for d in dirnames if d != DATA_DIR]
        for name in filenames:
            path = Path(dirpath) / name
            relative = path.relative_to(folder).as_posix()
            if is_temp(name):
                out.temp_files.append(relative)
                continue
            seen.add(relative)
            data = path.read_bytes()
            _classify(out, relative, digest(data), before, after, whole_version(data))
    for relative in sorted((before.keys() | after.keys()) - seen):
        _classify(out, relative, None, before, after, True)
    checkpoints = folder / DATA_DIR / "checkpoints"
    with contextlib.suppress(FileNotFoundError):
        out.data_temp_files = sorted(n for n in os.listdir(checkpoints) if is_temp(n))
    out.journal = (checkpoints / "journal.json").exists()
    return out


def _classify(out: DiskCheck, path: str, found: str | None, before: Digests, after: Digests,
              whole: bool) -> None:
    in_before, in_after = before.get(path) == found, after.get(path) == found
    if in_before and in_after:
        out.both += 1
    elif in_before:
        out.before_only += 1
    elif in_after:
        out.after_only += 1
    elif whole:
        out.neither.append(path if found is not None else f"{path} (missing)")
    else:
        out.torn.append(path)


# -- the lane ------------------------------------------------------------------------------

@dataclass
class RewindConfig:
    kills: int = 200
    seed: int = 20261215
    launch: str = "fork"
    provider: str = "anthropic"
    files: int = 300  # rewritten by every prompt
    low: int = 30_000  # their sizes, bytes
    high: int = 60_000
    changed_old: int = 3  # files of old/ deleted, and files of new/ created, by every prompt
    calibration: int = 3  # rewinds not killed, timed, before the first kill
    measure_every: int = 5  # and then one in this many cycles, before its killed one
    span: float = 1.3  # kills land in 0 .. span x the mean duration of an unkilled rewind
    early: float = 0.2  # except this share, in 0 .. 0.1 x that mean (planning, the journal)
    root: Path | None = None  # default: a temporary folder, removed at the end
    keep: bool = False
    progress: Callable[[str], None] | None = print
    progress_every: int = 25
    before_check: Callable[[RewindLane, str], None] | None = None
    """A test seam: called with the lane and the moment (``right after the kill``, ...) before
    each disk check, to break something on purpose."""


COUNTS = ("servers that failed to start", "servers that died before the kill",
          "operations failed", "operations hung", "torn files", "files in neither state",
          "rewinds half-done without a journal", "journals not finished on the next start",
          "files not in the rewound state after the journal finished",
          "files changed by a start with no rewind pending",
          "temporary copies left after the journal finished", "sessions unloadable",
          "checkpoint repository broken after a kill")


@dataclass
class RewindReport(Report):
    """The campaign's report with this lane's counts, and the durations of unkilled rewinds."""

    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COUNTS, 0))
    rewind_seconds: list[float] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        data = super().as_json()
        data.pop("resumes")
        data["run_seconds"]["what"] = "the prompt that rewrites the files, not killed"
        rewinds = self.rewind_seconds
        data["rewind_seconds"] = {
            "what": "rewinds not killed (calibration, one cycle in five, redone)",
            "n": len(rewinds),
            "mean": round(statistics.fmean(rewinds), 3) if rewinds else None,
            "p50": round(statistics.median(rewinds), 3) if rewinds else None,
            "max": round(max(rewinds), 3) if rewinds else None}
        return data


@dataclass
class Pending:
    """What the last kill left: the prompt it was rewinding and the disk right after it."""

    turn: int
    disk: DiskCheck


class RewindLane:
    """The workspace, its fake model and its succession of servers."""

    def __init__(self, config: RewindConfig, root: Path, launcher: Launcher,
                 report: RewindReport) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        self.root = root
        self.folder = root / "ws"
        self.rewriter = root / "rewrite.py"
        self.launcher = launcher
        self.report = report
        self.script = CampaignScript()
        self.model = CampaignModel(self.script)
        self.store = SessionStore(self.folder / DATA_DIR)
        self.session_id: str | None = None
        self.version = 0
        self.base: Digests = {}
        self.after: Digests = {}
        self.pending: Pending | None = None
        self.durations: deque[float] = deque(maxlen=20)
        self.temp_seen: set[str] = set()
        self.data_temp_seen: set[str] = set()
        self.editor: Editor | None = None
        self.current_op = ""
        self.cycles = 0

    # -- files -----------------------------------------------------------------------------
    def src_paths(self) -> list[str]:
        return [f"src/m{i // 50}/f{i:03d}.txt" for i in range(self.config.files)]

    def old_paths(self) -> list[str]:
        return [f"old/d{i:02d}.txt" for i in range(OLD_FILES)]

    def version_of(self, path: str, version: int) -> bytes:
        return content(path, version, self.config.low, self.config.high)

    def make_base(self) -> None:
        """The base state (version 0 of every file) and the rewriting program (outside)."""
        self.rewriter.write_text(REWRITER)
        for path in [*self.src_paths(), *self.old_paths()]:
            target = self.folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            data = self.version_of(path, 0)
            target.write_bytes(data)
            self.base[path] = digest(data)

    def restore_base(self) -> None:
        """Put the base state back by hand (only after a check found a broken disk), so the
        following cycles start from it again."""
        for path in (self.after.keys() | self.base.keys()) - self.base.keys():
            (self.folder / path).unlink(missing_ok=True)
        for path in self.base:
            target = self.folder / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(self.version_of(path, 0))
        self.report.info["workspaces put back by the lane (after a failed check)"] += 1

    def options(self) -> dict[str, Any]:
        return {"provider": self.config.provider, "apiKey": "sk-campaign-not-a-real-key-0000",
                "baseUrl": self.model.base_url, "maxRetries": 0,
                "memory": {"enabled": False}, "approvals": {"runCommand": "allow"},
                "sandbox": {"enabled": False}}

    def check(self, when: str) -> DiskCheck:
        """The disk against the base (before) and the last prompt's (after) states; torn and
        third-content files are counted here, every time they are seen."""
        if self.config.before_check is not None:
            self.config.before_check(self, when)
        disk = check_disk(self.folder, self.base, self.after)
        for path in disk.torn:
            self.report.fail("torn files", f"{when}, v{self.version}: {path}")
        for path in disk.neither:
            self.report.fail("files in neither state", f"{when}, v{self.version}: {path}")
        self.temp_seen.update(disk.temp_files)
        self.data_temp_seen.update(disk.data_temp_files)
        return disk

    def check_session(self, when: str) -> None:
        if not list_sessions(self.store):
            if self.session_id is not None:
                self.report.fail("sessions unloadable", f"{when}: no session on disk")
            return
        try:
            loaded = load_session(self.store, "latest")
        except (SessionError, OSError) as exc:
            self.report.fail("sessions unloadable", f"{when}: {exc!r}")
            return
        if self.session_id is not None and loaded.session_id != self.session_id:
            self.report.fail("sessions unloadable", f"{when}: latest is {loaded.session_id}, "
                             f"expected {self.session_id}")

    # -- requests --------------------------------------------------------------------------
    async def start(self, name: str) -> Editor | None:
        editor = Editor(f"crash-rewind-{name}")
        self.editor = editor
        try:
            await editor.start(self.launcher, [self.folder], self.options(), self.root)
        except Exception as exc:
            self.report.fail("servers that failed to start", f"{name}: {exc!r} "
                             f"{editor.diagnostics()[-1500:]}")
            await editor.kill()
            return None
        return editor

    async def run(self, editor: Editor, prompt: str, turns: list[dict[str, Any]]) -> None:
        self.script.set_turns(turns)
        self.current_op = "run"
        result = await editor.request("pseudoclaude/run",
                                      {"prompt": prompt, "sessionId": self.session_id or "new"})
        if self.session_id is None:
            self.session_id = str(result["sessionId"])
        if result["sessionId"] != self.session_id or result["stopReason"] != "completed":
            raise RuntimeError(f"the run answered {result['sessionId']} / "
                               f"{result['stopReason']}: {result.get('error')}")

    async def rewrite(self, editor: Editor) -> int:
        """The prompt of this cycle (not killed): rewrite to the next version; returns its
        turn. Checks the disk and what the checkpoints say of it."""
        self.version += 1
        version, config = self.version, self.config
        deleted = self.rng.sample(self.old_paths(), config.changed_old)
        created = [f"new/v{version}/n{j}.txt" for j in range(config.changed_old)]
        written = [*self.src_paths(), *created]
        spec = self.root / "spec.json"
        spec.write_text(json.dumps({"version": version, "write": written, "delete": deleted,
                                    "low": config.low, "high": config.high}))
        after = dict(self.base)
        for path in deleted:
            del after[path]
        for path in written:
            after[path] = digest(self.version_of(path, version))
        self.after = after
        marker = f"<<W{version}>>"
        started = time.monotonic()
        await self.run(editor, f"Rewrite the files to version {version}. {marker}", [
            {"text": f"Rewriting to version {version}.",
             "tool_calls": [{"id": f"w{version}", "name": "run_command", "arguments": {
                 "command": sys.executable, "args": ["-I", "-S", str(self.rewriter), str(spec)],
                 "timeout": 120}}]},
            {"text": f"Done: version {version}."}])
        self.report.run_seconds.append(time.monotonic() - started)
        disk = self.check("after the rewriting prompt")
        if disk.state != "after":
            raise RuntimeError(f"after the rewriting prompt the disk is {disk.state} "
                               f"({disk.before_only} files as before)")
        self.current_op = "turns"
        listed = (await editor.request("pseudoclaude/sessions/turns",
                                       {"sessionId": self.session_id}))["turns"]
        turn = next((t for t in listed if marker in t["prompt"]), None)
        expected = len(written) + len(deleted)
        if turn is None or turn["filesChanged"] != expected:
            self.report.fail("checkpoint repository broken after a kill",
                             f"v{version}: sessions/turns gave {turn}, expected "
                             f"filesChanged {expected}")
        self.current_op = "context"
        context = await editor.request("pseudoclaude/context")
        problem = (context.get("checkpoints") or {}).get("problem")
        if problem:
            self.report.fail("checkpoint repository broken after a kill", f"v{version}: "
                             f"{problem}")
        if turn is None:
            raise RuntimeError(f"sessions/turns does not list the prompt of version {version}")
        return int(turn["turn"])

    async def rewind(self, editor: Editor, turn: int) -> None:
        """A rewind that is not killed (timed), then the disk must be in the before state."""
        self.current_op = "rewind"
        started = time.monotonic()
        await editor.request("pseudoclaude/rewind", {"turn": turn, "mode": "code",
                                                     "force": True,
                                                     "sessionId": self.session_id})
        elapsed = time.monotonic() - started
        self.durations.append(elapsed)
        self.report.rewind_seconds.append(elapsed)
        disk = self.check("after an unkilled rewind")
        if disk.state != "before":
            self.report.fail("operations failed", f"v{self.version}: after an unkilled "
                             f"rewind the disk is {disk.state} ({disk.after_only} files as "
                             "after)")
            if disk.state == "broken":
                self.restore_base()

    async def finish(self, editor: Editor) -> None:
        """The first requests of a server after a kill: they finish an interrupted rewind.
        Then the checks of the module docstring, and the lane is back in the base state."""
        pending, self.pending = self.pending, None
        if pending is None:
            return
        how = self.rng.choice(["preview", "run"])
        if how == "preview":
            self.current_op = "preview"
            preview = await editor.request("pseudoclaude/rewind/preview", {
                "turn": pending.turn, "mode": "code", "sessionId": self.session_id})
            if "cannot be restored" in str(preview.get("message")):
                self.report.fail("checkpoint repository broken after a kill",
                                 f"v{self.version}: the preview says {preview['message']}")
        else:
            await self.run(editor, f"Look, change nothing. <<L{self.version}>>",
                           [{"text": "Nothing to change."}])
        disk = self.check(f"after the next start ({how})")
        self.check_session(f"after the next start ({how})")
        was = pending.disk
        if disk.journal:
            self.report.fail("journals not finished on the next start",
                             f"v{self.version}, finished by a {how}")
        if was.journal:
            self.report.info[f"interrupted rewinds finished by a {how}"] += 1
            if disk.temp_files:  # the copies a write cut short leaves beside its file
                self.report.fail("temporary copies left after the journal finished",
                                 f"v{self.version}: {disk.temp_files[:3]}, finished by a {how}")
            if disk.not_in("before"):
                self.report.fail("files not in the rewound state after the journal finished",
                                 f"v{self.version}: {disk.not_in('before')} files, finished "
                                 f"by a {how}")
        elif was.state in ("after", "before") and disk.not_in(was.state):
            self.report.fail("files changed by a start with no rewind pending",
                             f"v{self.version}: {disk.not_in(was.state)} files, the kill left "
                             f"them {was.state}")
        if disk.state == "broken":
            self.restore_base()
        elif disk.state != "before":
            await self.rewind(editor, pending.turn)  # the kill came before the journal

    # -- one cycle -------------------------------------------------------------------------
    async def calibrate(self) -> None:
        """Rewinds that are not killed, on a first server: the first kill window."""
        editor = await self.start("calibration")
        if editor is None:
            raise RuntimeError("the calibration server did not start")
        for _ in range(self.config.calibration):
            turn = await self.rewrite(editor)
            await self.rewind(editor, turn)
        await editor.shutdown()
        self.check_session("after the calibration")

    async def cycle(self) -> None:
        """Start a server, finish what the last kill left, rewrite, rewind, kill, check."""
        started = time.monotonic()
        report = self.report
        editor = await self.start("cycle")
        if editor is None:
            return
        self.cycles += 1
        try:
            await self.finish(editor)
            turn = await self.rewrite(editor)
            if self.config.measure_every and self.cycles % self.config.measure_every == 0:
                await self.rewind(editor, turn)  # timed: the kill window follows the machine
                turn = await self.rewrite(editor)
        except Exception as exc:
            if isinstance(exc, TimeoutError):
                report.fail("operations hung", f"v{self.version}: {self.current_op} did not "
                            f"answer in {TIMEOUT:.0f} s")
            else:
                report.fail("operations failed", f"v{self.version}: {self.current_op}: "
                            f"{exc!r} {editor.diagnostics()[-800:]}")
            await editor.kill()
            if self.check("after a failed operation").state != "before":
                self.restore_base()  # start the next cycle from the base state again
            return
        self.current_op = "rewind (killed)"
        answer = editor.send("pseudoclaude/rewind", {"turn": turn, "mode": "code",
                                                     "sessionId": self.session_id})
        mean = statistics.fmean(self.durations)
        delay = self.rng.uniform(0.0, 0.1 * mean if self.rng.random() < self.config.early
                                 else self.config.span * mean)
        await asyncio.wait({answer}, timeout=delay)
        assert editor.process is not None
        if editor.process.returncode is not None:
            report.fail("servers that died before the kill", f"v{self.version}: exit status "
                        f"{editor.process.returncode} {editor.diagnostics()[-1500:]}")
        answered = answer.done() and not answer.cancelled() and answer.exception() is None
        if answer.done() and not answered:
            report.fail("operations failed", f"v{self.version}: the rewind answered "
                        f"{answer.exception()!r}")
        await editor.kill()
        if not answer.done():
            answer.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await answer
        report.kills += 1
        disk = self.check("right after the kill")
        self.check_session("right after the kill")
        if not disk.journal and disk.state == "mixed":
            report.fail("rewinds half-done without a journal",
                        f"v{self.version}: {disk.before_only} files restored, "
                        f"{disk.after_only} not")
        report.phases[phase(disk, answered)] += 1
        self.pending = Pending(turn, disk)
        report.cycle_seconds.append(time.monotonic() - started)

    def summary(self) -> dict[str, int]:
        return {"temp files left in the workspace (distinct)": len(self.temp_seen),
                "temp files left in <dataDir>/checkpoints (distinct)": len(self.data_temp_seen),
                "versions written": self.version,
                "files a rewind restores": self.config.files + 2 * self.config.changed_old}


def phase(disk: DiskCheck, answered: bool) -> str:
    """Where the kill landed, from the disk it left (and whether the answer had arrived)."""
    if disk.state == "broken":
        return "unknown (torn or third-content files)"
    if disk.journal:
        return {"after": "journal written, no file restored yet",
                "before": "every file restored, journal not yet removed"}.get(
                    disk.state, "during the restores")
    if disk.state == "after":
        return "before the journal (nothing restored)"
    if disk.state == "before":
        return "after the answer" if answered else "rewind finished, answer not received"
    return "no journal, files half restored"


async def run_rewind_lane(config: RewindConfig) -> RewindReport:
    """Run the lane; returns the report (does not print the table)."""
    report = RewindReport(config={k: (str(v) if isinstance(v, Path) else v)
                                  for k, v in asdict(config).items()
                                  if k not in ("progress", "before_check")})
    root = Path(tempfile.mkdtemp(prefix="pc-crash-rewind-", dir=config.root))
    (root / "home").mkdir()
    launcher = Launcher(config.launch, root, server_env(root / "home"))
    lane = RewindLane(config, root, launcher, report)
    lane.make_base()
    lane.model.start()
    started = time.monotonic()
    last = 0
    try:
        await launcher.start()
        await lane.calibrate()
        while report.kills < config.kills:
            before = report.kills
            await lane.cycle()
            if report.kills == before:  # no kill: the server did not start or failed
                report.info["cycles without a kill (a server or an operation failed)"] += 1
                if report.info["cycles without a kill (a server or an operation failed)"] > 20:
                    break
            done = report.kills
            if config.progress is not None and (done - last >= config.progress_every
                                                or done == config.kills):
                last = done
                elapsed = time.monotonic() - started
                bad = {k: v for k, v in report.counts.items() if v}
                config.progress(f"  {done:5d}/{config.kills} rewind kills  {elapsed:7.1f} s  "
                                f"{'problems: ' + json.dumps(bad) if bad else 'no problem'}")
        # The last kill's rewind is finished by a last server, shut down cleanly.
        editor = await lane.start("final")
        if editor is not None:
            try:
                await lane.finish(editor)
                await editor.shutdown()
            except Exception as exc:
                report.fail("operations failed", f"final: {exc!r}")
                await editor.kill()
            lane.check_session("at the end")
    finally:
        editor = lane.editor
        if editor is not None and editor.process is not None and \
                editor.process.returncode is None:
            with contextlib.suppress(Exception):
                await editor.kill()
        lane.model.stop()
        await launcher.close()
        report.elapsed = time.monotonic() - started
        report.info.update(lane.summary())
        if config.keep:
            report.config["kept_root"] = str(root)
        else:
            shutil.rmtree(root, ignore_errors=True)
    return report


def print_table(report: RewindReport) -> None:
    data = report.as_json()
    print(f"\nRewind lane: {report.kills} SIGKILLs during code rewinds of "
          f"{report.info['files a rewind restores']} files, launch={report.config['launch']}, "
          f"{report.elapsed:.0f} s ({data['cycle_seconds']['mean']} s per cycle, an unkilled "
          f"rewind {data['rewind_seconds']['mean']} s)")
    print_counts(report, COUNTS, 58, "kills by phase (read from the disk the kill left)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=RewindConfig.kills)
    parser.add_argument("--files", type=int, default=RewindConfig.files)
    parser.add_argument("--seed", type=int, default=RewindConfig.seed)
    parser.add_argument("--span", type=float, default=RewindConfig.span)
    parser.add_argument("--launch", choices=("fork", "exec"), default="fork")
    parser.add_argument("--provider", choices=("anthropic", "openai"), default="anthropic")
    parser.add_argument("--keep", action="store_true", help="keep the lane's folder")
    parser.add_argument("--out", type=Path, default=OUT / "crash_rewind.json")
    args = parser.parse_args(argv)
    config = RewindConfig(kills=args.kills, files=args.files, seed=args.seed, span=args.span,
                          launch=args.launch, provider=args.provider, keep=args.keep)
    print(f"rewind lane: {config.kills} kills, {config.files} files, launch={config.launch}, "
          f"seed={config.seed}")
    report = asyncio.run(run_rewind_lane(config))
    print_table(report)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report.as_json(), indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
