"""``pseudoclaude/status`` through a real language server (SPEC §13 "Where users already are"):
the session, its mode, the model, the context meter's numbers and what its log says was
billed, the sandbox, the MCP servers as ``pseudoclaude/mcp/list`` has them, hooks and skills;
the same as a ``workspace/executeCommand`` command; ``/status`` among the chats' commands."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    CONTEXT,
    MCP_LIST,
    MODE,
    RUN,
    SESSIONS_NEW,
    SLASH_COMMANDS,
    STATUS,
    command_name,
)

ECHO = str(Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "echo_server.py")
ANSWER = {"text": "the notes say alpha", "usage": {"input": 1500, "output": 25,
                                                  "cache_read": 900}}


@pytest.fixture
def env(env: Any) -> Any:
    env.mcp_settings = {"servers": {"echo": {"command": sys.executable, "args": [ECHO]}}}
    return env


async def test_status_of_a_session_with_a_run(client: LanguageClient, env: Any) -> None:
    before = await env.call(client, STATUS)
    assert before["session"] is None and before["mode"] == "default"
    assert before["tokens"]["billed"] is None
    assert "session: none yet" in before["text"]

    await env.call(client, MODE, {"mode": "plan"})  # the mode the first session starts in
    env.fake.add_turns(ANSWER)
    sid = (await env.call(client, RUN, {"prompt": "what do the notes say?"}))["sessionId"]
    shown = await env.call(client, STATUS, {})
    runs = [r for r in env.fake.requests if r["body"].get("tools")]  # not a memory update's
    assert shown["session"] == sid
    assert (shown["mode"], shown["provider"], shown["model"]) == (
        "plan", "anthropic", runs[0]["body"]["model"])
    context = await env.call(client, CONTEXT, {})
    assert shown["tokens"] == {"used": context["estimatedTokens"],
                               "window": context["contextWindow"],
                               "autoCompactThreshold": context["autoCompactThreshold"],
                               "billed": {"inputTokens": 1500, "outputTokens": 25,
                                          "cacheReadTokens": 900, "cacheWriteTokens": 0}}
    assert shown["sandbox"]["enabled"] is False and shown["sandbox"]["reason"]
    assert shown["mcp"] == (await env.call(client, MCP_LIST))["servers"]
    [echo] = shown["mcp"]
    assert echo["name"] == "echo" and echo["status"] == "ready" and echo["tools"]
    assert shown["hooks"] == [] and shown["skills"] == [
        {"name": n, "source": "builtin", "loaded": False} for n in ("commit", "review", "test")]

    lines = shown["text"].splitlines()
    assert lines[:2] == [f"session: {sid}", "mode: plan"]
    assert f"tokens: {context['estimatedTokens']:,} of 200,000 in context" in shown["text"]
    assert "billed: 1,500 input, 900 cache read, 25 output" in lines
    assert any(line.startswith("sandbox: off (") for line in lines)
    assert "MCP:" in lines and any(line.startswith("  echo (your settings): ready")
                                   for line in lines)
    assert lines[-5:] == ["hooks: none", "skills:", "  commit (builtin)", "  review (builtin)",
                          "  test (builtin)"]

    by_command = await asyncio.wait_for(client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command_name(STATUS), arguments=[{}])), 60)
    assert by_command == shown

    other = (await env.call(client, SESSIONS_NEW, {}))["sessionId"]
    fresh = await env.call(client, STATUS)
    assert fresh["session"] == other and fresh["tokens"]["billed"] is None
    named = await env.call(client, STATUS, {"sessionId": sid})
    assert named["session"] == sid and named["tokens"]["billed"]["inputTokens"] == 1500
    with pytest.raises(JsonRpcInvalidParams, match="sessionId"):
        await env.call(client, STATUS, {"sessionId": "20990101-000000-abcd"})


async def test_the_chats_offer_status(client: LanguageClient, env: Any) -> None:
    listed = {c["name"]: c for c in (await env.call(client, SLASH_COMMANDS))["commands"]}
    assert "status" in listed and "mode" in listed["status"]["description"]
