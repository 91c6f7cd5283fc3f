"""``/status`` over ACP: ``pseudoclaude acp`` as a real subprocess, driven as an ACP client
would (the ``agent-client-protocol`` package's client side), against the scripted fake model.
The command is listed in ``available_commands_update`` and answers with one agent message: the
session, its mode, the model, the tokens, the sandbox, the client's MCP server, hooks and
skills — what ``pseudoclaude status`` prints for the same session. Nothing reaches the model
or the log."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    McpServerStdio,
    RequestPermissionResponse,
)

from pseudoclaude.config import DEFAULT_ANTHROPIC_MODEL
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.session import SessionStore, load_session

SERVER = [sys.executable, "-m", "pseudoclaude", "acp"]
API_KEY = "sk-ant-test-acp-status-0123456789"
ECHO = str(Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "echo_server.py")
MEMORY_REPLY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}
TIMEOUT = 60


class Client:
    """Records the session updates; refuses every permission (none is asked here)."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, dict[str, Any]]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update.model_dump(mode="json", by_alias=True,
                                                           exclude_none=True)))

    async def request_permission(self, options: Any, session_id: str, tool_call: Any,
                                 **kwargs: Any) -> RequestPermissionResponse:
        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    def of(self, session_id: str, kind: str) -> list[dict[str, Any]]:
        return [u for sid, u in self.updates if sid == session_id and u["sessionUpdate"] == kind]

    def text(self, session_id: str) -> str:
        return "".join(u["content"]["text"] for u in self.of(session_id, "agent_message_chunk"))


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer({"rules": [MEMORY_REPLY]}) as server:
        yield server


async def call(awaitable: Any) -> Any:
    return await asyncio.wait_for(awaitable, TIMEOUT)


async def test_status_answers_with_the_sessions_state(tmp_path: Path,
                                                      fake: FakeModelServer) -> None:
    home = tmp_path / "home"
    (home / ".PseudoClaude").mkdir(parents=True)
    (home / ".PseudoClaude" / "config.yaml").write_text(
        f"provider: anthropic\nbaseUrl: {fake.base_url}\nmaxRetries: 0\n"
        f"memory:\n  userDir: {tmp_path / 'user-memory'}\nsandbox:\n  enabled: false\n")
    variables = {"HOME": str(home), "ANTHROPIC_API_KEY": API_KEY,
                 "PATH": os.environ.get("PATH", "")}
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "notes.txt").write_text("alpha\nbeta\n")
    fake.add_turns({"text": "alpha and beta",
                    "usage": {"input": 1500, "output": 25, "cache_read": 900}})
    client = Client()
    with open(tmp_path / "agent-stderr.log", "ab") as stderr:
        async with spawn_agent_process(
                client, *SERVER, env=variables, cwd=tmp_path,
                transport_kwargs={"stderr": stderr.fileno(), "shutdown_timeout": 20.0}
        ) as (conn, process):
            await call(conn.initialize(protocol_version=PROTOCOL_VERSION,
                                       client_capabilities=ClientCapabilities(),
                                       client_info=Implementation(name="pytest", version="1")))
            sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[McpServerStdio(
                name="echo", command=sys.executable, args=[ECHO], env=[])]))).session_id
            await call(conn.prompt(session_id=sid, prompt=[text_block("what do the notes say?")]))
            [listed] = client.of(sid, "available_commands_update")
            assert "status" in [c["name"] for c in listed["availableCommands"]]
            client.updates.clear()
            answer = await call(conn.prompt(session_id=sid, prompt=[text_block("/status")]))
            shown = client.text(sid)
        assert process.returncode == 0
    assert answer.stop_reason == "end_turn"
    assert shown.startswith("```text\n") and shown.endswith("\n```")
    lines = shown.removeprefix("```text\n").removesuffix("\n```").splitlines()
    assert lines[:3] == [f"session: {sid}", "mode: default",
                         f"model: {DEFAULT_ANTHROPIC_MODEL} (anthropic)"]
    assert lines[3].startswith("tokens: ") and "of 200,000 in context" in lines[3]
    assert lines[4] == "billed: 1,500 input, 900 cache read, 25 output"
    assert lines[5].startswith("sandbox: off (")
    assert lines[6] == "MCP:" and lines[7].startswith("  echo (the editor): ready")
    assert lines[-5:] == ["hooks: none", "skills:", "  commit (builtin)", "  review (builtin)",
                          "  test (builtin)"]
    assert not [r for r in fake.requests if "/status" in json.dumps(r["body"])]
    logged = load_session(SessionStore(ws / ".PseudoClaude"), sid).messages
    assert [m.content for m in logged if m.role == "user"] == ["what do the notes say?"]
    # The same words as the terminal's, for the same session (its MCP servers are the
    # client's: the terminal has none).
    done = subprocess.run([sys.executable, "-m", "pseudoclaude", "status", "--session", sid,
                           "--workspace", str(ws)], env=variables, capture_output=True,
                          text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 0, done.stderr
    terminal = done.stdout.splitlines()
    assert terminal[:3] == lines[:3] and terminal[4:6] == lines[4:6]
