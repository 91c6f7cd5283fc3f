"""The skills of one session (SPEC §13 "Hooks and skills"): the folder's skills, read again
at each use, and the ones the session loaded (with ``load_skill``, or a ``/<skill>`` prompt).

The loaded ones are known from the session's log (:func:`pseudoclaude.workspace.skills.
logged_skills`): ``load`` gives them, called once, on first use, so they stay loaded after a
resume. A loaded skill's ``tools.json`` tools are offered to the model from then on.
Thread-safe (``load_skill`` scans in a worker thread while the loop reads the tools).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from pseudoclaude.skills import Catalog, Skill, SkillTool
from pseudoclaude.skills.render import folder_label


class SessionSkills:
    """See the module docstring. ``scan`` reads the folder's skills (blocking); ``catalog``
    is the last scan's, until :meth:`catalog` scans again."""

    def __init__(self, scan: Callable[[], Catalog], catalog: Catalog, *,
                 load: Callable[[], Iterable[str]] | None = None, session_id: str = "",
                 workspace: Path, install_dir: Path) -> None:
        self._scan = scan
        self._load = load
        self._catalog = catalog
        self._loaded: dict[str, None] = {}
        self._tools: tuple[SkillTool, ...] = ()
        self._lock = threading.Lock()
        self.session_id = session_id
        self.workspace = workspace
        """Where the session works (a folder skill inside it is named relative to it)."""
        self.install_dir = install_dir
        """Where ``install_skill`` installs (the user's skills folder)."""

    def _loaded_now(self) -> dict[str, None]:
        """The loaded skills (the log's first, once); call holding the lock."""
        load, self._load = self._load, None
        if load is not None:
            self._loaded.update(dict.fromkeys(load()))
            self._retool()
        return self._loaded

    def _retool(self) -> None:
        self._tools = tuple(tool for skill in self._catalog.skills if skill.name in self._loaded
                            for tool in skill.tools)

    def catalog(self) -> Catalog:
        """The folder's skills read now (blocking)."""
        found = self._scan()
        with self._lock:
            self._catalog = found
            self._loaded_now()
            self._retool()
        return found

    @property
    def current(self) -> Catalog:
        """The skills as last read (no reading)."""
        return self._catalog

    def loaded(self) -> list[str]:
        """The skills the session loaded, in the order it did (blocking the first time: its
        log is read)."""
        with self._lock:
            return list(self._loaded_now())

    def mark(self, name: str) -> bool:
        """Record ``name`` as loaded; whether it was not already."""
        with self._lock:
            loaded = self._loaded_now()
            new = name not in loaded
            loaded[name] = None
            self._retool()
        return new

    def tools(self) -> tuple[SkillTool, ...]:
        """The ``tools.json`` tools of the loaded skills, as last scanned (no reading: before
        :meth:`catalog` or :meth:`loaded` read the log, those loaded by a ``/<skill>`` prompt
        or ``load_skill`` of this process only)."""
        with self._lock:
            return self._tools

    def folder_label(self, skill: Skill) -> str | None:
        return folder_label(skill, self.workspace)

    def label(self, path: Path) -> str:
        """``~/...`` for a path under the home folder, else the path."""
        try:
            return "~/" + path.relative_to(Path.home()).as_posix()
        except ValueError:
            return str(path)
