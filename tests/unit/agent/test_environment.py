"""The environment block: its lines, git's answers (a repository, a detached HEAD, no
repository)."""

from __future__ import annotations

import asyncio
import datetime
import subprocess
from pathlib import Path

from pseudoclaude.agent.environment import UNAVAILABLE, environment, git_facts


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c",
                           "user.email=t@example.com", *args], check=True,
                          capture_output=True, text=True).stdout


def test_the_block_names_every_value_and_marks_the_unknown(tmp_path: Path) -> None:
    facts = asyncio.run(environment(tmp_path, version="1.2.3", provider="anthropic",
                                    model="claude-x", mode="plan"))
    text = facts.render()
    lines = text.splitlines()
    assert lines[0] == "Runtime environment:"
    assert [line.split(":", 1)[0] for line in lines[1:]] == [
        "- working directory", "- platform", "- date", "- git status", "- branch",
        "- version", "- provider", "- model", "- mode"]
    assert f"- working directory: {tmp_path}" in lines
    assert "- git status: unavailable" in lines and "- branch: unavailable" in lines
    assert "- mode: plan" in lines and "- model: claude-x" in lines
    today = datetime.datetime.now().astimezone().date()
    dates = {(today + datetime.timedelta(days=d)).isoformat() for d in (-1, 0, 1)}
    assert any(f"- date: {d}" in lines for d in dates)


def test_git_status_counts_changed_files_and_names_the_branch(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "trunk")
    (tmp_path / "a.txt").write_text("a\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "one")
    assert asyncio.run(git_facts(tmp_path, timeout=10)) == ("clean", "trunk")
    (tmp_path / "a.txt").write_text("changed\n")
    assert asyncio.run(git_facts(tmp_path, timeout=10)) == ("1 changed file", "trunk")
    (tmp_path / "b.txt").write_text("new\n")
    assert asyncio.run(git_facts(tmp_path, timeout=10)) == ("2 changed files", "trunk")
    head = git(tmp_path, "rev-parse", "--short", "HEAD").strip()
    git(tmp_path, "checkout", "-q", "--detach")
    assert asyncio.run(git_facts(tmp_path, timeout=10))[1] == f"detached at {head}"


def test_a_slow_git_is_unavailable_not_waited_for(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    assert asyncio.run(git_facts(tmp_path, timeout=0.0)) == (UNAVAILABLE, UNAVAILABLE)
