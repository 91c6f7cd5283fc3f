"""A local OpenAI-compatible server through the language server: the window it runs with
reaches the context meter, and a server without tools answers a run with one error."""

from __future__ import annotations

from typing import Any

import pytest
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import CONTEXT, RUN
from pseudoclaude.fake_model import Script

MODEL = "qwen-local"
MEMORY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}


def props(tools: bool) -> dict[str, Any]:
    return {"default_generation_settings": {"n_ctx": 16384},
            "chat_template_caps": {"supports_tools": tools}}


@pytest.fixture
def local(env: Any) -> Any:
    """The editor's settings name a local server (llama.cpp, as the fake model plays it)."""
    options = env.options
    env.options = lambda: {**options(), "provider": "openai", "model": MODEL,
                           "baseUrl": env.fake.base_url + "/v1"}
    return env


async def test_the_servers_window_reaches_the_meter(local: Any, client: LanguageClient
                                                    ) -> None:
    env = local
    env.fake.script = Script({"rules": [MEMORY], "local": {"props": props(True)}, "turns": [
        {"text": '<tool_call>{"name": "read_file", "arguments": {"path": "notes.txt"}}'
                 "</tool_call>"},
        {"text": "alpha and beta"}]})
    result = await env.call(client, RUN, {"prompt": "what do the notes say?"})
    assert (result["stopReason"], result["iterations"]) == ("completed", 2), result
    assert [e["name"] for e in env.events if e["kind"] == "toolResult"] == ["read_file"]
    await env.until(lambda: any(u["contextWindow"] == 16384 for u in env.context_usage))
    context = await env.call(client, CONTEXT)
    assert context["contextWindow"] == 16384 and context["autoCompactThreshold"] < 16384
    assert [p["path"] for p in env.fake.probes] == ["/props"]


async def test_a_server_without_tools_answers_one_error(local: Any, client: LanguageClient
                                                        ) -> None:
    env = local
    env.fake.script = Script({"rules": [MEMORY], "local": {"props": props(False)}})
    result = await env.call(client, RUN, {"prompt": "hi"})
    assert result["stopReason"] == "error"
    assert f"the model {MODEL} does not support tool calls" in result["error"]
    assert env.fake.requests == []  # refused before the first request
