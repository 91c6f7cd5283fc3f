"""Finding a folder's skills: the skills folders of each source, each entry read and checked,
every source merged by precedence (:data:`~pseudoclaude.skills.model.PRECEDENCE`).

========== ====================================== ===========================================
source     folder                                 entries
========== ====================================== ===========================================
builtin    the package's ``skills/builtin/``       ``<name>/SKILL.md``
user       ``~/.PseudoClaude/skills/``             ``<name>/SKILL.md`` or ``<name>.md``
agents     ``<workspace>/.agents/skills/``         ``<name>/SKILL.md``
claude     ``<workspace>/.claude/skills/``         ``<name>/SKILL.md``
workspace  ``<workspace>/.PseudoClaude/skills/``   ``<name>/SKILL.md`` or ``<name>.md``
========== ====================================== ===========================================

A folder skill may also be ``<name>/<name>.md`` (the Go original's), and may carry a
``tools.json``. Hidden entries are skipped, as is a folder with no skill file in it (a
``scripts/`` folder). A file or folder of the workspace's sources that is a symbolic link
leading outside the workspace is a problem, never read: a cloned repository cannot put
another file of the machine into the prompt. Blocking (a few ``stat`` and small reads).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from pseudoclaude.skills.model import (
    MAX_ENTRIES,
    MAX_SKILL_BYTES,
    MAX_TOOLS_BYTES,
    PRECEDENCE,
    Catalog,
    Problem,
    Skill,
    Source,
)
from pseudoclaude.skills.parse import parse_skill, parse_tools

SKILL_FILE = "SKILL.md"
TOOLS_FILE = "tools.json"
SKILLS_DIR = "skills"
BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
"""The built-in skills (package data: in a checkout and in the wheel)."""
WORKSPACE_DIRS: dict[Source, str] = {"workspace": ".PseudoClaude/skills",
                                      "claude": ".claude/skills", "agents": ".agents/skills"}
"""The workspace's skills folders, relative to its root."""


@dataclass(frozen=True, slots=True)
class Root:
    """One skills folder."""

    source: Source
    path: Path
    confine: Path | None = None
    """The folder everything read must lie in (the workspace, for its own sources)."""
    files: bool = False
    """Whether a ``<name>.md`` file is a skill (PseudoClaude's own folders)."""


def user_skills_dir(user_dir: Path) -> Path:
    """The user's skills folder (``~/.PseudoClaude/skills``): where ``install_skill``
    installs."""
    return user_dir / SKILLS_DIR


def roots(workspace: Path, user_dir: Path) -> list[Root]:
    """The skills folders of a workspace, from the lowest precedence to the highest."""
    by_source = {
        "builtin": Root("builtin", BUILTIN_DIR),
        "user": Root("user", user_skills_dir(user_dir), files=True),
        **{source: Root(source, workspace / rel, workspace.resolve(), source == "workspace")
           for source, rel in WORKSPACE_DIRS.items()},
    }
    return [by_source[source] for source in PRECEDENCE]


Shown = Callable[[Path], str]
"""How a path is named in a problem (relative to the workspace, ``~/...``)."""


def shown_path(workspace: Path) -> Shown:
    """Paths relative to the workspace, ``~/...`` under the home folder, else absolute."""
    base = workspace.resolve()
    home = Path.home()

    def show(path: Path) -> str:
        for root, prefix in ((workspace, ""), (base, ""), (home, "~/")):
            try:
                return prefix + path.relative_to(root).as_posix()
            except ValueError:
                continue
        return str(path)

    return show


def _read(path: Path, limit: int) -> str:
    with path.open("rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"larger than {limit // 1024} KiB")
    return data.decode("utf-8")


def _entry_file(entry: Path, root: Root) -> tuple[Path, Path | None] | None:
    """``(skill file, folder)`` of one entry of a skills folder, or ``None`` when it is no
    skill."""
    if entry.is_dir():
        for name in (SKILL_FILE, f"{entry.name}.md"):
            candidate = entry / name
            if candidate.is_file():
                return candidate, entry
        return None
    if root.files and entry.suffix == ".md" and entry.is_file():
        return entry, None
    return None


def read_skill(entry: Path, root: Root, show: Shown,
               taken: frozenset[str] = frozenset()) -> tuple[Skill | None, list[Problem]]:
    """The skill of one entry of ``root`` (``None`` when it is none, or cannot be read)."""
    try:
        found = _entry_file(entry, root)
    except OSError:
        return None, []
    if found is None:
        return None, []
    path, folder = found
    shown = show(path)
    default = entry.name if folder is not None else entry.stem
    try:
        if root.confine is not None and not path.resolve().is_relative_to(root.confine):
            return None, [Problem(shown, None, "a symbolic link leading outside the workspace: "
                                  "not read", root.source, default)]
        text = _read(path, MAX_SKILL_BYTES)
    except (OSError, RuntimeError, ValueError, UnicodeDecodeError) as exc:
        why = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else \
            str(exc) if isinstance(exc, ValueError) else \
            getattr(exc, "strerror", None) or type(exc).__name__
        return None, [Problem(shown, None, f"cannot be read: {why}", root.source, default)]
    skill, problems = parse_skill(text, path, root.source, default_name=default,
                                  folder=folder, shown=shown)
    if skill is None or folder is None:
        return skill, problems
    tools_path = folder / TOOLS_FILE
    try:
        if not tools_path.is_file():
            return skill, problems
        if root.confine is not None and not tools_path.resolve().is_relative_to(root.confine):
            problems.append(Problem(show(tools_path), None, "a symbolic link leading outside "
                                    "the workspace: not read", root.source, skill.name))
            return skill, problems
        tools_text = _read(tools_path, MAX_TOOLS_BYTES)
    except (OSError, RuntimeError, ValueError, UnicodeDecodeError) as exc:
        problems.append(Problem(show(tools_path), None, f"cannot be read: {exc}", root.source,
                                skill.name))
        return skill, problems
    tools, more = parse_tools(tools_text, folder, skill.name, shown=show(tools_path),
                              source=root.source, taken=taken)
    return Skill(name=skill.name, description=skill.description, source=skill.source,
                 path=skill.path, body=skill.body, folder=folder,
                 allowed_tools=skill.allowed_tools, argument_hint=skill.argument_hint,
                 model_invocable=skill.model_invocable, user_invocable=skill.user_invocable,
                 tools=tuple(tools)), problems + more


def scan_root(root: Root, show: Shown, taken: frozenset[str] = frozenset()
              ) -> tuple[list[Skill], list[Problem]]:
    """The skills of one folder, by entry name; a second skill of the same name is a
    problem (the first stands)."""
    try:
        if root.confine is not None and not root.path.resolve().is_relative_to(root.confine):
            return [], [Problem(show(root.path), None, "a symbolic link leading outside the "
                                "workspace: not read", root.source)]
        names = sorted(os.listdir(root.path))
    except (OSError, RuntimeError):
        return [], []
    skills: dict[str, Skill] = {}
    problems: list[Problem] = []
    for name in [n for n in names if not n.startswith(".")][:MAX_ENTRIES]:
        skill, found = read_skill(root.path / name, root, show, taken)
        problems += found
        if skill is None:
            continue
        if skill.name in skills:
            problems.append(Problem(show(skill.path), None,
                                    f"another skill of this folder is named {skill.name!r} "
                                    f"({show(skills[skill.name].path)}): this one is left out",
                                    root.source, skill.name))
            continue
        skills[skill.name] = skill
    return list(skills.values()), problems


def discover(skill_roots: Iterable[Root], show: Shown,
             taken: frozenset[str] = frozenset()) -> Catalog:
    """Every skill of ``skill_roots`` (lowest precedence first: a later one of the same name
    wins) and every problem. ``taken``: names a ``tools.json`` tool may not have."""
    winners: dict[str, Skill] = {}
    problems: list[Problem] = []
    for root in skill_roots:
        skills, found = scan_root(root, show, taken)
        problems += found
        winners.update((skill.name, skill) for skill in skills)
    return Catalog(tuple(sorted(winners.values(), key=lambda s: s.name)), tuple(problems))
