"""SIGKILL a real ``pseudoclaude run`` while its sub-agent waits for the model: both logs stay
loadable, the child log repairs to a valid conversation and says it never ended, and the
session goes on from where the parent's log stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from pseudoclaude.agents.log import load_messages, read_record, running_elsewhere
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.session import SessionStore, load_session, repair, replay_file
from pseudoclaude.session.repair import is_valid
from support import server_env

GENERAL = "You are a general-purpose sub-agent"


def sub_requests(requests: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in requests if GENERAL in json.dumps(r["body"].get("system", ""))]


def test_a_kill_mid_sub_agent_leaves_both_logs_repairable(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    read = {"name": "read_file", "arguments": {"path": "a.txt"}}
    script = {
        "rules": [
            {"when": {"system_contains": GENERAL, "last_is_tool_result": False},
             "reply": {"text": "Reading it.", "tool_calls": [read]}},
            {"when": {"system_contains": GENERAL, "last_is_tool_result": True},
             "reply": {"text": "never sent", "hold": "crash"}},
            {"when": {"has_tools": False}, "reply": {"text": "[]"}}],  # memory updates
        "turns": [
            {"tool_calls": [{"name": "agent", "arguments": {
                "description": "read a.txt", "prompt": "What does a.txt say?"}}]},
            {"text": "Went on after the crash."}]}
    env = server_env(tmp_path / "home") | {"ANTHROPIC_API_KEY": "sk-test-crash"}
    with FakeModelServer(script) as fake:
        base = [sys.executable, "-m", "pseudoclaude", "run", "--workspace", str(ws),
                "--base-url", fake.base_url]
        child = subprocess.Popen([*base, "ask a helper"], env=env, start_new_session=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        store = SessionStore(ws / ".PseudoClaude")
        try:
            # its second request waits: the read and its result are in the child log
            assert fake.wait_for(lambda rs: len(sub_requests(rs)) == 2, 60)
            [log] = list((store.data_dir / "sessions").glob("*/agents/agent-*.jsonl"))
            # another process (this one) sees that it runs
            assert running_elsewhere(log, log.stem)
        finally:
            os.killpg(child.pid, signal.SIGKILL)
            child.wait(30)
        assert not running_elsewhere(log, log.stem)  # its lock died with its process
        session_dir = log.parent.parent
        sid = session_dir.name
        record = read_record(log)
        assert record is not None and record.stop is None  # it never ended
        assert record.header.parent == sid and record.header.description == "read a.txt"
        messages = load_messages(log)
        assert is_valid(messages)
        assert [m.role for m in messages][:2] == ["user", "assistant"]
        result = messages[2].tool_result
        assert result is not None and "alpha" in result.content
        logged = replay_file(store.log_path(sid)).messages
        assert [c.name for m in logged for c in m.tool_calls] == ["agent"]
        repaired, repairs = repair(logged)
        assert is_valid(repaired) and repairs == 1
        # the call dangling at the tail (the crash came mid-tool) is dropped by the repair
        assert [m.content for m in repaired] == ["ask a helper"]
        assert load_session(store, sid).messages == repaired
        again = subprocess.run([*base, "--session", sid, "go on"], env=env, capture_output=True,
                               text=True, timeout=120)
        fake.release("crash")
    assert again.returncode == 0, again.stderr
    assert again.stdout == "Went on after the crash.\n"
    # the resumed request carries the first prompt and the new one
    [resumed] = [r for r in fake.requests if r["body"].get("tools")
                 and "go on" in json.dumps(r["body"]["messages"])]
    assert "ask a helper" in json.dumps(resumed["body"]["messages"])
