"""What a sandboxed command can and cannot do, with the real ``bwrap`` (skipped, with the probe's
reason, only where ``bwrap`` cannot sandbox at all)."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from pseudoclaude.sandbox import Sandbox
from unit.sandbox.helpers import Runner, Tree, run

PY = str(Path(getattr(sys, "_base_executable", sys.executable)).resolve())
"""A Python the sandbox can see: the one the test venv is made from (a venv may live under the
host's /tmp, which the sandbox's private /tmp hides)."""


# --- the file system -------------------------------------------------------------------------


def test_writes_inside_the_workspace_work(tree: Tree, sh: Runner) -> None:
    done = sh("echo new > src/new.py && echo more >> src/main.py && mkdir -p build/out "
              "&& rm src/new.py && echo ok")
    assert done.returncode == 0, done.stdout
    assert done.stdout.strip() == "ok"
    assert (tree.workspace / "src" / "main.py").read_text() == "print('hi')\nmore\n"
    assert (tree.workspace / "build" / "out").is_dir()


def test_writes_outside_the_workspace_fail(tree: Tree, sh: Runner) -> None:
    for target in ("/etc/pc-sandbox-test", f"{tree.home}/x", f"{tree.base}/beside-ws",
                   "/var/tmp/pc-sandbox-test", f"{Path.home()}/pc-sandbox-test"):
        done = sh(f"touch {target}")
        assert done.returncode != 0, target
        assert "Read-only file system" in done.stdout, done.stdout
        assert not Path(target).exists()


def test_no_capabilities_even_as_root(sh: Runner) -> None:
    """Without ``--cap-drop ALL`` a root server's command could remount ``/`` read-write."""
    done = sh("grep CapEff /proc/self/status; mount -o remount,rw / && echo REMOUNTED; "
              "touch /etc/pc-sandbox-test 2>/dev/null && echo WROTE; true")
    assert "CapEff:\t0000000000000000" in done.stdout
    assert "REMOUNTED" not in done.stdout and "WROTE" not in done.stdout
    assert not Path("/etc/pc-sandbox-test").exists()


def test_tmp_is_private(sh: Runner) -> None:
    name = f"pc-sandbox-{secrets.token_hex(6)}"
    host_file = Path("/tmp") / f"{name}-host"
    host_file.write_text("host")
    try:
        done = sh(f"echo inside > /tmp/{name} && cat /tmp/{name} && "
                  f"ls /tmp/{name}-host 2>&1; true")
        assert done.stdout.splitlines()[0] == "inside"
        assert "No such file" in done.stdout  # the host's /tmp is not seen
        assert not (Path("/tmp") / name).exists()  # and what it wrote there is gone
    finally:
        host_file.unlink()


def test_home_secrets_are_hidden(tree: Tree, sh: Runner) -> None:
    done = sh(f"cat {tree.home}/.bashrc; ls -A {tree.home}/.ssh {tree.home}/.aws; "
              f"cat {tree.home}/.ssh/id_rsa; touch {tree.home}/.ssh/new; true")
    assert "# visible" in done.stdout  # the rest of the home folder is readable
    assert "PRIVATE KEY" not in done.stdout
    assert "secret" not in done.stdout
    assert "No such file" in done.stdout  # id_rsa is not there
    assert "Read-only file system" in done.stdout  # and the empty .ssh cannot be written
    assert (tree.home / ".ssh" / "id_rsa").read_text() == "PRIVATE KEY\n"
    assert not (tree.home / ".ssh" / "new").exists()


def test_hide_setting_hides_files_and_folders(tree: Tree, sh: Runner) -> None:
    (tree.workspace / ".env").write_text("TOKEN=abc\n")
    (tree.workspace / "secrets").mkdir()
    (tree.workspace / "secrets" / "db.txt").write_text("password\n")
    elsewhere = tree.base / "vault"
    elsewhere.mkdir()
    (elsewhere / "key").write_text("vault key\n")
    link = tree.workspace / "vault-link"
    link.symlink_to(elsewhere)  # hidden through its real path
    sandbox = Sandbox(True, home=tree.home, hide=[".env", "secrets", str(link), "missing"])
    done = sh("cat .env; echo \"[$?]\"; ls -A secrets; cat vault-link/key; cat "
              f"{elsewhere}/key; echo NEW > .env; echo end", sandbox=sandbox)
    assert done.stdout.startswith("[0]\n")  # an empty file: read without an error
    assert "Read-only file system" in done.stdout  # and not written
    assert "TOKEN" not in done.stdout and "password" not in done.stdout
    assert "db.txt" not in done.stdout and "vault key" not in done.stdout
    assert done.stdout.rstrip().endswith("end")
    assert (tree.workspace / ".env").read_text() == "TOKEN=abc\n"


def test_the_data_folder_is_read_only(tree: Tree, sh: Runner) -> None:
    log = tree.data / "sessions" / "s1.jsonl"
    done = sh("echo forged >> .PseudoClaude/sessions/s1.jsonl; "
              "rm .PseudoClaude/sessions/s1.jsonl; touch .PseudoClaude/sessions/s2.jsonl; "
              "echo 'sandbox: {enabled: false}' > .PseudoClaude/config.yaml; "
              "mv .PseudoClaude moved; rm -rf .PseudoClaude; "
              "cat .PseudoClaude/sessions/s1.jsonl; echo new > src/ok.py")
    assert done.stdout.count("Read-only file system") >= 4, done.stdout
    assert '{"log": 1}' in done.stdout  # readable
    assert log.read_text() == '{"log": 1}\n'
    assert not (tree.data / "sessions" / "s2.jsonl").exists()
    assert (tree.data / "config.yaml").read_text() == "sandbox:\n  enabled: true\n"
    assert not (tree.workspace / "moved").exists()
    assert (tree.workspace / "src" / "ok.py").exists()  # the rest of the workspace is writable


def test_a_data_folder_set_elsewhere_in_the_workspace_is_read_only(tree: Tree,
                                                                    sh: Runner) -> None:
    data = tree.workspace / "state"
    (data / "sessions").mkdir(parents=True)
    sandbox = Sandbox(True, home=tree.home, protect=[data])
    done = sh("touch state/sessions/x; touch state/y; touch z && echo ok", sandbox=sandbox)
    assert done.stdout.count("Read-only file system") == 2
    assert done.stdout.rstrip().endswith("ok")


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_worktree_session_writes_its_worktree_and_git_only(tree: Tree, sh: Runner) -> None:
    def git(*args: str, cwd: Path = tree.workspace) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd,
                       check=True, capture_output=True)

    (tree.workspace / ".gitignore").write_text(".PseudoClaude/\n")
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "first")
    worktree = tree.data / "worktrees" / "s1"
    git("worktree", "add", "-q", "-b", "pseudoclaude/s1", str(worktree))
    sandbox = Sandbox(True, home=tree.home, protect=[tree.data])
    done = sh("echo change >> src/main.py && git add -A && "
              "git -c user.name=t -c user.email=t@t commit -qm change && echo COMMITTED; "
              f"touch {tree.data}/sessions/x; touch {tree.workspace}/src/x; "
              f"touch {tree.data}/worktrees/s2; true", sandbox=sandbox, cwd=worktree)
    assert "COMMITTED" in done.stdout, done.stdout
    assert done.stdout.count("Read-only file system") == 3, done.stdout
    log = subprocess.run(["git", "log", "--format=%s", "pseudoclaude/s1"], cwd=tree.workspace,
                         capture_output=True, text=True, check=True)
    assert log.stdout.split() == ["change", "first"]


def test_a_program_relative_to_the_workspace_runs(tree: Tree, sandbox: Sandbox) -> None:
    script = tree.workspace / "run.sh"
    script.write_text("#!/bin/sh\necho from script; pwd\n")
    script.chmod(0o755)
    done = run(sandbox.command(["./run.sh"], tree.workspace), tree.workspace)
    assert done.stdout.split() == ["from", "script", str(tree.workspace)]


def test_a_missing_or_not_executable_program_fails_before_bwrap(tree: Tree,
                                                              sandbox: Sandbox) -> None:
    with pytest.raises(FileNotFoundError):
        sandbox.command(["no-such-program-pc"], tree.workspace)
    (tree.workspace / "plain.txt").write_text("x")
    with pytest.raises(PermissionError):
        sandbox.command(["./plain.txt"], tree.workspace)


def test_a_temporary_folder_variable_points_at_the_private_tmp(tree: Tree,
                                                              sh: Runner) -> None:
    env = dict(os.environ, TMPDIR=str(tree.base), TMP=str(tree.workspace / "tmp"))
    done = sh('echo "$TMPDIR $TMP"', env=env)
    assert done.stdout.split() == ["/tmp", str(tree.workspace / "tmp")]


# --- sockets and the network -------------------------------------------------------------------


@pytest.fixture
def tcp_server() -> Iterator[tuple[int, list[bytes]]]:
    """A loopback TCP server on the host that records what it receives."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.05)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(5)
                got.append(conn.recv(100))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], got
    finally:
        stop.set()
        thread.join(5)
        server.close()


def _connect(port: int) -> str:
    return (f"{PY} -c \"import socket; s = socket.create_connection(('127.0.0.1', {port}), "
            f"timeout=5); s.sendall(b'hello'); s.close(); print('CONNECTED')\" 2>&1 | tail -1")


def test_no_network_not_even_the_hosts_loopback(tcp_server: tuple[int, list[bytes]],
                                                 sh: Runner) -> None:
    port, got = tcp_server
    done = sh(_connect(port))
    assert "CONNECTED" not in done.stdout
    assert "ConnectionRefusedError" in done.stdout  # its own loopback only: nobody listens
    assert got == []


def test_the_network_setting_shares_the_network(tree: Tree, tcp_server: tuple[int, list[bytes]],
                                                sh: Runner) -> None:
    port, got = tcp_server
    sandbox = Sandbox(True, home=tree.home, network=True)
    done = sh(_connect(port) + "; cat /etc/resolv.conf", sandbox=sandbox)
    assert "CONNECTED" in done.stdout, done.stdout
    deadline = time.monotonic() + 5
    while not got and time.monotonic() < deadline:
        time.sleep(0.01)
    assert got == [b"hello"]
    resolv = Path("/etc/resolv.conf")
    if resolv.exists():  # DNS: the resolver's configuration stays readable
        assert resolv.read_text() in done.stdout


def test_service_sockets_are_hidden(tree: Tree, sh: Runner) -> None:
    """A socket file accepts connections even on a read-only file system and from another
    network namespace: the runtime folder (session bus, agents) must be hidden."""
    runtime = tree.base / "run-user"
    visible = tree.base / "visible"
    runtime.mkdir(mode=0o700)
    visible.mkdir()
    servers = []
    for folder in (runtime, visible):
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(folder / "bus"))
        server.listen()
        servers.append(server)
    try:
        env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime),
                   SSH_AUTH_SOCK=str(visible / "bus"))
        probe = ("import socket, sys; s = socket.socket(socket.AF_UNIX); "
                 "s.connect(sys.argv[1]); print('CONNECTED')")
        hidden = sh(f"{PY} -c \"{probe}\" {runtime}/bus 2>&1 | tail -1", env=env)
        agent = sh(f"{PY} -c \"{probe}\" {visible}/bus 2>&1 | tail -1", env=env)
        env.pop("SSH_AUTH_SOCK")
        control = sh(f"{PY} -c \"{probe}\" {visible}/bus 2>&1 | tail -1", env=env)
    finally:
        for server in servers:
            server.close()
    assert "FileNotFoundError" in hidden.stdout
    assert "CONNECTED" not in agent.stdout  # $SSH_AUTH_SOCK is hidden too
    assert control.stdout.strip() == "CONNECTED"  # what hiding is for


# --- processes -------------------------------------------------------------------------------


def _running(marker: str) -> bool:
    """Whether a process of the host has ``marker`` in its command line."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    return True
            except OSError:
                continue
    return False


def _sleepers(marker: str) -> int:
    """How many ``sleep <marker>`` processes the host has."""
    wanted = b"sleep\0" + marker.encode() + b"\0"
    count = 0
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                count += (entry / "cmdline").read_bytes() == wanted
    return count


def _gone(marker: str, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while _running(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_a_background_child_ends_with_the_command(sh: Runner) -> None:
    marker = f"777.{secrets.randbelow(10**6):06d}"
    started = time.monotonic()
    done = sh(f"sleep {marker} & sleep {marker} >/dev/null 2>&1 & echo started")
    assert done.stdout.strip() == "started"
    assert time.monotonic() - started < 10  # the output pipe closed with the command
    assert _gone(marker)


def test_killing_the_command_kills_every_process(tree: Tree, sandbox: Sandbox) -> None:
    marker = f"778.{secrets.randbelow(10**6):06d}"
    argv = sandbox.command(f"(sleep {marker} &) ; setsid sleep {marker} & sleep {marker}",
                           tree.workspace)
    proc = subprocess.Popen(argv, cwd=tree.workspace, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while _sleepers(marker) < 3 and time.monotonic() < deadline:  # all three started
            time.sleep(0.02)
        assert _sleepers(marker) == 3
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # what run_command does on timeout or cancel
        proc.wait()
    assert _gone(marker)


def test_the_command_sees_only_its_own_processes(sh: Runner) -> None:
    done = sh("ls /proc | grep -c '^[0-9]'")
    assert int(done.stdout) < 10  # bwrap's init, sh, ls, grep: not the host's
