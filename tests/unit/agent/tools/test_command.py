"""run_command: a shell line, or a program and its arguments with no shell; timeouts and
cancellation kill the process group (SPEC §6)."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.agent.tools import MAX_CONTENT_BYTES, TRUNCATION_MARKER, ToolRegistry
from pseudoclaude.agent.tools.command import OutputCapture, child_environment
from pseudoclaude.llm.types import ToolCall

PY = sys.executable
# Starts a `sleep` grandchild, records its pid, then waits (or exits at once with "exit").
SPAWNER = """
import subprocess, sys, time
child = subprocess.Popen(["sleep", "30"])
open("child.pid", "w").write(str(child.pid))
print("started", flush=True)
if sys.argv[1:] != ["exit"]:
    time.sleep(30)
"""


def gone(pid: int, wait: float = 3.0) -> bool:
    """Whether the process has exited (reaped, or a zombie waiting for its new parent)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "spawner.py").write_text(SPAWNER)
    return tmp_path


def test_success_runs_in_the_workspace(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    registry = ToolRegistry(ws)
    body = call(registry, "run_command", command="pwd", args=[])
    assert body["ok"] is True
    assert body["content"] == f"{ws.resolve()}\n"
    meta = body["metadata"]
    assert meta["exit_code"] == 0 and meta["timed_out"] is False and meta["args"] == []
    assert meta["output_bytes"] == len(body["content"]) and meta["truncated"] is False
    assert "shell" not in meta and meta["sandboxed"] is False  # no sandbox given
    body = call(registry, "run_command", command="pwd")  # a shell line
    assert body["ok"] is True and body["content"] == f"{ws.resolve()}\n"
    meta = body["metadata"]
    assert meta["command"] == "pwd" and meta["shell"] is True and "args" not in meta
    assert meta["exit_code"] == 0 and meta["sandboxed"] is False


def test_no_shell(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    registry = ToolRegistry(ws)
    body = call(registry, "run_command", command="echo",
                args=["a;", "touch", "pwned", "&&", "$HOME", "*"])
    assert body["content"] == "a; touch pwned && $HOME *\n"
    body = call(registry, "run_command", command="echo hi; touch pwned", args=[])
    assert body["error_type"] == "not_found" and "no shell" in body["error"]
    assert not (ws / "pwned").exists()


def test_a_command_alone_is_a_shell_line(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    line = "echo a  b && echo $((1+2)) | tr 3 x > out.txt; cat out.txt"
    body = call(ToolRegistry(ws), "run_command", command=line)
    assert body["ok"] is True and body["content"] == "a b\nx\n"
    assert (ws / "out.txt").read_text() == "x\n"
    meta = body["metadata"]
    assert meta["command"] == line and meta["shell"] is True and "args" not in meta


def test_stdin_is_empty_and_there_is_no_terminal(ws: Path,
                                                 call: Callable[..., dict[str, Any]]) -> None:
    registry = ToolRegistry(ws)
    body = call(registry, "run_command", command="cat", timeout=5)
    assert body["ok"] is True and body["content"] == ""
    body = call(registry, "run_command", command=PY, args=["-c", "open('/dev/tty')"], timeout=10)
    assert body["error_type"] == "exit_status"


def test_exit_status_keeps_the_combined_output(ws: Path,
                                               call: Callable[..., dict[str, Any]]) -> None:
    script = ("import sys; print('to stdout', flush=True); "
              "print('to stderr', file=sys.stderr, flush=True); sys.exit(3)")
    body = call(ToolRegistry(ws), "run_command", command=PY, args=["-c", script])
    assert body["ok"] is False and body["error_type"] == "exit_status"
    assert body["content"] == "to stdout\nto stderr\n"
    assert body["metadata"]["exit_code"] == 3 and "status 3" in body["error"]


def test_killed_by_a_signal(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    body = call(ToolRegistry(ws), "run_command", command=PY,
                args=["-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)"])
    assert body["error_type"] == "exit_status" and "SIGTERM" in body["error"]
    assert body["metadata"]["exit_code"] == -15


def test_not_found_and_not_executable(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    registry = ToolRegistry(ws)
    body = call(registry, "run_command", command="definitely-not-a-program-xyz", args=[])
    assert body["error_type"] == "not_found"
    (ws / "script.sh").write_text("#!/bin/sh\necho hi\n")
    body = call(registry, "run_command", command="./script.sh", args=[])
    assert body["error_type"] == "permission_denied"
    # as shell lines, the shell reports them: 127 (not found) and 126 (not executable)
    body = call(registry, "run_command", command="definitely-not-a-program-xyz")
    assert body["error_type"] == "exit_status" and body["metadata"]["exit_code"] == 127
    assert "definitely-not-a-program-xyz" in body["content"] and "not found" in body["content"]
    body = call(registry, "run_command", command="./script.sh")
    assert body["error_type"] == "exit_status" and body["metadata"]["exit_code"] == 126
    (ws / "script.sh").chmod(0o755)
    assert call(registry, "run_command", command="./script.sh", args=[])["content"] == "hi\n"
    assert call(registry, "run_command", command="./script.sh")["content"] == "hi\n"


@pytest.mark.parametrize(("args", "field"), [
    ({"command": "echo", "timeout": 601}, "`timeout`"),
    ({"command": "echo", "timeout": 0}, "`timeout`"),
    ({"command": "echo", "timeout": "5"}, "`timeout`"),
    ({"command": "echo", "args": "a b"}, "`args`"),
    ({"command": "echo", "args": ["a", 1]}, "`args[1]`"),
    ({"command": ["echo"]}, "`command`"),
    ({"command": ""}, "`command`"),
    ({"args": ["x"]}, "`command`"),
    ({"command": "echo", "shell": True}, "`shell`"),
])
def test_invalid_arguments(ws: Path, args: dict[str, Any], field: str,
                           call: Callable[..., dict[str, Any]]) -> None:
    body = call(ToolRegistry(ws), "run_command", **args)
    assert body["error_type"] == "invalid_arguments" and field in body["error"]


def test_environment_without_api_keys(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                      call: Callable[..., dict[str, Any]]) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-oai-secret")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-secret")
    monkeypatch.setenv("GROQ_API_KEY", "gsk-secret")
    monkeypatch.setenv("PSEUDOCLAUDE_TEST_VISIBLE", "visible")
    body = call(ToolRegistry(ws), "run_command", command="env")
    assert "secret" not in body["content"]
    assert "PSEUDOCLAUDE_TEST_VISIBLE=visible" in body["content"]
    assert child_environment({"OPENAI_BASE_URL": "x", "MY_APIKEY": "y", "PATH": "/bin"}) == {
        "PATH": "/bin"}


def test_output_keeps_head_and_tail(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    script = "import sys\nfor i in range(20000): sys.stdout.write(f'line {i:05d}\\n')"
    body = call(ToolRegistry(ws), "run_command", command=PY, args=["-c", script])
    content = body["content"]
    assert body["ok"] is True
    assert len(content.encode()) <= MAX_CONTENT_BYTES
    assert content.startswith("line 00000\n") and content.endswith("line 19999\n")
    assert TRUNCATION_MARKER in content
    assert body["metadata"]["truncated"] is True
    assert body["metadata"]["output_bytes"] == 20000 * 11


def test_output_capture_cuts_on_character_boundaries() -> None:
    capture = OutputCapture(head=10, tail=10)
    capture.feed("é".encode() * 40)
    text = capture.text()
    assert "\ufffd" not in text
    assert text.startswith("é" * 5) and text.endswith("é" * 5)
    assert capture.truncated and capture.total == 80


def test_timeout_kills_the_process_group(ws: Path, call: Callable[..., dict[str, Any]]) -> None:
    started = time.monotonic()
    body = call(ToolRegistry(ws), "run_command", command=PY, args=["spawner.py"], timeout=1)
    assert time.monotonic() - started < 10
    assert body["error_type"] == "timeout" and "timed out" in body["error"]
    assert body["content"] == "started\n"
    assert body["metadata"]["timed_out"] is True
    assert gone(int((ws / "child.pid").read_text()))


def test_a_child_left_holding_the_pipe_is_killed(ws: Path,
                                                 call: Callable[..., dict[str, Any]]) -> None:
    started = time.monotonic()
    body = call(ToolRegistry(ws), "run_command", command=PY, args=["spawner.py", "exit"],
                timeout=20)
    assert time.monotonic() - started < 10
    assert body["ok"] is True and body["content"] == "started\n"
    assert gone(int((ws / "child.pid").read_text()))


def test_cancellation_kills_the_process_group(ws: Path) -> None:
    registry = ToolRegistry(ws)

    async def scenario() -> None:
        task = asyncio.create_task(
            registry.execute(ToolCall("c1", "run_command", {"command": PY,
                                                            "args": ["spawner.py"]})))
        for _ in range(500):
            if (ws / "child.pid").exists() and (ws / "child.pid").read_text():
                break
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    started = time.monotonic()
    asyncio.run(scenario())
    assert time.monotonic() - started < 10
    assert gone(int((ws / "child.pid").read_text()))
