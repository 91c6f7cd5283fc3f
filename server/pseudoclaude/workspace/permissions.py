"""What a folder allows: its permission files and settings loaded into rules, the approvals of
the folder's own files, "always allow", and the command sandbox (SPEC §13).

One :class:`FolderPermissions` per workspace. It loads the four rule sources
(``~/.PseudoClaude/permissions.yaml``, the folder's ``permissions.yaml`` and
``permissions.local.yaml``, the ``permissions`` setting) and reloads them when one of the files
changes (checked before each run and each request that reports them). What a folder's own file
grants itself (allow rules, a ``defaultMode`` above ``default``) waits for the user's approval
of that exact content, asked when the folder opens and before a run: ``allowOnce`` and ``deny``
last for the process, ``allowSession``/``allowAlways`` are remembered outside the workspace
(by real path and content hash, with the approvals of the folder's ``config.yaml``). A local
file this machine wrote ("always allow") is recorded as approved when written.

Each session gets its own :class:`~pseudoclaude.permissions.PermissionEngine` from
:meth:`FolderPermissions.engine` (its mode is its own); :meth:`FolderPermissions.apply` gives
every open session's engine the rules again after a change.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from pseudoclaude.agent.approvals import (
    Answer,
    ApprovalRequest,
    ApprovalUnavailable,
    Approver,
)
from pseudoclaude.config import Settings, settings_trust
from pseudoclaude.errors import one_line
from pseudoclaude.permissions import (
    MODES,
    Approvals,
    Loaded,
    Mode,
    PermissionEngine,
    PermissionsError,
    WaitingFile,
    load_permissions,
    local_file,
    project_file,
    user_file,
    write_local_rule,
)
from pseudoclaude.sandbox import Sandbox, SandboxStatus

log = logging.getLogger(__name__)

FOLDER = ".PseudoClaude"


def _signature(paths: Iterable[Path]) -> tuple[tuple[int, int] | None, ...]:
    out: list[tuple[int, int] | None] = []
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            out.append(None)
        else:
            out.append((info.st_mtime_ns, info.st_size))
    return tuple(out)


class FolderPermissions:
    """The permission state of one folder (see the module docstring)."""

    def __init__(self, root: Path, settings: Settings, approver: Approver, *,
                 user_dir: Path, data_dir: Path,
                 warn: Callable[[str], None] = lambda message: None) -> None:
        self.root = root
        self.settings = settings
        self.approver = approver
        self.user_dir = user_dir
        self.data_dir = data_dir
        self.warn = warn
        self._loaded: Loaded | None = None
        self._seen: tuple[tuple[int, int] | None, ...] = ()
        self._denied: set[str] = set()
        """Fingerprints of the folder's files the user declined in this process."""
        self._asking: asyncio.Lock | None = None
        self._warned: set[str] = set()
        self.sandbox = self._sandbox(settings)

    # -- settings ----------------------------------------------------------------------------
    def _sandbox(self, settings: Settings) -> Sandbox:
        box = settings.sandbox
        return Sandbox(box.enabled, network=box.network, hide=box.hide,
                       protect=[self.data_dir])

    def update_settings(self, settings: Settings) -> None:
        """New settings: the rules are read again at the next use, the sandbox follows."""
        self.settings = settings
        self._loaded = None
        self.sandbox = self._sandbox(settings)  # (the probe's answer is kept per process)

    @property
    def approvals(self) -> Approvals:
        a = self.settings.approvals
        return Approvals(write=a.write, run_command=a.run_command, mcp=a.mcp)

    @property
    def allow_bypass(self) -> bool:
        return bool(self.settings.permissions.allow_bypass)

    def _setting(self) -> dict[str, Any] | None:
        p = self.settings.permissions
        value: dict[str, Any] = {name: list(rules) for name, rules in
                                 (("allow", p.allow), ("ask", p.ask), ("deny", p.deny)) if rules}
        if p.default_mode is not None:
            value["defaultMode"] = p.default_mode
        return value or None

    # -- the rules ---------------------------------------------------------------------------
    def _files(self) -> tuple[Path, ...]:
        return (user_file(self.user_dir), project_file(self.root), local_file(self.root))

    def loaded(self) -> Loaded:
        """The rules in effect (read on first use and after a change). Blocking."""
        signature = _signature(self._files())
        if self._loaded is None or signature != self._seen:
            self._seen = signature
            self._loaded = load_permissions(
                self.root, approved=self._approved, user_dir=self.user_dir,
                settings=self._setting(), allow_bypass=self.allow_bypass)
            for problem in self._loaded.problems:
                if problem not in self._warned:
                    self._warned.add(problem)
                    self.warn(f"permissions: {problem}")
        return self._loaded

    def _name(self, path: Path) -> str:
        try:
            return Path(os.path.relpath(path, os.path.realpath(self.root))).as_posix()
        except ValueError:
            return str(path)

    def shown(self, path: Path) -> str:
        """A file as the user is shown it (relative to the folder when inside it)."""
        return self._name(path)

    def _approved(self, path: Path, fingerprint: str) -> bool:
        return settings_trust(self.settings).is_approved(self.root, self._name(path),
                                                         fingerprint)

    def waiting(self) -> list[WaitingFile]:
        """The folder's files whose grants wait for the user (declined ones included)."""
        return list(self.loaded().waiting)

    def engine(self, root: Path, extra_read_roots: Sequence[Path] = (),
               mode: str | None = None) -> PermissionEngine:
        """An engine for a session working in ``root``, in ``mode`` (default: the folder's
        start mode; one that cannot apply is replaced by it, with a warning)."""
        loaded = self.loaded()
        engine = loaded.engine(root, approvals=self.approvals, allow_bypass=self.allow_bypass,
                               extra_read_roots=extra_read_roots)
        engine.sandbox_auto_allow = self.auto_allow()
        if mode is not None and mode != engine.mode:
            try:
                engine.set_mode(mode)
            except PermissionsError as exc:
                self.warn(f"the session's mode {mode} does not apply: {exc}")
        return engine

    def auto_allow(self) -> bool:
        """Whether sandboxed commands no rule names run unasked (``sandbox.autoAllow`` and a
        working sandbox)."""
        return bool(self.settings.sandbox.auto_allow) and self.sandbox_status().enabled

    def sandbox_status(self) -> SandboxStatus:
        """Whether commands run sandboxed (probes ``bwrap`` once: blocking the first time)."""
        return self.sandbox.status

    def apply(self, engines: Iterable[PermissionEngine]) -> None:
        """The rules, settings and sandbox in effect now, into each engine (their modes and
        session rules stay). Blocking (the files may be read again)."""
        loaded = self.loaded()
        approvals, auto = self.approvals, self.auto_allow()
        for engine in engines:
            engine.replace_rules(loaded.rule_sets, loaded.problems)
            engine.approvals = approvals
            engine.allow_bypass = self.allow_bypass
            engine.sandbox_auto_allow = auto

    def modes(self) -> list[Mode]:
        """The modes a session may switch to."""
        return [m for m in MODES if m != "bypassPermissions" or self.allow_bypass]

    # -- approvals ---------------------------------------------------------------------------
    async def ask_waiting(self) -> bool:
        """Ask the user about each of the folder's files whose grants wait and that was not
        answered in this process; ``True`` when an answer changed the rules."""
        if self._asking is None:
            self._asking = asyncio.Lock()
        changed = False
        async with self._asking:
            for waiting in await asyncio.to_thread(self.waiting):
                if waiting.fingerprint in self._denied:
                    continue
                changed = await self._ask(waiting) or changed
        if changed:
            self._loaded = None
        return changed

    async def _ask(self, waiting: WaitingFile) -> bool:
        name = self._name(waiting.path)
        lines = [f"allow {rule}" for rule in waiting.rules]
        if waiting.default_mode is not None:
            lines.append(f"defaultMode: {waiting.default_mode} (sessions would start in it)")
        request = ApprovalRequest.permissions(name, lines, None, waiting.default_mode)
        try:
            answer = await self.approver.ask(request)
        except ApprovalUnavailable as exc:
            self._warn_once(waiting, f"{name} asks to allow more, and there is no way to ask "
                                     f"here ({exc}): its allow rules do not apply")
            return False
        except Exception as exc:  # CancelledError propagates
            log.warning("asking to approve %s failed: %s", waiting.path, exc)
            return False
        decision = answer.decision if isinstance(answer, Answer) else answer
        trust = settings_trust(self.settings)
        if decision == "allow_once":
            trust.approve_once(self.root, name, waiting.fingerprint)
            return True
        if decision in ("allow_session", "allow_always"):
            try:
                await asyncio.to_thread(trust.remember, self.root, name, waiting.fingerprint)
            except OSError as exc:
                log.warning("cannot remember the approval of %s: %s", waiting.path, exc)
                trust.approve_once(self.root, name, waiting.fingerprint)
            return True
        self._denied.add(waiting.fingerprint)
        return False

    def remember_waiting(self) -> list[str]:
        """Approve every file whose grants wait (declined ones too), remembered until it
        changes; their names. Blocking; ``OSError`` when the record cannot be written."""
        trust = settings_trust(self.settings)
        names = []
        for waiting in self.waiting():
            name = self._name(waiting.path)
            trust.remember(self.root, name, waiting.fingerprint)
            self._denied.discard(waiting.fingerprint)
            names.append(name)
        self._loaded = None
        return names

    def forget_files(self) -> None:
        """Withdraw the approvals of the folder's permission files. Blocking."""
        trust = settings_trust(self.settings)
        for name in (f"{FOLDER}/permissions.yaml", f"{FOLDER}/permissions.local.yaml"):
            trust.forget(self.root, name)
        self._loaded = None

    def _warn_once(self, waiting: WaitingFile, message: str) -> None:
        if waiting.fingerprint not in self._warned:
            self._warned.add(waiting.fingerprint)
            self.warn(message)

    async def remember_rule(self, rule: str) -> str | None:
        """"Always allow": ``rule`` into the folder's ``permissions.local.yaml``, recorded as
        approved (this machine wrote it). ``None`` when done, else why not."""
        try:
            fingerprint = await asyncio.to_thread(write_local_rule, self.root, rule)
            await asyncio.to_thread(settings_trust(self.settings).remember, self.root,
                                    f"{FOLDER}/permissions.local.yaml", fingerprint)
        except (PermissionsError, OSError) as exc:
            message = f"the rule {rule} was not saved ({one_line(exc)}); it holds for this " \
                      "session"
            self.warn(message)
            return message
        self._loaded = None
        return None
