"""Hooks over ACP: ``pseudoclaude acp`` as a real subprocess with the user's ``hooks.yaml``: a
prompt a ``UserPromptSubmit`` hook refuses ends with ``refusal`` and reaches neither the model
nor the log; a tool call fires ``PreToolUse`` with its payload; ``/hooks`` lists them."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml  # type: ignore[import-untyped]
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import ClientCapabilities, DeniedOutcome, Implementation, RequestPermissionResponse

from pseudoclaude.fake_model import FakeModelServer

SERVER = [sys.executable, "-m", "pseudoclaude", "acp"]
MEMORY_REPLY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}
TIMEOUT = 60


class Client:
    def __init__(self) -> None:
        self.updates: list[tuple[str, dict[str, Any]]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update.model_dump(mode="json", by_alias=True,
                                                           exclude_none=True)))

    async def request_permission(self, options: Any, session_id: str, tool_call: Any,
                                 **kwargs: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    def text(self, session_id: str) -> str:
        return "".join(u["content"]["text"] for sid, u in self.updates
                       if sid == session_id and u["sessionUpdate"] == "agent_message_chunk")


async def call(awaitable: Any) -> Any:
    return await asyncio.wait_for(awaitable, TIMEOUT)


async def test_hooks_fire_over_acp(tmp_path: Path) -> None:
    home = tmp_path / "home" / ".PseudoClaude"
    home.mkdir(parents=True)
    out = tmp_path / "pre-tool-use.jsonl"
    (home / "hooks.yaml").write_text(yaml.safe_dump({"hooks": [
        {"name": "no-secrets", "event": "UserPromptSubmit",
         "if": {"all_of": [{"field": "prompt", "match": "*secret*"}]},
         "action": {"type": "shell", "command": "echo 'no secrets here' >&2; exit 2"}},
        {"name": "record", "event": "PreToolUse",
         "action": {"type": "shell", "command": f"cat >> {out}"}}]}))
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\n")
    with FakeModelServer({"rules": [MEMORY_REPLY]}) as fake:
        (home / "config.yaml").write_text(
            f"provider: anthropic\nbaseUrl: {fake.base_url}\nmaxRetries: 0\n"
            "sandbox:\n  enabled: false\n")
        variables = {"HOME": str(tmp_path / "home"), "ANTHROPIC_API_KEY": "sk-ant-test-acp-hooks",
                     "PATH": os.environ.get("PATH", "")}
        fake.add_turns({"tool_calls": [{"name": "read_file", "arguments": {"path": "notes.txt"}}]},
                       {"text": "it says alpha"})
        client = Client()
        with open(tmp_path / "agent-stderr.log", "ab") as stderr:
            async with spawn_agent_process(
                    client, *SERVER, env=variables, cwd=tmp_path,
                    transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 20.0}
            ) as (conn, process):
                await call(conn.initialize(protocol_version=PROTOCOL_VERSION,
                                           client_capabilities=ClientCapabilities(),
                                           client_info=Implementation(name="pytest", version="1")))
                sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
                refused = await call(conn.prompt(session_id=sid,
                                                 prompt=[text_block("my secret is 42")]))
                assert refused.stop_reason == "refusal"
                assert fake.requests == []
                done = await call(conn.prompt(session_id=sid,
                                              prompt=[text_block("what do the notes say?")]))
                assert done.stop_reason == "end_turn"
                client.updates.clear()
                await call(conn.prompt(session_id=sid, prompt=[text_block("/hooks")]))
                listed = client.text(sid)
            assert process.returncode == 0
    [payload] = [json.loads(line) for line in out.read_text().splitlines()]
    assert (payload["hook_event_name"], payload["session_id"], payload["tool_input"]) == \
        ("PreToolUse", sid, {"path": "notes.txt"})
    assert "UserPromptSubmit:\n  no-secrets  shell: echo 'no secrets here' >&2; exit 2" in listed
    assert "PreToolUse:\n  record  shell: cat >> " in listed
    log = ws / ".PseudoClaude" / "sessions" / sid / "conversation.jsonl"
    assert "my secret is 42" not in log.read_text()
