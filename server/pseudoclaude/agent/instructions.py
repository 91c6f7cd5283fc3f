"""Instruction files: the text the system prompt carries under ``rules`` (SPEC §6, §13).

The files, in the order the system prompt carries them (the later, the more specific):

========== ==============================================================================
source     files
========== ==============================================================================
user       ``PSEUDOCLAUDE.md`` of the user folder (``~/.PseudoClaude/``)
project    at the workspace root: ``AGENTS.md``, ``CLAUDE.md``, ``.claude/CLAUDE.md``,
           ``PSEUDOCLAUDE.md``, ``.PseudoClaude/PSEUDOCLAUDE.md``
nested     ``AGENTS.md`` and ``CLAUDE.md`` of a subfolder, from the first time the session read
           a file under that folder (:class:`NestedInstructions`), in the order they joined
local      ``CLAUDE.local.md`` at the workspace root: the user's own, usually not committed
========== ==============================================================================

A line ``@relative/path.md`` includes that file (relative to the including file), up to depth
5; a cycle or a missing file is skipped with a note. Everything stays inside the folder tree
of its file set (the workspace, or the user folder): an include, or a project file that is a
symbolic link, leading elsewhere is skipped, so a cloned repository cannot pull
``~/.ssh/id_rsa`` into what is sent to the model provider. The same file twice (``CLAUDE.md``
a symbolic link to ``AGENTS.md``) or the same text twice is carried once, the first time.

Nested files are known from the session's log: a ``read_file`` result that made some apply
carries their paths in ``metadata.instructions`` (:func:`logged_nested`), so they apply again
after a resume.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pseudoclaude.compact.breakdown import RuleSource
from pseudoclaude.llm.types import ToolResult

INSTRUCTIONS_FILE = "PSEUDOCLAUDE.md"
"""The user folder's file (and one of the project's)."""
PROJECT_FILES = ("AGENTS.md", "CLAUDE.md", ".claude/CLAUDE.md", INSTRUCTIONS_FILE,
                 f".PseudoClaude/{INSTRUCTIONS_FILE}")
"""The project's files, relative to the workspace root, in their order."""
LOCAL_FILE = "CLAUDE.local.md"
"""The user's own file in the workspace root (last)."""
NESTED_FILES = ("AGENTS.md", "CLAUDE.md")
"""The files of a subfolder that join when the session reads a file under it."""
INSTRUCTIONS_KEY = "instructions"
"""The ``read_file`` metadata key listing the nested files the read made apply."""
MAX_INCLUDE_DEPTH = 5
MAX_INSTRUCTION_BYTES = 64 * 1024
_INCLUDE = re.compile(r"^@(\S+)\s*$")


@dataclass(frozen=True)
class InstructionFile:
    """Where an instruction file may be: ``path``, its includes confined to ``root``."""

    path: Path
    root: Path
    source: RuleSource
    label: str
    """How the prompt and the context name it."""


@dataclass(frozen=True)
class Instruction:
    """The text of one instruction file (its includes expanded)."""

    label: str
    source: RuleSource
    text: str

    @property
    def block(self) -> str:
        """The file's part of the system prompt."""
        return f"Instructions from {self.label}:\n{self.text}"


def user_label(path: Path) -> str:
    """``~/...`` for a path under the home folder, else the path itself."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except (ValueError, RuntimeError):
        return str(path)


def instruction_files(workspace: Path, user_dir: Path | None, nested: Sequence[str] = (),
                      nested_root: Path | None = None) -> list[InstructionFile]:
    """The files to look for, in their order. ``nested``: the subfolders' files the session
    joined (workspace-relative), read under ``nested_root`` (the session's own copy of the
    workspace, a worktree; default: ``workspace``)."""
    out = []
    if user_dir is not None:
        path = user_dir / INSTRUCTIONS_FILE
        out.append(InstructionFile(path, user_dir, "user", user_label(path)))
    out += [InstructionFile(workspace / name, workspace, "project", name)
            for name in PROJECT_FILES]
    base = workspace if nested_root is None else nested_root
    out += [InstructionFile(base / label, base, "nested", label) for label in nested]
    out.append(InstructionFile(workspace / LOCAL_FILE, workspace, "local", LOCAL_FILE))
    return out


def _read_text(path: Path) -> str:
    with path.open("rb") as f:
        data = f.read(MAX_INSTRUCTION_BYTES)
    return data.decode("utf-8", "replace")


def expand(path: Path, root: Path, depth: int = 0, stack: tuple[Path, ...] = ()) -> str:
    """The text of ``path`` with its ``@includes`` expanded."""
    resolved = path.resolve()
    lines_out: list[str] = []
    for line in _read_text(resolved).splitlines():
        match = _INCLUDE.match(line.strip())
        if not match:
            lines_out.append(line)
            continue
        target = (resolved.parent / match.group(1)).resolve()
        name = match.group(1)
        if not target.is_relative_to(root.resolve()):
            lines_out.append(f"(include {name} skipped: outside {root})")
        elif target in stack or target == resolved:
            lines_out.append(f"(include {name} skipped: it includes itself)")
        elif depth + 1 > MAX_INCLUDE_DEPTH:
            lines_out.append(f"(include {name} skipped: nested deeper than "
                             f"{MAX_INCLUDE_DEPTH})")
        elif not target.is_file():
            lines_out.append(f"(include {name} skipped: not found)")
        else:
            lines_out.append(expand(target, root, depth + 1, (*stack, resolved)))
    return "\n".join(lines_out)


def load_instructions(files: Iterable[InstructionFile]) -> list[Instruction]:
    """The files that exist and say something, in order; each file (by its real path) and
    each text once. A file of the workspace that is a link leading outside it is skipped;
    an unreadable file is skipped, never fatal. Blocking."""
    out: list[Instruction] = []
    seen_paths: set[Path] = set()
    seen_texts: set[str] = set()
    for file in files:
        try:
            if not file.path.is_file():
                continue
            real = file.path.resolve()
            if real in seen_paths or (file.source != "user"
                                      and not real.is_relative_to(file.root.resolve())):
                continue
            seen_paths.add(real)
            text = expand(file.path, file.root).strip()
        except (OSError, RuntimeError):  # RuntimeError: a symbolic link loop
            continue
        if text and text not in seen_texts:
            seen_texts.add(text)
            out.append(Instruction(file.label, file.source, text))
    return out


# -- nested files --------------------------------------------------------------------------------


def notice(labels: Sequence[str]) -> str:
    """What a read's result ends with when it made nested files apply."""
    names = ", ".join(labels[:-1]) + f" and {labels[-1]}" if len(labels) > 1 else labels[0]
    return f"(instructions from {names} now apply)"


class NestedInstructions:
    """The subfolders' instruction files one session has joined (workspace-relative paths,
    in the order they joined). ``load`` gives those its log knows (:func:`logged_nested`);
    called once, on first use, from a worker thread. Thread-safe (reads run concurrently)."""

    def __init__(self, load: Callable[[], Iterable[str]] | None = None) -> None:
        self._load = load
        self._joined: dict[str, None] = {}
        self._lock = threading.Lock()

    def _loaded(self) -> dict[str, None]:
        """The joined files (the log's first, once); call holding the lock."""
        load, self._load = self._load, None
        if load is not None:
            self._joined.update(dict.fromkeys(load()))
        return self._joined

    def joined(self) -> list[str]:
        with self._lock:
            return list(self._loaded())

    def waiting(self, root: Path, rel: PurePosixPath) -> list[str]:
        """The files a read of ``rel`` (a file, relative to ``root``, the resolved workspace)
        would make apply: the ``AGENTS.md`` and ``CLAUDE.md`` of each folder above it (the
        root's own excepted) not joined yet, outermost first. A file that is the root's, one
        joined already, or the other one of its folder (by its real path), or a link leading
        outside the workspace, is left out, as is an empty one. Blocking (a few ``stat``)."""
        known = self.joined()
        out: list[str] = []
        real_paths: set[Path] | None = None
        folder = PurePosixPath()
        for part in rel.parts[:-1]:
            folder = folder / part
            for name in NESTED_FILES:
                label = (folder / name).as_posix()
                if label in known:
                    continue
                path = root / label
                try:
                    if not path.is_file() or path.stat().st_size == 0:
                        continue
                    real = path.resolve()
                    if real_paths is None:
                        real_paths = {(root / other).resolve() for other in
                                      (*PROJECT_FILES, LOCAL_FILE, *known)}
                except (OSError, RuntimeError):
                    continue
                if real in real_paths or not real.is_relative_to(root):
                    continue
                real_paths.add(real)
                out.append(label)
        return out

    def join(self, labels: Iterable[str]) -> list[str]:
        """Record ``labels`` as joined; the ones that were not already, in order."""
        with self._lock:
            joined = self._loaded()
            new = [label for label in labels if label not in joined]
            joined.update(dict.fromkeys(new))
        return new


def logged_nested(results: Iterable[ToolResult]) -> list[str]:
    """The nested files the ``read_file`` results of a session's log made apply
    (``metadata.instructions``), in order, each once."""
    out: dict[str, None] = {}
    for result in results:
        if result.is_error or result.name != "read_file":
            continue
        try:
            body = json.loads(result.content)
        except ValueError:
            continue  # a spilled result's preview, a hand-made line
        metadata = body.get("metadata") if isinstance(body, dict) else None
        labels = metadata.get(INSTRUCTIONS_KEY) if isinstance(metadata, dict) else None
        if not isinstance(labels, list):
            continue
        for label in labels:
            if isinstance(label, str) and _is_nested_label(label):
                out[label] = None
    return list(out)


def _is_nested_label(label: str) -> bool:
    rel = PurePosixPath(label)
    return (not rel.is_absolute() and ".." not in rel.parts and len(rel.parts) >= 2
            and rel.name in NESTED_FILES and "\x00" not in label)
