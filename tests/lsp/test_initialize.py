"""The advertised surface (SPEC §8): ``capabilities.experimental.pseudoclaude`` in the
``initialize`` result, and every request also a ``workspace/executeCommand`` command giving the
same result."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from pseudoclaude.api.protocol import (
    CONTEXT,
    EXPERIMENTAL_KEY,
    MEMORY_SHOW,
    RUN,
    SESSIONS_LIST,
    command_name,
)

# Spelled out, not taken from protocol.REQUESTS: this is what SPEC §8 and §11 promise the
# editors.
SPEC_REQUESTS = ["pseudoclaude/run", "pseudoclaude/compact", "pseudoclaude/compact/preview",
                 "pseudoclaude/compact/undo", "pseudoclaude/context",
                 "pseudoclaude/memory/show", "pseudoclaude/memory/remember",
                 "pseudoclaude/memory/forget", "pseudoclaude/memory/proposals",
                 "pseudoclaude/memory/review", "pseudoclaude/sessions/list",
                 "pseudoclaude/sessions/resume", "pseudoclaude/sessions/new",
                 "pseudoclaude/sessions/messages", "pseudoclaude/commands",
                 "pseudoclaude/sessions/turns", "pseudoclaude/rewind/preview",
                 "pseudoclaude/rewind", "pseudoclaude/rewind/file",
                 "pseudoclaude/sessions/fork", "pseudoclaude/mcp/list",
                 "pseudoclaude/mcp/approve", "pseudoclaude/mcp/restart",
                 "pseudoclaude/worktree/status", "pseudoclaude/worktree/apply",
                 "pseudoclaude/worktree/remove", "pseudoclaude/mode",
                 "pseudoclaude/permissions", "pseudoclaude/permissions/check",
                 "pseudoclaude/tasks", "pseudoclaude/status", "pseudoclaude/hooks/list",
                 "pseudoclaude/skills/list", "pseudoclaude/hooks/review",
                 "pseudoclaude/agents/list", "pseudoclaude/agents/stop"]


async def test_initialize_advertises_the_custom_surface(client: LanguageClient,
                                                       env: Any) -> None:
    caps = env.initialized.capabilities
    experimental = caps.experimental[EXPERIMENTAL_KEY]
    assert experimental["version"] == 1
    assert experimental["requests"] == SPEC_REQUESTS
    assert experimental["notifications"] == ["pseudoclaude/event",
                                              "pseudoclaude/memoryChanged",
                                              "pseudoclaude/memoryProposals",
                                              "pseudoclaude/contextUsage",
                                              "pseudoclaude/mcpChanged"]
    commands = [m.replace("/", ".") for m in SPEC_REQUESTS]
    assert experimental["commands"] == commands
    assert set(commands) <= set(caps.execute_command_provider.commands)


async def test_commands_return_the_same_results(client: LanguageClient, env: Any) -> None:
    env.fake.add_turns({"text": "hello"})
    by_command = await asyncio.wait_for(client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command_name(RUN), arguments=[{"prompt": "hi"}])),
        60)
    assert by_command["stopReason"] == "completed" and by_command["text"] == "hello"
    for method in (CONTEXT, SESSIONS_LIST, MEMORY_SHOW):
        direct = await env.call(client, method, {})
        command = await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=command_name(method), arguments=[{}]))
        assert command == direct
    no_args = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=command_name(CONTEXT)))
    assert no_args == await env.call(client, CONTEXT)
    with pytest.raises(JsonRpcInvalidParams):
        await client.workspace_execute_command_async(types.ExecuteCommandParams(
            command=command_name(RUN), arguments=[{"prompt": ""}]))
