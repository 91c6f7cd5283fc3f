"""The `pseudoclaude sessions` command, run as a user runs it (a real process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from pseudoclaude.llm.types import ToolCall, ToolResult
from pseudoclaude.session import SessionStore
from pseudoclaude.session.codec import MessageEntry, encode


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "pseudoclaude", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=60)


def make_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    store = SessionStore(ws / ".PseudoClaude")
    sid = "20260617-120000-abcd"
    store.session_dir(sid).mkdir(parents=True)
    store.log_path(sid).write_bytes(b"".join(encode(e) for e in [
        MessageEntry(role="user", content="list the files", ts=1.0, model="m1"),
        MessageEntry(role="assistant", content="ok", ts=2.0,
                     tool_calls=(ToolCall("c1", "find_files", {"pattern": "*"}),)),
        MessageEntry(role="user", tool_result=ToolResult("c1", "find_files", "a.py"), ts=3.0),
        MessageEntry(role="assistant", content="There is a.py.", ts=4.0),
    ]) + b"garbage\n")
    return ws


def test_list_json(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    proc = run("sessions", "list", "--workspace", str(ws), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    [s] = data["sessions"]
    assert s["id"] == "20260617-120000-abcd" and s["title"] == "list the files"
    assert s["messageCount"] == 4 and s["model"] == "m1" and s["active"] is False
    assert s["bytes"] == (ws / ".PseudoClaude/sessions/20260617-120000-abcd/"
                          "conversation.jsonl").stat().st_size
    assert {"createdAt", "updatedAt"} <= set(s)  # the LSP result's shape (camelCase)


def test_list_text_defaults_to_the_current_folder(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    proc = run("sessions", "list", cwd=ws)
    assert proc.returncode == 0
    assert "20260617-120000-abcd  list the files" in proc.stdout
    assert "4 messages" in proc.stdout


def test_show_json_and_latest(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    proc = run("sessions", "show", "latest", "--workspace", str(ws), "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    assert data["id"] == "20260617-120000-abcd"
    assert data["bad_lines"] == 1 and data["repaired"] == 0
    assert data["messages"] == [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": "ok", "tool_calls": [
            {"id": "c1", "name": "find_files", "arguments": {"pattern": "*"}}]},
        {"role": "user", "tool_result": {"call_id": "c1", "name": "find_files",
                                         "content": "a.py"}},
        {"role": "assistant", "content": "There is a.py."},
    ]
    text = run("sessions", "show", "20260617-120000-abcd", "--workspace", str(ws))
    assert text.returncode == 0 and "[tool call find_files c1]" in text.stdout


def test_errors_are_one_line_with_exit_codes(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    unknown = run("sessions", "show", "20990101-000000-abcd", "--workspace", str(ws))
    assert unknown.returncode == 1
    assert unknown.stderr.strip().count("\n") == 0 and "no session" in unknown.stderr
    assert "Traceback" not in unknown.stderr
    bad_id = run("sessions", "show", "../../etc/passwd", "--workspace", str(ws))
    assert bad_id.returncode == 2 and "must be a session id" in bad_id.stderr
    assert bad_id.stderr.startswith("pseudoclaude: ") and bad_id.stderr.count("\n") == 1
    missing = run("sessions", "list", "--workspace", str(tmp_path / "nope"))
    assert missing.returncode == 1 and "not a folder" in missing.stderr
    empty = run("sessions", "show", "latest", "--workspace", str(tmp_path))
    assert empty.returncode == 1 and "no session to resume" in empty.stderr
    usage = run("sessions", "frobnicate")
    assert usage.returncode == 2


def test_unreadable_sessions_folder(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".PseudoClaude").mkdir(parents=True)
    (ws / ".PseudoClaude" / "sessions").write_text("a file where the folder should be")
    proc = run("sessions", "list", "--workspace", str(ws))
    assert proc.returncode == 1
    assert proc.stderr.startswith("pseudoclaude: not a folder:")
    assert proc.stderr.count("\n") == 1


def test_permission_denied_is_one_line(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    sessions = ws / ".PseudoClaude" / "sessions"
    sessions.chmod(0)
    try:
        proc = run("sessions", "list", "--workspace", str(ws))
    finally:
        sessions.chmod(0o700)
    if os.geteuid() == 0:  # root reads anything: the listing simply works
        assert proc.returncode == 0 and "list the files" in proc.stdout
    else:
        assert proc.returncode == 1 and "permission denied" in proc.stderr
        assert proc.stderr.count("\n") == 1


def test_data_dir_from_the_workspace_config(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path)
    moved = tmp_path / "elsewhere"
    (ws / ".PseudoClaude").rename(moved)
    (ws / ".PseudoClaude").mkdir()
    (ws / ".PseudoClaude" / "config.yaml").write_text(f"dataDir: {moved}\n")
    proc = run("sessions", "list", "--workspace", str(ws), "--json")
    assert proc.returncode == 0, proc.stderr
    assert [s["id"] for s in json.loads(proc.stdout)["sessions"]] == ["20260617-120000-abcd"]
    (ws / ".PseudoClaude" / "config.yaml").write_text("contextWindow: -1\n")
    bad = run("sessions", "list", "--workspace", str(ws))
    assert bad.returncode == 1 and "contextWindow" in bad.stderr
    assert bad.stderr.startswith("pseudoclaude settings:") and bad.stderr.count("\n") == 1


def test_fake_model_command_serves_on_loopback() -> None:
    import urllib.request

    proc = subprocess.Popen([sys.executable, "-m", "pseudoclaude", "fake-model", "--port", "0"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(url + "/_requests", timeout=10) as response:
            assert json.loads(response.read()) == []
    finally:
        proc.terminate()
        assert proc.wait(10) == 0
