"""A local OpenAI-compatible server (llama.cpp, vLLM, Ollama) as the fake model plays one: its
window asked once, tool calls printed as text, and a server that refuses tools."""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import pytest

from pseudoclaude.config import Settings
from pseudoclaude.fake_model import FakeModelServer, Script, ScriptError
from pseudoclaude.llm import window
from pseudoclaude.llm.errors import ToolsUnsupported
from pseudoclaude.llm.provider import Stop, TextDelta, ToolCallComplete, ToolSpec
from pseudoclaude.llm.text_calls import calls_in_text

KEY = "sk-local-test-0123456789abcdef"
TOOLS = [ToolSpec("read_file", "Read a file.",
                  {"type": "object", "properties": {"path": {"type": "string"}}})]
NAMES = {"read_file", "find_files"}
PROPS = {"default_generation_settings": {"n_ctx": 8192},
         "chat_template_caps": {"supports_tools": True}}


def model() -> str:
    """A model name of its own: what a server said is remembered per server and model for
    the whole process (and a port may come back in a later test)."""
    return f"local-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def turns(provider_turns: Any) -> Any:
    return provider_turns("openai", model(), KEY, TOOLS, "/v1")


def settings(fake: FakeModelServer, name: str, **more: Any) -> Settings:
    return Settings(provider="openai", model=name, base_url=fake.base_url + "/v1", **more)


# -- the window --------------------------------------------------------------------------------

def test_llama_cpp_props_give_the_window_asked_once(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "pseudoclaude.llm")
    with FakeModelServer({"local": {"props": PROPS}}) as fake:
        wanted = settings(fake, model())
        assert window.context_window(wanted) == 128_000  # not asked yet: the default

        async def twice() -> list[int | None]:
            return [await window.discover_window(wanted) for _ in range(2)]

        assert asyncio.run(twice()) == [8192, 8192]
        assert window.context_window(wanted) == 8192
        assert [p["path"] for p in fake.probes] == ["/props"]  # the first answer wins, once
    lines = [r.getMessage() for r in caplog.records if "context window" in r.getMessage()]
    assert len(lines) == 1 and "8,192 tokens (llama.cpp /props)" in lines[0]


def test_vllm_max_model_len_of_the_configured_model() -> None:
    name = model()
    models = {"data": [{"id": "other", "max_model_len": 4096},
                       {"id": name, "max_model_len": 32768}]}
    with FakeModelServer({"local": {"models": models}}) as fake:
        assert asyncio.run(window.discover_window(settings(fake, name))) == 32768
        assert [(p["method"], p["path"]) for p in fake.probes] == [
            ("GET", "/props"), ("GET", "/v1/models")]


@pytest.mark.parametrize(("parameters", "expected"), [
    ("stop \"<end_of_turn>\"\nnum_ctx                        8192", 8192),
    ("temperature 0.7", 131072),
])
def test_ollama_context_length_lowered_to_num_ctx(parameters: str, expected: int) -> None:
    name = model()
    show = {"model_info": {"general.architecture": "llama", "llama.context_length": 131072},
            "parameters": parameters}
    with FakeModelServer({"local": {"show": show}}) as fake:
        assert asyncio.run(window.discover_window(settings(fake, name))) == expected
        asked = fake.probes[-1]
    assert (asked["method"], asked["path"], asked["body"]) == (
        "POST", "/api/show", {"model": name})


def test_a_server_that_answers_404_keeps_the_default_said_once(
        caplog: pytest.LogCaptureFixture) -> None:
    with FakeModelServer() as fake:
        wanted = settings(fake, model())

        async def twice() -> list[int | None]:
            return [await window.discover_window(wanted) for _ in range(2)]

        assert asyncio.run(twice()) == [None, None]
        assert len(fake.probes) == 3 and {p["status"] for p in fake.probes} == {404}
    assert window.context_window(wanted) == 128_000
    lines = [r for r in caplog.records if "did not say its context window" in r.getMessage()]
    assert len(lines) == 1 and "128,000" in lines[0].getMessage()


def test_an_unreachable_server_keeps_the_default() -> None:
    with FakeModelServer() as fake:
        gone = settings(fake, model())
    assert asyncio.run(window.discover_window(gone)) is None  # refused: no error, no wait
    assert window.context_window(gone) == 128_000


@pytest.mark.parametrize("which", ["set by the user", "api.openai.com", "anthropic"])
def test_not_asked_when_set_or_not_a_local_server(which: str) -> None:
    with FakeModelServer({"local": {"props": PROPS}}) as fake:
        wanted = {
            "set by the user": settings(fake, model(), context_window=20_000,
                                        context_window_set=True),
            "api.openai.com": Settings(provider="openai", model=model(),
                                       base_url="https://api.openai.com/v1"),
            "anthropic": Settings(provider="anthropic", model=model(),
                                  base_url=fake.base_url),
        }[which]
        assert asyncio.run(window.discover_window(wanted)) is None
        assert fake.probes == []
    assert window.context_window(wanted) == wanted.context_window


def test_server_root_drops_v1_only() -> None:
    assert window.server_root("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080"
    assert window.server_root("http://h/llama/v1") == "http://h/llama"
    assert window.server_root("http://h:11434") == "http://h:11434"


# -- tool calls printed as text ----------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ('<tool_call>\n{"name": "read_file", "arguments": {"path": "a.py"}}\n</tool_call>',
     [("read_file", {"path": "a.py"})]),
    ('  <tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>\n'
     '<tool_call>{"name": "find_files", "arguments": "{\\"pattern\\": \\"*.md\\"}"}</tool_call>',
     [("read_file", {"path": "a"}), ("find_files", {"pattern": "*.md"})]),
    ('{"name": "read_file", "arguments": {"path": "a.py"}}', [("read_file", {"path": "a.py"})]),
    ('<tool_call>{"name": "read_file", "arguments": "{bad"}</tool_call>',
     [("read_file", "{bad")]),  # taken as the call: its arguments fail as any bad ones do
])
def test_text_that_is_only_calls(text: str, expected: list[tuple[str, Any]]) -> None:
    assert [(c.name, c.arguments) for c in calls_in_text(text, NAMES)] == expected


@pytest.mark.parametrize("text", [
    'I will call {"name": "read_file", "arguments": {"path": "a.py"}} now.',
    'Done.\n<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call>',
    '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}</tool_call> and more',
    '<tool_call>{"name": "read_file", "arguments": {"path": "a"}}',
    '{"name": "delete_everything", "arguments": {}}',
    '{"name": "read_file", "arguments": {"path": "a"}} {"name": "read_file", "arguments": {}}',
    '{"name": "read_file", "arguments": {"path": "a"}, "why": "to see"}',
    '{"name": "read_file", "arguments": [1, 2]}',
    '[{"name": "read_file", "arguments": {}}]',
    "",
])
def test_prose_and_anything_else_stays_text(text: str) -> None:
    assert calls_in_text(text, NAMES) == []


def test_a_turn_whose_text_is_calls_becomes_those_calls(turns: Any) -> None:
    text = ['<tool_call>\n{"name": "read_file", ', '"arguments": {"path": "a.py"}}\n</tool_call>']
    with FakeModelServer([{"text": text, "usage": {"input": 40, "output": 20}}]) as fake:
        events, done = turns.run_turn(fake)
    assert [e.text for e in events if isinstance(e, TextDelta)] == text  # it streamed as text
    calls = [e for e in events if isinstance(e, ToolCallComplete)]
    assert [(e.call.name, e.call.arguments, e.from_text) for e in calls] == [
        ("read_file", {"path": "a.py"}, True)]
    assert done.message.content == "" and done.message.tool_calls == [calls[0].call]
    assert done.stop_reason == "tool_use" and done.usage is not None


def test_without_tools_in_the_request_text_stays_text(turns: Any) -> None:
    text = '{"name": "read_file", "arguments": {"path": "a.py"}}'
    with FakeModelServer([{"text": text}]) as fake:
        _, done = turns.run_turn(fake, tools=[])
    assert done.message.content == text and done.message.tool_calls == []


# -- a server that refuses tools ---------------------------------------------------------------

@pytest.mark.parametrize("error", [
    # Ollama: a model whose template has no tools (HTTP 400, type api_error)
    {"status": 400, "type": "api_error", "message": "{model} does not support tools"},
    # llama-server started without --jinja (HTTP 500)
    {"status": 500, "type": "server_error", "message": "tools param requires --jinja flag"},
    # vLLM started without a tool parser
    {"status": 400, "type": "BadRequestError", "message": '"auto" tool choice requires '
     "--enable-auto-tool-choice and --tool-call-parser to be set"},
])
def test_a_refusal_of_tools_names_the_model_and_is_not_retried(
        turns: Any, error: dict[str, Any]) -> None:
    error = {**error, "message": error["message"].replace("{model}", turns.model)}
    with FakeModelServer([{"error": error}, {"text": "never"}]) as fake:
        raised = turns.turn_error(fake, max_retries=2)
        assert len(fake.requests) == 1
    assert isinstance(raised, ToolsUnsupported) and not raised.retryable
    assert f"the model {turns.model} does not support tool calls" in str(raised)
    assert error["message"] in str(raised)


def test_props_without_tool_support_fails_before_the_first_request(turns: Any) -> None:
    props = {**PROPS, "chat_template_caps": {"supports_tools": False}}
    with FakeModelServer({"local": {"props": props}, "turns": [{"text": "never"}]}) as fake:
        raised = turns.turn_error(fake)
        assert fake.requests == []
        assert [p["path"] for p in fake.probes] == ["/props"]
    assert isinstance(raised, ToolsUnsupported)
    assert f"the model {turns.model} does not support tool calls" in str(raised)


def test_props_with_tool_support_goes_on(turns: Any) -> None:
    with FakeModelServer({"local": {"props": PROPS}, "turns": [{"text": "hi"}]}) as fake:
        events, done = turns.run_turn(fake)
        assert len(fake.requests) == 1
    assert done.message.content == "hi" and isinstance(events[-1], Stop)


@pytest.mark.parametrize(("local", "says"), [
    ({"propz": {}}, "local must be an object with keys from"),
    ({"props": [1]}, "local.props must be an object"),
    ([], "local must be an object"),
])
def test_the_fake_models_local_answers_are_checked(local: Any, says: str) -> None:
    with pytest.raises(ScriptError, match=says):
        Script({"local": local})
