"""Sessions many at once, one writer each, through real server processes (pytest-lsp): two
servers on one folder never split a session into two conversations; a session being written by
one process is ``SessionBusy`` (-32011, with the writer's pid) in the other; one server runs
different sessions at the same time, each with its own events and context meter."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    CONTEXT,
    EVENT,
    RUN,
    SESSION_BUSY,
    SESSIONS_LIST,
    SESSIONS_NEW,
    SESSIONS_RESUME,
)
from pseudoclaude.session import SessionStore, load_session


def prompts(record: dict[str, Any]) -> str:
    return json.dumps(record["body"]["messages"])


async def test_two_servers_on_one_folder_never_split_a_session(client: LanguageClient,
                                                               env: Any) -> None:
    env.fake.add_turns({"text": "answer one"}, {"text": "answer two"}, {"text": "answer three"})
    first = await env.call(client, RUN, {"prompt": "prompt one"})
    sid = first["sessionId"]
    other = await env.second_server()
    try:
        resumed = await env.call(other, SESSIONS_RESUME, {"sessionId": sid})
        assert resumed["messageCount"] == 2
        second = await env.call(other, RUN, {"prompt": "prompt two"})
        assert second["sessionId"] == sid
    finally:
        await other.shutdown_session()
    # The first server's next run carries the other server's turn (read again from the log).
    third = await env.call(client, RUN, {"prompt": "prompt three"})
    assert third["sessionId"] == sid
    sent = prompts([r for r in env.fake.requests if r["body"].get("tools")][-1])
    assert sent.index("prompt one") < sent.index("prompt two") < sent.index("prompt three")
    assert "answer two" in sent
    loaded = load_session(SessionStore(env.folders[0] / ".PseudoClaude"), sid)
    assert [m.content for m in loaded.messages] == [
        "prompt one", "answer one", "prompt two", "answer two", "prompt three", "answer three"]
    assert loaded.bad_lines == 0 and loaded.repaired == 0
    context = await env.call(client, CONTEXT, {})
    assert context["messageCount"] == 6


async def test_a_session_another_server_writes_is_busy(client: LanguageClient,
                                                       env: Any) -> None:
    env.fake.add_turns({"text": "hello"}, {"text": "slow", "stall": 30})
    sid = (await env.call(client, RUN, {"prompt": "say hello"}))["sessionId"]
    running = asyncio.ensure_future(client.protocol.send_request_async(
        RUN, {"prompt": "take your time"}, msg_id="slow-run"))
    await env.until(lambda: any("take your time" in prompts(r) and r["body"].get("tools")
                                for r in env.fake.requests))
    other = await env.second_server()
    try:
        listed = (await env.call(other, SESSIONS_LIST))["sessions"]
        assert [(s["id"], s["running"]) for s in listed] == [(sid, True)]
        await env.call(other, SESSIONS_RESUME, {"sessionId": sid})  # viewing is fine
        before = (env.folders[0] / ".PseudoClaude" / "sessions" / sid /
                  "conversation.jsonl").read_bytes()
        with pytest.raises(JsonRpcException) as busy:
            await env.call(other, RUN, {"prompt": "me too", "sessionId": sid})
        assert busy.value.code == SESSION_BUSY
        pid = busy.value.data["pid"]
        assert isinstance(pid, int) and pid > 0 and busy.value.data["sessionId"] == sid
        assert f"session {sid} is busy: process {pid} is writing it" in busy.value.message
        assert (env.folders[0] / ".PseudoClaude" / "sessions" / sid /
                "conversation.jsonl").read_bytes() == before  # nothing written
        context = await env.call(other, CONTEXT, {"sessionId": sid})  # from the log, now
        assert context["messageCount"] == 3
    finally:
        await other.shutdown_session()
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="slow-run"))
    with pytest.raises(JsonRpcException):  # RequestCancelled: the lock went with the run
        await asyncio.wait_for(running, 30)
    listed = (await env.call(client, SESSIONS_LIST))["sessions"]
    assert [(s["id"], s["running"]) for s in listed] == [(sid, False)]


async def test_one_server_runs_two_sessions_at_once(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"text": "slow one", "delay": 0.5, "chunks": 4}, {"text": "quick two"})
    events: list[dict[str, Any]] = env.events
    one = await env.call(client, SESSIONS_NEW, {})
    slow = asyncio.ensure_future(env.call(client, RUN, {"prompt": "first",
                                                        "sessionId": one["sessionId"]}))
    await env.until(lambda: env.fake.requests)
    two = await env.call(client, RUN, {"prompt": "second", "sessionId": "new"})
    first = await slow
    assert first["sessionId"] == one["sessionId"] != two["sessionId"]
    assert (first["text"], two["text"]) == ("slow one", "quick two")
    texts: dict[str, str] = {}
    for event in events:
        if event.get("kind") == "text":
            texts[event["sessionId"]] = texts.get(event["sessionId"], "") + event["delta"]
    assert texts == {first["sessionId"]: "slow one", two["sessionId"]: "quick two"}
    usage = {u["sessionId"] for u in env.context_usage}
    assert {first["sessionId"], two["sessionId"]} <= usage
    for sid, count in ((first["sessionId"], 2), (two["sessionId"], 2)):
        assert (await env.call(client, CONTEXT, {"sessionId": sid}))["messageCount"] == count
    assert EVENT  # (the notifications above are pseudoclaude/event)
