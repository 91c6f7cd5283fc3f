"""A folder's skills (SPEC §13 "Hooks and skills"): read from its skills folders and the user's
(:mod:`pseudoclaude.skills`), again before each request, for a ``/<skill>`` prompt, ``load_skill``,
``pseudoclaude/skills/list`` and ``/status`` (a few small files: cheap); the last reading answers
what must not wait (the chats' ``/`` completion).

Which skills a session loaded is known from its log (:func:`logged_skills`): a ``load_skill``
result that loaded one (``metadata.skill``), or the prompt of a ``/<skill>`` command
(:func:`pseudoclaude.skills.invoked`), so a resumed session keeps them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

from pseudoclaude.agent.tools import default_tools
from pseudoclaude.agent.tools.plan import ExitPlanMode, UpdateTasks
from pseudoclaude.agent.tools.skills import InstallSkill, LoadSkill
from pseudoclaude.llm.types import Message
from pseudoclaude.session.codec import BadLine, MessageEntry, ReplaceEntry, decode
from pseudoclaude.session.loader import DEFAULT_LINE_LIMIT, iter_lines
from pseudoclaude.session.timeline import FORK
from pseudoclaude.skills import (
    LOAD_SKILL,
    Catalog,
    discover,
    invoked,
    roots,
    shown_path,
    user_skills_dir,
)

BUILT_IN_TOOLS = frozenset([*(tool.name for tool in default_tools()), UpdateTasks.name,
                            ExitPlanMode.name, LoadSkill.name, InstallSkill.name, "agent"])
"""Names a skill's ``tools.json`` tool may not take."""


class FolderSkills:
    """The skills of one folder (``root``), with the user's (``user_dir``: the user folder,
    ``~/.PseudoClaude``)."""

    def __init__(self, root: Path, user_dir: Path) -> None:
        self.root = root
        self.user_dir = user_dir
        self.shown = shown_path(root)
        """How a skill's file is named (relative to the folder, ``~/...``, absolute)."""
        self._catalog: Catalog | None = None
        self._lock = threading.Lock()

    @property
    def install_dir(self) -> Path:
        """Where ``install_skill`` installs: the user's skills folder."""
        return user_skills_dir(self.user_dir)

    def scan(self) -> Catalog:
        """Every skill and problem now (blocking); kept as :meth:`cached`."""
        found = discover(roots(self.root, self.user_dir), self.shown, BUILT_IN_TOOLS)
        with self._lock:
            self._catalog = found
        return found

    def cached(self) -> Catalog:
        """The last reading (the first one now: a few small files)."""
        with self._lock:
            found = self._catalog
        return found if found is not None else self.scan()


def _messages(path: Path) -> Iterator[Message]:
    """The messages of a log that may load a skill (every line holding ``load_skill`` or a
    ``<skill`` block; a fork's first conversation included)."""
    try:
        f = open(path, "rb")  # noqa: SIM115 (closed below; a missing log loaded nothing)
    except FileNotFoundError:
        return
    with f:
        for raw in iter_lines(f, DEFAULT_LINE_LIMIT):
            if not isinstance(raw, bytes) or (LOAD_SKILL.encode() not in raw
                                              and b"<skill name=" not in raw):
                continue
            try:
                entry = decode(raw)
            except BadLine:
                continue
            if type(entry) is MessageEntry:
                yield entry.to_message()
            elif type(entry) is ReplaceEntry and entry.reason == FORK:
                yield from entry.messages or ()


def loaded_by(message: Message) -> str | None:
    """The skill a message of the log loaded, if any."""
    result = message.tool_result
    if result is None:
        return invoked(message.content) if message.role == "user" else None
    if result.is_error or result.name != LOAD_SKILL:
        return None
    try:
        body = json.loads(result.content)
    except ValueError:
        return None  # a spilled result's preview, a hand-made line
    metadata = body.get("metadata") if isinstance(body, dict) else None
    name = metadata.get("skill") if isinstance(metadata, dict) else None
    return name if isinstance(name, str) else None


def logged_skills(path: Path) -> list[str]:
    """The skills a session's log says it loaded, in order, each once (blocking: one read)."""
    out: dict[str, None] = {}
    for message in _messages(path):
        name = loaded_by(message)
        if name is not None:
            out[name] = None
    return list(out)
