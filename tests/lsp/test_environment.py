"""The environment block through the real server: sent with every request after the cached
system prompt, rebuilt for each (the git status after a write, the mode after a switch), never
logged; a worktree session reports its worktree and branch."""

from __future__ import annotations

import datetime
import json
import subprocess
from pathlib import Path
from typing import Any

from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import MODE, RUN, SESSIONS_NEW

HEADING = "Runtime environment:"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c",
                           "user.email=t@example.com", *args], check=True,
                          capture_output=True, text=True).stdout


def repository(root: Path) -> None:
    (root / ".gitignore").write_text(".PseudoClaude/\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "base")


def environment_of(request: dict[str, Any]) -> dict[str, str]:
    """The block of an Anthropic request (its second system block), as ``{name: value}``."""
    system = request["body"]["system"]
    assert len(system) == 2 and "cache_control" in system[0]
    assert "cache_control" not in system[1]
    lines = system[1]["text"].splitlines()
    assert lines[0] == HEADING
    return dict(line[2:].split(": ", 1) for line in lines[1:])


def runs(env: Any) -> list[dict[str, Any]]:
    return [r for r in env.fake.requests if r["body"].get("tools")]  # not memory updates


async def test_each_request_carries_a_fresh_block_that_is_never_logged(
        client: LanguageClient, env: Any) -> None:
    root = env.folders[0]
    repository(root)
    env.fake.add_turns(
        {"tool_calls": [{"name": "write_file",
                         "arguments": {"path": "new.txt", "content": "x\n"}}]},
        {"text": "wrote it"})
    before = datetime.datetime.now().astimezone().date().isoformat()
    await env.call(client, RUN, {"prompt": "write new.txt"})
    after = datetime.datetime.now().astimezone().date().isoformat()
    first, second = (environment_of(r) for r in runs(env)[:2])
    assert first["working directory"] == str(root)
    assert first["branch"] == "main" and first["mode"] == "default"
    assert first["git status"] == "clean"
    assert second["git status"] == "1 changed file"  # rebuilt after the write
    assert first["date"] in {before, after}
    assert first["provider"] == "anthropic" and first["model"]
    assert first["platform"].count("/") == 1 and first["version"]
    assert HEADING not in json.dumps(env.log_messages())
    conversation = (root / ".PseudoClaude" / "sessions").rglob("*.jsonl")
    assert not any(HEADING in path.read_text() for path in conversation)

    await env.call(client, MODE, {"mode": "plan"})
    env.fake.add_turns({"text": "planned"})
    await env.call(client, RUN, {"prompt": "plan"})
    assert environment_of(runs(env)[-1])["mode"] == "plan"


async def test_a_worktree_session_reports_its_worktree(client: LanguageClient,
                                                       env: Any) -> None:
    repository(env.folders[0])
    made = await env.call(client, SESSIONS_NEW, {"worktree": True})
    env.fake.add_turns({"text": "here"})
    await env.call(client, RUN, {"prompt": "where am I", "sessionId": made["sessionId"]})
    block = environment_of(runs(env)[-1])
    assert block["working directory"] == made["worktree"]["path"]
    assert block["branch"] == made["worktree"]["branch"]
