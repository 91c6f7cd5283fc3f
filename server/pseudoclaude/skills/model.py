"""What a skill is once read: :class:`Skill` (its frontmatter, its body, its ``tools.json``
tools), the :class:`Problem` of a skill that could not be read, and the :class:`Catalog` of a
folder (every source merged by precedence). Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Source = Literal["workspace", "user", "claude", "agents", "builtin"]
"""Where a skill comes from: the folder's ``.PseudoClaude/skills/``, the user folder's
``skills/`` (``~/.PseudoClaude/skills/``), the folder's ``.claude/skills/`` (Claude Code's),
its ``.agents/skills/`` (shared by several tools), or the skills that come with PseudoClaude."""
PRECEDENCE: tuple[Source, ...] = ("builtin", "user", "agents", "claude", "workspace")
"""When two sources have a skill of the same name, the later one here wins: the folder's own
``.PseudoClaude/skills/`` over ``.claude/skills/`` over ``.agents/skills/`` over the user's
over the built-in ones."""

NAME = re.compile(r"^[a-z0-9_][a-z0-9_-]{0,63}$")
"""A skill's name: lowercase letters, digits, ``_`` and ``-``, at most 64, not starting with
``-`` (nor ending with one: :func:`valid_name`)."""
NAME_RULE = ("lowercase letters, digits, '-' and '_', at most 64 characters, not starting or "
             "ending with '-'")
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
"""A ``tools.json`` tool's name (what every provider accepts)."""
MAX_SKILL_BYTES = 48 * 1024
"""A ``SKILL.md`` larger than this is a problem (its body must fit one tool result)."""
MAX_DESCRIPTION = 1024
"""A description is cut to this many characters (the Agent Skills limit)."""
MAX_TOOLS_BYTES = 64 * 1024
MAX_ENTRIES = 500
"""Entries of one skills folder looked at, at most."""


def valid_name(name: str) -> bool:
    return bool(NAME.match(name)) and not name.endswith("-")


@dataclass(frozen=True, slots=True)
class SkillTool:
    """A tool of a skill's ``tools.json``: offered once the skill is loaded; runs ``command``
    (``command[0]`` a file of the skill's folder) with the call's arguments as JSON on
    stdin."""

    name: str
    description: str
    input_schema: dict[str, Any]
    command: tuple[str, ...]
    folder: Path
    """The skill's folder: where the command runs."""
    skill: str

    @property
    def program(self) -> Path:
        return self.folder / self.command[0]


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    source: Source
    path: Path
    """Its Markdown file (``SKILL.md``, or ``<name>.md``)."""
    body: str
    """The instructions, after the frontmatter."""
    folder: Path | None = None
    """The skill's folder (``None``: a single ``<name>.md`` file)."""
    allowed_tools: tuple[str, ...] = ()
    """``allowed-tools`` (or ``tools``): the tools the skill means to use. Said to the model
    with the instructions; it grants nothing (the permission rules decide)."""
    argument_hint: str = ""
    model_invocable: bool = True
    """``disable-model-invocation: true`` makes it false: not listed to the model, not
    loadable with ``load_skill`` (only ``/<name>``)."""
    user_invocable: bool = True
    """``user-invocable: false``: no ``/<name>`` command (the model may still load it)."""
    tools: tuple[SkillTool, ...] = ()


@dataclass(frozen=True, slots=True)
class Problem:
    """A skill (or one tool of its ``tools.json``) that cannot be used, and why; the others
    still load."""

    path: str
    line: int | None
    message: str
    source: Source
    name: str = ""
    """The skill it is about, when that is known."""

    def text(self) -> str:
        """``<file>:<line>: <why>``."""
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{where}: {self.message}"


@dataclass(frozen=True, slots=True)
class Catalog:
    """The skills of a folder, one per name (the winner by :data:`PRECEDENCE`), sorted by
    name, and every problem met reading them."""

    skills: tuple[Skill, ...] = ()
    problems: tuple[Problem, ...] = ()
    _by_name: dict[str, Skill] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_name.update({s.name: s for s in self.skills})

    def get(self, name: str) -> Skill | None:
        return self._by_name.get(name)

    @property
    def listed(self) -> tuple[Skill, ...]:
        """The skills the model is told of (and may load)."""
        return tuple(s for s in self.skills if s.model_invocable)

    @property
    def commands(self) -> tuple[Skill, ...]:
        """The skills the user may run as ``/<name>``."""
        return tuple(s for s in self.skills if s.user_invocable)
