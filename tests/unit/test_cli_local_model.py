"""`pseudoclaude run` against a local OpenAI-compatible server, as the fake model plays one:
the window it runs with, calls printed as text, bad or cut-off calls, a server without tools."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from pseudoclaude.fake_model import FakeModelServer
from support import server_env

MODEL = "qwen-local"
MEMORY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}
PROPS = {"default_generation_settings": {"n_ctx": 8192},
         "chat_template_caps": {"supports_tools": True}}


def pseudoclaude(tmp_path: Path, fake: FakeModelServer, command: str, *args: str
                 ) -> subprocess.CompletedProcess[str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "a.txt").write_text("alpha\n")
    return subprocess.run(
        [sys.executable, "-m", "pseudoclaude", command, "--workspace", str(ws), "--provider",
         "openai", "--base-url", fake.base_url + "/v1", "--model", MODEL, *args],
        capture_output=True, text=True, timeout=60, env=server_env(tmp_path / "home"))


def result_of(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    last: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    assert last["kind"] == "result", proc.stdout
    return last


def log_of(tmp_path: Path, session_id: str) -> list[dict[str, Any]]:
    path = tmp_path / "ws" / ".PseudoClaude" / "sessions" / session_id / "conversation.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_bad_calls_become_failed_results_and_the_run_completes(tmp_path: Path) -> None:
    turns = [
        # a call printed as text, as a model whose server did not parse its format does
        {"text": '<tool_call>\n{"name": "read_file", "arguments": {"path": "a.txt"}}\n'
                 "</tool_call>", "usage": {"input": 900, "output": 20}},
        # arguments that are not JSON
        {"tool_calls": [{"name": "read_file", "arguments": "{'path': 'a.txt'}"}],
         "usage": {"input": 1000, "output": 15}},
        # a call cut off by the output limit
        {"stop_reason": "length", "tool_calls": [{"name": "read_file",
                                                  "arguments": '{"path": "a.t'}],
         "usage": {"input": 1100, "output": 64}},
        {"text": "It says alpha.", "usage": {"input": 1200, "output": 5}},
    ]
    script = {"turns": turns, "rules": [MEMORY], "local": {"props": PROPS}}
    with FakeModelServer(script) as fake:
        proc = pseudoclaude(tmp_path, fake, "run", "--json", "read a.txt")
        requests = [r["body"] for r in fake.requests if r["body"].get("tools")]
        context = pseudoclaude(tmp_path, fake, "context", "--json")
        probes = [p["path"] for p in fake.probes]
    assert proc.returncode == 0, proc.stderr
    result = result_of(proc)
    assert (result["stopReason"], result["iterations"]) == ("completed", 4)
    assert result["usage"]["outputTokens"] == 20 + 15 + 64 + 5  # the cut turn counts too

    # what the model read back: the text call as a call, the bad arguments as {}
    second = requests[1]["messages"]
    assert next(m["tool_calls"] for m in second if m["role"] == "assistant")[0][
        "function"] == {"name": "read_file", "arguments": '{"path": "a.txt"}'}
    fourth = requests[3]["messages"]
    assert [m["tool_calls"][0]["function"]["arguments"] for m in fourth
            if m["role"] == "assistant"] == ['{"path": "a.txt"}', "{}", "{}"]
    results = [json.loads(m["content"]) for m in fourth if m["role"] == "tool"]
    assert results[0]["ok"] is True and "alpha" in results[0]["content"]
    assert [r["error_type"] for r in results[1:]] == ["invalid_arguments"] * 2
    assert "not a JSON object" in results[1]["error"]
    assert "cut off by the output limit" in results[2]["error"]

    lines = log_of(tmp_path, result["sessionId"])
    calls = [line for line in lines if line.get("tool_calls")]
    assert len(calls) == 3 and calls[0].get("content", "") == ""  # logged as a call
    assert sum(1 for line in lines if line.get("tool_result")) == 3

    # the window the server runs with, asked by each process once
    assert context.returncode == 0, context.stderr
    assert json.loads(context.stdout)["contextWindow"] == 8192
    assert probes == ["/props", "/props"]


def test_a_server_that_refuses_tools_is_one_line_exit_1(tmp_path: Path) -> None:
    refusal = {"status": 400, "type": "api_error",
               "message": f"registry.ollama.ai/library/{MODEL}:latest does not support tools"}
    with FakeModelServer({"turns": [{"error": refusal}], "rules": [MEMORY]}) as fake:
        proc = pseudoclaude(tmp_path, fake, "run", "hi")
        asked = len(fake.requests)
    assert proc.returncode == 1
    assert asked == 1  # not retried
    assert f"the model {MODEL} does not support tool calls" in proc.stderr


def test_props_without_tools_fail_before_the_first_request(tmp_path: Path) -> None:
    props = {**PROPS, "chat_template_caps": {"supports_tools": False}}
    with FakeModelServer({"local": {"props": props}, "rules": [MEMORY]}) as fake:
        proc = pseudoclaude(tmp_path, fake, "run", "hi")
        asked = len(fake.requests)
    assert proc.returncode == 1 and asked == 0
    assert f"the model {MODEL} does not support tool calls" in proc.stderr


def test_a_server_that_says_nothing_keeps_the_default(tmp_path: Path) -> None:
    with FakeModelServer({"turns": [{"text": "hi"}], "rules": [MEMORY]}) as fake:
        proc = pseudoclaude(tmp_path, fake, "run", "hi")
        context = pseudoclaude(tmp_path, fake, "context", "--json")
        statuses = {p["status"] for p in fake.probes}
    assert proc.returncode == 0, proc.stderr
    assert statuses == {404}
    assert json.loads(context.stdout)["contextWindow"] == 128_000
