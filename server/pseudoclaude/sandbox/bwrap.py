"""The ``bwrap`` command line of a sandboxed command (:func:`wrap`), and :class:`Sandbox`: the
settings (``sandbox.enabled``, ``sandbox.network``, ``sandbox.hide``) applied to one command.

Inside the sandbox the whole file system is read-only (``--ro-bind / /``) but for the writable
roots (the workspace or the session's worktree, and the Git folder a worktree points to) and a
private empty ``/tmp``; ``/dev`` is a minimal one, ``/proc`` a private one. Some paths inside
the writable roots stay read-only: the project's data folder (``.PseudoClaude``: session logs,
settings, approvals, hooks, memory, checkpoints). Some paths are hidden: secrets of the home
folder (``~/.ssh`` ...), the ``sandbox.hide`` paths, and the sockets through which a command
could have a program outside the sandbox run something for it (the user's runtime folder with
its session bus and agents, the system bus, Docker's and systemd's sockets). A hidden folder is
an empty read-only tmpfs; a hidden file (or socket) an empty read-only file (:func:`empty_file`).
The command has its own PID namespace (every process it starts ends with it), no network unless
``network`` (then the host's, DNS included), no capabilities (even when the server runs as root)
and no terminal to push input into (``--new-session``). Paths are compared and mounted with
symbolic links resolved; a hidden or read-only path that does not exist is skipped.

Mount order matters to ``bwrap`` (a later mount covers an earlier one): after the root, ``/dev``,
``/proc`` and ``/tmp``, the binds are sorted by depth, so a folder read-only inside a writable
root, a writable worktree inside that read-only folder, or a hidden folder inside the workspace
all come out right.
"""

from __future__ import annotations

import atexit
import errno
import os
import shutil
import tempfile
import threading
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Literal

from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.sandbox.probe import SandboxStatus, base_options, probe

Enabled = bool | Literal["auto"]
"""``sandbox.enabled``: ``auto`` sandboxes when it can, ``True`` refuses commands otherwise."""
CONFIG_DIR = ".PseudoClaude"
"""The project's data folder in a writable root: read-only inside the sandbox."""
HIDDEN_IN_HOME = (".ssh", ".aws", ".gnupg", ".config/gcloud", ".PseudoClaude")
"""Folders of the home folder no sandboxed command sees (``~/.PseudoClaude``: the user's
settings, memory and approvals)."""
SERVICE_SOCKETS = (
    "/run/dbus", "/var/run/dbus", "/run/systemd/private", "/run/docker.sock",
    "/var/run/docker.sock", "/run/containerd", "/run/podman",
)
"""Sockets of services that would run a program outside the sandbox for whoever connects (a
socket on a read-only file system still accepts connections, and the network namespace does not
cover socket files): hidden, with the user's runtime folder (``$XDG_RUNTIME_DIR``) and
``$SSH_AUTH_SOCK``."""
TEMP_VARIABLES = ("TMPDIR", "TMP", "TEMP", "TEMPDIR")
"""Variables that name a temporary folder: set to ``/tmp`` inside when theirs is not writable."""
SHELL = "/bin/sh"
_TMP = Path("/tmp")
_RANK = {"bind": 0, "ro": 1, "hide-dir": 2, "hide-file": 2}


class SandboxUnavailable(PseudoClaudeError):
    """``sandbox.enabled`` is ``true`` but commands cannot be sandboxed here."""

    def __init__(self, reason: str) -> None:
        super().__init__(
            f"command not run: sandbox.enabled is true but the sandbox is not available: "
            f"{reason}. Fix that, or set sandbox.enabled to auto (commands then run "
            f"unsandboxed) or false")
        self.reason = reason


def parse_enabled(value: object) -> Enabled:
    """``sandbox.enabled`` from a plain value: ``"auto"``, ``True``/``False`` or ``"true"``/
    ``"false"``; anything else is a :class:`ValueError`."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("auto", "true", "false"):
        word = value.strip().lower()
        return "auto" if word == "auto" else word == "true"
    raise ValueError(f"sandbox.enabled must be auto, true or false, not {value!r}")


def argv_of(command: Sequence[str] | str) -> list[str]:
    """An argument vector as it is, a string as a shell line (``/bin/sh -c LINE``)."""
    if isinstance(command, str):
        return [SHELL, "-c", command]
    if not command:
        raise ValueError("an empty command")
    return list(command)


def wrap(
    command: Sequence[str] | str,
    *,
    root: Path,
    writable: Sequence[Path] = (),
    read_only_inside: Sequence[Path] = (),
    hide: Sequence[Path] = (),
    network: bool = False,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    bwrap: str = "bwrap",
    mount_proc: bool = True,
    empty: Path | None = None,
) -> list[str]:
    """The argument vector that runs ``command`` (a vector, or a shell line) in the sandbox.

    ``root`` (which must exist) and ``writable`` are the writable roots; ``read_only_inside``
    are kept read-only where they lie inside one (elsewhere everything is read-only already);
    ``hide`` are covered by an empty folder or file. ``env``: variables set inside
    (``--setenv``) over the environment ``bwrap`` is started with. ``cwd``: default ``root``.
    ``mount_proc``: ``False`` when the probe found a private ``/proc`` cannot be mounted.
    ``empty``: the empty file bound over hidden files (default :func:`empty_file`).
    """
    argv = argv_of(command)
    real_root = _real(root)
    if not real_root.is_dir():
        raise FileNotFoundError(errno.ENOENT, "the sandbox's root is not a folder", str(root))
    args = [bwrap, *base_options(network=network, mount_proc=mount_proc)]
    remount: list[str] = []
    mounts = plan_mounts(real_root, writable, read_only_inside, hide)
    if empty is None and any(kind == "hide-file" for _, kind in mounts):
        empty = empty_file()
    for path, kind in mounts:
        where = str(path)
        if kind == "bind":
            args += ["--bind", where, where]
        elif kind == "ro":
            args += ["--ro-bind", where, where]
        elif kind == "hide-dir":
            args += ["--tmpfs", where]
            remount.append(where)  # read-only once every mount inside it is done
        else:
            args += ["--ro-bind", str(empty), where]
    for where in remount:
        args += ["--remount-ro", where]
    for name, value in (env or {}).items():
        args += ["--setenv", name, value]
    return [*args, "--chdir", str(_real(cwd) if cwd is not None else real_root), "--", *argv]


def plan_mounts(
    root: Path, writable: Iterable[Path], read_only_inside: Iterable[Path], hide: Iterable[Path],
) -> list[tuple[Path, str]]:
    """``(real path, kind)`` in mount order; kinds: ``bind`` (writable), ``ro``, ``hide-dir``,
    ``hide-file``. A writable root is never hidden (a hidden folder around it is, and the root
    is bound again inside); a read-only path that a hidden folder inside its root covers is
    left hidden."""
    roots: list[Path] = []
    for path in (root, *writable):
        real = _real(path)
        if real not in roots and real.exists():
            roots.append(real)
    kinds: dict[Path, str] = dict.fromkeys(roots, "bind")
    hidden: list[Path] = []
    for path in hide:
        real = _real(path)
        if real == Path("/") or real in roots or not real.exists():
            continue
        if _inside(real, _TMP) and not any(_inside(real, r) for r in roots):
            continue  # the private /tmp hides it already
        kinds[real] = "hide-dir" if real.is_dir() else "hide-file"
        hidden.append(real)
    for path in read_only_inside:
        real = _real(path)
        owners = [r for r in roots if _inside(real, r)]
        if not owners or not real.exists():
            continue
        owner = max(owners, key=lambda r: len(r.parts))
        if any(_inside(real, h) and len(h.parts) > len(owner.parts) for h in hidden):
            continue
        if kinds.get(real, "bind") == "bind":
            kinds[real] = "ro"
    return sorted(kinds.items(), key=lambda item: (len(item[0].parts), _RANK[item[1]],
                                                   str(item[0])))


class Sandbox:
    """The ``sandbox.*`` settings, applied to commands.

    ``enabled``: ``auto`` | ``True`` | ``False`` (or their strings); ``network``: share the
    host's network; ``hide``: more paths to hide (``~`` is the home folder, a relative path is
    relative to the command's root); ``protect``: more folders kept read-only where they lie
    inside a writable root (the data folder when ``dataDir`` is set; ``.PseudoClaude`` of every
    writable root always is). ``home``: the home folder whose secrets are hidden (default
    ``$HOME``); ``path``: the ``PATH`` to find ``bwrap`` on (default this process's);
    ``status``: a probe's answer to use instead of probing (tests).
    """

    def __init__(
        self,
        enabled: Enabled | str = "auto",
        *,
        network: bool = False,
        hide: Sequence[Path | str] = (),
        protect: Sequence[Path] = (),
        home: Path | None = None,
        path: str | None = None,
        status: SandboxStatus | None = None,
    ) -> None:
        self.enabled: Enabled = parse_enabled(enabled)
        self.network = bool(network)
        self.hide = tuple(Path(p) for p in hide)
        self.protect = tuple(Path(p) for p in protect)
        self.home = home
        self._path = path
        self._probed = status

    @property
    def probed(self) -> SandboxStatus:
        """What the probe found (run once per process and ``bwrap``; not when turned off)."""
        if self._probed is None:
            self._probed = probe(path=self._path)
        return self._probed

    @property
    def checked(self) -> bool:
        """Whether :attr:`status` can answer without running the probe (it ran, or the
        sandbox is turned off)."""
        return self.enabled is False or self._probed is not None

    @property
    def status(self) -> SandboxStatus:
        """``enabled``: commands run sandboxed; else ``reason`` says why not and what happens
        to commands (they run unsandboxed, or, with ``enabled: true``, are refused)."""
        if self.enabled is False:
            return SandboxStatus(False, "turned off (sandbox.enabled: false): commands run "
                                        "unsandboxed")
        found = self.probed
        if found.enabled:
            return found
        then = "commands are refused (sandbox.enabled: true)" if self.enabled is True \
            else "commands run unsandboxed (sandbox.enabled: auto)"
        return SandboxStatus(False, f"{found.reason}; {then}", bwrap=found.bwrap)

    @property
    def active(self) -> bool:
        """Whether commands run sandboxed (what ``sandboxed`` of a result and the permission
        engine's ``autoAllow`` go by)."""
        return self.status.enabled

    @property
    def refuses(self) -> bool:
        """Whether commands are refused (``enabled: true`` without a working sandbox)."""
        return self.enabled is True and not self.probed.enabled

    def describe(self) -> str:
        """One line for status views."""
        status = self.status
        if not status.enabled:
            return f"not sandboxed: {status.reason}"
        network = "shared network" if self.network else "no network"
        proc = "" if status.mount_proc else ", host /proc"
        return f"sandboxed with {status.bwrap} ({network}{proc})"

    def command(
        self,
        command: Sequence[str] | str,
        cwd: Path,
        *,
        writable: Sequence[Path] = (),
        read_only: Sequence[Path] = (),
        env: Mapping[str, str] | None = None,
    ) -> list[str]:
        """The argument vector to start for ``command`` (a vector, or a shell line), run in
        ``cwd`` (a writable root: the workspace or the session's worktree; ``writable``: more).

        Sandboxed: the ``bwrap`` vector, after checking, as ``exec`` would, that the program
        exists (:class:`FileNotFoundError`) and may be run (:class:`PermissionError`) with
        ``env``'s ``PATH`` — ``env`` is the environment the vector will be started with
        (default this process's). Not sandboxed: the command as it is, or
        :class:`SandboxUnavailable` when ``enabled`` is ``True``.
        """
        argv = argv_of(command)
        if self.enabled is False:
            return argv
        found = self.probed
        if not found.enabled:
            if self.enabled is True:
                raise SandboxUnavailable(found.reason or "bwrap does not work")
            return argv
        environment = os.environ if env is None else env
        cwd = Path(cwd)
        find_program(argv[0], cwd, environment.get("PATH", os.defpath))
        roots = [cwd, *writable]
        roots += [git for root in roots for git in git_dirs(root)]
        protected = [root / CONFIG_DIR for root in roots] + [*self.protect, *read_only]
        real_roots = [_real(root) for root in roots]
        inside = {name: "/tmp" for name in TEMP_VARIABLES if environment.get(name)
                  and not any(_inside(_real(environment[name]), r) for r in real_roots)}
        return wrap(argv, root=cwd, writable=roots[1:], read_only_inside=protected,
                    hide=self.hidden(cwd, environment), network=self.network, env=inside,
                    bwrap=found.bwrap or "bwrap", mount_proc=found.mount_proc)

    def hidden(self, root: Path, env: Mapping[str, str]) -> list[Path]:
        """What a command run in ``root`` must not see (existing or not)."""
        home = self.home or Path(env.get("HOME") or os.path.expanduser("~"))
        homes = sorted({home, Path(os.path.expanduser("~"))})
        found = [h / name for h in homes if h.is_absolute() for name in HIDDEN_IN_HOME]
        for path in self.hide:
            text = str(path)
            if text == "~" or text.startswith("~/"):
                found.append(home / text[2:])
            else:
                found.append(root / Path(os.path.expanduser(text)))
        found += [Path(socket) for socket in SERVICE_SOCKETS]
        found.append(Path(env.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}"))
        if env.get("SSH_AUTH_SOCK"):
            found.append(Path(env["SSH_AUTH_SOCK"]))
        return found


_empty_lock = threading.Lock()
_empty: list[Path] = []


def empty_file() -> Path:
    """An empty read-only file of this process, bound over hidden files: reading one gives
    nothing, writing fails (``/dev/null`` would not do: ``bwrap`` binds with ``nodev``, so
    opening it would be refused). Made on first use in a private temporary folder (again if
    something removed it), removed at exit."""
    with _empty_lock:
        if _empty and _empty[0].is_file() and _empty[0].stat().st_size == 0:
            return _empty[0]
        folder = Path(tempfile.mkdtemp(prefix="pseudoclaude-sandbox-"))
        path = folder / "empty"
        path.touch(mode=0o444)
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _empty[:] = [path]
        return path


def find_program(command: str, cwd: Path, path: str) -> str:
    """Where ``exec`` would find ``command`` (a name looked up on ``path``, or a path with a
    ``/``, relative to ``cwd``): :class:`FileNotFoundError` / :class:`PermissionError` as
    ``exec`` would fail (``bwrap`` would only print it)."""
    if "/" in command:
        candidates = [cwd / command]
    else:
        candidates = [cwd / folder / command for folder in path.split(os.pathsep)]
    refused: Path | None = None
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
        if refused is None and candidate.exists():
            refused = candidate
    if refused is not None:
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(refused))
    raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command)


def git_dirs(root: Path) -> list[Path]:
    """The Git folders a worktree at ``root`` writes to (its ``.git`` is a file
    ``gitdir: <repo>/.git/worktrees/<name>``: that folder and ``<repo>/.git``); none for a
    plain repository (its ``.git`` is inside ``root``) or no repository."""
    marker = root / ".git"
    try:
        if not marker.is_file():
            return []
        text = marker.read_text(encoding="utf-8", errors="replace")[:4096]
    except OSError:
        return []
    line = next((line for line in text.splitlines() if line.startswith("gitdir:")), None)
    if line is None:
        return []
    gitdir = root / line.removeprefix("gitdir:").strip()
    found = [gitdir]
    try:
        common = (gitdir / "commondir").read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        common = ""
    if common:
        found.append(gitdir / common)
    return [_real(p) for p in found if p.is_dir()]


def _real(path: Path | str) -> Path:
    return Path(os.path.realpath(path))


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)
