"""`pseudoclaude status` as a user runs it: real processes against the fake model; the latest
session by default, its mode (else the folder's ``defaultMode``), the model, the tokens (the
context's numbers and what the log says was billed), the sandbox, MCP, hooks and skills."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.config import DEFAULT_ANTHROPIC_MODEL
from pseudoclaude.fake_model import FakeModelServer
from support import server_env

MEMORY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}
ECHO = Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "echo_server.py"
FIRST = {"text": "first answer", "usage": {"input": 1200, "output": 30, "cache_read": 800}}
SECOND = {"text": "second answer", "usage": {"input": 300, "output": 12, "cache_write": 50}}


def cli(tmp_path: Path, *args: str, folder: str = "ws") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pseudoclaude", *args, "--workspace",
                           str(tmp_path / folder)], capture_output=True, text=True, timeout=60,
                          env=server_env(tmp_path / "home") | {"ANTHROPIC_API_KEY": "sk-test-cli"})


def status(tmp_path: Path, *args: str, folder: str = "ws") -> dict[str, Any]:
    done = cli(tmp_path, "status", "--json", *args, folder=folder)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


@pytest.fixture
def sessions(tmp_path: Path) -> list[str]:
    """Two sessions: the first answered once, the latest twice (its second run in
    ``acceptEdits``); then the user's settings turn the sandbox off and name an MCP server."""
    (tmp_path / "ws").mkdir()
    script = {"turns": [{"text": "other"}, FIRST, SECOND], "rules": [MEMORY]}
    with FakeModelServer(script) as fake:
        for args in (["--session", "new", "other"], ["--session", "new", "one"],
                     ["--session", "latest", "--mode", "acceptEdits", "two"]):
            done = cli(tmp_path, "run", "--base-url", fake.base_url, *args)
            assert done.returncode == 0, done.stderr
    user = tmp_path / "home" / ".PseudoClaude"
    user.mkdir(parents=True, exist_ok=True)
    (user / "config.yaml").write_text(
        "sandbox:\n  enabled: false\nmcp:\n  servers:\n    echo:\n"
        f"      command: {json.dumps(sys.executable)}\n      args: [{json.dumps(str(ECHO))}]\n")
    listed = json.loads(cli(tmp_path, "sessions", "list", "--json").stdout)["sessions"]
    return [s["id"] for s in reversed(listed)]  # oldest first


def test_the_latest_session_as_json_and_as_text(tmp_path: Path, sessions: list[str]) -> None:
    other, latest = sessions
    shown = status(tmp_path)
    assert set(shown) == {"session", "mode", "provider", "model", "tokens", "sandbox", "mcp",
                          "hooks", "skills", "ignoredSettings", "text"}
    assert shown["session"] == latest
    assert (shown["mode"], shown["provider"], shown["model"]) == (
        "acceptEdits", "anthropic", DEFAULT_ANTHROPIC_MODEL)
    context = json.loads(cli(tmp_path, "context", "--json").stdout)
    tokens = shown["tokens"]
    assert tokens["used"] == context["estimatedTokens"] > 0
    assert tokens["window"] == context["contextWindow"] == 200_000
    assert tokens["autoCompactThreshold"] == context["autoCompactThreshold"]
    assert tokens["billed"] == {"inputTokens": 1500, "outputTokens": 42,
                                "cacheReadTokens": 800, "cacheWriteTokens": 50}
    assert shown["sandbox"]["enabled"] is False and "sandbox.enabled" in shown["sandbox"]["reason"]
    assert [(s["name"], s["source"]) for s in shown["mcp"]] == [("echo", "user")]
    assert shown["hooks"] == [] and shown["skills"] == [
        {"name": n, "source": "builtin", "loaded": False} for n in ("commit", "review", "test")]

    text = cli(tmp_path, "status")
    assert text.returncode == 0, text.stderr
    assert text.stdout == shown["text"] + "\n"
    lines = text.stdout.splitlines()
    assert lines[:3] == [f"session: {latest}", "mode: acceptEdits",
                         f"model: {DEFAULT_ANTHROPIC_MODEL} (anthropic)"]
    assert lines[3].startswith(f"tokens: {tokens['used']:,} of 200,000 in context")
    assert lines[4] == "billed: 1,500 input, 800 cache read, 50 cache write, 42 output"
    assert lines[5].startswith("sandbox: off (")
    assert lines[6:] == ["MCP:", "  echo (your settings): not started yet", "hooks: none",
                         "skills:", "  commit (builtin)", "  review (builtin)",
                         "  test (builtin)"]

    assert status(tmp_path, "--session", "latest") == shown
    first = status(tmp_path, "--session", other)
    assert (first["session"], first["mode"]) == (other, "default")
    assert first["tokens"]["billed"]["outputTokens"] > 0
    assert first["tokens"]["billed"] != tokens["billed"]


def test_no_session_yet_shows_the_folders_default_mode(tmp_path: Path) -> None:
    (tmp_path / "fresh" / ".PseudoClaude").mkdir(parents=True)
    (tmp_path / "fresh" / ".PseudoClaude" / "permissions.yaml").write_text("defaultMode: strict\n")
    shown = status(tmp_path, folder="fresh")
    assert (shown["session"], shown["mode"]) == (None, "strict")
    assert shown["tokens"]["used"] == 0 and shown["tokens"]["billed"] is None
    assert shown["mcp"] == []
    assert "session: none yet" in shown["text"] and "MCP: none" in shown["text"]
    assert not (tmp_path / "fresh" / ".PseudoClaude" / "sessions").exists(), "nothing written"


def test_an_unknown_session_fails_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    unknown = cli(tmp_path, "status", "--session", "20990101-000000-abcd")
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert unknown.stderr.startswith("pseudoclaude: no session 20990101-000000-abcd")
    assert unknown.stderr.count("\n") == 1
    malformed = cli(tmp_path, "status", "--session", "nope")
    assert malformed.returncode == 2 and "--session: must be a session id" in malformed.stderr
