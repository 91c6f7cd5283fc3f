"""The hooks of one folder: where they come from, the user's approval of the folder's own file,
and what ``/hooks`` lists (docs/hooks.md).

Three sources, in this order: the user's ``~/.PseudoClaude/hooks.yaml`` (``user``), the
``hooks`` setting (``settings``: the editor's settings or the user's ``config.yaml``), and the
folder's ``.PseudoClaude/hooks.yaml`` (``workspace``). The files are read when first needed and
again whenever one of them changed (checked at each use: two ``stat`` calls). A name defined by
an earlier source stands; the later definition is listed as invalid.

The folder's own file runs only once the user approved that exact content (``pseudoclaude/
approve`` kind ``hooks``, asked when the folder opens and before a run): ``allowOnce`` lasts
the process, ``allowSession``/``allowAlways`` are remembered outside the workspace (by the
folder's real path and the file's content hash, ``hooks-approvals.json`` of the user-level data
folder), ``deny`` holds for this process and is not remembered. An edited file is asked again,
and so is a declined one when the user asks to review it (:meth:`FolderHooks.reconsider`).
The user's own file and the settings need no approval.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pseudoclaude.agent.approvals import (
    ApprovalHook,
    ApprovalRequest,
    ApprovalUnavailable,
    Approver,
    simple_decision,
)
from pseudoclaude.config import Settings, settings_trust
from pseudoclaude.hooks import FILE_NAME, Dispatcher, Hook, Loaded, parse_entries, parse_text
from pseudoclaude.hooks.model import Problem, Source
from pseudoclaude.trust import HOOKS_FILE, TrustStore, fingerprint

log = logging.getLogger(__name__)

FOLDER = ".PseudoClaude"
WORKSPACE_FILE = f"{FOLDER}/{FILE_NAME}"
"""The folder's own hooks file, relative (the name its approval is remembered under)."""


@dataclass(frozen=True, slots=True)
class HookInfo:
    """One hook as ``pseudoclaude/hooks/list`` shows it."""

    name: str
    event: str
    source: str
    """``user``, ``workspace`` or ``settings``."""
    status: str
    """``active``, ``needsApproval``, ``denied`` or ``invalid``."""
    error: str | None = None
    """``invalid``: the file, the line and why."""
    action: str = ""
    """What it runs, in one line."""


@dataclass(frozen=True, slots=True)
class _Read:
    """What the sources hold now."""

    user: Loaded
    settings: Loaded
    workspace: Loaded
    digest: str | None
    """The folder file's content hash (``None``: there is no such file)."""


def _stat(path: Path) -> tuple[int, int] | None:
    try:
        info = os.stat(path)
    except OSError:
        return None
    return info.st_mtime_ns, info.st_size


class FolderHooks:
    """The hooks of one folder (see the module docstring). ``warn`` says what goes wrong, in
    one line (a hook that failed, a file that waits for an approval nobody can give)."""

    def __init__(self, root: Path, settings: Settings, approver: Approver, *, user_dir: Path,
                 warn: Callable[[str], None]) -> None:
        self.root = root
        self.settings = settings
        self.approver = approver
        self.user_file = user_dir / FILE_NAME
        self.workspace_file = root / FOLDER / FILE_NAME
        self.warn = warn
        self.dispatcher = Dispatcher(warn)
        """Runs the hooks of every session of the folder."""
        self._read: _Read | None = None
        self._seen: tuple[object, ...] = ()
        self._denied: set[str] = set()
        """Contents of the folder's file the user declined in this process."""
        self._approved: set[str] = set()
        """Contents found approved (the record is not read again for each tool call)."""
        self._warned: set[str] = set()
        self._asking: asyncio.Lock | None = None

    def update_settings(self, settings: Settings) -> None:
        self.settings = settings
        self._read = None

    # -- the sources -------------------------------------------------------------------------
    def _current(self, warn: bool = True) -> _Read:
        """The sources as they are now (read again when a file or the setting changed); with
        ``warn``, each entry that cannot be read is said once (a listing shows them)."""
        signature = (_stat(self.user_file), _stat(self.workspace_file), self.settings.hooks)
        if self._read is None or signature != self._seen:
            self._seen = signature
            self._read = self._load()
        if warn:
            for problem in (*self._read.user.problems, *self._read.settings.problems,
                            *self._read.workspace.problems):
                self._warn_once(problem.text(), f"hooks: {problem.text()}")
        return self._read

    def _load(self) -> _Read:
        user = _read_file(self.user_file, "user")[0]
        workspace, digest = _read_file(self.workspace_file, "workspace")
        settings = parse_entries(list(self.settings.hooks), "settings", "settings") \
            if self.settings.hooks else Loaded()
        return _Read(user, settings, workspace, digest)

    def _trust(self) -> TrustStore:
        return settings_trust(self.settings, HOOKS_FILE)

    def _workspace_status(self, read: _Read) -> str:
        if read.digest is None or not read.workspace.hooks:
            return "active"
        if read.digest in self._denied:
            return "denied"
        if read.digest in self._approved or self._trust().is_approved(
                self.root, WORKSPACE_FILE, read.digest):
            self._approved.add(read.digest)
            return "active"
        return "needsApproval"

    def _sorted(self, read: _Read) -> list[tuple[Hook, str, str | None]]:
        """Every hook with its status and error, the sources in order; a name defined by an
        earlier source makes a later definition invalid."""
        out: list[tuple[Hook, str, str | None]] = []
        seen: dict[str, str] = {}
        workspace = self._workspace_status(read)
        for loaded, status in ((read.user, "active"), (read.settings, "active"),
                               (read.workspace, workspace)):
            for hook in loaded.hooks:
                if hook.name in seen:
                    out.append((hook, "invalid", f"{_where(hook)}: a hook named "
                                f'"{hook.name}" is defined in {seen[hook.name]} already'))
                    continue
                seen[hook.name] = hook.origin
                out.append((hook, status, None))
        return out

    def active(self) -> list[Hook]:
        """The hooks that run now."""
        return [hook for hook, status, _ in self._sorted(self._current()) if status == "active"]

    def listing(self) -> list[HookInfo]:
        """Every hook of every source, and every entry that could not be read. Blocking (the
        files may be read)."""
        read = self._current(warn=False)
        shown = [HookInfo(hook.name, hook.event, hook.source, status, error, hook.describe())
                 for hook, status, error in self._sorted(read)]
        problems = (*read.user.problems, *read.settings.problems, *read.workspace.problems)
        return shown + [_invalid(problem) for problem in problems]

    # -- the approval of the folder's own file -----------------------------------------------
    async def ask(self) -> bool:
        """Ask the user about the folder's ``hooks.yaml`` when it has hooks that wait (not
        declined in this process); ``True`` when they may run now."""
        if self._asking is None:
            self._asking = asyncio.Lock()
        async with self._asking:
            read = await asyncio.to_thread(self._current)
            if self._workspace_status(read) != "needsApproval":
                return False
            assert read.digest is not None
            return await self._ask(read.workspace.hooks, read.digest)

    def reconsider(self) -> None:
        """Forget what the user declined in this process: the folder's file is asked again
        the next time (``pseudoclaude/hooks/review``)."""
        self._denied.clear()

    async def _ask(self, hooks: tuple[Hook, ...], digest: str) -> bool:
        request = ApprovalRequest.hooks_file(WORKSPACE_FILE, [
            ApprovalHook(hook.name, hook.event, hook.describe()) for hook in hooks])
        try:
            answer = await self.approver.ask(request)
        except ApprovalUnavailable as exc:
            self._warn_once(digest, f"{WORKSPACE_FILE} has hooks that wait for your approval, "
                                    f"and there is no way to ask here ({exc}): they do not run")
            return False
        except Exception as exc:  # CancelledError propagates
            log.warning("asking to approve %s failed: %s", self.workspace_file, exc)
            return False
        decision = simple_decision(answer)
        trust = self._trust()
        if decision == "allow_once":
            trust.approve_once(self.root, WORKSPACE_FILE, digest)
            return True
        if decision == "allow_session":
            try:
                await asyncio.to_thread(trust.remember, self.root, WORKSPACE_FILE, digest)
            except OSError as exc:
                log.warning("cannot remember the approval of %s: %s", self.workspace_file, exc)
                trust.approve_once(self.root, WORKSPACE_FILE, digest)
            return True
        self._denied.add(digest)
        return False

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.warn(message)

    async def aclose(self) -> None:
        """Stop the hooks still running in the background."""
        await self.dispatcher.aclose()


def _read_file(path: Path, source: str) -> tuple[Loaded, str | None]:
    """A hooks file's hooks and problems, and its content hash (``None``: no file)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return Loaded(), None
    except OSError as exc:
        why = (exc.strerror or type(exc).__name__).lower()
        return Loaded(problems=(Problem(str(path), None, f"cannot be read: {why}",
                                        name=path.name, source=_source(source)),)), None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return Loaded(problems=(Problem(str(path), None, "cannot be read: not UTF-8 text",
                                        name=path.name, source=_source(source)),)), \
            fingerprint(data)
    return parse_text(text, str(path), _source(source)), fingerprint(data)


def _source(name: str) -> Source:
    return "workspace" if name == "workspace" else "user"


def _where(hook: Hook) -> str:
    return f"{hook.origin}:{hook.line}" if hook.line is not None else hook.origin


def _invalid(problem: Problem) -> HookInfo:
    return HookInfo(problem.name, problem.event, problem.source, "invalid", problem.text())
