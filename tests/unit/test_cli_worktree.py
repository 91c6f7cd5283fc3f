"""`pseudoclaude run --worktree` and `pseudoclaude worktree status|apply|remove` as a user runs
them: real processes, a real git repository, the fake model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pseudoclaude.checkpoints import git_available
from pseudoclaude.fake_model import FakeModelServer
from support import server_env

pytestmark = pytest.mark.skipif(not git_available(), reason="needs the git command")
MEMORY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}


def cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pseudoclaude", *args, "--workspace",
                           str(tmp_path / "ws")], capture_output=True, text=True, timeout=60,
                          env=server_env(tmp_path / "home") | {"ANTHROPIC_API_KEY": "sk-test-cli"})


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c",
                           "user.email=t@example.com", *args], check=True, capture_output=True,
                          text=True).stdout


def test_a_worktree_session_from_the_terminal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "base")
    write = {"tool_calls": [{"name": "write_file", "arguments": {
        "path": "b.txt", "content": "bravo\n"}}]}
    with FakeModelServer({"turns": [write, {"text": "wrote"}], "rules": [MEMORY]}) as fake:
        done = cli(tmp_path, "run", "--worktree", "--base-url", fake.base_url, "write b")
    assert done.returncode == 0, done.stderr
    assert "works in" in done.stderr and "(branch pseudoclaude/" in done.stderr
    assert not (ws / "b.txt").exists()

    shown = cli(tmp_path, "worktree", "status")
    assert shown.returncode == 0, shown.stderr
    assert "create  b.txt" in shown.stdout
    status = json.loads(cli(tmp_path, "worktree", "status", "--json").stdout)
    assert status["files"] == [{"path": "b.txt", "action": "create"}]
    assert (Path(status["path"]) / "b.txt").read_text() == "bravo\n"

    refused = cli(tmp_path, "worktree", "remove")
    assert refused.returncode == 1 and "not applied" in refused.stderr

    applied = cli(tmp_path, "worktree", "apply")
    assert applied.returncode == 0, applied.stderr
    assert "applied   b.txt" in applied.stdout
    assert (ws / "b.txt").read_text() == "bravo\n"
    removed = cli(tmp_path, "worktree", "remove")
    assert removed.returncode == 0, removed.stderr
    assert not Path(status["path"]).exists()


def test_worktree_needs_a_git_repository_and_a_new_session(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    both = cli(tmp_path, "run", "--worktree", "--session", "latest", "hi")
    assert both.returncode == 2 and "--worktree" in both.stderr
    with FakeModelServer({"turns": [{"text": "never"}], "rules": [MEMORY]}) as fake:
        plain = cli(tmp_path, "run", "--worktree", "--base-url", fake.base_url, "hi")
        assert fake.requests == []
    assert plain.returncode == 1 and "git repository" in plain.stderr
    assert plain.stderr.count("\n") == 1  # one line
