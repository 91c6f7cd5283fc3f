"""The two stores of one workspace by level, project first (SPEC §5)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pseudoclaude.memory.notes import LEVELS
from pseudoclaude.memory.operations import Operation
from pseudoclaude.memory.store import MemoryStoreError, NoteStore


def check_level(level: str) -> str:
    """``level``, or :class:`MemoryStoreError` (field ``level``) when it is not one."""
    if level not in LEVELS:
        raise MemoryStoreError(f"unknown memory level {level!r} (use project or user)", "level")
    return level


def in_level_order(operations: list[Operation]) -> list[Operation]:
    """Project operations first, then user ones (SPEC §5), each in their given order."""
    return [op for level in LEVELS for op in operations if op.level == level]


@dataclass(frozen=True, kw_only=True)
class Levels:
    """The project and the user store."""

    project: NoteStore
    user: NoteStore

    @classmethod
    def open(cls, *, project_dir: Path | str, user_dir: Path | str) -> Levels:
        return cls(project=NoteStore("project", project_dir), user=NoteStore("user", user_dir))

    @property
    def stores(self) -> tuple[NoteStore, NoteStore]:
        """Project first: the order operations are applied and the index is built in."""
        return (self.project, self.user)

    def store(self, level: str) -> NoteStore:
        """The store of ``level``; :class:`MemoryStoreError` for an unknown level."""
        return self.project if check_level(level) == "project" else self.user
