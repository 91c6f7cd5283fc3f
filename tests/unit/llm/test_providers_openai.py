"""The OpenAI adapter: the real ``openai`` SDK against the fake model over loopback."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import pytest

from pseudoclaude.config import Secret
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.errors import (
    AuthenticationFailed,
    NetworkError,
    Overloaded,
    PromptTooLong,
    ProviderError,
    ProviderTimeout,
    RateLimited,
    ServerError,
)
from pseudoclaude.llm.provider import (
    ProviderOptions,
    Retrying,
    Stop,
    TextDelta,
    ThinkingDelta,
    ToolCallComplete,
    ToolSpec,
    TurnBuilder,
    UsageEvent,
    create_provider,
)
from pseudoclaude.llm.types import Message, ThinkingBlock, ToolCall, ToolResult, Usage

KEY = "sk-openai-test-fedcba9876543210"
TOOLS = [ToolSpec("read_file", "Read a file.",
                  {"type": "object", "properties": {"path": {"type": "string"}}})]
HELLO = [Message(role="user", content="hello")]


@pytest.fixture
def turns(provider_turns: Any) -> Any:
    return provider_turns("openai", "gpt-test", KEY, TOOLS, "/v1")


def test_plain_text_answer_and_request_shape(turns: Any) -> None:
    with FakeModelServer([{"text": "Hello there.", "chunks": 1}]) as fake:
        events, done = turns.run_turn(fake)
        request = fake.requests[0]
    assert done.message == Message(role="assistant", content="Hello there.")
    assert done.stop_reason == "end_turn"
    assert isinstance(events[-1], Stop) and events[-1].raw == "stop"
    body = request["body"]
    assert request["path"] == "/v1/chat/completions"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [{"role": "system", "content": "SYSTEM PROMPT"},
                                {"role": "user", "content": "hello"}]
    assert body["tools"] == [{"type": "function", "function": {
        "name": "read_file", "description": "Read a file.",
        "parameters": TOOLS[0].input_schema}}]
    assert body["max_tokens"] == 8192  # a compatible server: max_tokens, not max_completion


def test_streamed_text_arrives_in_order(turns: Any) -> None:
    with FakeModelServer([{"text": ["Hel", "lo, ", "wor", "ld", "!"]}]) as fake:
        events, done = turns.run_turn(fake)
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hel", "lo, ", "wor",
                                                                     "ld", "!"]
    assert done.message.content == "Hello, world!"


def test_base_url_without_v1_works_too(turns: Any) -> None:
    with FakeModelServer([{"text": "ok"}]) as fake:
        async def go() -> str:
            provider = await turns.provider_for(fake, base_url=fake.base_url)
            builder = TurnBuilder()
            async for event in provider.stream("", HELLO, []):
                builder.add(event)
            await provider.aclose()
            return builder.message().content
        assert asyncio.run(go()) == "ok"
        assert fake.requests[0]["path"] == "/chat/completions"
        assert "tools" not in fake.requests[0]["body"]


def test_several_tool_calls_reassembled_from_fragments(turns: Any) -> None:
    calls = [{"name": "read_file", "arguments": {"path": "src/ä.py", "limit": 20}},
             {"name": "read_file", "arguments": {"path": "b.py"}},
             {"name": "find_files", "arguments": {"pattern": "*.md"}}]
    with FakeModelServer([{"text": "Reading.", "tool_calls": calls, "arg_chunks": 6}]) as fake:
        events, done = turns.run_turn(fake)
    got = [e.call for e in events if isinstance(e, ToolCallComplete)]
    assert [(c.name, c.arguments) for c in got] == [(c["name"], c["arguments"]) for c in calls]
    assert all(c.id.startswith("call_") for c in got) and len({c.id for c in got}) == 3
    assert done.stop_reason == "tool_use" and done.message.content == "Reading."


def test_invalid_json_arguments_are_kept_as_a_string(turns: Any) -> None:
    with FakeModelServer([{"tool_calls": [{"name": "read_file",
                                           "arguments": "{'path': 'a.py'}"}]}]) as fake:
        _, done = turns.run_turn(fake)
    assert done.message.tool_calls[0].arguments == "{'path': 'a.py'}"


def test_history_tool_calls_and_results_are_serialised(turns: Any) -> None:
    history = [
        Message(role="user", content="first"),
        Message(role="user", content="second"),
        Message(role="assistant", content="", thinking=[ThinkingBlock("t", "s")], tool_calls=[
            ToolCall("call_1", "read_file", {"path": "ä.py"}),
            ToolCall("call_2", "read_file", "{not json")]),
        Message(role="user", tool_result=ToolResult("call_1", "read_file", "A")),
        Message(role="user", tool_result=ToolResult("call_2", "read_file", "bad", True)),
        Message(role="user", content="now summarise"),
    ]
    with FakeModelServer([{"text": "ok"}]) as fake:
        turns.run_turn(fake, messages=history, system="")
        messages = fake.requests[0]["body"]["messages"]
    assert messages[0] == {"role": "user", "content": "first\n\nsecond"}
    assistant = messages[1]
    assert assistant["role"] == "assistant" and assistant.get("content") is None
    # arguments that are not a JSON object go back as {} (llama.cpp answers 500 to them)
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == [
        json.dumps({"path": "ä.py"}, ensure_ascii=False), "{}"]
    assert messages[2] == {"role": "tool", "tool_call_id": "call_1", "content": "A"}
    assert messages[3] == {"role": "tool", "tool_call_id": "call_2", "content": "bad"}
    assert messages[4] == {"role": "user", "content": "now summarise"}
    assert len(messages) == 5


def test_usage_mapping_with_cached_tokens(turns: Any) -> None:
    usage = {"input": 300, "output": 42, "cache_read": 1700}
    with FakeModelServer([{"text": "ok", "usage": usage}]) as fake:
        events, done = turns.run_turn(fake)
    # prompt_tokens 2000 of which 1700 cached → input 300 + cache_read 1700.
    assert done.usage == Usage(input_tokens=300, output_tokens=42, cache_read=1700)
    assert sum(isinstance(e, UsageEvent) for e in events) == 1


def test_reasoning_content_is_shown_but_not_kept(turns: Any) -> None:
    with FakeModelServer([{"thinking": "pondering", "text": "answer"}]) as fake:
        events, done = turns.run_turn(fake)
    assert [e.text for e in events if isinstance(e, ThinkingDelta)] == ["pondering"]
    assert done.message.thinking == [] and done.message.content == "answer"


@pytest.mark.parametrize(("failure", "expected", "status"), [
    ("rate_limit", RateLimited, 429),
    ("server_error", ServerError, 500),
    ("overloaded", Overloaded, 503),
    ("prompt_too_long", PromptTooLong, 400),
    ("auth", AuthenticationFailed, 401),
])
def test_http_failures_map_to_typed_errors(failure: str, expected: type[ProviderError],
                                           status: int, turns: Any) -> None:
    with FakeModelServer([{"error": failure}]) as fake:
        error = turns.turn_error(fake)
    assert type(error) is expected and error.status == status and error.provider == "openai"
    assert KEY not in str(error)


def test_overloaded_529_from_a_compatible_server(turns: Any) -> None:
    failure = {"status": 529, "type": "overloaded_error", "message": "Overloaded"}
    with FakeModelServer([{"error": failure}]) as fake:
        assert isinstance(turns.turn_error(fake), Overloaded)


def test_error_inside_the_stream_is_typed(turns: Any) -> None:
    with FakeModelServer([{"error": "rate_limit", "error_after": 1}]) as fake:
        assert isinstance(turns.turn_error(fake), RateLimited)


def test_stream_cut_before_finish_is_a_network_error(turns: Any) -> None:
    with FakeModelServer([{"text": ["a", "b", "c"], "cut_after": 3}, {"text": "no"}]) as fake:
        error = turns.turn_error(fake, max_retries=2)
        assert len(fake.requests) == 1
    assert isinstance(error, NetworkError)


def test_stream_cut_after_finish_is_tolerated(turns: Any) -> None:
    # role chunk, 2 text chunks, finish chunk, then the cut (no usage chunk, no [DONE]).
    with FakeModelServer([{"text": ["a", "b"], "cut_after": 4}]) as fake:
        events, done = turns.run_turn(fake)
    assert done.message.content == "ab" and done.stop_reason == "end_turn"
    assert done.usage is None and not any(isinstance(e, UsageEvent) for e in events)


def test_compatible_server_without_done_usage_or_finish_reason(turns: Any) -> None:
    script = [{"text": "no done", "omit_done": True},
              {"text": "no usage", "omit_usage": True},
              {"tool_calls": [{"name": "read_file", "arguments": {"path": "x"}}],
               "omit_finish": True, "omit_done": True, "omit_usage": True}]
    with FakeModelServer(script) as fake:
        _, first = turns.run_turn(fake)
        _, second = turns.run_turn(fake)
        _, third = turns.run_turn(fake)
    assert first.message.content == "no done" and first.usage is not None
    assert second.message.content == "no usage" and second.usage is None
    assert third.stop_reason == "tool_use"
    assert third.message.tool_calls[0].arguments == {"path": "x"}


def test_stop_finish_reason_with_tool_calls_means_tool_use(turns: Any) -> None:
    turn = {"tool_calls": [{"name": "read_file", "arguments": {}}], "stop_reason": "stop"}
    with FakeModelServer([turn]) as fake:
        _, done = turns.run_turn(fake)
    assert done.stop_reason == "tool_use"


def test_empty_stream_is_a_network_error_and_retried(turns: Any) -> None:
    with FakeModelServer([{"cut_after": 0}, {"text": "second"}]) as fake:
        events, done = turns.run_turn(fake, max_retries=1)
    assert done.message.content == "second"
    assert [type(e.error) for e in events if isinstance(e, Retrying)] == [NetworkError]


def test_retry_then_success(turns: Any) -> None:
    with FakeModelServer([{"error": "overloaded"}, {"error": "rate_limit"},
                          {"text": "finally"}]) as fake:
        events, done = turns.run_turn(fake, max_retries=2)
        assert len(fake.requests) == 3
    assert done.message.content == "finally"
    assert [r.attempt for r in events if isinstance(r, Retrying)] == [1, 2]


def test_length_in_the_middle_of_a_tool_call_is_a_call_that_cannot_run(turns: Any) -> None:
    # as llama-server streams a model that repeats its call until the output limit
    turn = {"text": "Writing.", "stop_reason": "length", "usage": {"input": 50, "output": 64},
            "tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}},
                           {"name": "write_file", "arguments": '{"path": "a.py", "content": "'}]}
    with FakeModelServer([turn]) as fake:
        events, done = turns.run_turn(fake, max_tokens=64)
    whole, cut = [e for e in events if isinstance(e, ToolCallComplete)]
    assert (whole.call.arguments, whole.error) == ({"path": "a.py"}, "")
    assert cut.call.arguments == '{"path": "a.py", "content": "'
    assert "cut off by the output limit (maxTokens 64)" in cut.error
    assert done.usage == Usage(input_tokens=50, output_tokens=64)  # the usage still counts
    assert done.stop_reason == "max_tokens" and done.message.content == "Writing."


def test_length_after_the_last_call_closed_still_stops_it(turns: Any) -> None:
    turn = {"stop_reason": "length", "tool_calls": [{"name": "write_file",
                                                      "arguments": {"path": "a.py"}}]}
    with FakeModelServer([turn]) as fake:
        events, _ = turns.run_turn(fake)
    (cut,) = [e for e in events if isinstance(e, ToolCallComplete)]
    assert cut.call.arguments == {"path": "a.py"} and "cut off" in cut.error


def test_length_in_text_is_a_stop_reason(turns: Any) -> None:
    with FakeModelServer([{"text": "cut", "stop_reason": "length"}]) as fake:
        _, done = turns.run_turn(fake)
    assert done.stop_reason == "max_tokens"


def test_stalled_stream_times_out(turns: Any) -> None:
    with FakeModelServer([{"text": "late", "stall": 3, "stall_after": 1}]) as fake:
        error = turns.turn_error(fake, read_timeout=0.3)
    assert isinstance(error, ProviderTimeout)


def test_official_endpoint_uses_max_completion_tokens() -> None:
    async def go() -> dict[str, Any]:
        provider = await create_provider(ProviderOptions(
            provider="openai", model="gpt-4.1", api_key=Secret(KEY)))
        try:
            return provider.request("sys", HELLO, [])  # type: ignore[attr-defined, no-any-return]
        finally:
            await provider.aclose()
    params = asyncio.run(go())
    assert params["max_completion_tokens"] == 8192 and "max_tokens" not in params


def test_cancellation_mid_stream_closes_the_connection(turns: Any) -> None:
    with FakeModelServer([{"text": [f"w{i} " for i in range(60)], "delay": 0.02}]) as fake:
        turns.cancel_mid_stream(fake)
        assert fake.wait_for(lambda reqs: reqs[0]["disconnected"], timeout=3)


def test_leaving_the_loop_early_and_closing_releases_the_connection(turns: Any) -> None:
    with FakeModelServer([{"text": [f"w{i} " for i in range(60)], "delay": 0.02}]) as fake:
        async def go() -> None:
            provider = await turns.provider_for(fake)
            async with contextlib.aclosing(provider.stream("s", HELLO, TOOLS)) as events:
                async for event in events:
                    if isinstance(event, TextDelta):
                        break
            await provider.aclose()
        asyncio.run(go())
        assert fake.wait_for(lambda reqs: reqs[0]["disconnected"], timeout=3)
