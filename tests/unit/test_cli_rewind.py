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


READ_A = {"name": "read_file", "arguments": {"path": "a.txt"}}
"""An existing file is read before the agent changes it (a stale write is refused)."""


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
    edit = {"tool_calls": [READ_A, {"name": "edit_file", "arguments": {
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


def test_a_fork_is_latest_only_once_answered(tmp_path: Path, two_prompts: Path) -> None:
    """``latest`` is the newest session the model answered in: not a fork nobody prompted yet
    (it holds its source's answers, none of its own). The fork's title says it is one; the
    list marks it; ``context`` and ``compact`` take ``--session``."""
    [source] = json.loads(cli(tmp_path, "sessions", "list", "--json").stdout)["sessions"]
    new = json.loads(cli(tmp_path, "sessions", "fork", "--json").stdout)["sessionId"]
    listed = {s["id"]: s for s in json.loads(cli(tmp_path, "sessions", "list", "--json")
                                               .stdout)["sessions"]}
    assert listed[new]["title"] == "edit a (fork)" and listed[new]["answered"] is False
    assert listed[source["id"]]["answered"] is True
    text = cli(tmp_path, "sessions", "list").stdout
    assert f"{new}  edit a (fork)  (no answer)" in text
    assert f"{source['id']}  edit a\n" in text
    for command in (["context"], ["compact", "--preview"], ["rewind", "--list"]):
        done = cli(tmp_path, *command, "--json")
        assert done.returncode == 0, done.stderr
    assert json.loads(cli(tmp_path, "context", "--json").stdout)["sessionId"] == source["id"]
    named = cli(tmp_path, "context", "--session", new, "--json")
    assert json.loads(named.stdout)["sessionId"] == new
    preview = cli(tmp_path, "compact", "--preview", "--session", new, "--json")
    assert preview.returncode == 0, preview.stderr
    assert cli(tmp_path, "compact", "--session", "nope").returncode == 2
    script = {"turns": [{"text": "answered in the fork"}], "rules": [MEMORY]}
    with FakeModelServer(script) as fake:
        done = cli(tmp_path, "run", "--base-url", fake.base_url, "--session", new, "go on")
        assert done.returncode == 0, done.stderr
    assert json.loads(cli(tmp_path, "context", "--json").stdout)["sessionId"] == new


def test_a_failed_first_run_is_listed_as_unanswered(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    with FakeModelServer({"turns": [{"error": "prompt_too_long"}]}) as fake:
        failed = cli(tmp_path, "run", "--base-url", fake.base_url, "too long a question")
    assert failed.returncode == 1
    [listed] = json.loads(cli(tmp_path, "sessions", "list", "--json").stdout)["sessions"]
    assert listed["answered"] is False  # kept (resumable by its id), but not latest
    assert f"{listed['id']}  too long a question  (no answer)" in cli(
        tmp_path, "sessions", "list").stdout
    assert json.loads(cli(tmp_path, "context", "--json").stdout)["sessionId"] is None


def test_a_hand_edit_survives_a_second_rewind(tmp_path: Path, two_prompts: Path) -> None:
    """A file changed by hand after the agent last wrote it is a conflict in every later
    rewind: a code rewind of prompt 2 (which does not touch it) must not make the hand edit
    look like the agent's to the rewind of prompt 1 after it."""
    ws = two_prompts
    (ws / "a.txt").write_text("ALPHA\n# my edit\n")
    first = cli(tmp_path, "rewind", "--turn", "2", "--mode", "code", "--json")
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["restoredFiles"] == ["b.txt"]
    assert not (ws / "b.txt").exists()
    preview = cli(tmp_path, "rewind", "--turn", "1", "--preview", "--json")
    files = {f["path"]: f["conflict"] for f in json.loads(preview.stdout)["files"]}
    assert files == {"a.txt": True}
    second = cli(tmp_path, "rewind", "--turn", "1", "--mode", "code", "--json")
    assert json.loads(second.stdout)["conflicts"] == ["a.txt"]
    assert (ws / "a.txt").read_text() == "ALPHA\n# my edit\n"  # kept without --force
    forced = cli(tmp_path, "rewind", "--turn", "1", "--mode", "code", "--force", "--json")
    assert json.loads(forced.stdout)["restoredFiles"] == ["a.txt"]
    assert (ws / "a.txt").read_text() == "alpha\n"


def test_a_hand_edit_between_prompts_is_a_conflict(tmp_path: Path) -> None:
    """The snapshot before prompt 2 holds a hand edit of a file prompt 1 changed: going back
    to before prompt 1 would drop it, so it is a conflict."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    edit = {"tool_calls": [READ_A, {"name": "edit_file", "arguments": {
        "path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"}}]}
    write = {"tool_calls": [{"name": "write_file", "arguments": {
        "path": "b.txt", "content": "bravo\n"}}]}
    script = {"turns": [edit, {"text": "edited"}, write, {"text": "wrote"}], "rules": [MEMORY]}
    with FakeModelServer(script) as fake:
        run = ["run", "--base-url", fake.base_url, "--session"]
        assert cli(tmp_path, *run, "new", "edit a").returncode == 0
        (ws / "a.txt").write_text("ALPHA\n# my edit\n")
        assert cli(tmp_path, *run, "latest", "write b").returncode == 0
    preview = json.loads(cli(tmp_path, "rewind", "--turn", "1", "--preview", "--json").stdout)
    assert {f["path"]: f["conflict"] for f in preview["files"]} == {"a.txt": True,
                                                                    "b.txt": False}
    done = json.loads(cli(tmp_path, "rewind", "--turn", "1", "--mode", "code", "--json").stdout)
    assert done["restoredFiles"] == ["b.txt"] and done["conflicts"] == ["a.txt"]
    assert (ws / "a.txt").read_text() == "ALPHA\n# my edit\n" and not (ws / "b.txt").exists()


def test_ignored_files_the_agent_wrote_are_rewound(tmp_path: Path) -> None:
    """``.env`` and ``*.local`` are left out of the snapshots by the ignore rules; what the
    agent's own writes did to them still comes back."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text("*.local\n.env\n")
    (ws / ".env").write_text("TOKEN=mine\n")
    writes = {"tool_calls": [
        {"name": "read_file", "arguments": {"path": ".env"}},  # it exists: read first
        {"name": "write_file", "arguments": {"path": ".env", "content": "TOKEN=agent\n"}},
        {"name": "write_file", "arguments": {"path": "dev.local", "content": "debug\n"}}]}
    script = {"turns": [writes, {"text": "wrote"}], "rules": [MEMORY]}
    with FakeModelServer(script) as fake:
        done = cli(tmp_path, "run", "--base-url", fake.base_url, "--session", "new", "go")
        assert done.returncode == 0, done.stderr
    assert (ws / ".env").read_text() == "TOKEN=agent\n"
    preview = cli(tmp_path, "rewind", "--turn", "1", "--preview")
    assert "restored  .env" in preview.stdout and "deleted   dev.local" in preview.stdout
    result = json.loads(cli(tmp_path, "rewind", "--turn", "1", "--json").stdout)
    assert sorted(result["restoredFiles"]) == [".env", "dev.local"]
    assert (ws / ".env").read_text() == "TOKEN=mine\n" and not (ws / "dev.local").exists()
