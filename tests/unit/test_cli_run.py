"""`pseudoclaude run` as a user runs it: a real process against the fake model."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pseudoclaude.fake_model import FakeModelServer

MEMORY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}


def env_for(tmp_path: Path, key: str | None = "sk-test-cli") -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC", "OPENAI"))}
    env["HOME"] = str(tmp_path / "home")
    if key:
        env["ANTHROPIC_API_KEY"] = key
    return env


def run(tmp_path: Path, *args: str, key: str | None = "sk-test-cli"
        ) -> subprocess.CompletedProcess[str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.txt").write_text("alpha\n")
    return subprocess.run([sys.executable, "-m", "pseudoclaude", "run", "--workspace", str(ws),
                           *args], capture_output=True, text=True, timeout=60,
                          env=env_for(tmp_path, key))


def test_answer_on_stdout_tools_on_stderr(tmp_path: Path) -> None:
    script = {"turns": [{"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
                        {"text": "It says alpha."}]}
    with FakeModelServer(script) as fake:
        proc = run(tmp_path, "--base-url", fake.base_url, "what", "is", "in", "a.txt?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "It says alpha.\n"
    assert '> read_file {"path": "a.txt"}' in proc.stderr and "ok (" in proc.stderr
    assert json.dumps(fake.requests[0]["body"]).count("what is in a.txt?") == 1


def test_a_sub_agents_steps_go_under_its_call_and_its_text_stays_out_of_the_answer(
        tmp_path: Path) -> None:
    sub = "You are an explore sub-agent"
    read = {"name": "read_file", "arguments": {"path": "a.txt"}}
    script = {"rules": [
        {"when": {"system_contains": sub, "last_is_tool_result": False},
         "reply": {"text": "SUB-TEXT looking", "tool_calls": [read]}},
        {"when": {"system_contains": sub, "last_is_tool_result": True},
         "reply": {"text": "SUB-TEXT it says alpha"}}],
        "turns": [{"tool_calls": [{"name": "agent", "arguments": {
            "subagent_type": "explore", "description": "look at a.txt",
            "prompt": "What is in a.txt?"}}]},
                  {"text": "a.txt says alpha."}]}
    with FakeModelServer(script) as fake:
        proc = run(tmp_path, "--base-url", fake.base_url, "what is in a.txt?")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "a.txt says alpha.\n"  # the sub-agent's text is not the answer
    lines = proc.stderr.splitlines()
    assert lines[0].startswith("> agent ") and "look at a.txt" in lines[0]
    [agent_id] = {p.name.removesuffix(".jsonl")
                  for p in (tmp_path / "ws").glob(".PseudoClaude/sessions/*/agents/*.jsonl")}
    assert f'  | {agent_id[6:12]} > read_file {{"path": "a.txt"}}' in lines
    assert "SUB-TEXT" not in proc.stderr


def test_agents_list_and_show_after_a_run(tmp_path: Path) -> None:
    """``pseudoclaude agents list`` names the latest session's sub-agents; ``agents show``
    prints one's conversation; an unknown id is one line, exit 1."""
    sub = "You are a general-purpose sub-agent"
    read = {"name": "read_file", "arguments": {"path": "a.txt"}}
    script = {"rules": [
        {"when": {"system_contains": sub, "last_is_tool_result": False},
         "reply": {"tool_calls": [read], "usage": {"input": 100, "output": 5, "cache_read": 50}}},
        {"when": {"system_contains": sub, "last_is_tool_result": True},
         "reply": {"text": "It says alpha.", "usage": {"input": 10, "output": 4}}},
        MEMORY],
        "turns": [{"tool_calls": [{"name": "agent", "arguments": {
            "name": "reader", "description": "read a.txt", "prompt": "Read a.txt."}}]},
                  {"text": "alpha."}]}
    with FakeModelServer(script) as fake:
        assert run(tmp_path, "--base-url", fake.base_url, "go").returncode == 0
    ws = str(tmp_path / "ws")

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pseudoclaude", "agents", *args,
                               "--workspace", ws], capture_output=True, text=True,
                              timeout=60, env=env_for(tmp_path))

    listed = cli("list")
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    assert lines[0].startswith("session ") and lines[0].endswith(": 1 sub-agent")
    agent_id = lines[1].split()[0]
    assert agent_id.startswith("agent-")
    assert "general-purpose 'reader'  completed  160 in / 9 out" in lines[1]
    assert lines[2] == "    read a.txt"
    as_json = json.loads(cli("list", "--json").stdout)
    assert as_json["agents"][0]["usage"] == {"inputTokens": 160, "outputTokens": 9}
    shown = cli("show", agent_id)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith(f"sub-agent {agent_id} of session ")
    assert "Read a.txt." in shown.stdout and "It says alpha." in shown.stdout
    messages = json.loads(cli("show", agent_id, "--json").stdout)["messages"]
    assert [m["role"] for m in messages][:2] == ["user", "assistant"]
    unknown = cli("show", "agent-0000000000000000")
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert unknown.stderr.count("\n") == 1 and "has no sub-agent agent-0000000000000000" in (
        unknown.stderr)
    bad = cli("show", "../etc")
    assert bad.returncode == 1 and "not a sub-agent id" in bad.stderr


def test_json_events_end_with_the_result(tmp_path: Path) -> None:
    memory = {"when": {"has_tools": False}, "reply": {"text": "Nothing to keep: []"}}
    with FakeModelServer({"turns": [{"text": ["Hel", "lo"]}], "rules": [memory]}) as fake:
        proc = run(tmp_path, "--base-url", fake.base_url, "--json", "hi")
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [x["kind"] for x in lines] == ["text", "text", "usage", "stop", "memory", "result"]
    assert lines[4]["status"] == "unchanged"  # the update ran before the command exited
    assert lines[-1]["text"] == "Hello" and lines[-1]["stopReason"] == "completed"
    assert lines[-1]["iterations"] == 1 and lines[0]["sessionId"] == lines[-1]["sessionId"]


def test_no_provider_is_one_line_exit_1(tmp_path: Path) -> None:
    proc = run(tmp_path, "hi", key=None)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "ANTHROPIC_API_KEY" in proc.stderr
    assert not (tmp_path / "ws" / ".PseudoClaude").exists()  # nothing written, not even .gitignore


def test_a_failed_tool_shows_its_own_error(tmp_path: Path) -> None:
    turns = [{"tool_calls": [{"name": "read_file", "arguments": {"path": "missing.txt"}}]},
             {"text": "It is not there."}]
    with FakeModelServer({"turns": turns, "rules": [MEMORY]}) as fake:
        proc = run(tmp_path, "--base-url", fake.base_url, "read it")
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stderr.splitlines() if x.startswith("  error"))
    assert "missing.txt" in line and "{" not in line  # the message, not the JSON envelope


def test_connection_failure_is_one_line_retries_only_with_verbose(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    base = f"http://127.0.0.1:{port}"
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / ".PseudoClaude").mkdir()
    (tmp_path / "ws" / ".PseudoClaude" / "config.yaml").write_text("maxRetries: 1\n")
    quiet = run(tmp_path, "--base-url", base, "hi")
    assert quiet.returncode == 1 and len(quiet.stderr.strip().splitlines()) == 1, quiet.stderr
    verbose = run(tmp_path, "--base-url", base, "-v", "hi")
    assert verbose.returncode == 1
    assert "retrying" in verbose.stderr and len(verbose.stderr.strip().splitlines()) == 2


def test_limits_exit_3_and_errors_exit_1(tmp_path: Path) -> None:
    loop = {"rules": [{"when": {"has_tools": True},
                       "reply": {"tool_calls": [{"name": "read_file",
                                                 "arguments": {"path": "a.txt"}}]}}]}
    with FakeModelServer(loop) as fake:
        proc = run(tmp_path, "--base-url", fake.base_url, "--max-iterations", "2", "loop")
    assert proc.returncode == 3 and "max iterations" in proc.stderr
    with FakeModelServer({"turns": [{"error": "auth"}]}) as fake:
        proc = run(tmp_path, "--base-url", fake.base_url, "hi")
    assert proc.returncode == 1 and "sk-test-cli" not in proc.stderr + proc.stdout
    assert "Traceback" not in proc.stderr


@contextlib.contextmanager
def ctrl_c_reaches_children() -> Iterator[None]:
    """Children started meanwhile take Ctrl-C (SIGINT), as in a terminal.

    A program started with SIGINT *ignored* keeps ignoring it (Python, and the CLI with it),
    and the tests themselves may run that way: a non-interactive shell starts a background
    job (``make test &``) with SIGINT and SIGQUIT ignored, and children inherit that. A signal
    this process catches instead is reset to its default by ``exec``, so the children start as
    they would from a terminal."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("as_json", [False, True])
def test_ctrl_c_exits_130_and_leaves_a_valid_session(tmp_path: Path, as_json: bool) -> None:
    with FakeModelServer({"turns": [{"text": "slow", "delay": 30}]}) as fake:
        ws = tmp_path / "ws"
        ws.mkdir()
        with ctrl_c_reaches_children():
            proc = subprocess.Popen(
                [sys.executable, "-m", "pseudoclaude", "run", "--workspace", str(ws),
                 "--base-url", fake.base_url, *(["--json"] if as_json else []), "wait"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                env=env_for(tmp_path))
        # the run is under way (its session holds the prompt) once the model has the request
        assert fake.wait_for(lambda requests: len(requests) == 1, timeout=30)
        proc.send_signal(signal.SIGINT)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            raise
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    if as_json:  # the result line comes last in every outcome (README)
        last = json.loads(out.splitlines()[-1])
        assert last["kind"] == "result" and last["stopReason"] == "canceled"
        assert last["sessionId"] and last["iterations"] == 1
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pseudoclaude", *args, "--workspace",
                               str(ws)], capture_output=True, text=True,
                              env=env_for(tmp_path), timeout=60)

    [listed] = json.loads(cli("sessions", "list", "--json").stdout)["sessions"]
    # Never answered: listed, kept, but not `latest` (context and compact do not land on it).
    latest = cli("sessions", "show", "latest")
    assert latest.returncode == 1 and "the model never answered in 1 session" in latest.stderr
    shown = json.loads(cli("sessions", "show", listed["id"], "--json").stdout)
    assert shown["messages"] == [{"role": "user", "content": "wait"}]
    assert shown["repaired"] == 0
