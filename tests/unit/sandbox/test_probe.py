"""The probe and the status: these run everywhere (fake ``bwrap`` scripts stand for the machines
where it is missing, refused namespaces or hangs)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.sandbox import (
    Sandbox,
    SandboxStatus,
    SandboxUnavailable,
    clear_cache,
    parse_enabled,
    probe,
)
from pseudoclaude.sandbox.probe import APPARMOR_SYSCTL, explain_failure

UBUNTU_2404 = "bwrap: setting up uid map: Permission denied"
DEBIAN_OLD = ("bwrap: No permissions to creating new namespace, likely because the kernel does "
              "not allow non-privileged user namespaces. On e.g. debian this can be enabled "
              "with 'sysctl kernel.unprivileged_userns_clone=1'.")
DOCKER = "bwrap: Creating new namespace failed: Operation not permitted"


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    clear_cache()


def fake_bwrap(folder: Path, script: str) -> str:
    """A ``PATH`` whose only ``bwrap`` is ``script`` (a shell script's body)."""
    folder.mkdir(parents=True, exist_ok=True)
    bwrap = folder / "bwrap"
    bwrap.write_text(f"#!/bin/sh\n{script}\n")
    bwrap.chmod(0o755)
    return str(folder)


def sysctls(tmp_path: Path, **values: str) -> Path:
    """A fake ``/proc/sys`` (``kernel__x="1"`` is ``kernel/x``)."""
    root = tmp_path / "sys"
    for name, value in values.items():
        path = root / name.replace("__", "/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{value}\n")
    root.mkdir(parents=True, exist_ok=True)
    return root


def test_the_probe_answers_here() -> None:
    """Whatever the machine: a status, with a reason exactly when it cannot sandbox."""
    status = probe()
    assert isinstance(status, SandboxStatus)
    assert (status.reason is None) == status.enabled
    assert probe() is status  # cached: once per process
    if sys.platform.startswith("linux") and status.enabled:
        assert status.bwrap is not None and os.path.basename(status.bwrap) == "bwrap"
    assert status.to_json() == ({"enabled": True} if status.enabled
                                else {"enabled": False, "reason": status.reason})


def test_bwrap_not_installed(tmp_path: Path) -> None:
    status = probe(path=str(tmp_path))  # a PATH without bwrap
    assert not status.enabled
    assert status.reason is not None
    assert "not installed" in status.reason and "apt-get install bubblewrap" in status.reason
    assert status.to_json() == {"enabled": False, "reason": status.reason}


@pytest.mark.parametrize("platform,name", [("darwin", "macOS"), ("win32", "Windows"),
                                           ("freebsd14", "freebsd14")])
def test_another_os_is_not_sandboxed(platform: str, name: str) -> None:
    status = probe(platform=platform)
    assert not status.enabled
    assert status.reason is not None and name in status.reason and "Linux" in status.reason


def test_a_working_bwrap_is_run_once(tmp_path: Path) -> None:
    count = tmp_path / "count"
    path = fake_bwrap(tmp_path / "bin", f'echo x >> {count}; [ "$1" = --die-with-parent ]')
    first = probe(path=path)
    assert first == SandboxStatus(True, bwrap=str(tmp_path / "bin" / "bwrap"))
    assert probe(path=path) is first
    assert count.read_text() == "x\n"


def test_namespaces_refused_by_apparmor(tmp_path: Path) -> None:
    path = fake_bwrap(tmp_path / "bin", f"echo '{UBUNTU_2404}' >&2; exit 1")
    status = probe(path=path, sysctls=sysctls(
        tmp_path, kernel__apparmor_restrict_unprivileged_userns="1"))
    assert not status.enabled and status.reason is not None
    assert "namespaces" in status.reason and "setting up uid map" in status.reason
    assert "AppArmor" in status.reason
    assert f"sudo sysctl -w {APPARMOR_SYSCTL}=0" in status.reason


def test_namespaces_refused_by_other_sysctls(tmp_path: Path) -> None:
    old = explain_failure(DEBIAN_OLD, sysctls(tmp_path, kernel__unprivileged_userns_clone="0"))
    assert "kernel.unprivileged_userns_clone=1" in old
    off = explain_failure(DOCKER, sysctls(tmp_path / "b", user__max_user_namespaces="0"))
    assert "user.max_user_namespaces" in off
    unknown = explain_failure(DOCKER, sysctls(tmp_path / "c"))
    assert "Operation not permitted" in unknown
    assert APPARMOR_SYSCTL in unknown and "container" in unknown


def test_other_failures_say_what_bwrap_said(tmp_path: Path) -> None:
    path = fake_bwrap(tmp_path / "bin", "echo 'bwrap: Unknown option --cap-drop' >&2; exit 1")
    status = probe(path=path)
    assert not status.enabled and status.reason is not None
    assert "Unknown option --cap-drop" in status.reason


def test_a_hanging_bwrap_times_out(tmp_path: Path) -> None:
    path = fake_bwrap(tmp_path / "bin", "exec sleep 30")
    status = probe(path=path, timeout=0.2)
    assert not status.enabled and status.reason is not None
    assert "did not finish" in status.reason


def test_no_private_proc_falls_back_to_the_hosts(tmp_path: Path) -> None:
    path = fake_bwrap(tmp_path / "bin", """
for arg; do [ "$arg" = --proc ] && { echo "bwrap: Can't mount proc on /newroot/proc: \
Operation not permitted" >&2; exit 1; }; done; exit 0""")
    status = probe(path=path)
    assert status.enabled and not status.mount_proc


# --- the settings and the status they give -----------------------------------------------------


def test_parse_enabled() -> None:
    assert [parse_enabled(v) for v in ("auto", "AUTO", True, False, "true", "false")] == \
        ["auto", "auto", True, False, True, False]
    for bad in ("yes", 1, None, ""):
        with pytest.raises(ValueError, match="auto, true or false"):
            parse_enabled(bad)


def test_turned_off_never_probes(tmp_path: Path) -> None:
    path = fake_bwrap(tmp_path / "bin", f"touch {tmp_path}/ran")
    sandbox = Sandbox(False, path=path)
    assert sandbox.status.to_json() == {
        "enabled": False, "reason": "turned off (sandbox.enabled: false): commands run "
                                    "unsandboxed"}
    assert sandbox.command(["ls", "-l"], tmp_path) == ["ls", "-l"]
    assert not sandbox.active and not sandbox.refuses
    assert not (tmp_path / "ran").exists()


def test_auto_without_bwrap_runs_unsandboxed(tmp_path: Path) -> None:
    sandbox = Sandbox("auto", path=str(tmp_path))
    assert not sandbox.active and not sandbox.refuses
    reason = sandbox.status.reason or ""
    assert "not installed" in reason and "commands run unsandboxed" in reason
    assert sandbox.command(["make", "test"], tmp_path) == ["make", "test"]
    assert sandbox.command("echo hi | wc", tmp_path) == ["/bin/sh", "-c", "echo hi | wc"]
    assert sandbox.describe().startswith("not sandboxed: bubblewrap (bwrap) is not installed")


def test_enabled_true_without_a_sandbox_refuses_commands(tmp_path: Path) -> None:
    sandbox = Sandbox(True, path=str(tmp_path))
    assert not sandbox.active and sandbox.refuses
    assert "commands are refused" in (sandbox.status.reason or "")
    with pytest.raises(SandboxUnavailable) as caught:
        sandbox.command(["make"], tmp_path)
    message = str(caught.value)
    assert isinstance(caught.value, PseudoClaudeError)  # front ends show it as it is
    assert "sandbox.enabled is true" in message
    assert "apt-get install bubblewrap" in message
    assert "set sandbox.enabled to auto" in message
    assert "\n" not in message


def test_enabled_true_with_refused_namespaces_names_the_sysctl(tmp_path: Path) -> None:
    path = fake_bwrap(tmp_path / "bin", f"echo '{UBUNTU_2404}' >&2; exit 1")
    with pytest.raises(SandboxUnavailable, match=APPARMOR_SYSCTL):
        Sandbox(True, path=path).command(["make"], tmp_path)


def test_a_status_given_is_used() -> None:
    sandbox = Sandbox("auto", status=SandboxStatus(True, bwrap="/opt/bwrap"))
    assert sandbox.active
    assert sandbox.describe() == "sandboxed with /opt/bwrap (no network)"
    assert Sandbox(True, network=True, status=SandboxStatus(True, bwrap="/b", mount_proc=False)
                   ).describe() == "sandboxed with /b (shared network, host /proc)"
