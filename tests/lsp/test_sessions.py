"""``pseudoclaude/sessions/new|list|resume|messages`` through a real server (SPEC §8), and the
session a shutdown leaves on disk."""

from __future__ import annotations

from typing import Any

import pytest
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    COMPACT,
    CONTEXT,
    INVALID_PARAMS,
    RUN,
    SESSIONS_LIST,
    SESSIONS_MESSAGES,
    SESSIONS_NEW,
    SESSIONS_RESUME,
    SESSIONS_TURNS,
)
from pseudoclaude.session import SessionStore, load_session
from pseudoclaude.session.repair import is_valid


async def test_sessions_new_list_resume_messages(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"text": "first answer"}, {"text": "second answer"})
    first = await env.call(client, RUN, {"prompt": "first question"})
    new = await env.call(client, SESSIONS_NEW)
    assert new["sessionId"] != first["sessionId"]
    second = await env.call(client, RUN, {"prompt": "second question"})
    assert second["sessionId"] == new["sessionId"]
    listed = (await env.call(client, SESSIONS_LIST))["sessions"]
    assert [s["id"] for s in listed] == [new["sessionId"], first["sessionId"]]
    assert listed[0]["active"] and not listed[1]["active"]
    assert listed[1]["title"] == "first question" and listed[1]["messageCount"] == 2
    assert listed[1]["model"] and listed[1]["bytes"] > 0
    assert {"createdAt", "updatedAt"} <= set(listed[1])
    resumed = await env.call(client, SESSIONS_RESUME, {"sessionId": first["sessionId"]})
    assert resumed == {"sessionId": first["sessionId"], "messageCount": 2, "badLines": 0,
                       "repaired": 0}
    page = await env.call(client, SESSIONS_MESSAGES, {"offset": 1, "limit": 1})
    [answer] = page["items"]
    assert page["total"] == 2 and page["sessionId"] == first["sessionId"]
    assert answer["kind"] == "assistant" and answer["text"] == "first answer"
    assert answer["inContext"] and answer["ts"] > 0
    other = await env.call(client, SESSIONS_MESSAGES, {"sessionId": new["sessionId"]})
    assert {k: other["items"][0][k] for k in ("kind", "text")} == {
        "kind": "user", "text": "second question"}
    latest = await env.call(client, SESSIONS_RESUME, {"sessionId": "latest"})
    assert latest["sessionId"] in (first["sessionId"], new["sessionId"])
    with pytest.raises(JsonRpcException) as unknown:
        await env.call(client, SESSIONS_RESUME, {"sessionId": "20990101-000000-abcd"})
    assert unknown.value.code == INVALID_PARAMS and "sessionId" in unknown.value.message
    for method, params in ((SESSIONS_MESSAGES, {}), (CONTEXT, {}), (COMPACT, {}),
                           (SESSIONS_TURNS, {})):
        with pytest.raises(JsonRpcException) as bad:  # a session of no folder here
            await env.call(client, method, {**params, "sessionId": "20990101-000000-abcd"})
        assert bad.value.code == INVALID_PARAMS and "sessionId" in bad.value.message


async def test_shutdown_leaves_a_valid_session(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"tool_calls": [env.read_file("README.md")]}, {"text": "done"})
    result = await env.call(client, RUN, {"prompt": "read the readme"})
    store_dir = env.folders[0] / ".PseudoClaude"

    loaded = load_session(SessionStore(store_dir), result["sessionId"])
    assert is_valid(loaded.messages) and len(loaded.messages) == 4
