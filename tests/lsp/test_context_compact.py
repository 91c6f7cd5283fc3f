"""``pseudoclaude/context`` and ``pseudoclaude/compact`` through a real server (SPEC §8): the
meter answers at once during a run while the busy workspace refuses what would change the
session, and a manual compaction summarises with the given instructions."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    COMPACT,
    CONTEXT,
    REQUEST_FAILED,
    RUN,
    SESSION_BUSY,
    SESSIONS_NEW,
)


async def test_context_answers_fast_while_a_run_streams(client: LanguageClient,
                                                        env: Any) -> None:
    env.fake.add_turns({"text": "slow", "stall": 1.5})
    run = asyncio.ensure_future(env.call(client, RUN, {"prompt": "go"}))
    await env.until(lambda: len(env.fake.requests) >= 1)
    latencies = []
    for _ in range(10):
        t = time.perf_counter()
        context = await env.call(client, CONTEXT)
        latencies.append(time.perf_counter() - t)
        assert context["messageCount"] == 1
    assert sorted(latencies)[len(latencies) // 2] < 0.05, latencies
    with pytest.raises(JsonRpcException) as busy:  # the session has one writer
        await env.call(client, RUN, {"prompt": "second"})
    assert busy.value.code == SESSION_BUSY and "is busy: process" in busy.value.message
    with pytest.raises(JsonRpcException) as refused:
        await env.call(client, COMPACT, {})
    assert refused.value.code == SESSION_BUSY
    assert refused.value.data["sessionId"] == context["sessionId"]
    assert isinstance(refused.value.data["pid"], int)
    other = await env.call(client, SESSIONS_NEW, {})  # another session: at once
    assert other["sessionId"] != context["sessionId"]
    assert (await run)["stopReason"] == "completed"


async def test_compact(client: LanguageClient, env: Any) -> None:
    with pytest.raises(JsonRpcException) as no_session:
        await env.call(client, COMPACT)
    assert no_session.value.code == REQUEST_FAILED
    assert "no active session" in no_session.value.message
    env.fake.add_turns(*({"text": f"answer {i} " + "x" * 20_000} for i in range(8)))
    env.fake.script.rules.insert(0, {"when": {"summary": True},
                                     "reply": {"text": "<summary>the gist</summary>"},
                                     "times": None})
    for i in range(8):
        await env.call(client, RUN, {"prompt": f"question {i}"})
    before = await env.call(client, CONTEXT)
    result = await env.call(client, COMPACT, {"instructions": "keep the gist"})
    assert result["summarized"] and result["afterTokens"] < result["beforeTokens"]
    after = await env.call(client, CONTEXT)
    assert after["messageCount"] < before["messageCount"]
    assert any(e["kind"] == "compact" and e["layer"] == 2 for e in env.events)
    summary_request = [r for r in env.fake.requests if "<summary>" in json.dumps(r["body"])]
    assert "keep the gist" in json.dumps(summary_request[-1]["body"])
