"""Compaction you can steer, through a real server (SPEC §11): the preview (nothing written, no
model call), the fact check of a bare summary, compaction at the provider's real limit, and
undo (also from the log alone, after the server is gone)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    COMPACT,
    COMPACT_PREVIEW,
    COMPACT_UNDO,
    CONTEXT,
    REQUEST_FAILED,
    RUN,
)
from pseudoclaude.fake_model import prompt_tokens

BARE_SUMMARY = {"when": {"summary": True},
                "reply": {"text": "<summary>Work continues.</summary>"}, "times": None}


def log_of(env: Any, session_id: str) -> Path:
    return env.folders[0] / ".PseudoClaude" / "sessions" / session_id / "conversation.jsonl"


async def long_session(client: LanguageClient, env: Any, runs: int = 8) -> str:
    """``runs`` questions with long answers, so that there is an old part to summarise."""
    env.fake.script.rules.insert(0, BARE_SUMMARY)
    env.fake.add_turns(*({"text": f"answer {i} " + "x" * 20_000} for i in range(runs)))
    session_id = ""
    for i in range(runs):
        session_id = (await env.call(client, RUN, {"prompt": f"question {i}"}))["sessionId"]
    await settled(env)
    return session_id


async def settled(env: Any) -> None:
    """Every completed run's background memory update has been answered."""
    def done() -> bool:
        stops = sum(e["kind"] == "stop" and e["stopReason"] == "completed" for e in env.events)
        return sum(e["kind"] == "memory" for e in env.events) >= stops
    await env.until(done)


async def test_preview_writes_nothing_and_the_compaction_keeps_what_it_said(
        client: LanguageClient, env: Any) -> None:
    empty = await env.call(client, COMPACT_PREVIEW)
    assert empty["wouldSummarize"] is False and empty["reason"] == "no session"
    session_id = await long_session(client, env)
    log = log_of(env, session_id)
    before_bytes, before_requests = log.read_bytes(), len(env.fake.requests)
    context = await env.call(client, CONTEXT)
    plan = await env.call(client, COMPACT_PREVIEW, {"instructions": "keep the answers"})
    assert plan["wouldSummarize"] is True and "reason" not in plan
    assert plan["summarizedMessages"] + plan["keptMessages"] == context["messageCount"]
    assert plan["firstKeptIndex"] == plan["summarizedMessages"]
    assert plan["estimatedAfterTokens"] < plan["beforeTokens"] == context["estimatedTokens"]
    assert plan["spill"] == {"results": 0, "bytes": 0}
    assert log.read_bytes() == before_bytes  # byte for byte
    assert len(env.fake.requests) == before_requests  # no model call
    result = await env.call(client, COMPACT, {"instructions": "keep the answers"})
    assert result["summarized"]
    after = await env.call(client, CONTEXT)
    assert after["messageCount"] == 2 + plan["keptMessages"]


async def test_a_bare_summary_gets_the_facts_it_lost(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns(
        {"tool_calls": [{"name": "write_file",
                         "arguments": {"path": "src/planted_module.py", "content": "x = 1\n"}}]},
        {"text": "written"})
    await env.call(client, RUN, {"prompt": "CONSTRAINT-7: never touch vendor/. Write the module."})
    await long_session(client, env)
    result = await env.call(client, COMPACT)
    check = result["factCheck"]
    assert result["summarized"] and check["missing"] >= 3 and check["added"] >= 3
    assert check["checked"] >= check["missing"] >= check["added"] > 0
    [event] = [e for e in env.events if e["kind"] == "compact" and e["layer"] == 2]
    assert event["factCheck"] == check
    env.fake.add_turns({"text": "next"})
    await env.call(client, RUN, {"prompt": "what next?"})
    nxt = json.dumps([r for r in env.fake.requests if r["body"].get("tools")][-1]["body"])
    assert "Work continues." in nxt and "Carried facts (checked by the server)" in nxt
    assert "CONSTRAINT-7: never touch vendor/" in nxt and "src/planted_module.py" in nxt
    assert "question 0" in nxt  # a summarised prompt, within the 4,000-token budget


async def test_manual_compaction_at_the_provider_limit_succeeds(client: LanguageClient,
                                                                env: Any) -> None:
    """The provider's real window (20,000) is far smaller than the configured one (200,000):
    the first summary request is refused as too long, the history is summarised in chunks
    from the stated maximum, and nothing is dropped."""
    await long_session(client, env)
    seen = len(env.fake.requests)
    env.fake.script.max_tokens = 20_000
    result = await env.call(client, COMPACT)
    env.fake.script.max_tokens = None
    assert result["summarized"]
    summaries = env.fake.requests[seen:]
    refused = [r for r in summaries if r.get("reply") == "limit"]
    accepted = [r for r in summaries if r.get("reply") != "limit"]
    assert refused and len(accepted) >= 2
    assert all(prompt_tokens(r["body"]) <= 20_000 for r in accepted)
    text = json.dumps([r["body"] for r in accepted])
    assert "<previous-summary>" in text
    for i in range(8):  # every old question reached a summary request or stayed verbatim
        assert f"question {i}" in text or i >= 6


async def test_undo_restores_and_walks_back_and_works_from_the_log(
        client: LanguageClient, env: Any) -> None:
    with pytest.raises(JsonRpcException) as no_session:  # no session yet: a clear failure
        await env.call(client, COMPACT_UNDO)
    assert no_session.value.code == REQUEST_FAILED
    assert "no active session" in no_session.value.message
    session_id = await long_session(client, env)
    full = (await env.call(client, CONTEXT))["messageCount"]
    assert (await env.call(client, COMPACT))["summarized"]
    compacted = (await env.call(client, CONTEXT))["messageCount"]
    env.fake.add_turns({"text": "after the compaction"})
    await env.call(client, RUN, {"prompt": "one more"})
    undone = await env.call(client, COMPACT_UNDO)
    assert undone["restored"] and undone["messageCount"] == full + 2
    assert undone["afterTokens"] > undone["beforeTokens"]
    assert compacted < undone["messageCount"]
    await env.until(lambda: env.context_usage[-1]["estimatedTokens"] == undone["afterTokens"])
    lines = [json.loads(x) for x in log_of(env, session_id).read_text().splitlines()]
    assert [x["reason"] for x in lines if x["type"] == "replace"][-1] == "undo"
    again = await env.call(client, COMPACT_UNDO)
    assert again["restored"] is False and "no compaction" in again["reason"]

    # compact again, then undo from a new process that knows only the log
    assert (await env.call(client, COMPACT))["summarized"]
    environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    environ["HOME"] = str(env.tmp / "cli-home")
    done = subprocess.run([sys.executable, "-m", "pseudoclaude", "compact", "--undo", "--json",
                           "--workspace", str(env.folders[0])], capture_output=True, text=True,
                          timeout=120, env=environ)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["restored"] is True
    shown = subprocess.run([sys.executable, "-m", "pseudoclaude", "sessions", "show", "latest",
                            "--json", "--workspace", str(env.folders[0])], capture_output=True,
                           text=True, timeout=120, env=environ)
    messages = json.loads(shown.stdout)["messages"]
    assert messages[0]["content"] == "question 0" and len(messages) == full + 2
