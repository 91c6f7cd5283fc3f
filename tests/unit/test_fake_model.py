"""The scripted loopback model: wire formats (via the real SDKs), script, recording, CLI."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.config import Secret
from pseudoclaude.fake_model import (
    DEFAULT_REPLY,
    DEMO_SCRIPT,
    FakeModelServer,
    Script,
    ScriptError,
    limit_error,
    main,
    prompt_tokens,
)
from pseudoclaude.llm.errors import PromptTooLong
from pseudoclaude.llm.provider import ProviderOptions, ToolSpec, complete, create_provider
from pseudoclaude.llm.types import Message, ToolResult

TOOLS = [ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as response:
        return json.loads(response.read())


def _post(url: str, payload: Any) -> Any:
    request = urllib.request.Request(url, data=json.dumps(payload).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())


def test_binds_loopback_only() -> None:
    with FakeModelServer() as fake:
        assert fake.base_url.startswith("http://127.0.0.1:")
        assert fake._httpd.server_address[0] == "127.0.0.1"


def test_plain_anthropic_response_through_the_sdk() -> None:
    import anthropic

    turn = {"thinking": [{"thinking": "hmm", "signature": "S"}], "text": "Hi.",
            "tool_calls": [{"name": "read_file", "arguments": {"path": "a"}}],
            "usage": {"input": 11, "output": 7, "cache_read": 5, "cache_write": 3}}
    with FakeModelServer([turn]) as fake:
        async def go() -> Any:
            client = anthropic.AsyncAnthropic(api_key="k", base_url=fake.base_url,
                                              max_retries=0)
            try:
                return await client.messages.create(
                    model="m", max_tokens=100, messages=[{"role": "user", "content": "x"}])
            finally:
                await client.close()
        message = asyncio.run(go())
        assert fake.requests[0]["stream"] is False
    assert [b.type for b in message.content] == ["thinking", "text", "tool_use"]
    assert message.content[0].signature == "S"
    assert message.content[2].input == {"path": "a"}
    assert message.stop_reason == "tool_use"
    assert (message.usage.input_tokens, message.usage.cache_read_input_tokens,
            message.usage.cache_creation_input_tokens) == (11, 5, 3)


def test_plain_openai_response_through_the_sdk() -> None:
    import openai

    turn = {"text": "Hi.", "tool_calls": [{"name": "read_file", "arguments": "{oops"}],
            "usage": {"input": 10, "output": 4, "cache_read": 6}}
    with FakeModelServer([turn]) as fake:
        async def go() -> Any:
            client = openai.AsyncOpenAI(api_key="k", base_url=fake.base_url + "/v1",
                                        max_retries=0)
            try:
                return await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "x"}])
            finally:
                await client.close()
        completion = asyncio.run(go())
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls" and choice.message.content == "Hi."
    assert choice.message.tool_calls[0].function.arguments == "{oops"
    assert completion.usage.prompt_tokens == 16
    assert completion.usage.prompt_tokens_details.cached_tokens == 6


def test_rules_win_over_turns_and_times_limits_them() -> None:
    script = {
        "rules": [
            {"when": {"has_tools": False}, "reply": {"text": "<summary>S</summary>"}},
            {"when": {"last_user_contains": "magic"}, "reply": {"text": "rule!"}, "times": 1},
        ],
        "turns": [{"text": "turn 0"}, {"text": "turn 1"}],
    }
    with FakeModelServer(script) as fake:
        async def ask(text: str, tools: list[ToolSpec]) -> str:
            provider = await create_provider(ProviderOptions(
                provider="anthropic", model="m", api_key=Secret("k"), base_url=fake.base_url,
                max_retries=0))
            try:
                done = await complete(provider, "", [Message(role="user", content=text)], tools)
            finally:
                await provider.aclose()
            return done.message.content

        async def scenario() -> list[str]:
            return [await ask("summarise", []), await ask("say magic", TOOLS),
                    await ask("say magic", TOOLS), await ask("x", TOOLS), await ask("y", TOOLS)]
        answers = asyncio.run(scenario())
        origins = [r["reply"] for r in fake.requests]
    assert answers == ["<summary>S</summary>", "rule!", "turn 0", "turn 1", DEFAULT_REPLY["text"]]
    assert origins == ["rule 0", "rule 1", "turn 0", "turn 1", "default"]


def test_requests_endpoint_and_script_replacement() -> None:
    with FakeModelServer() as fake:
        assert _get(fake.base_url + "/_requests") == []
        assert _post(fake.base_url + "/_script", {"turns": [{"text": "from POST"}]}) == {
            "ok": True}
        reply = _post(fake.base_url + "/v1/messages",
                      {"model": "m", "max_tokens": 5,
                       "messages": [{"role": "user", "content": "hi"}]})
        assert reply["content"] == [{"type": "text", "text": "from POST"}]
        recorded = _get(fake.base_url + "/_requests")
    assert len(recorded) == 1 and recorded[0]["protocol"] == "anthropic"
    assert recorded[0]["body"]["messages"][0]["content"] == "hi"
    assert "headers" not in recorded[0]


def test_script_from_file_and_validation(tmp_path: Path) -> None:
    path = tmp_path / "script.json"
    path.write_text(json.dumps([{"text": "a"}, {"error": "rate_limit"}]))
    assert len(Script(path).turns) == 2
    with pytest.raises(ScriptError, match="unknown key"):
        Script([{"txt": "typo"}])
    with pytest.raises(ScriptError, match="error must be one of"):
        Script([{"error": "teapot"}])
    with pytest.raises(ScriptError, match="when may only use"):
        Script({"rules": [{"when": {"sometimes": True}, "reply": {}}]})


def test_demo_script_drives_a_read_file_loop() -> None:
    with FakeModelServer(DEMO_SCRIPT) as fake:
        async def go() -> list[Message]:
            provider = await create_provider(ProviderOptions(
                provider="openai", model="m", api_key=Secret("k"), base_url=fake.base_url,
                max_retries=0))
            try:
                first = await complete(provider, "sys", [Message(role="user", content="go")],
                                       TOOLS)
                call = first.message.tool_calls[0]
                history = [Message(role="user", content="go"), first.message,
                           Message(role="user", tool_result=ToolResult(call.id, call.name, "#"))]
                second = await complete(provider, "sys", history, TOOLS)
                summary = await complete(provider, "summarise", history, [])
            finally:
                await provider.aclose()
            return [first.message, second.message, summary.message]
        first, second, summary = asyncio.run(go())
    assert first.tool_calls[0].name == "read_file"
    assert first.tool_calls[0].arguments == {"path": "README.md"}
    assert "README.md" in second.content and not second.tool_calls
    assert "<summary>" in summary.content and "[]" in summary.content


def test_main_serves_until_terminated(tmp_path: Path) -> None:
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"turns": [{"text": "scripted"}]}))
    proc = subprocess.Popen(
        [sys.executable, "-c", "import sys; from pseudoclaude.fake_model import main; "
                               "sys.exit(main(sys.argv[1:]))", "--port", "0",
         "--script", str(script)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        reply = _post(url + "/chat/completions",
                      {"model": "m", "messages": [{"role": "user", "content": "q"}]})
        assert reply["choices"][0]["message"]["content"] == "scripted"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=5) == 0
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()


def test_main_rejects_a_bad_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert main(["--script", str(bad)]) == 2
    assert "pseudoclaude fake-model:" in capsys.readouterr().err


@pytest.mark.parametrize(("script", "field"), [
    ({"turns": 5}, "turns"),
    ({"rules": {"when": {}}}, "rules"),
    ({"turns": [{"text": 3}]}, "turns[0].text"),
    ({"turns": [{"tool_calls": "read_file"}]}, "turns[0].tool_calls"),
    ({"turns": [{"delay": "slow"}]}, "turns[0].delay"),
    ({"turns": [{"omit_done": 1}]}, "turns[0].omit_done"),
    ({"rules": [{"reply": {"text": "x"}, "times": "twice"}]}, "rules[0].times"),
    ({"rules": [{"reply": {"text": "x"}, "times": True}]}, "rules[0].times"),
    ({"default": "hello"}, "default"),
    ({"limit": 30000}, "limit"),
    ({"limit": {"max_tokens": "many"}}, "limit.max_tokens"),
    ({"limit": {"max_tokens": 0}}, "limit.max_tokens"),
    ({"limit": {"max_tokens": True}}, "limit.max_tokens"),
    ({"limit": {"max_token": 100}}, "limit"),
    ("{", "not valid JSON"),
])
def test_every_malformed_script_is_one_line_naming_the_field(tmp_path: Path, script: Any,
                                                             field: str) -> None:
    path = tmp_path / "script.json"
    path.write_text(script if isinstance(script, str) else json.dumps(script))
    done = subprocess.run([sys.executable, "-m", "pseudoclaude", "fake-model", "--script",
                           str(path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and field in lines[0], done.stderr


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_provider_limit_mode_is_prompt_too_long_through_the_providers(provider: str) -> None:
    limit = 2_000
    script = {"limit": {"max_tokens": limit}, "turns": [{"text": "fits"}]}
    big = [Message(role="user", content="x" * (limit * 4))]
    small = [Message(role="user", content="hello")]
    with FakeModelServer(script) as fake:
        async def go() -> tuple[BaseException, str]:
            llm = await create_provider(ProviderOptions(
                provider=provider, model="m", api_key=Secret("k"), base_url=fake.base_url,
                max_retries=0))
            try:
                with pytest.raises(PromptTooLong) as caught:
                    await complete(llm, "sys", big, TOOLS)
                done = await complete(llm, "sys", small, TOOLS)
            finally:
                await llm.aclose()
            return caught.value, done.message.content
        error, answer = asyncio.run(go())
        records = fake.requests
    assert answer == "fits"  # under the limit: a normal answer, and the turn was not consumed
    over = records[0]
    tokens = prompt_tokens(over["body"])
    assert tokens > limit and prompt_tokens(records[1]["body"]) <= limit
    assert (over["reply"], over["status"], records[1]["reply"]) == ("limit", 400, "turn 0")
    if provider == "anthropic":
        expected = f"anthropic API error 400: prompt is too long: {tokens} tokens > {limit} maximum"
    else:
        expected = (f"openai API error 400: This model's maximum context length is {limit} "
                    f"tokens. However, your messages resulted in {tokens} tokens. Please "
                    "reduce the length of the messages.")
    assert str(error) == expected


def test_limit_error_bodies_are_the_providers_own() -> None:
    assert limit_error("anthropic", 215, 200) == (400, {"type": "error", "error": {
        "type": "invalid_request_error",
        "message": "prompt is too long: 215 tokens > 200 maximum"}})
    status, body = limit_error("openai", 131, 128)
    assert status == 400 and body["error"]["code"] == "context_length_exceeded"
    assert body["error"]["message"].startswith(
        "This model's maximum context length is 128 tokens. However, your messages resulted "
        "in 131 tokens.")


def test_prompt_tokens_is_the_json_of_system_messages_and_tools() -> None:
    body = {"model": "m", "max_tokens": 10, "stream": True, "system": "s",
            "messages": [{"role": "user", "content": "é" * 10}], "tools": []}
    size = len(b'{"system":"s","messages":[{"role":"user","content":"' + "é".encode() * 10
               + b'"}],"tools":[]}')
    assert prompt_tokens(body) == -(-size * 2 // 7)


def test_bare_summary_rule_answers_only_requests_without_tools() -> None:
    bare = {"when": {"has_tools": False}, "reply": {"text": "<summary>Work continues.</summary>"}}
    with FakeModelServer({"rules": [bare], "turns": [{"text": "agent turn"}]}) as fake:
        async def go() -> list[str]:
            llm = await create_provider(ProviderOptions(
                provider="anthropic", model="m", api_key=Secret("k"), base_url=fake.base_url,
                max_retries=0))
            try:
                asked = [Message(role="user", content="q")]
                return [(await complete(llm, "", asked, [])).message.content,
                        (await complete(llm, "", asked, TOOLS)).message.content]
            finally:
                await llm.aclose()
        assert asyncio.run(go()) == ["<summary>Work continues.</summary>", "agent turn"]
