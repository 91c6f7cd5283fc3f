"""Rewind and fork (SPEC §12): take a session's code, conversation or both back to before one
of its prompts, or start a new session from part of it. Blocking functions over the session log
(:mod:`pseudoclaude.session.timeline`) and the shadow repository
(:mod:`pseudoclaude.checkpoints`); :class:`~pseudoclaude.workspace.Workspace` runs them off the
event loop, one at a time (like a compaction).

A code rewind writes a journal (``<dataDir>/checkpoints/journal.json``: the target snapshot and
the paths) before it touches a file, puts each file back whole (a temporary file renamed over
it), snapshots the result and removes the journal. A rewind interrupted by a crash is finished
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
from pseudoclaude.checkpoints import Change, CheckpointError, Checkpoints
from pseudoclaude.durable import atomic_write, is_temp_of
from pseudoclaude.llm.types import Message
from pseudoclaude.session import SessionStore, SessionWriter
from pseudoclaude.session.timeline import FORK, Timeline, Turn

Mode = Literal["code", "conversation", "both"]
FileAction = Literal["restore", "delete", "create"]
MODES: tuple[Mode, ...] = ("code", "conversation", "both")
JOURNAL = "journal.json"


class RewindError(Exception):
    """A rewind or fork that cannot be done (the message says why)."""


class RewindFile(msgspec.Struct, kw_only=True, rename="camel"):
    """A file a code rewind puts back."""

    path: str
    """Relative to the workspace, with ``/``."""
    action: FileAction
    """``restore`` (changed since), ``delete`` (created since), ``create`` (deleted since)."""
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
    """What the code part does not cover (without git: what commands changed)."""

    @property
    def message(self) -> str:
        conflicts = sum(f.conflict for f in self.files)
        line = words.rewind_preview(self.turn.turn, self.mode, len(self.files), conflicts,
                                    self.dropped_messages)
        return " ".join(part for part in (line, self.problem, self.note) if part)

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
        raise ValueError(f"turn must be between 1 and {count}, got {turn}" if count
                         else "turn: the session has no prompt to rewind to")
    return timeline.turns[turn - 1]


def plan(timeline: Timeline, turn: int, mode: Mode, current: list[Message],
         repo: Checkpoints | None) -> RewindPlan:
    """What a rewind to before prompt ``turn`` would do (nothing changes)."""
    target = pick_turn(timeline, turn)
    out = RewindPlan(turn=target, mode=mode)
    if mode in ("conversation", "both"):
        out.dropped_messages = len(current) - _common_prefix(current, target.before)
    if mode in ("code", "both"):
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
            except CheckpointError as exc:
                out.problem = f"The files cannot be restored: {exc}."
            else:
                out.target_ref = target.checkpoints[0]
                if repo.covers == "writes":
                    out.note = words.REWIND_WRITES_ONLY
                out.files = [RewindFile(path=c.path, action=c.action,  # type: ignore[arg-type]
                                        conflict=c.path in outside) for c in changes]
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
    journal = _journal(repo)
    atomic_write(journal, json.dumps({"ref": planned.target_ref, "paths": paths,
                                      "session": session}).encode())
    restored = repo.restore(planned.target_ref, paths)
    repo.snapshot(f"after the rewind to before prompt {planned.turn.turn}", session)
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
               model: str, workspace: str) -> str:
    """A new session: its header, a ``fork`` line naming ``parent``, and the conversation as one
    ``replace`` of reason ``fork``. Returns its id."""
    writer = SessionWriter.create(store, model=model, workspace=workspace)
    try:
        writer.append_fork(parent, turn)
        writer.append_replace(FORK, messages)
    finally:
        writer.close()
    return writer.session_id
