"""Rewind and fork (SPEC §12): take a session's code, conversation or both back to before one
of its prompts, or start a new session from part of it. Blocking functions over the session log
(:mod:`pseudoclaude.session.timeline`) and the shadow repository
(:mod:`pseudoclaude.checkpoints`); :class:`~pseudoclaude.workspace.Workspace` runs them off the
event loop, one at a time (like a compaction).

A file changed outside the agent since the agent (or a rewind) last changed it is a
*conflict*, left alone unless forced: the snapshots taken before a run and before a rewind
record what changed outside the agent since the one before (:data:`~pseudoclaude.checkpoints.
BEFORE`), every other one what the agent changed, and the disk now is compared with the latest.

A code rewind snapshots the files as they are (what changed outside the agent meanwhile), writes
a journal (``<dataDir>/checkpoints/journal.json``: the target snapshot and the paths) before it
touches a file, puts each file back whole (a temporary file renamed over it), snapshots the
files it put back and removes the journal. A rewind interrupted by a crash is finished
from the journal on the next start (:func:`finish_interrupted`), so every file ends in its old
or its new state, never torn, and the set ends as the rewind meant it.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import msgspec

from pseudoclaude import words
from pseudoclaude.checkpoints import BEFORE, Change, CheckpointError, Checkpoints, Step
from pseudoclaude.compact.factcheck import WRITE_TOOLS
from pseudoclaude.durable import atomic_write, is_temp_of
from pseudoclaude.llm.types import Message
from pseudoclaude.session import SessionStore, SessionWriter
from pseudoclaude.session.timeline import FORK, Timeline, Turn

Mode = Literal["code", "conversation", "both"]
FileAction = Literal["restore", "delete", "create"]
MODES: tuple[Mode, ...] = ("code", "conversation", "both")
JOURNAL = "journal.json"
NAMED = 5
"""At most this many paths are named in a sentence (then "and N more")."""


class TurnOutOfRange(ValueError):
    """A prompt number the session does not have (on the wire: InvalidParams naming
    ``turn``); ``detail`` says why without the field's name."""

    def __init__(self, detail: str) -> None:
        super().__init__(f"turn {detail}")
        self.detail = detail


class RewindFile(msgspec.Struct, kw_only=True, rename="camel"):
    """A file a code rewind puts back."""

    path: str
    """Relative to the workspace, with ``/``."""
    action: FileAction
    """``restore`` (changed since), ``delete`` (created since), ``create`` (deleted since)."""
    # precisely: changed outside the agent since the agent (or a rewind) last changed it, or
    # it cannot be read now (see plan)
    conflict: bool
    """Changed outside the agent since the last checkpoint: left alone unless ``force``."""


class TurnSummary(msgspec.Struct, kw_only=True, rename="camel"):
    """A prompt of the session, as a rewind or a fork names it."""

    turn: int
    """1-based, among the prompts of the current conversation."""
    prompt: str
    ts: float
    files_changed: int
    """Files that differ between the checkpoint before this prompt and the one before the
    next (0 without checkpoints)."""


class RewindPreview(msgspec.Struct, kw_only=True, rename="camel"):
    """What a rewind would do (nothing changed)."""

    turn: int
    prompt: str
    files: list[RewindFile]
    dropped_messages: int
    """Messages of the current conversation a conversation rewind takes back."""
    message: str
    """The line a person reads."""


class RewindOutcome(msgspec.Struct, kw_only=True, rename="camel"):
    """What a rewind did."""

    restored_files: list[str]
    conflicts: list[str]
    """Files left alone: changed outside the agent since the last checkpoint."""
    message_count: int
    """Messages in the conversation now."""
    message: str
    """The line a person reads."""


@dataclass(slots=True)
class RewindPlan:
    turn: Turn
    mode: Mode
    files: list[RewindFile] = field(default_factory=list)
    dropped_messages: int = 0
    target_ref: str | None = None
    problem: str = ""
    """Why the code part cannot be done (no checkpoint for that turn, the repository is
    missing or broken); ``""`` when it can."""
    note: str = ""
    """What the code part does not cover (without git: what commands changed; files that
    cannot be read or whose earlier content was not kept; edits made in the editor)."""

    @property
    def message(self) -> str:
        conflicts = sum(f.conflict for f in self.files)
        line = words.rewind_preview(self.turn.turn, self.mode, len(self.files), conflicts,
                                    self.dropped_messages)
        return " ".join(part for part in (line, self.problem, self.note) if part)

    def add_note(self, sentence: str) -> None:
        self.note = f"{self.note} {sentence}" if self.note else sentence

    def preview(self) -> RewindPreview:
        return RewindPreview(turn=self.turn.turn, prompt=self.turn.prompt, files=self.files,
                             dropped_messages=self.dropped_messages, message=self.message)


def _common_prefix(a: list[Message], b: list[Message]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def pick_turn(timeline: Timeline, turn: int) -> Turn:
    if not 1 <= turn <= len(timeline.turns):
        count = len(timeline.turns)
        raise TurnOutOfRange(f"must be between 1 and {count}, got {turn}" if count
                             else "is not there: the session has no prompt to rewind to")
    return timeline.turns[turn - 1]


def _names(paths: list[str]) -> str:
    named = ", ".join(paths[:NAMED])
    return named + (f" and {len(paths) - NAMED} more" if len(paths) > NAMED else "")


def by_hand(steps: list[Step] | None) -> set[str]:
    """The paths whose latest change in ``steps`` was made outside the agent."""
    last: dict[str, bool] = {}
    for step in steps or ():
        for path in step.paths:
            last[path] = step.outside
    return {path for path, outside in last.items() if outside}


def unsaved_edits(messages: list[Message]) -> list[str]:
    """The files the agent's ``write_file``/``edit_file`` calls in ``messages`` changed in the
    editor's unsaved buffer, not on disk (their results say ``"unsaved": true``)."""
    paths: dict[str, str] = {}
    for message in messages:
        for call in message.tool_calls:
            if call.name in WRITE_TOOLS and isinstance(call.arguments, dict) \
                    and isinstance(call.arguments.get("path"), str):
                paths[call.id] = call.arguments["path"]
    out: list[str] = []
    for message in messages:
        result = message.tool_result
        if result is None or result.call_id not in paths or '"unsaved":true' not in \
                result.content:
            continue
        with contextlib.suppress(ValueError):
            body = json.loads(result.content)
            if isinstance(body, dict) and body.get("ok") and body.get("unsaved") is True \
                    and paths[result.call_id] not in out:
                out.append(paths[result.call_id])
    return out


def plan(timeline: Timeline, turn: int, mode: Mode, current: list[Message],
         repo: Checkpoints | None) -> RewindPlan:
    """What a rewind to before prompt ``turn`` would do (nothing changes)."""
    target = pick_turn(timeline, turn)
    out = RewindPlan(turn=target, mode=mode)
    kept = _common_prefix(current, target.before)
    if mode in ("conversation", "both"):
        out.dropped_messages = len(current) - kept
    if mode in ("code", "both"):
        unsaved = unsaved_edits(current[kept:])
        if unsaved:
            out.add_note(f"The agent's edits to {_names(unsaved)} went into your editor "
                         "without being saved: a rewind cannot take them back (undo them in "
                         "the editor).")
        if repo is None:
            out.problem = "The files cannot be restored: checkpoints are off."
        elif not target.checkpoints:
            out.problem = (f"The files cannot be restored: prompt {turn} has no checkpoint "
                           "in this session (it ran before checkpoints were taken, or in the "
                           "session this one was forked from).")
        elif timeline.last_checkpoint is None:
            out.problem = "The files cannot be restored: no checkpoint was taken."
        else:
            try:
                if not repo.exists(target.checkpoints[0]):
                    raise CheckpointError("its snapshot is missing from the checkpoint "
                                          "repository")
                changes: list[Change] = repo.changes(target.checkpoints[0],
                                                     timeline.last_checkpoint)
                outside = repo.changed_since(timeline.last_checkpoint)
                outside |= by_hand(repo.steps(target.checkpoints[0], timeline.last_checkpoint))
                unreadable = repo.unreadable()
            except CheckpointError as exc:
                out.problem = f"The files cannot be restored: {exc}."
            else:
                out.target_ref = target.checkpoints[0]
                if repo.covers == "writes":
                    out.add_note(words.REWIND_WRITES_ONLY)
                out.files = [RewindFile(path=c.path, action=c.action,  # type: ignore[arg-type]
                                        conflict=c.path in outside)
                             for c in changes if not c.lost]
                for change in changes:
                    if change.lost:
                        out.add_note(f"{change.path} cannot be restored: {change.lost}.")
                if unreadable:
                    out.add_note(f"Left out of the checkpoints because they cannot be read: "
                                 f"{_names(unreadable)} (a rewind leaves them alone).")
    return out


def _journal(repo: Checkpoints) -> Path:
    return repo.folder / JOURNAL


def restore_files(repo: Checkpoints, planned: RewindPlan, force: bool, session: str
                  ) -> tuple[list[str], list[str]]:
    """The code part: every planned file back (the conflicting ones only with ``force``),
    journalled, then snapshotted in ``session``. Returns ``(restored, conflicts left
    alone)``."""
    if planned.target_ref is None:
        return [], []
    conflicts = [f.path for f in planned.files if f.conflict and not force]
    paths = [f.path for f in planned.files if force or not f.conflict]
    # what changed outside the agent since its last snapshot is recorded as such first, so
    # that a later rewind still sees those files as changed by hand
    repo.snapshot(f"{BEFORE}the rewind to before prompt {planned.turn.turn}", session)
    journal = _journal(repo)
    atomic_write(journal, json.dumps({"ref": planned.target_ref, "paths": paths,
                                      "session": session}).encode())
    restored = repo.restore(planned.target_ref, paths)
    repo.snapshot(f"after the rewind to before prompt {planned.turn.turn}", session, paths)
    journal.unlink(missing_ok=True)
    return restored, conflicts


def finish_interrupted(repo: Checkpoints) -> list[str]:
    """Finish a code rewind a crash interrupted (from its journal); the paths restored."""
    journal = _journal(repo)
    try:
        data = json.loads(journal.read_bytes())
        ref, paths = str(data["ref"]), [str(p) for p in data["paths"]]
        session = str(data.get("session", ""))
    except FileNotFoundError:
        return []
    except (ValueError, KeyError, TypeError, AttributeError):
        journal.unlink(missing_ok=True)  # unreadable: nothing can be finished from it
        return []
    restored = repo.restore(ref, paths) if repo.exists(ref) else []
    for path in paths:  # a kill while a file was written leaves its temporary copy
        remove_temporaries(repo, path)
    repo.snapshot("after an interrupted rewind was finished", session)
    journal.unlink(missing_ok=True)
    return restored


def remove_temporaries(repo: Checkpoints, path: str) -> None:
    """The temporary files a write of ``path`` left beside it (``.<name>.<hex>.tmp``)."""
    target = repo.workspace / path
    with contextlib.suppress(OSError):
        for entry in target.parent.iterdir():
            if is_temp_of(target.name, entry.name) and entry.is_file():
                entry.unlink(missing_ok=True)


def write_fork(store: SessionStore, parent: str, turn: int | None, messages: list[Message],
               model: str, workspace: str, tasks: list[tuple[str, str]] | None = None,
               mode: str | None = None) -> str:
    """A new session: its header, a ``fork`` line naming ``parent``, the conversation as one
    ``replace`` of reason ``fork``, and the parent's task list and mode then. Returns its id."""
    writer = SessionWriter.create(store, model=model, workspace=workspace)
    try:
        writer.append_fork(parent, turn)
        writer.append_replace(FORK, messages)
        if tasks:
            writer.append_tasks(tasks)
        if mode is not None:
            writer.append_mode(mode)
    finally:
        writer.close()
    return writer.session_id
