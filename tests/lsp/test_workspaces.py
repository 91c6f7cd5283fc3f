"""Workspaces through a real server (SPEC §8): several folders kept apart, settings from
``workspace/configuration``, and invalid params refused by every request."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    COMPACT,
    CONTEXT,
    EXPERIMENTAL_KEY,
    MEMORY_FORGET,
    MEMORY_REMEMBER,
    MEMORY_SHOW,
    REQUESTS,
    RUN,
    SESSIONS_LIST,
    SESSIONS_MESSAGES,
    SESSIONS_NEW,
    SESSIONS_RESUME,
)


async def test_two_folders_are_independent(two_folders: LanguageClient, env: Any) -> None:
    client = two_folders
    one, two = (p.as_uri() for p in env.folders)
    with pytest.raises(JsonRpcInvalidParams) as which:
        await env.call(client, CONTEXT)
    assert "workspace" in which.value.message and one in which.value.message
    env.fake.add_turns({"text": "from one"}, {"text": "from two"})
    a = await env.call(client, RUN, {"prompt": "in one", "workspace": one})
    b = await env.call(client, RUN, {"prompt": "in two", "workspace": two})
    assert a["sessionId"] != b["sessionId"]
    assert (env.folders[0] / ".PseudoClaude" / "sessions" / a["sessionId"]).is_dir()
    assert (env.folders[1] / ".PseudoClaude" / "sessions" / b["sessionId"]).is_dir()
    await env.call(client, MEMORY_REMEMBER,
                   {"text": "only in one", "level": "project", "workspace": one})
    show_two = await env.call(client, MEMORY_SHOW, {"workspace": two})
    assert "only in one" not in show_two["index"]
    listed = await env.call(client, SESSIONS_LIST, {"workspace": two})
    assert [s["id"] for s in listed["sessions"]] == [b["sessionId"]]
    client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
        event=types.WorkspaceFoldersChangeEvent(
            added=[], removed=[types.WorkspaceFolder(uri=two, name="two")])))
    assert (await env.call(client, CONTEXT))["sessionId"] == a["sessionId"]


async def test_settings_from_configuration_apply_to_new_runs(client: LanguageClient,
                                                             env: Any) -> None:
    client.set_configuration({"maxIterations": 1}, section=EXPERIMENTAL_KEY)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={}))
    await asyncio.sleep(0.5)
    env.fake.add_turns({"tool_calls": [env.read_file("notes.txt")]}, {"text": "never"})
    result = await env.call(client, RUN, {"prompt": "go"})
    assert result["stopReason"] == "max_iterations" and result["iterations"] == 1


INVALID: list[tuple[str, Any, str]] = [
    (RUN, {}, "prompt"),
    (RUN, {"prompt": 5}, "prompt"),
    (RUN, {"prompt": "  "}, "prompt"),
    (RUN, {"prompt": "x", "sessionId": "../etc"}, "sessionId"),
    (RUN, "a string", "params"),
    (RUN, {"prompt": "x", "workspace": "file:///nowhere"}, "workspace"),
    (RUN, {"prompt": "x", "workspace": 7}, "workspace"),
    (COMPACT, {"instructions": ["x"]}, "instructions"),
    (CONTEXT, [1, 2], "params"),
    (MEMORY_SHOW, {"workspace": "file:///elsewhere"}, "workspace"),
    (MEMORY_REMEMBER, {"level": "project"}, "text"),
    (MEMORY_REMEMBER, {"text": "x", "level": "team"}, "level"),
    (MEMORY_REMEMBER, {"text": "x", "level": "user", "type": "gossip"}, "type"),
    (MEMORY_REMEMBER, {"text": "key sk-ant-api03-abcdefghijklmnopqrstuvwx", "level": "user"},
     "text"),
    (MEMORY_FORGET, {"level": "project"}, "filename"),
    (MEMORY_FORGET, {"level": "project", "filename": "../x.md"}, "filename"),
    (SESSIONS_LIST, 3, "params"),
    (SESSIONS_RESUME, {}, "sessionId"),
    (SESSIONS_RESUME, {"sessionId": "yesterday"}, "sessionId"),
    (SESSIONS_NEW, "x", "params"),
    (SESSIONS_MESSAGES, {"offset": -1}, "offset"),
    (SESSIONS_MESSAGES, {"limit": 0}, "limit"),
    (SESSIONS_MESSAGES, {"limit": "ten"}, "limit"),
]


async def test_invalid_params_everywhere(client: LanguageClient, env: Any) -> None:
    for method, params, field in INVALID:
        with pytest.raises(JsonRpcInvalidParams) as error:
            await env.call(client, method, params)
        assert field in error.value.message, (method, params, error.value.message)
    for method in REQUESTS:  # null and [] mean {}: read-only ones still answer
        if method in (CONTEXT, SESSIONS_LIST, MEMORY_SHOW):
            assert await env.call(client, method, None) == await env.call(client, method, [])
    assert (await env.call(client, CONTEXT))["messageCount"] == 0  # still serving
