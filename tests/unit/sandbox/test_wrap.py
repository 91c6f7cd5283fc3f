"""The ``bwrap`` command line, as text (no ``bwrap`` needed): its options, the order of its
mounts, what is skipped."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pseudoclaude.sandbox import (
    Sandbox,
    SandboxStatus,
    find_program,
    git_dirs,
    plan_mounts,
    wrap,
)
from pseudoclaude.sandbox.bwrap import empty_file
from unit.sandbox.helpers import Tree

WORKING = SandboxStatus(True, bwrap="/usr/bin/bwrap")


@pytest.fixture
def folder(tree: Tree) -> Path:
    """A folder outside /tmp (paths hidden under the host's /tmp are skipped: the private /tmp
    hides them already)."""
    made = tree.base / "t"
    made.mkdir()
    return made


def pairs(argv: list[str], option: str) -> list[str]:
    """What follows each ``option`` in ``argv``: the destination of ``--bind``/``--ro-bind``
    (``SRC DEST``), the name of ``--setenv`` (``NAME VALUE``), else the one value."""
    width = 2 if option in ("--bind", "--ro-bind") else 1
    return [argv[i + width] for i, arg in enumerate(argv) if arg == option]


def test_a_typical_command_line(folder: Path) -> None:
    ws = folder / "ws"
    (ws / ".PseudoClaude" / "sessions").mkdir(parents=True)
    argv = wrap(["git", "status"], root=ws, read_only_inside=[ws / ".PseudoClaude"],
                bwrap="/usr/bin/bwrap")
    assert argv == [
        "/usr/bin/bwrap", "--die-with-parent", "--new-session", "--unshare-pid",
        "--unshare-ipc", "--unshare-net", "--cap-drop", "ALL",
        "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
        "--bind", str(ws), str(ws),
        "--ro-bind", str(ws / ".PseudoClaude"), str(ws / ".PseudoClaude"),
        "--chdir", str(ws), "--", "git", "status",
    ]


def test_network_shell_line_env_and_cwd(folder: Path) -> None:
    (folder / "sub").mkdir()
    argv = wrap("make -j4 && echo ok", root=folder, network=True, env={"TMPDIR": "/tmp"},
                cwd=folder / "sub", mount_proc=False)
    assert "--unshare-net" not in argv and "--proc" not in argv
    assert argv[-4:] == ["--", "/bin/sh", "-c", "make -j4 && echo ok"]
    assert argv[argv.index("--setenv"):argv.index("--setenv") + 3] == [
        "--setenv", "TMPDIR", "/tmp"]
    assert pairs(argv, "--chdir") == [str(folder / "sub")]


def test_hidden_paths_folders_files_missing_and_symlinks(folder: Path) -> None:
    home = folder / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / "token").write_text("t")
    real = folder / "real-aws"
    real.mkdir()
    (home / ".aws").symlink_to(real)
    ws = folder / "ws"
    ws.mkdir()
    argv = wrap(["true"], root=ws, hide=[home / ".ssh", home / "token", home / ".aws",
                                         home / ".gnupg", ws, Path("/")])
    assert pairs(argv, "--tmpfs") == ["/tmp", str(real), str(home / ".ssh")]
    assert pairs(argv, "--remount-ro") == [str(real), str(home / ".ssh")]
    assert pairs(argv, "--ro-bind") == ["/", str(home / "token")]
    binds = [argv[i + 1] for i, a in enumerate(argv) if a == "--ro-bind"]
    assert binds[1] == str(empty_file())  # an empty file, not a device node
    assert pairs(argv, "--bind") == [str(ws)]  # the workspace is never hidden
    assert not any(str(home / ".gnupg") in arg for arg in argv)  # missing: skipped
    # the remounts come after every mount
    assert argv.index("--remount-ro") > max(i for i, a in enumerate(argv)
                                            if a in ("--bind", "--ro-bind", "--tmpfs"))


def test_mounts_are_ordered_by_depth(folder: Path) -> None:
    """The data folder is read-only inside the workspace; a worktree inside it is writable
    again; a folder hidden around the workspace leaves the workspace visible; a read-only
    folder inside a hidden one stays hidden."""
    ws = folder / "secret" / "ws"
    data = ws / ".PseudoClaude"
    worktree = data / "worktrees" / "s1"
    worktree.mkdir(parents=True)
    (ws / "private" / "inner").mkdir(parents=True)
    mounts = plan_mounts(worktree, [ws], [data, ws / "private" / "inner", folder / "out"],
                         [folder / "secret", ws / "private"])
    assert mounts == [
        (folder / "secret", "hide-dir"),
        (ws, "bind"),
        (data, "ro"),
        (ws / "private", "hide-dir"),
        (worktree, "bind"),
    ]


def test_a_read_only_path_equal_to_a_root_wins(folder: Path) -> None:
    assert plan_mounts(folder, [], [folder], []) == [(folder, "ro")]


def test_hidden_paths_under_the_hosts_tmp_are_left_to_the_private_tmp(tmp_path: Path) -> None:
    if not str(tmp_path.resolve()).startswith("/tmp/"):
        pytest.skip("pytest's temporary folder is not under /tmp here")
    (tmp_path / "agent.sock").write_text("")
    assert plan_mounts(Path("/usr"), [], [], [tmp_path / "agent.sock"]) == [
        (Path("/usr"), "bind")]


def test_the_root_must_be_a_folder(folder: Path) -> None:
    with pytest.raises(FileNotFoundError):
        wrap(["true"], root=folder / "missing")
    with pytest.raises(ValueError):
        wrap([], root=folder)


def test_the_sandbox_hides_home_secrets_settings_and_sockets(folder: Path) -> None:
    home = folder / "home"
    for name in (".ssh", ".aws", ".gnupg", ".config/gcloud", ".PseudoClaude", "notes"):
        (home / name).mkdir(parents=True)
    ws = folder / "ws"
    (ws / ".PseudoClaude").mkdir(parents=True)
    (ws / ".env").write_text("x")
    runtime = folder / "run-user"
    runtime.mkdir()
    sandbox = Sandbox("auto", home=home, hide=[".env", "~/notes"], status=WORKING)
    env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(home),
           "XDG_RUNTIME_DIR": str(runtime), "TMPDIR": str(folder / "t")}
    argv = sandbox.command(["true"], ws, env=env)
    assert argv[0] == "/usr/bin/bwrap"
    hidden = set(pairs(argv, "--tmpfs"))
    for name in (".ssh", ".aws", ".gnupg", ".config/gcloud", ".PseudoClaude", "notes"):
        assert str(home / name) in hidden
    assert str(runtime) in hidden
    assert str(ws / ".env") in pairs(argv, "--ro-bind")
    assert str(ws / ".PseudoClaude") in pairs(argv, "--ro-bind")
    assert pairs(argv, "--setenv") == ["TMPDIR"]
    assert "--unshare-net" in argv


def test_the_sandbox_checks_the_program_first(folder: Path) -> None:
    sandbox = Sandbox(True, status=WORKING)
    with pytest.raises(FileNotFoundError):
        sandbox.command(["surely-not-a-program-pc"], folder, env={"PATH": str(folder)})


def test_find_program(folder: Path) -> None:
    bin_dir, other = folder / "bin", folder / "other"
    bin_dir.mkdir()
    other.mkdir()
    (other / "tool").write_text("")  # not executable, earlier on PATH
    (bin_dir / "tool").write_text("#!/bin/sh\n")
    (bin_dir / "tool").chmod(0o755)
    path = f"{other}:{bin_dir}"
    assert find_program("tool", folder, path) == str(bin_dir / "tool")
    with pytest.raises(PermissionError):
        find_program("tool", folder, str(other))
    with pytest.raises(FileNotFoundError):
        find_program("nothing", folder, path)
    assert find_program("bin/tool", folder, "") == str(folder / "bin" / "tool")
    with pytest.raises(PermissionError):
        find_program("./bin", folder, "")  # a folder
    assert find_program("tool", bin_dir, ":") == str(bin_dir / "tool")  # empty entry: cwd


def test_git_dirs_of_a_worktree(folder: Path) -> None:
    repo_git = folder / "repo" / ".git"
    (repo_git / "worktrees" / "s1").mkdir(parents=True)
    (repo_git / "worktrees" / "s1" / "commondir").write_text("../..\n")
    worktree = folder / "wt"
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {repo_git / 'worktrees' / 's1'}\n")
    assert git_dirs(worktree) == [repo_git / "worktrees" / "s1", repo_git]
    assert git_dirs(folder / "repo") == []  # a plain repository: .git is a folder
    assert git_dirs(folder) == []
