"""What both kinds of checkpoints share: a snapshot, a change between two, the error, and the
interface a rewind uses (:class:`Checkpoints`)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pseudoclaude.checkpoints.status import Coverage

MAX_FILE_BYTES = 1024 * 1024
"""Files larger than this are not snapshotted (and so never restored)."""
BEFORE = "before "
"""How the message of a snapshot that marks a hand-over begins (the one before a run, the one
before a rewind): what it changed since the snapshot before it was changed outside the agent
(by hand, by another tool). Every other snapshot records what the agent (a tool call, a
rewind) changed."""


class CheckpointError(Exception):
    """``git`` is missing, or the checkpoints cannot be used; the message says why."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A snapshot: its id and the files left out of it: ``skipped`` (over the size limit),
    ``unreadable`` (they could not be read: kept as the snapshot before had them)."""

    ref: str
    skipped: list[str] = field(default_factory=list)
    unreadable: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Change:
    """A path (relative, ``/``) that differs between two snapshots, as what going back to the
    older one does to it: ``restore`` (changed since: written back), ``delete`` (created
    since: removed) or ``create`` (deleted since: written again). ``lost``: why its older
    content cannot be put back (it was not kept); ``""`` when it can."""

    path: str
    action: str
    lost: str = ""


@dataclass(frozen=True, slots=True)
class Step:
    """One snapshot of a chain: its message and the paths that differ from the snapshot
    before it."""

    message: str
    paths: frozenset[str]

    @property
    def outside(self) -> bool:
        """Whether its changes were made outside the agent (see :data:`BEFORE`)."""
        return self.message.startswith(BEFORE)


class Checkpoints(Protocol):
    """Snapshots of a workspace's files, per session (blocking calls: run them off the event
    loop). :class:`~pseudoclaude.checkpoints.shadow.ShadowRepo` covers every file;
    :class:`~pseudoclaude.checkpoints.images.BeforeImages` only the agent's own writes."""

    @property
    def covers(self) -> Coverage: ...
    @property
    def folder(self) -> Path:
        """``<dataDir>/checkpoints``."""
        ...

    @property
    def workspace(self) -> Path:
        """The folder whose files are checkpointed (resolved)."""
        ...

    def prepare(self) -> None:
        """Get ready in the background (the first snapshot of a large tree is slow)."""
        ...

    def snapshot(self, message: str, session: str = "",
                 paths: Sequence[str] | None = None) -> Snapshot:
        """``paths``: only these may have changed since the previous snapshot."""
        ...
    def head(self, session: str = "") -> str | None: ...
    def exists(self, ref: str) -> bool: ...
    def changes(self, older: str, newer: str) -> list[Change]: ...
    def count_changes(self, pairs: Sequence[tuple[str, str]]) -> list[int]: ...
    def changed_since(self, ref: str) -> set[str]:
        """The paths whose state now differs from snapshot ``ref`` (those that cannot be read
        now included: whether they changed cannot be told)."""
        ...

    def steps(self, older: str, newer: str) -> list[Step] | None:
        """The snapshots after ``older`` up to ``newer``, oldest first; None when ``newer``
        does not follow ``older`` in a chain."""
        ...

    def unreadable(self) -> list[str]:
        """The files the latest look at the work tree could not read (sorted)."""
        ...

    def content(self, ref: str, path: str) -> bytes | None: ...
    def restore(self, ref: str, paths: Iterable[str]) -> list[str]: ...
    def before_write(self, path: str, session: str) -> None:
        """The agent is about to write ``path`` (relative, ``/``) in ``session``."""
        ...

    def prune(self, keep: Iterable[str]) -> list[str]: ...
