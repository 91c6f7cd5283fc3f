"""`pseudoclaude rewind` and `pseudoclaude sessions fork` as a user runs them: real processes
against the fake model, a real shadow repository."""

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


def cli(tmp_path: Path, *args: str, stdin: str | None = None
        ) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pseudoclaude", *args, "--workspace",
                           str(tmp_path / "ws")], capture_output=True, text=True, timeout=60,
                          env=server_env(tmp_path / "home") | {"ANTHROPIC_API_KEY": "sk-test-cli"},
                          input=stdin)


@pytest.fixture
def two_prompts(tmp_path: Path) -> Path:
    """Prompt 1 edits a.txt, prompt 2 writes b.txt."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    edit = {"tool_calls": [{"name": "edit_file", "arguments": {
        "path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"}}]}
    write = {"tool_calls": [{"name": "write_file", "arguments": {
        "path": "b.txt", "content": "bravo\n"}}]}
    script = {"turns": [edit, {"text": "edited"}, write, {"text": "wrote"}], "rules": [MEMORY]}
    with FakeModelServer(script) as fake:
        for prompt, session in (("edit a", "new"), ("write b", "latest")):
            done = cli(tmp_path, "run", "--base-url", fake.base_url, "--session", session,
                       prompt)
            assert done.returncode == 0, done.stderr
    assert (ws / "a.txt").read_text() == "ALPHA\n" and (ws / "b.txt").exists()
    return ws


def test_list_preview_and_rewind(tmp_path: Path, two_prompts: Path) -> None:
    ws = two_prompts
    listed = cli(tmp_path, "rewind")
    assert listed.returncode == 0, listed.stderr
    assert "1. edit a  (1 file changed)" in listed.stdout
    assert "2. write b  (1 file changed)" in listed.stdout
    turns = json.loads(cli(tmp_path, "rewind", "--list", "--json").stdout)["turns"]
    assert [(t["turn"], t["filesChanged"]) for t in turns] == [(1, 1), (2, 1)]
    preview = cli(tmp_path, "rewind", "--turn", "1", "--preview")
    assert preview.returncode == 0 and "restored  a.txt" in preview.stdout
    assert "deleted   b.txt" in preview.stdout and (ws / "b.txt").exists()
    done = cli(tmp_path, "rewind", "--turn", "1", "--json")  # not a terminal: no question
    result = json.loads(done.stdout)
    assert sorted(result["restoredFiles"]) == ["a.txt", "b.txt"] and result["messageCount"] == 0
    assert (ws / "a.txt").read_text() == "alpha\n" and not (ws / "b.txt").exists()
    assert "the session has no prompt" in cli(tmp_path, "rewind").stdout


def test_conflicts_need_force_and_bad_turns_are_usage_errors(tmp_path: Path,
                                                              two_prompts: Path) -> None:
    ws = two_prompts
    (ws / "b.txt").write_text("mine now\n")
    kept = cli(tmp_path, "rewind", "--turn", "2", "--mode", "code")
    assert kept.returncode == 0 and "left alone: b.txt" in kept.stdout
    assert (ws / "b.txt").read_text() == "mine now\n"
    forced = cli(tmp_path, "rewind", "--turn", "2", "--mode", "code", "--force")
    assert forced.returncode == 0 and not (ws / "b.txt").exists()
    bad = cli(tmp_path, "rewind", "--turn", "7")
    assert bad.returncode == 2 and "must be between 1 and 2, got 7" in bad.stderr
    assert cli(tmp_path, "rewind", "--mode", "everything").returncode == 2


def test_fork_keeps_the_source(tmp_path: Path, two_prompts: Path) -> None:
    sessions = json.loads(cli(tmp_path, "sessions", "list", "--json").stdout)["sessions"]
    [source] = sessions
    log = two_prompts / ".PseudoClaude" / "sessions" / source["id"] / "conversation.jsonl"
    before = log.read_bytes()
    forked = cli(tmp_path, "sessions", "fork", "--turn", "2", "--json")
    assert forked.returncode == 0, forked.stderr
    new = json.loads(forked.stdout)["sessionId"]
    assert new != source["id"] and log.read_bytes() == before
    shown = json.loads(cli(tmp_path, "sessions", "show", new, "--json").stdout)
    assert [m["content"] for m in shown["messages"] if m["role"] == "user"
            and "tool_result" not in m] == ["edit a"]
    assert "forked into" in cli(tmp_path, "sessions", "fork", source["id"]).stdout
