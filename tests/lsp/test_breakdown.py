"""The context breakdown through a real server (SPEC §11): ``pseudoclaude/context`` and
``pseudoclaude/contextUsage`` carry ``breakdown``, whose nine categories add up to
``estimatedTokens``; the estimate covers the whole request from the moment a session exists;
and a second server process (a restart) that resumes the session shows the same numbers as
the live server (the anchor comes back from the usage stamped in the log)."""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import CONTEXT, RUN, SESSIONS_NEW, SESSIONS_RESUME

pytestmark = pytest.mark.timeout(180)

CATEGORIES = ("system", "rules", "memory", "skills", "tools", "summary", "messages", "toolCalls",
              "toolResults", "spilled")
SERVER = [sys.executable, "-m", "pseudoclaude", "lsp"]


def check(result: dict[str, Any]) -> dict[str, Any]:
    """The breakdown of a context result or contextUsage notification, with what must hold."""
    b = result["breakdown"]
    assert set(b) == {*CATEGORIES, "free", "reserved"}
    assert all(isinstance(v, int) and v >= 0 for v in b.values()), b
    assert sum(b[c] for c in CATEGORIES) == result["estimatedTokens"], b
    assert b["free"] == max(0, result["contextWindow"] - result["estimatedTokens"])
    assert b["reserved"] == result["contextWindow"] - result["autoCompactThreshold"]
    return dict(b)


async def test_context_and_context_usage_carry_a_breakdown(client: LanguageClient,
                                                           env: Any) -> None:
    empty = await env.call(client, CONTEXT)
    assert empty["estimatedTokens"] == 0 and check(empty)["free"] == empty["contextWindow"]

    await env.call(client, SESSIONS_NEW, {})
    fresh = await env.call(client, CONTEXT)  # before any run: system prompt and tools
    b = check(fresh)
    assert fresh["messageCount"] == 0 and fresh["estimatedTokens"] > 500
    assert b["system"] > 0 and b["tools"] > 0 and b["messages"] == 0

    env.fake.add_turns({"tool_calls": [env.read_file("notes.txt")]},
                       {"text": "The notes say alpha and beta."})
    env.context_usage.clear()
    result = await env.call(client, RUN, {"prompt": "what do the notes say?"})
    assert result["stopReason"] == "completed"
    await env.until(lambda: any(n["sessionId"] == result["sessionId"]
                                for n in env.context_usage))
    for notification in env.context_usage:
        check(notification)
    context = await env.call(client, CONTEXT)
    b = check(context)
    assert b["messages"] > 0 and b["toolCalls"] > 0 and b["toolResults"] > 0
    assert b["spilled"] == b["summary"] == 0
    await env.until(lambda: any(e["kind"] == "stop" for e in env.events))
    # the last meter update after the run carries the same numbers as the request
    assert env.context_usage[-1]["estimatedTokens"] == context["estimatedTokens"]
    assert env.context_usage[-1]["breakdown"] == context["breakdown"]


async def test_a_restarted_server_shows_what_the_live_server_showed(client: LanguageClient,
                                                                    env: Any) -> None:
    env.fake.add_turns({"tool_calls": [env.read_file("README.md")]}, {"text": "A sample."},
                       {"text": "Still a sample."})
    await env.call(client, RUN, {"prompt": "what is this project?"})
    live = await env.call(client, CONTEXT)
    check(live)

    restarted = await env.second_server()
    try:
        resumed = await asyncio.wait_for(restarted.protocol.send_request_async(
            SESSIONS_RESUME, {"sessionId": "latest"}), 60)
        assert resumed["sessionId"] == live["sessionId"]
        after = await asyncio.wait_for(restarted.protocol.send_request_async(CONTEXT, {}), 60)
    finally:
        await restarted.shutdown_session()
    assert after["estimatedTokens"] == live["estimatedTokens"]
    assert after == live
    # and the live server goes on from there
    await env.call(client, RUN, {"prompt": "and?"})
    assert check(await env.call(client, CONTEXT))["messages"] > 0


def test_categories_match_the_protocol() -> None:
    from pseudoclaude.api.protocol import Breakdown
    from pseudoclaude.compact.breakdown import CATEGORIES as SERVER_CATEGORIES

    camel = [name.split("_")[0] + "".join(w.title() for w in name.split("_")[1:])
             for name in SERVER_CATEGORIES]
    assert tuple(camel) == CATEGORIES
    fields = Breakdown.__struct_encode_fields__
    assert set(fields) == {*CATEGORIES, "free", "reserved"}
