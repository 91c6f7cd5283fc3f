"""Whether commands can be sandboxed here: ``bwrap`` found on ``PATH`` and one tiny sandbox run.

:func:`probe` runs ``bwrap`` once with the namespaces and mounts every sandboxed command uses
(:func:`base_options`) around ``true``; the answer is cached per ``bwrap`` path for the life of
the process (a few milliseconds, once). It tells apart: another OS than Linux, ``bwrap`` not
installed, user namespaces refused (AppArmor on Ubuntu 23.10+, a sysctl, a container's seccomp
profile), a ``/proc`` that cannot be mounted (then the sandbox still works, without a private
``/proc``), and any other failure. Blocking (one short subprocess); thread-safe.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

PROBE_TIMEOUT = 10.0
"""Seconds the probe's ``bwrap`` may take (it normally takes a few milliseconds)."""
INSTALL_HINT = ("install it (`apt-get install bubblewrap`; `dnf install bubblewrap`, "
                "`pacman -S bubblewrap`)")
APPARMOR_SYSCTL = "kernel.apparmor_restrict_unprivileged_userns"
SYSCTLS = Path("/proc/sys")

_NAMESPACE_MARKERS = (
    "setting up uid map", "no permissions to creat", "operation not permitted",
    "permission denied", "creating new namespace", "unshare", "rtm_newaddr", "clone",
)
"""Lower-case bits of what ``bwrap`` prints when the kernel refuses it a namespace."""


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """Whether commands run sandboxed, and if not, why (one line for the user, with the fix)."""

    enabled: bool
    reason: str | None = None
    bwrap: str | None = None
    """The ``bwrap`` executable the probe ran (``None`` when none was found)."""
    mount_proc: bool = True
    """``False``: a private ``/proc`` cannot be mounted here; commands see the host's."""

    def to_json(self) -> dict[str, object]:
        """``{"enabled": bool, "reason"?: str}``: the shape status views show."""
        found: dict[str, object] = {"enabled": self.enabled}
        if self.reason:
            found["reason"] = self.reason
        return found


def base_options(*, network: bool = False, mount_proc: bool = True) -> list[str]:
    """The options of every sandboxed command before its own binds: the namespaces, the
    read-only root, a minimal ``/dev``, a private ``/proc`` and an empty private ``/tmp``."""
    options = ["--die-with-parent", "--new-session", "--unshare-pid", "--unshare-ipc"]
    if not network:
        options.append("--unshare-net")
    options += ["--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev"]
    if mount_proc:
        options += ["--proc", "/proc"]
    return [*options, "--tmpfs", "/tmp"]


_lock = threading.Lock()
_cache: dict[str, SandboxStatus] = {}


def clear_cache() -> None:
    """Forget the probes done (tests; a ``bwrap`` installed while the server runs)."""
    with _lock:
        _cache.clear()


def find_bwrap(path: str | None = None) -> str | None:
    """The ``bwrap`` of ``path`` (a ``PATH`` value; default: this process's), or ``None``."""
    return shutil.which("bwrap", path=path)


def probe(
    *, path: str | None = None, platform: str | None = None, timeout: float = PROBE_TIMEOUT,
    sysctls: Path = SYSCTLS,
) -> SandboxStatus:
    """Can commands be sandboxed? ``path``: the ``PATH`` to look ``bwrap`` up on (default this
    process's); ``platform``: ``sys.platform`` unless given (tests). Cached per ``bwrap``."""
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return SandboxStatus(False, f"commands are not sandboxed on {_os_name(platform)}: the "
                                    "sandbox needs Linux and bubblewrap (bwrap)")
    bwrap = find_bwrap(path)
    if bwrap is None:
        return SandboxStatus(False, f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}")
    with _lock:
        if bwrap not in _cache:
            _cache[bwrap] = _run_probe(bwrap, timeout, sysctls)
        return _cache[bwrap]


def _run_probe(bwrap: str, timeout: float, sysctls: Path) -> SandboxStatus:
    failure = _try(bwrap, base_options(), timeout)
    if failure is None:
        return SandboxStatus(True, bwrap=bwrap)
    lowered = failure.lower()
    # e.g. in a container whose /proc is partly masked: sandbox without a private /proc
    if "proc" in lowered and "mount" in lowered \
            and _try(bwrap, base_options(mount_proc=False), timeout) is None:
        return SandboxStatus(True, bwrap=bwrap, mount_proc=False)
    return SandboxStatus(False, explain_failure(failure, sysctls), bwrap=bwrap)


def _try(bwrap: str, options: list[str], timeout: float) -> str | None:
    """``None`` when ``bwrap OPTIONS -- true`` succeeds, else what went wrong."""
    try:
        done = subprocess.run(
            [bwrap, *options, "--", "true"], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return f"timeout: bwrap did not finish a trivial command within {timeout:g} seconds"
    except OSError as exc:
        return f"could not run {bwrap}: {exc.strerror or exc}"
    if done.returncode == 0:
        return None
    text = " ".join(done.stderr.decode("utf-8", "replace").split())
    return text or f"bwrap exited with status {done.returncode}"


def explain_failure(failure: str, sysctls: Path = SYSCTLS) -> str:
    """One line for a failed probe: what ``bwrap`` said, and how to fix it."""
    said = failure if len(failure) <= 200 else failure[:197] + "..."
    lowered = failure.lower()
    if lowered.startswith(("timeout:", "could not run")):
        return f"bwrap does not work: {said}"
    if not any(marker in lowered for marker in _NAMESPACE_MARKERS):
        return f"bwrap failed ({said}); run `bwrap --ro-bind / / true` to investigate"
    return f"bwrap cannot create the namespaces it needs ({said}): {_namespace_fix(sysctls)}"


def _namespace_fix(sysctls: Path) -> str:
    """Why user namespaces are refused, as far as the sysctls tell, and the fix."""
    if _sysctl(sysctls, "kernel/apparmor_restrict_unprivileged_userns") == "1":
        return (f"AppArmor restricts unprivileged user namespaces ({APPARMOR_SYSCTL} = 1, "
                f"Ubuntu 23.10 and later): allow them with `sudo sysctl -w {APPARMOR_SYSCTL}=0` "
                "(keep it in /etc/sysctl.d/), or give bwrap an AppArmor profile that allows "
                "`userns`")
    if _sysctl(sysctls, "kernel/unprivileged_userns_clone") == "0":
        return ("the kernel refuses unprivileged user namespaces: allow them with "
                "`sudo sysctl -w kernel.unprivileged_userns_clone=1`")
    if _sysctl(sysctls, "user/max_user_namespaces") == "0":
        return ("user namespaces are turned off: allow them with "
                "`sudo sysctl -w user.max_user_namespaces=10000`")
    return (f"user namespaces are refused (on Ubuntu, the AppArmor sysctl {APPARMOR_SYSCTL}: "
            f"`sudo sysctl -w {APPARMOR_SYSCTL}=0`; in a container, its seccomp profile must "
            "allow them)")


def _sysctl(root: Path, name: str) -> str | None:
    try:
        return (root / name).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _os_name(platform: str) -> str:
    return {"darwin": "macOS", "win32": "Windows", "cygwin": "Windows"}.get(platform, platform)

