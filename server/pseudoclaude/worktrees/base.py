"""What a worktree session is made of: its record, its changes, what applying them did, and the
one error type.

A file's *state* is a short string: ``"missing"``, ``"file <oid>"``, ``"exec <oid>"`` (an
executable file), ``"link <oid>"`` (a symbolic link; the blob is its target) or ``"dir"`` /
``"other"`` (something that is not a file). ``<oid>`` is Git's blob id of the content as
``git add`` would store it (clean filters applied), so it compares with the ids of ``base``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pseudoclaude.errors import PseudoClaudeError

Action = Literal["create", "modify", "delete"]

MISSING = "missing"
DIR = "dir"
OTHER = "other"


class WorktreeError(PseudoClaudeError):
    """A worktree operation failed; the message is one line for the user."""


def content(state: str) -> str:
    """The state without the executable bit: what "the same content" compares."""
    return "file " + state[5:] if state.startswith("exec ") else state


def present(state: str) -> bool:
    """Whether the state is a file or a symbolic link (what a commit can hold)."""
    return state.startswith(("file ", "exec ", "link "))


@dataclass(frozen=True)
class Worktree:
    """One session's worktree, as its record (``<dataDir>/worktrees/<id>.json``) says."""

    session_id: str
    path: Path
    """The worktree's root (absolute): ``<dataDir>/worktrees/<session id>``."""
    branch: str
    """``pseudoclaude/<session id>``."""
    base: str
    """The full commit id of the main tree's ``HEAD`` when the worktree was made."""
    created: str
    """When it was made (ISO 8601, UTC)."""
    repo: Path
    """The main tree's root (absolute)."""
    data_dir: Path
    prefix: str = ""
    """Where the workspace is inside the repository (``""``: at its root; else ``a/b``)."""
    setup: Mapping[str, str] = field(default_factory=dict)
    """The files setup copied or linked into the worktree, and their states then: left out of
    the session's changes while they keep that state."""
    applied: Mapping[str, str] = field(default_factory=dict)
    """The states of the files last applied to the main tree."""

    @property
    def workspace(self) -> Path:
        """The workspace's folder inside the worktree (where the session's tools run)."""
        return self.path / self.prefix if self.prefix else self.path

    @property
    def record(self) -> Path:
        return record_path(self.data_dir, self.session_id)

    def as_json(self) -> dict[str, Any]:
        return {
            "version": 1, "sessionId": self.session_id, "path": str(self.path),
            "branch": self.branch, "base": self.base, "created": self.created,
            "repo": str(self.repo), "prefix": self.prefix,
            "setup": dict(self.setup), "applied": dict(self.applied),
        }


def record_path(data_dir: Path, session_id: str) -> Path:
    return data_dir / "worktrees" / f"{session_id}.json"


@dataclass(frozen=True)
class FileChange:
    path: str
    """Relative to the worktree's root, ``/``-separated."""
    action: Action
    state: str = field(default=MISSING, compare=False)
    """Its state in the worktree now."""
    base_state: str = field(default=MISSING, compare=False)
    """Its state in ``base``."""

    def as_json(self) -> dict[str, str]:
        return {"path": self.path, "action": self.action}


@dataclass(frozen=True)
class WorktreeStatus:
    path: Path
    branch: str
    base: str
    files: list[FileChange]
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"path": str(self.path), "branch": self.branch, "base": self.base,
                "files": [f.as_json() for f in self.files], "message": self.message}


@dataclass(frozen=True)
class ApplyResult:
    applied: list[str]
    """The files whose change is now in the main tree (empty when there were conflicts)."""
    conflicts: list[str]
    """The files the main tree changed too since ``base``: nothing was applied."""
    message: str

    def as_json(self) -> dict[str, Any]:
        return {"applied": list(self.applied), "conflicts": list(self.conflicts),
                "message": self.message}


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def name_some(paths: list[str], limit: int = 5) -> str:
    """``a, b, c`` — at most ``limit`` names, then ``and N more``."""
    shown = ", ".join(paths[:limit])
    return shown if len(paths) <= limit else f"{shown} and {len(paths) - limit} more"
