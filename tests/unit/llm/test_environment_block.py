"""Where each provider puts the environment block on the wire: after the cached system
prompt, so that a new date or git status leaves the system prompt's cache entry whole."""

from __future__ import annotations

from typing import Any

import pytest

from pseudoclaude.fake_model import FakeModelServer

BLOCK = "Runtime environment:\n- working directory: /w"


@pytest.fixture
def anthropic_turns(provider_turns: Any) -> Any:
    return provider_turns("anthropic", "claude-test", "sk-ant-test-0123456789", [])


@pytest.fixture
def openai_turns(provider_turns: Any) -> Any:
    return provider_turns("openai", "gpt-test", "sk-openai-test-0123456789", [], path="/v1")


def test_anthropic_sends_it_as_a_second_system_block_after_the_breakpoint(
        anthropic_turns: Any) -> None:
    with FakeModelServer([{"text": "ok"}]) as fake:
        anthropic_turns.run_turn(fake, environment=BLOCK)
        [request] = fake.requests
    first, second = request["body"]["system"]
    assert first["text"] == "SYSTEM PROMPT" and first["cache_control"]["type"] == "ephemeral"
    assert second == {"type": "text", "text": BLOCK}  # no cache marker


def test_openai_sends_it_as_a_second_system_message(openai_turns: Any) -> None:
    with FakeModelServer([{"text": "ok"}]) as fake:
        openai_turns.run_turn(fake, environment=BLOCK)
        [request] = fake.requests
    first, second, user = request["body"]["messages"]
    assert first == {"role": "system", "content": "SYSTEM PROMPT"}
    assert second == {"role": "system", "content": BLOCK}
    assert user["role"] == "user"
