"""Worktree sessions through the real server (pytest-lsp): a session made with
``sessions/new {worktree: true}`` works in a git worktree of its own; its changes reach the
folder only through ``worktree/apply`` (all or nothing), and ``worktree/remove`` refuses to
lose changes not applied. The user's branch, index and ``HEAD`` are never touched."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    REWIND,
    RUN,
    SESSIONS_LIST,
    SESSIONS_NEW,
    SESSIONS_RESUME,
    SLASH_COMMANDS,
    WORKTREE_APPLY,
    WORKTREE_REMOVE,
    WORKTREE_STATUS,
)

REQUEST_FAILED = -32803


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                          text=True).stdout


def repository(root: Path) -> str:
    """Make ``root`` a git repository with one commit; its HEAD."""
    git(root, "init", "-q", "-b", "main")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "add", "-A")
    git(root, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "base")
    return git(root, "rev-parse", "HEAD").strip()


def user_state(root: Path) -> tuple[str, str, str, str]:
    """What the user's repository is: branch, HEAD, index and stash."""
    return (git(root, "branch", "--show-current"), git(root, "rev-parse", "HEAD"),
            git(root, "ls-files", "--stage"), git(root, "stash", "list"))


async def test_a_worktree_session_works_apart_until_applied(client: LanguageClient,
                                                            env: Any) -> None:
    root = env.folders[0]
    base = repository(root)
    (root / ".gitignore").write_text(".PseudoClaude/\n")
    before = user_state(root)
    made = await env.call(client, SESSIONS_NEW, {"worktree": True})
    sid = made["sessionId"]
    worktree = made["worktree"]
    assert worktree["branch"] == f"pseudoclaude/{sid}" and worktree["base"] == base
    path = Path(worktree["path"])
    assert path == (root / ".PseudoClaude" / "worktrees" / sid).resolve()
    assert (path / "README.md").is_file()

    env.fake.add_turns(
        {"tool_calls": [{"name": "write_file",
                         "arguments": {"path": "feature.txt", "content": "new work\n"}}]},
        {"text": "wrote it"})
    result = await env.call(client, RUN, {"prompt": "add a feature", "sessionId": sid})
    assert result["stopReason"] == "completed"
    assert (path / "feature.txt").read_text() == "new work\n"
    assert not (root / "feature.txt").exists()  # the folder is untouched so far

    status = await env.call(client, WORKTREE_STATUS, {"sessionId": sid})
    assert status["files"] == [{"path": "feature.txt", "action": "create"}]
    assert (status["path"], status["branch"], status["base"]) == (
        str(path), f"pseudoclaude/{sid}", base)
    listed = (await env.call(client, SESSIONS_LIST))["sessions"]
    assert [(s["id"], s["worktree"]) for s in listed] == [(sid, f"pseudoclaude/{sid}")]

    with pytest.raises(JsonRpcException) as refused:
        await env.call(client, WORKTREE_REMOVE, {"sessionId": sid})
    assert refused.value.code == REQUEST_FAILED and "feature.txt" in refused.value.message
    assert path.is_dir()

    applied = await env.call(client, WORKTREE_APPLY, {"sessionId": sid})
    assert (applied["applied"], applied["conflicts"]) == (["feature.txt"], [])
    assert (root / "feature.txt").read_text() == "new work\n"
    removed = await env.call(client, WORKTREE_REMOVE, {"sessionId": sid})
    assert removed["sessionId"] == sid and "folder itself" in removed["message"]
    assert not path.exists()
    assert git(root, "branch", "--list", f"pseudoclaude/{sid}") == ""
    assert user_state(root) == before  # branch, HEAD, index and stash as they were

    # the session goes on in the folder itself
    env.fake.add_turns(
        {"tool_calls": [{"name": "write_file",
                         "arguments": {"path": "later.txt", "content": "here\n"}}]},
        {"text": "done"})
    await env.call(client, RUN, {"prompt": "one more", "sessionId": sid})
    assert (root / "later.txt").read_text() == "here\n"
    listed = (await env.call(client, SESSIONS_LIST))["sessions"]
    assert [(s["id"], s["worktree"]) for s in listed] == [(sid, None)]


async def test_a_file_changed_in_the_folder_too_is_a_conflict(client: LanguageClient,
                                                              env: Any) -> None:
    root = env.folders[0]
    repository(root)
    sid = (await env.call(client, SESSIONS_NEW, {"worktree": True}))["sessionId"]
    env.fake.add_turns(
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
        {"tool_calls": [{"name": "write_file",
                         "arguments": {"path": "notes.txt", "content": "agent\n"}},
                        {"name": "write_file",
                         "arguments": {"path": "other.txt", "content": "more\n"}}]},
        {"text": "edited"})
    await env.call(client, RUN, {"prompt": "edit notes", "sessionId": sid})
    (root / "notes.txt").write_text("the user's own edit\n")
    applied = await env.call(client, WORKTREE_APPLY, {"sessionId": sid})
    assert (applied["applied"], applied["conflicts"]) == ([], ["notes.txt"])
    assert "nothing applied" in applied["message"]
    assert (root / "notes.txt").read_text() == "the user's own edit\n"
    assert not (root / "other.txt").exists()  # all or nothing
    removed = await env.call(client, WORKTREE_REMOVE, {"sessionId": sid, "force": True})
    assert removed["sessionId"] == sid


async def test_outside_a_git_repository_a_worktree_session_is_refused(
        client: LanguageClient, env: Any) -> None:
    with pytest.raises(JsonRpcException) as refused:
        await env.call(client, SESSIONS_NEW, {"worktree": True})
    assert refused.value.code == REQUEST_FAILED
    assert "git repository" in refused.value.message
    assert (await env.call(client, SESSIONS_LIST))["sessions"] == []
    with pytest.raises(JsonRpcException) as plain:  # a session of the folder itself
        sid = (await env.call(client, SESSIONS_NEW, {}))["sessionId"]
        await env.call(client, WORKTREE_STATUS, {"sessionId": sid})
    assert plain.value.code == REQUEST_FAILED and "has no worktree" in plain.value.message


async def test_the_chats_offer_worktree(client: LanguageClient, env: Any) -> None:
    names = [c["name"] for c in (await env.call(client, SLASH_COMMANDS))["commands"]]
    assert "worktree" in names


async def test_a_worktree_session_resumes_and_rewinds_in_its_worktree(
        client: LanguageClient, env: Any) -> None:
    root = env.folders[0]
    repository(root)
    made = await env.call(client, SESSIONS_NEW, {"worktree": True})
    sid, path = made["sessionId"], Path(made["worktree"]["path"])
    env.fake.add_turns(
        {"tool_calls": [{"name": "write_file",
                         "arguments": {"path": "one.txt", "content": "first\n"}}]},
        {"text": "one"})
    await env.call(client, RUN, {"prompt": "write one", "sessionId": sid})
    other = await env.second_server()  # another editor, as after a restart
    try:
        env.fake.add_turns(
            {"tool_calls": [{"name": "write_file",
                             "arguments": {"path": "two.txt", "content": "second\n"}}]},
            {"text": "two"})
        await env.call(other, SESSIONS_RESUME, {"sessionId": sid})
        await env.call(other, RUN, {"prompt": "write two", "sessionId": sid})
        assert (path / "two.txt").read_text() == "second\n"
        assert not (root / "two.txt").exists()
        done = await env.call(other, REWIND, {"turn": 2, "mode": "code", "sessionId": sid})
        assert done["restoredFiles"] == ["two.txt"]
        assert not (path / "two.txt").exists() and (path / "one.txt").is_file()
        assert not (root / "one.txt").exists()  # the folder never saw any of it
    finally:
        await other.shutdown_session()
