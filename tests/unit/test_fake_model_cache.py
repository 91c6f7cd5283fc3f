"""The fake model's prompt-cache simulation (``"cache": true``): Anthropic's breakpoints with
their 20-block lookback, writes and reads, the minimum cacheable size, per-model caches, and
OpenAI's automatic prefix caching; then through the real SDKs and the project's providers."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.fake_model.cache import MIN_CACHEABLE, PrefixCache
from pseudoclaude.fake_model.script import ScriptError
from pseudoclaude.llm.provider import ToolSpec, complete
from pseudoclaude.llm.types import Message

CC = {"type": "ephemeral"}
BIG = "x" * 8_000  # ~2,300 tokens: over the minimum on its own


def text(t: str, marked: bool = False) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": t}
    if marked:
        block["cache_control"] = dict(CC)
    return block


def body(*turns: tuple[str, list[dict[str, Any]]], model: str = "m",
         system: str = BIG) -> dict[str, Any]:
    return {"model": model, "system": [text(system, marked=True)],
            "messages": [{"role": r, "content": c} for r, c in turns]}


def test_a_breakpoint_writes_then_the_same_prefix_is_read() -> None:
    cache = PrefixCache()
    first = cache.anthropic(body(("user", [text("hello", marked=True)])))
    assert first.read == 0 and first.write > MIN_CACHEABLE and first.input == 0
    again = cache.anthropic(body(("user", [text("hello", marked=True)])))
    assert again.read == first.write and again.write == 0 and again.input == 0
    assert again.prompt == first.prompt


def test_a_longer_conversation_reads_the_old_prefix_and_writes_the_new_part() -> None:
    cache = PrefixCache()
    one = cache.anthropic(body(("user", [text("q1", marked=True)])))
    two = cache.anthropic(body(("user", [text("q1")]), ("assistant", [text("a1 " * 200)]),
                               ("user", [text("q2", marked=True)])))
    assert two.read == one.write  # the lookback finds q1's entry three blocks back
    assert two.write == two.prompt - two.read and two.write > 0 and two.input == 0


def test_the_lookback_is_twenty_blocks() -> None:
    """An entry 20 blocks back from a breakpoint is found; 21 back it is not (only the
    system prompt's own entry is, at its breakpoint)."""
    def after_q(n: int) -> dict[str, Any]:
        blocks = [text(f"n{i}") for i in range(n)]
        blocks[-1]["cache_control"] = dict(CC)
        return body(("user", [text("q"), *blocks]))

    for n, found in ((19, True), (20, False)):
        cache = PrefixCache()
        first = cache.anthropic(body(("user", [text("q", marked=True)])))
        later = cache.anthropic(after_q(n))
        assert (later.read == first.write) is found, n
        assert later.read > 0  # the system prompt's entry at least


def test_no_breakpoint_no_cache_and_a_small_prefix_is_not_written() -> None:
    cache = PrefixCache()
    plain = {"model": "m", "system": BIG, "messages": [{"role": "user", "content": "hi"}]}
    assert cache.anthropic(plain).write == 0 and cache.anthropic(plain).read == 0
    small = body(("user", [text("hi", marked=True)]), system="short")
    assert cache.anthropic(small).write == 0 and len(cache) == 0
    assert cache.anthropic(small).read == 0


def test_a_changed_early_block_invalidates_everything_after_it() -> None:
    cache = PrefixCache()
    cache.anthropic(body(("user", [text("q1", marked=True)])))
    changed = cache.anthropic(body(("user", [text("q1", marked=True)]), system=BIG + "!"))
    assert changed.read == 0 and changed.write > 0


def test_caches_are_per_model() -> None:
    cache = PrefixCache()
    cache.anthropic(body(("user", [text("q", marked=True)]), model="big"))
    other = cache.anthropic(body(("user", [text("q", marked=True)]), model="small"))
    assert other.read == 0 and other.write > 0


def test_openai_reads_the_longest_seen_prefix_in_128_token_steps() -> None:
    cache = PrefixCache()
    base = [{"role": "system", "content": BIG}, {"role": "user", "content": "q1"}]
    first = cache.openai({"model": "m", "messages": base})
    assert first.read == 0 and first.write == 0
    second = cache.openai({"model": "m", "messages": [
        *base, {"role": "assistant", "content": "a1"}, {"role": "user", "content": "q2"}]})
    assert MIN_CACHEABLE <= second.read <= first.input
    assert (second.read - MIN_CACHEABLE) % 128 == 0 and first.input - second.read < 128
    assert cache.openai({"model": "m", "messages": [{"role": "user", "content": "tiny"}]}
                        ).read == 0


def test_the_script_key_is_checked() -> None:
    with pytest.raises(ScriptError, match="cache must be true or false"):
        FakeModelServer({"cache": "yes"})


@pytest.mark.parametrize("protocol", ["anthropic", "openai"])
def test_through_the_real_sdks_a_tool_loop_reads_its_prefix(protocol: str) -> None:
    """Two requests of one tool loop through the project's provider: the second reads what
    the first wrote (Anthropic) or sent (OpenAI), and the provider's Usage carries it."""
    tools = [ToolSpec(name="read_file", description="Read a file. " * 40,
                      input_schema={"type": "object", "properties": {}})]
    history = [Message(role="user", content="Look at the project. " + "y" * 3_000)]
    with FakeModelServer({"cache": True, "default": {"text": "ok"}}) as fake:
        source = fake.provider_source(protocol)

        async def go() -> list[Any]:
            provider = await source()
            first = await complete(provider, BIG, history, tools)
            longer = [*history, first.message, Message(role="user", content="and now?")]
            second = await complete(provider, BIG, longer, tools)
            return [first.usage, second.usage]

        first, second = asyncio.run(go())
        recorded = [r["usage"] for r in fake.requests]
    assert [u["cache_read"] for u in recorded] == [first.cache_read, second.cache_read]
    if protocol == "anthropic":
        assert first.cache_read == 0 and first.cache_write > MIN_CACHEABLE
        assert second.cache_read == first.cache_write
    else:
        assert first.cache_read == 0 and second.cache_read >= MIN_CACHEABLE
    assert second.cache_read >= math.floor(0.5 * (second.input_tokens + second.cache_read
                                                  + second.cache_write))
