"""``pseudoclaude acp`` as a real subprocess, driven as an ACP client would (SPEC §11 "ACP").

Most tests use the ``agent-client-protocol`` package's client side (``spawn_agent_process``);
the error tests speak raw JSON-RPC lines. The model is the scripted fake server; ACP has no
``initializationOptions``, so the settings come from the user's ``~/.PseudoClaude/config.yaml``
(provider, base URL), each workspace's own ``.PseudoClaude/config.yaml`` (approvals; an
``allow`` there approved as a user does) and the API key from the environment
(``ANTHROPIC_API_KEY``), which also lets the tests check that it never appears in anything the
agent writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import PROTOCOL_VERSION, RequestError, spawn_agent_process, text_block
from acp.client.connection import ClientSideConnection
from acp.connection import StreamEvent
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    McpServerStdio,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from permission_table import ROWS, permissions_yaml
from pseudoclaude.api import commands as api_commands
from pseudoclaude.config import DEFAULT_ANTHROPIC_MODEL
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.session import SessionStore, load_session
from pseudoclaude.session.lock import holder
from support import Listener, until

SERVER = [sys.executable, "-m", "pseudoclaude", "acp"]
API_KEY = "sk-ant-test-acp-0123456789abcdef"
SUMMARY_REPLY = {"when": {"summary": True},
                 "reply": {"text": "<summary>The user asked about the notes; alpha and beta."
                                   "</summary>"}}
MEMORY_REPLY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}
TIMEOUT = 60
LONG_ANSWERS = [{"text": f"answer {i} " + "x" * 20_000} for i in range(6)]
"""Enough history for a compaction to summarise (the recent window is always kept)."""


MODES = [("strict", "Strict", "every tool asks first"),
         ("default", "Default", "edits and commands follow your approval settings"),
         ("acceptEdits", "Accept edits", "edits run without asking; commands still ask"),
         ("plan", "Plan", "only reading tools run until you approve a plan")]
"""The permission modes a session may switch to (``bypassPermissions`` only with
``permissions.allowBypass``): id, name, meaning."""


def run_command(command: str, *args: str) -> dict[str, Any]:
    return {"name": "run_command", "arguments": {"command": command, "args": list(args)}}


def read_file(path: str) -> dict[str, Any]:
    return {"name": "read_file", "arguments": {"path": path}}


class Env:
    """Folders with their config, the fake model, the agent's environment, and every raw
    message the agent sent (to check that no API key is in any of them)."""

    def __init__(self, tmp: Path, fake: FakeModelServer) -> None:
        self.tmp = tmp
        self.fake = fake
        self.home = tmp / "home"
        (self.home / ".PseudoClaude").mkdir(parents=True)  # the user's own settings
        (self.home / ".PseudoClaude" / "config.yaml").write_text(
            f"provider: anthropic\nbaseUrl: {fake.base_url}\n"
            f"memory:\n  userDir: {tmp / 'user-memory'}\nsandbox:\n  enabled: false\n")
        self.vars = {"HOME": str(self.home), "ANTHROPIC_API_KEY": API_KEY,
                     "PATH": os.environ.get("PATH", "")}
        self.received: list[dict[str, Any]] = []
        self.stderr = tmp / "agent-stderr.log"

    def folder(self, name: str = "ws", run_command: str = "ask", write: str = "allow") -> Path:
        path = self.tmp / name
        (path / ".PseudoClaude").mkdir(parents=True)
        (path / "README.md").write_text(f"# {name}\nA small sample project.\n")
        (path / "notes.txt").write_text("alpha\nbeta\n")
        (path / ".PseudoClaude" / "config.yaml").write_text(
            f"maxRetries: 0\napprovals:\n  runCommand: {run_command}\n  write: {write}\n")
        if run_command == "allow":  # the folder's own allow waits: approved as a user does
            self.cli("permissions", "approve", "--workspace", str(path))
        return path

    def observe(self, event: StreamEvent) -> None:
        if event.direction.value == "incoming":
            self.received.append(event.message)

    def received_updates(self) -> list[tuple[str, dict[str, Any]]]:
        return [(m["params"]["sessionId"], m["params"]["update"]) for m in self.received
                if m.get("method") == "session/update"]

    def cli(self, *args: str) -> Any:
        """``pseudoclaude ARGS --json`` in the agent's environment."""
        done = subprocess.run([sys.executable, "-m", "pseudoclaude", *args, "--json"],
                              env=self.vars, capture_output=True, text=True, timeout=TIMEOUT,
                              check=False)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    def assert_no_key(self) -> None:
        assert API_KEY not in json.dumps(self.received)
        if self.stderr.exists():
            assert API_KEY not in self.stderr.read_text(errors="replace")


class Recorder:
    """The client: records session updates (as wire dicts) and answers permission requests
    with ``answer`` (an option id, or None for the ``cancelled`` outcome), after ``hold``
    is set when there is one."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, dict[str, Any]]] = []
        self.permissions: list[dict[str, Any]] = []
        self.answer: str | None = "allow_once"
        self.hold: asyncio.Event | None = None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update.model_dump(mode="json", by_alias=True,
                                                           exclude_none=True)))

    async def request_permission(self, options: Any, session_id: str, tool_call: Any,
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permissions.append({
            "sessionId": session_id,
            "toolCall": tool_call.model_dump(mode="json", by_alias=True, exclude_none=True),
            "options": [o.model_dump(mode="json", by_alias=True) for o in options]})
        if self.hold is not None:
            await self.hold.wait()
        if self.answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=self.answer))

    def of(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [u for sid, u in self.updates if sid == session_id
                and (kind is None or u["sessionUpdate"] == kind)]

    def text(self, session_id: str) -> str:
        return "".join(u["content"]["text"] for u in self.of(session_id, "agent_message_chunk"))

    def clear(self) -> None:
        self.updates.clear()
        self.permissions.clear()


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer({"rules": [SUMMARY_REPLY, MEMORY_REPLY]}) as server:
        yield server


@pytest.fixture
def env(tmp_path: Path, fake: FakeModelServer) -> Iterator[Env]:
    environment = Env(tmp_path, fake)
    yield environment
    environment.assert_no_key()


@contextlib.asynccontextmanager
async def agent(env: Env, client: Recorder, capabilities: ClientCapabilities | None = None
                ) -> AsyncIterator[ClientSideConnection]:
    """``pseudoclaude acp`` started and initialized; closed (stdin EOF) at the end, and it must
    then exit 0 on its own."""
    with open(env.stderr, "ab") as stderr:
        async with spawn_agent_process(
                client, *SERVER, env=env.vars, cwd=env.tmp,
                transport_kwargs={"stderr": stderr.fileno(), "limit": 16 * 1024 * 1024,
                                  "shutdown_timeout": 20.0},
                observers=[env.observe]) as (conn, process):
            init = await call(conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=capabilities or ClientCapabilities(),
                client_info=Implementation(name="pytest", version="1")))
            assert init.protocol_version == PROTOCOL_VERSION
            yield conn
        assert process.returncode == 0


async def call(awaitable: Any) -> Any:
    return await asyncio.wait_for(awaitable, TIMEOUT)


def kinds(updates: list[dict[str, Any]]) -> list[str]:
    """The kinds of a turn's updates, chunks of one message counted once (live, a message
    streams in chunks; replayed, it is one), without usage and commands."""
    shown: list[str] = []
    for update in updates:
        kind = update["sessionUpdate"]
        if kind in ("usage_update", "available_commands_update"):
            continue
        if not (shown and kind == shown[-1] and kind.endswith("_chunk")):
            shown.append(kind)
    return shown


def prompt(text: str) -> list[Any]:
    return [text_block(text)]


# -- the command ------------------------------------------------------------------------------


def test_nothing_below_the_front_end_imports_acp() -> None:
    """ACP is a front end: only ``pseudoclaude/acp`` (and the CLI that starts it) import it."""
    import pseudoclaude

    package = Path(pseudoclaude.__file__).parent
    for source in package.rglob("*.py"):
        if source.parent.name == "acp" or source.relative_to(package) == Path("cli/__init__.py"):
            continue
        for line in source.read_text().splitlines():
            assert not re.match(r"\s*(from|import)\s+(acp|pseudoclaude\.acp)\b", line), (
                f"{source}: {line}")


def test_a_bad_flag_is_a_usage_error(env: Env) -> None:
    done = subprocess.run([*SERVER, "--base-url", "nowhere"], env=env.vars, input="",
                          capture_output=True, text=True, timeout=TIMEOUT, check=False)
    assert done.returncode == 2 and done.stdout == ""
    assert "--base-url" in done.stderr and len(done.stderr.strip().splitlines()) == 1


# -- the package's client side ------------------------------------------------------------------


async def test_initialize_advertises_load_and_list(env: Env) -> None:
    async with agent(env, Recorder()):
        pass
    [answer] = [m for m in env.received if m.get("id") == 0]
    capabilities = answer["result"]["agentCapabilities"]
    assert capabilities["loadSession"] is True
    assert capabilities["sessionCapabilities"] == {"list": {}, "resume": {}, "close": {},
                                                   "delete": {}}
    assert capabilities["promptCapabilities"] == {"image": False, "audio": False,
                                                  "embeddedContext": True}
    assert answer["result"]["agentInfo"]["name"] == "pseudoclaude"


async def test_new_prompt_streams_chunks_and_usage(env: Env) -> None:
    ws = env.folder()
    env.fake.add_turns({"text": ["The notes ", "say alpha ", "and beta."],
                        "usage": {"input": 1200, "output": 9}})
    client = Recorder()
    async with agent(env, client) as conn:
        new = await call(conn.new_session(cwd=str(ws), mcp_servers=[]))
        sid = new.session_id
        await until(lambda: client.of(sid, "usage_update"))
        [commands] = client.of(sid, "available_commands_update")
        expected = [c for c in api_commands.COMMANDS  # new sessions: the client's own
                    if c.request != "pseudoclaude/sessions/new"]
        listed = commands["availableCommands"]  # then the skills (the built-in ones)
        assert [(c["name"], c["description"]) for c in listed[:len(expected)]] == [
            (c.name, c.description) for c in expected]
        assert [c.get("input") for c in listed[:len(expected)]] == [
            None if c.hint is None else {"hint": c.hint} for c in expected]
        assert [c["name"] for c in listed[len(expected):]] == ["commit", "review", "test"]
        client.clear()
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("what do the notes say?")))
        assert answer.stop_reason == "end_turn"
        chunks = client.of(sid, "agent_message_chunk")
        assert len(chunks) >= 3
        assert client.text(sid) == "The notes say alpha and beta."
        usage = client.of(sid, "usage_update")[-1]
        assert usage["size"] == 200_000 and 0 < usage["used"] < usage["size"]
    shown = env.cli("sessions", "show", "latest", "--workspace", str(ws))
    assert shown["id"] == sid
    assert [m["role"] for m in shown["messages"]] == ["user", "assistant"]
    assert shown["messages"][0]["content"] == "what do the notes say?"
    assert shown["messages"][1]["content"] == "The notes say alpha and beta."


async def test_a_folders_own_server_waits_for_the_users_permission(env: Env) -> None:
    """The same rule as in the editor and the CLI: the folder's ``baseUrl`` is asked about
    (``session/request_permission`` before the first prompt runs); declined, nothing reaches
    it and the prompt goes where the user's settings say; not asked again in this process."""
    ws = env.folder()
    config = ws / ".PseudoClaude" / "config.yaml"
    env.fake.add_turns({"text": "Hello."}, {"text": "Again."})
    client = Recorder()
    client.answer = "deny"
    with Listener() as theirs:
        config.write_text(config.read_text() + f"baseUrl: {theirs.url}\n")
        async with agent(env, client) as conn:
            sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
            answer = await call(conn.prompt(session_id=sid, prompt=prompt("hi")))
            assert answer.stop_reason == "end_turn" and client.text(sid) == "Hello."
            [asked] = client.permissions
            assert ".PseudoClaude/config.yaml" in asked["toolCall"]["title"]
            assert f"baseUrl: {theirs.url}" in asked["toolCall"]["content"][0]["content"]["text"]
            await call(conn.prompt(session_id=sid, prompt=prompt("again")))
            assert len(client.permissions) == 1
        assert theirs.requests == []


async def test_tool_call_with_permission(env: Env) -> None:
    ws = env.folder()
    env.fake.add_turns({"text": "Let me look.", "tool_calls": [run_command("echo", "hello")]},
                       {"text": "It printed hello."},
                       {"tool_calls": [run_command("touch", "made-by-agent")]},
                       {"text": "Not allowed, then."},
                       {"tool_calls": [run_command("echo", "one")]},
                       {"tool_calls": [run_command("echo", "two")]},
                       {"text": "Both ran."},
                       {"tool_calls": [run_command("echo", "three")]},
                       {"text": "Ran without asking."})
    client = Recorder()
    async with agent(env, client) as conn:
        sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("say hello")))
        assert answer.stop_reason == "end_turn"
        [asked] = client.permissions
        assert asked["sessionId"] == sid
        assert [(o["optionId"], o["name"], o["kind"]) for o in asked["options"]] == [
            ("allow_once", "Allow once", "allow_once"),
            ("allow_session", "Allow for this session", "allow_always"),
            ("allow_always", "Always allow Bash(echo:*)", "allow_always"),
            ("deny", "Reject", "reject_once")]
        [start] = client.of(sid, "tool_call")
        call_id = start["toolCallId"]
        assert asked["toolCall"]["toolCallId"] == call_id
        assert asked["toolCall"]["title"] == "run_command: echo hello"
        assert start["status"] == "pending" and start["kind"] == "execute"
        assert start["rawInput"] == {"command": "echo", "args": ["hello"]}
        statuses = [u["status"] for u in client.of(sid, "tool_call_update")]
        assert statuses == ["in_progress", "completed"]
        done = client.of(sid, "tool_call_update")[-1]
        assert "hello" in done["content"][0]["content"]["text"]
        assert client.text(sid) == "Let me look.It printed hello."
        kinds = [u["sessionUpdate"] for u in client.of(sid)]
        assert kinds.index("tool_call") < kinds.index("tool_call_update")

        client.clear()  # rejected: the call fails, nothing runs
        client.answer = "deny"
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("touch a file")))
        assert answer.stop_reason == "end_turn"
        assert len(client.permissions) == 1
        [failed] = client.of(sid, "tool_call_update")
        assert failed["status"] == "failed"
        assert failed["content"][0]["content"]["text"] == "run_command was denied by the user"
        assert not (ws / "made-by-agent").exists()

        client.clear()  # allow for the session: asked once for two commands
        client.answer = "allow_session"
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("echo twice")))
        assert answer.stop_reason == "end_turn"
        assert len(client.permissions) == 1
        starts = client.of(sid, "tool_call")
        assert [s["status"] for s in starts] == ["pending", "in_progress"]
        assert [u["status"] for u in client.of(sid, "tool_call_update")] == [
            "in_progress", "completed", "completed"]
        client.clear()  # ... and for the next prompts of the session
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("echo again")))
        assert answer.stop_reason == "end_turn" and not client.permissions
        assert [s["status"] for s in client.of(sid, "tool_call")] == ["in_progress"]
        client.clear()  # loaded: each call finished, the denied one failed with its reason
        await call(conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[]))
        loaded = client.of(sid, "tool_call")
        assert [c["status"] for c in loaded] == ["completed", "failed", "completed",
                                                 "completed", "completed"]
        assert loaded[1]["content"][0]["content"]["text"] == "run_command was denied by the user"
        assert loaded[0]["content"][0]["content"]["text"].strip() == "hello"
    shown = env.cli("sessions", "show", sid, "--workspace", str(ws))
    results = [m["tool_result"] for m in shown["messages"] if "tool_result" in m]
    assert len(results) == 5 and [r.get("is_error", False) for r in results] == [
        False, True, False, False, False]


async def test_an_edit_is_approved_as_a_diff(env: Env) -> None:
    ws = env.folder(write="ask")
    edit = {"name": "edit_file", "arguments": {"path": "notes.txt", "old_text": "beta",
                                               "new_text": "gamma"}}
    env.fake.add_turns({"tool_calls": [read_file("notes.txt"), edit]}, {"text": "Edited."},
                       {"tool_calls": [{"name": "write_file", "arguments": {
                           "path": "new.txt", "content": "fresh\n"}}]}, {"text": "Refused."})
    client = Recorder()
    async with agent(env, client) as conn:
        sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        assert (await call(conn.prompt(session_id=sid, prompt=prompt("beta to gamma")))
                ).stop_reason == "end_turn"
        [asked] = client.permissions
        assert asked["toolCall"]["kind"] == "edit"
        assert asked["toolCall"]["locations"] == [{"path": str(ws.resolve() / "notes.txt")}]
        assert asked["toolCall"]["content"] == [{
            "type": "diff", "path": str(ws.resolve() / "notes.txt"),
            "oldText": "alpha\nbeta\n", "newText": "alpha\ngamma\n"}]
        assert (ws / "notes.txt").read_text() == "alpha\ngamma\n"
        client.clear()
        client.answer = "deny"
        assert (await call(conn.prompt(session_id=sid, prompt=prompt("a new file")))
                ).stop_reason == "end_turn"
        [asked] = client.permissions
        [diff] = asked["toolCall"]["content"]
        assert diff["newText"] == "fresh\n" and "oldText" not in diff  # a new file
        assert not (ws / "new.txt").exists()


class Buffers(Recorder):
    """A client that offers ``fs``: its buffers (absolute path -> text, unsaved edits
    included) answer reads; writes go into them (the disk is left as it is)."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__()
        self.buffers = buffers
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []

    async def read_text_file(self, path: str, session_id: str, line: int | None = None,
                             limit: int | None = None, **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path in self.buffers:
            return ReadTextFileResponse(content=self.buffers[path])
        if Path(path).is_file():
            return ReadTextFileResponse(content=Path(path).read_text())
        raise RequestError(-32002, f"no such file: {path}")

    async def write_text_file(self, content: str, path: str, session_id: str,
                              **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()


async def test_reads_and_writes_go_through_a_client_that_offers_fs(env: Env) -> None:
    ws = env.folder(write="ask")
    notes, new = str(ws.resolve() / "notes.txt"), str(ws.resolve() / "new.txt")
    unsaved = "alpha\nbeta\nfrom the buffer\n"
    client = Buffers({notes: unsaved})
    edit = {"name": "edit_file", "arguments": {"path": "notes.txt", "old_text": "beta",
                                               "new_text": "gamma"}}
    write = {"name": "write_file", "arguments": {"path": "new.txt", "content": "fresh\n"}}
    env.fake.add_turns({"tool_calls": [read_file("notes.txt")]}, {"tool_calls": [edit]},
                       {"tool_calls": [write]}, {"text": "Done."})
    fs = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=True,
                                                      write_text_file=True))
    async with agent(env, client, fs) as conn:
        sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        assert (await call(conn.prompt(session_id=sid, prompt=prompt("edit the notes")))
                ).stop_reason == "end_turn"
    assert notes in client.reads
    # the diff asked for shows the buffer's text; the edit went into the buffer
    first, second = client.permissions
    assert first["toolCall"]["content"][0]["oldText"] == unsaved
    assert "oldText" not in second["toolCall"]["content"][0]  # a new file
    assert client.writes == [(notes, "alpha\ngamma\nfrom the buffer\n"), (new, "fresh\n")]
    assert (ws / "notes.txt").read_text() == "alpha\nbeta\n" and not (ws / "new.txt").exists()
    store = SessionStore(ws / ".PseudoClaude")
    results = [json.loads(m.tool_result.content) for m in load_session(store, sid).messages
               if m.tool_result is not None]
    read, edited, wrote = results
    assert read["unsaved"] is True and read["content"] == unsaved
    assert edited["ok"] and edited["unsaved"] is True
    assert wrote["ok"] and wrote["metadata"]["created"] is True


async def test_cancel_a_prompt_and_a_pending_permission(env: Env) -> None:
    ws = env.folder()
    env.fake.add_turns({"text": ["Working", " on it", " slowly"], "delay": 0.05,
                        "stall": 30, "stall_after": 5},
                       {"text": "Back again."},
                       {"tool_calls": [run_command("echo", "never")]},
                       {"text": "After the cancel."})
    client = Recorder()
    async with agent(env, client) as conn:
        sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        running = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=prompt("go")))
        await until(lambda: client.of(sid, "agent_message_chunk"))
        started = time.monotonic()
        await conn.cancel(session_id=sid)
        answer = await call(running)
        assert answer.stop_reason == "cancelled" and time.monotonic() - started < 10
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("again")))
        assert answer.stop_reason == "end_turn" and "Back again." in client.text(sid)

        client.clear()  # cancelled while the client is asked for permission
        client.hold = asyncio.Event()
        running = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=prompt("echo")))
        await until(lambda: client.permissions)
        await conn.cancel(session_id=sid)
        answer = await call(running)
        assert answer.stop_reason == "cancelled"
        client.hold.set()
        [update] = client.of(sid, "tool_call_update")
        assert update["status"] == "failed" and "cancel" in update["content"][0]["content"][
            "text"]
        client.hold = None
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("and now?")))
        assert answer.stop_reason == "end_turn"
        client.clear()  # loaded: the canceled call failed, with why
        await call(conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[]))
        [canceled] = client.of(sid, "tool_call")
        assert canceled["status"] == "failed"
        assert "cancel" in canceled["content"][0]["content"]["text"]
        assert [u["content"]["text"] for u in client.of(sid, "user_message_chunk")] == [
            "go", "again", "echo", "and now?"]
    shown = env.cli("sessions", "show", sid, "--workspace", str(ws))
    assert shown["bad_lines"] == 0 and shown["repaired"] == 0
    canceled = [json.loads(m["tool_result"]["content"]) for m in shown["messages"]
                if "tool_result" in m]
    assert [c["error_type"] for c in canceled] == ["canceled"]
    assert shown["messages"][-1]["content"] == "After the cancel."


async def test_list_and_load_in_a_new_process(env: Env) -> None:
    ws = env.folder(run_command="allow")
    env.fake.add_turns({"text": "Reading.", "tool_calls": [read_file("notes.txt")]},
                       {"text": "They say alpha and beta."},
                       {"text": "Still alpha and beta."})
    client = Recorder()
    async with agent(env, client) as conn:
        sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        assert (await call(conn.prompt(session_id=sid, prompt=prompt("read the notes"))
                           )).stop_reason == "end_turn"
        live = kinds(client.of(sid))
    other = Recorder()
    async with agent(env, other) as conn:
        listed = await call(conn.list_sessions(cwd=str(ws)))
        [info] = listed.sessions
        assert info.session_id == sid and info.cwd == str(ws.resolve())
        assert info.title == "read the notes" and info.updated_at
        assert info.field_meta is not None
        assert info.field_meta["pseudoclaude"]["messageCount"] == 4
        assert (await call(conn.list_sessions())).sessions[0].session_id == sid
        await call(conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[]))
        replayed = other.of(sid)
        assert kinds(replayed) == ["user_message_chunk", *[k for k in live
                                                          if k != "tool_call_update"]]
        assert replayed[0]["content"]["text"] == "read the notes"
        [tool] = [u for u in replayed if u["sessionUpdate"] == "tool_call"]  # finished
        assert tool["title"] == "read_file: notes.txt" and tool["kind"] == "read"
        assert tool["locations"] == [{"path": str(ws.resolve() / "notes.txt")}]
        assert tool["status"] == "completed" and tool["content"][0]["content"][
            "text"] == "alpha\nbeta\n"  # the readable preview, not the JSON envelope
        assert tool["rawOutput"]["bytes"] > 0
        assert other.text(sid) == "Reading.They say alpha and beta."
        assert other.of(sid, "available_commands_update") and other.of(sid, "usage_update")
        other.clear()
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("and now?")))
        assert answer.stop_reason == "end_turn" and other.text(sid) == "Still alpha and beta."
        # the run's last request (the one with tools: a memory update may come after it)
        last = [r for r in env.fake.requests if r["body"].get("tools")][-1]["body"]["messages"]
        assert len(last) == 5 and "read the notes" in json.dumps(last[0])
        with pytest.raises(RequestError) as unknown:
            await call(conn.load_session(cwd=str(ws), session_id="20200101-000000-abcd",
                                         mcp_servers=[]))
        assert unknown.value.code == -32002
    shown = env.cli("sessions", "show", "latest", "--workspace", str(ws))
    assert shown["id"] == sid and len(shown["messages"]) == 6


async def test_codecompanion_new_then_load_leaves_no_listed_empty_session(env: Env) -> None:
    ws = env.folder()
    env.fake.add_turns({"text": "Hello."})
    async with agent(env, Recorder()) as conn:
        sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        await call(conn.prompt(session_id=sid, prompt=prompt("hi")))
    for _ in range(3):  # codecompanion.nvim: a chat opens (session/new), then loads another
        async with agent(env, Recorder()) as conn:
            empty = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
            await call(conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[]))
            assert [s.session_id for s in (await call(conn.list_sessions())).sessions] == [sid]
            assert [s.session_id for s in (await call(conn.list_sessions(cwd=str(ws))))
                    .sessions] == [sid]
        assert env.cli("sessions", "show", empty, "--workspace", str(ws))["id"] == empty  # kept
    listed = env.cli("sessions", "list", "--workspace", str(ws))
    assert [s["id"] for s in listed["sessions"]] == [sid]
    assert env.cli("sessions", "show", "latest", "--workspace", str(ws))["id"] == sid


async def test_two_workspaces_in_one_process(env: Env) -> None:
    one, two = env.folder("one"), env.folder("two")
    env.fake.add_turns({"text": "slow answer", "delay": 0.3}, {"text": "fast answer"})
    client = Recorder()
    async with agent(env, client) as conn:
        a = (await call(conn.new_session(cwd=str(one), mcp_servers=[]))).session_id
        b = (await call(conn.new_session(cwd=str(two), mcp_servers=[]))).session_id
        first = asyncio.ensure_future(conn.prompt(session_id=a, prompt=prompt("first")))
        await until(lambda: env.fake.requests)
        second = await call(conn.prompt(session_id=b, prompt=prompt("second")))
        assert second.stop_reason == "end_turn"
        assert (await call(first)).stop_reason == "end_turn"
        assert {client.text(a), client.text(b)} == {"slow answer", "fast answer"}
        # a second session in the same folder: prompts switch the workspace between them
        c = (await call(conn.new_session(cwd=str(one), mcp_servers=[]))).session_id
        assert (await call(conn.prompt(session_id=a, prompt=prompt("back to a")))
                ).stop_reason == "end_turn"
        assert (await call(conn.prompt(session_id=c, prompt=prompt("now c")))
                ).stop_reason == "end_turn"
        listed = await call(conn.list_sessions())
        assert {s.session_id for s in listed.sessions} == {a, b, c}
    assert env.cli("sessions", "show", a, "--workspace", str(one))["messages"][2][
        "content"] == "back to a"


async def test_slash_commands(env: Env) -> None:
    ws = env.folder(run_command="allow")
    env.fake.add_turns(*LONG_ANSWERS)
    client = Recorder()
    async with agent(env, client) as conn:
        sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        for i in range(len(LONG_ANSWERS)):
            await call(conn.prompt(session_id=sid, prompt=prompt(f"question {i}")))
        client.clear()
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("/memory")))
        assert answer.stop_reason == "end_turn" and "the memory index is empty" in client.text(
            sid)
        client.clear()
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("/context")))
        shown = client.text(sid)
        assert answer.stop_reason == "end_turn" and shown.startswith("```text\nsession: ")
        assert "tool results" in shown and "of 200,000 tokens" in shown
        client.clear()
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("/new")))
        assert answer.stop_reason == "end_turn" and "new thread" in client.text(sid)
        client.clear()
        before = len(env.fake.requests)
        answer = await call(conn.prompt(session_id=sid,
                                        prompt=prompt("/compact focus on the notes")))
        assert answer.stop_reason == "end_turn"
        assert client.text(sid).startswith("Compacted: the earlier conversation is now a summary")
        assert any("focus on the notes" in json.dumps(r["body"])
                   for r in env.fake.requests[before:])
        assert client.of(sid, "usage_update")
        assert not [u for _, u in env.received_updates()
                    if u["sessionUpdate"].startswith("compaction")]
        client.clear()
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("/undo")))
        assert client.text(sid).startswith("Undone: what the last compaction summarized is back")
        client.clear()
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("/undo")))
        assert client.text(sid).startswith("Nothing to undo")

    assert len(env.cli("sessions", "show", sid, "--workspace", str(ws))["messages"]) == 12


async def test_slash_rewind(env: Env) -> None:
    """``/rewind`` lists the prompts; ``/rewind N`` takes back what a command did and the
    conversation; bad arguments say what is accepted."""
    ws = env.folder(run_command="allow")
    env.fake.add_turns({"tool_calls": [run_command("sh", "-c", "echo made > made.txt")]},
                       {"text": "made it"}, {"text": "just talking"})
    client = Recorder()
    async with agent(env, client) as conn:
        sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        await call(conn.prompt(session_id=sid, prompt=prompt("make a file")))
        await call(conn.prompt(session_id=sid, prompt=prompt("say something")))
        assert (ws / "made.txt").exists()
        client.clear()
        await call(conn.prompt(session_id=sid, prompt=prompt("/rewind")))
        listed = client.text(sid)
        assert "1. make a file  (1 file changed)" in listed and "2. say something" in listed
        client.clear()
        await call(conn.prompt(session_id=sid, prompt=prompt("/rewind 7")))
        assert "must be between 1 and 2" in client.text(sid)
        client.clear()
        await call(conn.prompt(session_id=sid, prompt=prompt("/rewind 1 everything")))
        assert "'everything' is neither" in client.text(sid)
        client.clear()
        await call(conn.prompt(session_id=sid, prompt=prompt("/rewind 1")))
        done = client.text(sid)
        assert "Rewound to before prompt 1: 1 file restored" in done
        assert "still shows the messages" in done and not (ws / "made.txt").exists()
    assert env.cli("sessions", "show", sid, "--workspace", str(ws))["messages"] == []


async def test_the_clients_mcp_servers_are_used(env: Env) -> None:
    """``session/new`` ``mcpServers`` (stdio, the SDK's own server): its tool is offered to the
    model, called after the client's permission, and its answer comes back; the agent says
    it takes HTTP and SSE servers too."""
    ws = env.folder()
    echo = str(Path(__file__).resolve().parents[1] / "fixtures" / "mcp" / "echo_server.py")
    env.fake.add_turns({"tool_calls": [{"name": "mcp__echo__echo",
                                        "arguments": {"text": "via ACP"}}]},
                       {"text": "echoed"})
    client = Recorder()
    async with agent(env, client) as conn:
        init = await call(conn.initialize(protocol_version=PROTOCOL_VERSION))
        mcp = init.agent_capabilities.mcp_capabilities
        assert mcp is not None and mcp.http and mcp.sse
        sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[McpServerStdio(
            name="echo", command=sys.executable, args=[echo], env=[])]))).session_id
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("echo it")))
        assert answer.stop_reason == "end_turn" and client.permissions
    tools = [t["name"] for r in env.fake.requests for t in r["body"].get("tools", [])]
    assert "mcp__echo__echo" in tools
    results = [m for m in env.cli("sessions", "show", sid, "--workspace", str(ws))["messages"]
               if m.get("tool_result")]
    assert json.loads(results[0]["tool_result"]["content"])["content"] == "via ACP"


# -- raw JSON-RPC ---------------------------------------------------------------------------------


class Raw:
    """The agent spoken to in raw lines: ``request`` sends and waits for the answer; every
    message received is kept in ``messages``."""

    def __init__(self, process: asyncio.subprocess.Process, env: Env) -> None:
        self.process = process
        self.env = env
        self.messages: list[dict[str, Any]] = []
        self._next = 100
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, env: Env) -> Raw:
        stderr = open(env.stderr, "ab")  # noqa: SIM115 (closed with the process)
        process = await asyncio.create_subprocess_exec(
            *SERVER, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr,
            env=env.vars, cwd=env.tmp, limit=16 * 1024 * 1024)
        stderr.close()
        return cls(process, env)

    async def _read(self) -> None:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            message = json.loads(line)  # the agent only ever writes JSON lines
            self.messages.append(message)
            self.env.received.append(message)

    def write(self, line: str | dict[str, Any]) -> None:
        assert self.process.stdin is not None
        text = line if isinstance(line, str) else json.dumps(line)
        self.process.stdin.write(text.encode() + b"\n")

    def send(self, method: str, params: Any) -> int:
        self._next += 1
        self.write({"jsonrpc": "2.0", "id": self._next, "method": method, "params": params})
        return self._next

    async def answer(self, request_id: Any) -> dict[str, Any]:
        await until(lambda: any(m.get("id") == request_id and "method" not in m
                                for m in self.messages), TIMEOUT)
        return next(m for m in self.messages if m.get("id") == request_id and "method" not in m)

    async def request(self, method: str, params: Any) -> dict[str, Any]:
        return await self.answer(self.send(method, params))

    def updates(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [m["params"]["update"] for m in self.messages
                if m.get("method") == "session/update" and m["params"]["sessionId"] == session_id
                and (kind is None or m["params"]["update"]["sessionUpdate"] == kind)]

    async def close(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        code = await asyncio.wait_for(self.process.wait(), TIMEOUT)
        await self._reader
        return code


async def test_errors_never_kill_the_process(env: Env) -> None:
    ws = env.folder()
    env.fake.add_turns({"text": ["slow", " answer"], "delay": 2}, {"text": "done"})
    raw = await Raw.start(env)
    init = await raw.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    assert init["result"]["agentCapabilities"]["loadSession"] is True
    raw.write("this is not json")
    raw.write("[1, 2, 3]")
    raw.write('{"jsonrpc": "2.0", "id": 7, "method": 12}')
    raw.write('{"jsonrpc": "2.0", "id": {"odd": 1}, "result": {}}')  # a bad response: ignored
    await until(lambda: len(raw.messages) >= 4)
    errors = [m["error"]["code"] for m in raw.messages if "error" in m]
    assert errors == [-32700, -32600, -32600]
    assert raw.messages[-1]["id"] == 7

    missing = await raw.request("session/new", {"mcpServers": []})
    assert missing["error"]["code"] == -32602 and "cwd" in missing["error"]["message"]
    relative = await raw.request("session/new", {"cwd": "ws", "mcpServers": []})
    assert relative["error"]["code"] == -32602
    assert "absolute" in relative["error"]["message"]
    nowhere = await raw.request("session/new", {"cwd": str(env.tmp / "nope"), "mcpServers": []})
    assert nowhere["error"]["code"] == -32602 and "not a folder" in nowhere["error"]["message"]
    unknown = await raw.request("session/prompt", {
        "sessionId": "20200101-000000-abcd", "prompt": [{"type": "text", "text": "hi"}]})
    assert unknown["error"]["code"] == -32002 and "unknown session" in unknown["error"][
        "message"]
    assert (await raw.request("session/nope", {}))["error"]["code"] == -32601

    sid = (await raw.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"][
        "sessionId"]
    bad_prompt = await raw.request("session/prompt", {"sessionId": sid, "prompt": "hi"})
    assert bad_prompt["error"]["code"] == -32602 and "prompt" in bad_prompt["error"]["message"]
    image = await raw.request("session/prompt", {"sessionId": sid, "prompt": [
        {"type": "image", "data": "AAAA", "mimeType": "image/png"}]})
    assert image["error"]["code"] == -32602 and "image" in image["error"]["message"]
    empty = await raw.request("session/prompt", {"sessionId": sid, "prompt": [
        {"type": "text", "text": "  "}]})
    assert empty["error"]["code"] == -32602 and "empty" in empty["error"]["message"]

    running = raw.send("session/prompt", {"sessionId": sid, "prompt": [
        {"type": "text", "text": "take your time"}]})
    await until(lambda: env.fake.requests)
    again = await raw.request("session/prompt", {"sessionId": sid, "prompt": [
        {"type": "text", "text": "me too"}]})
    assert again["error"]["code"] == -32001 and "already running" in again["error"]["message"]
    other = (await raw.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"][
        "sessionId"]  # another session of the folder runs at the same time
    after = await raw.request("session/prompt", {"sessionId": other, "prompt": [
        {"type": "text", "text": "my turn"}]})
    assert after["result"]["stopReason"] == "end_turn"
    assert "".join(u["content"]["text"] for u in raw.updates(other, "agent_message_chunk")
                   ) == "done"
    assert (await raw.answer(running))["result"]["stopReason"] == "end_turn"
    assert raw.process.returncode is None
    assert await raw.close() == 0


async def test_run_error_is_an_error_response(env: Env) -> None:
    ws = env.folder()
    env.fake.add_turns({"error": "auth"})
    raw = await Raw.start(env)
    await raw.request("initialize", {"protocolVersion": 1})
    sid = (await raw.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"][
        "sessionId"]
    failed = await raw.request("session/prompt", {"sessionId": sid, "prompt": [
        {"type": "text", "text": f"my key is {API_KEY}"}]})
    assert failed["error"]["code"] == -32603
    assert failed["error"]["message"].startswith("the run failed:")
    assert failed["error"]["data"] == {"stopReason": "error", "sessionId": sid}
    loaded = await raw.request("session/load", {"cwd": str(ws), "sessionId": sid,
                                                "mcpServers": []})
    assert loaded["result"] == {  # the session's permission mode and model, and the choices
        "modes": {"currentModeId": "default", "availableModes": [
            {"id": mode, "name": name, "description": meaning} for mode, name, meaning in MODES]},
        "configOptions": [{
            "type": "select", "id": "mode", "name": "Permission mode", "category": "mode",
            "description": "What the agent may do without asking", "currentValue": "default",
            "options": [{"value": mode, "name": name, "description": meaning}
                        for mode, name, meaning in MODES]}, {
            "type": "select", "id": "model", "name": "Model", "category": "model",
            "description": "The model this session's next requests use",
            "currentValue": DEFAULT_ANTHROPIC_MODEL,
            "options": [{"value": DEFAULT_ANTHROPIC_MODEL, "name": DEFAULT_ANTHROPIC_MODEL,
                         "description": "the model setting"}]}]}
    [echo] = [u for u in raw.updates(sid, "user_message_chunk")]
    assert echo["content"]["text"] == "my key is [redacted]"  # never written as it is
    assert await raw.close() == 0


async def test_compaction_updates_for_a_capable_client(env: Env) -> None:
    ws = env.folder(run_command="allow")
    env.fake.add_turns(*LONG_ANSWERS)
    raw = await Raw.start(env)
    await raw.request("initialize", {"protocolVersion": 1, "clientCapabilities": {
        "session": {"compaction": {}}}})
    sid = (await raw.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"][
        "sessionId"]
    for text in [*(f"question {i}" for i in range(len(LONG_ANSWERS))), "/compact the notes"]:
        answer = await raw.request("session/prompt", {"sessionId": sid, "prompt": [
            {"type": "text", "text": text}]})
        assert answer["result"]["stopReason"] == "end_turn"
    updates = raw.updates(sid, "compaction_update")
    assert [u["status"] for u in updates] == ["in_progress", "completed"]
    assert updates[0]["compactionId"] == updates[1]["compactionId"]
    assert "alpha and beta" in updates[1]["summary"][0]["text"]
    usage = raw.updates(sid, "usage_update")[-1]
    assert usage["used"] > 0 and usage["size"] == 200_000
    await raw.request("session/load", {"cwd": str(ws), "sessionId": sid, "mcpServers": []})
    replayed = raw.updates(sid, "compaction_update")[2:]
    assert [u["status"] for u in replayed] == ["completed"]
    assert await raw.close() == 0


async def test_hostile_input(env: Env) -> None:
    ws = env.folder()
    env.fake.add_turns({"tool_calls": [run_command("echo", "x")]}, {"text": "went on"})
    raw = await Raw.start(env)
    await raw.request("initialize", {"protocolVersion": 1})
    raw.write("[" * 100_000 + "]" * 100_000)  # nested deeper than the JSON parser goes
    await until(lambda: any(m.get("error", {}).get("code") == -32700 for m in raw.messages))
    weird: list[Any] = [None, [], 1, "x", {"sessionId": 5}, {"cwd": None}, {"cwd": "."},
                        {"prompt": [{}]}, {"sessionId": "x", "prompt": [{"type": "text"}]},
                        {"cwd": str(ws), "mcpServers": "none"}, {"cursor": "zz"},
                        {"cwd": str(ws), "sessionId": "../../etc", "mcpServers": []},
                        {"sessionId": "latest", "prompt": [{"type": "text", "text": "hi"}]}]
    codes = set()
    for method in ("initialize", "session/new", "session/load", "session/list",
                   "session/prompt", "session/cancel", "session/set_mode"):
        for params in weird:
            answer = await raw.request(method, params)
            codes.add(answer["error"]["code"] if "error" in answer else 0)
    assert codes <= {0, -32600, -32602, -32002, -32601}, codes
    raw.write({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": 1}})

    # a permission request answered with an error the connection cannot read: a denial
    sid = (await raw.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"][
        "sessionId"]
    running = raw.send("session/prompt", {"sessionId": sid, "prompt": [
        {"type": "text", "text": "echo x"}]})
    await until(lambda: any(m.get("method") == "session/request_permission"
                            for m in raw.messages))
    asked = next(m for m in raw.messages if m.get("method") == "session/request_permission")
    raw.write({"jsonrpc": "2.0", "id": asked["id"], "error": "no"})
    assert (await raw.answer(running))["result"]["stopReason"] == "end_turn"
    failed = raw.updates(sid, "tool_call_update")[-1]
    assert failed["status"] == "failed" and "not approved" in failed["content"][0]["content"][
        "text"]
    assert raw.process.returncode is None
    assert await raw.close() == 0


async def test_permission_modes_and_the_decision_table(env: Env) -> None:
    """Session modes and the ``mode`` config option; then the decision table's command rows
    (tests/permission_table.py) through real calls, seen from the client: an ``ask`` is a
    permission request (answered Reject), a ``deny`` fails without one, an ``allow`` runs
    without one."""
    ws = env.folder()
    (env.home / ".PseudoClaude" / "config.yaml").write_text(
        (env.home / ".PseudoClaude" / "config.yaml").read_text()
        + "permissions:\n  allowBypass: true\n")
    rows = [row for row in ROWS if row.tool == "run_command"]
    for row in rows:
        env.fake.add_turns({"tool_calls": [{"name": "run_command",
                                            "arguments": row.arguments}]}, {"text": "ok"})
    env.fake.add_turns({"tool_calls": [{"name": "write_file", "arguments": {
        "path": "planned.txt", "content": "x"}}]}, {"text": "planned"})
    client = Recorder()
    client.answer = "deny"
    async with agent(env, client) as conn:
        made = await call(conn.new_session(cwd=str(ws), mcp_servers=[]))
        sid = made.session_id
        assert made.modes.current_mode_id == "default"
        assert [m.id for m in made.modes.available_modes] == [
            *(mode for mode, _, _ in MODES), "bypassPermissions"]
        option = made.config_options[0]
        assert option.id == "mode" and option.current_value == "default"
        with pytest.raises(RequestError) as bad:
            await call(conn.set_session_mode(session_id=sid, mode_id="yolo"))
        assert bad.value.code == -32602 and "modeId" in str(bad.value.data)
        for row in rows:
            (env.tmp / "permissions.yaml").write_text(permissions_yaml(row))
            await call(conn.set_session_mode(session_id=sid, mode_id=row.mode))
            client.clear()
            await call(conn.prompt(session_id=sid, prompt=prompt(row.name)))
            [update] = client.of(sid, "tool_call_update")[-1:]
            asked = len(client.permissions)
            if row.decision == "ask":
                assert asked == 1 and update["status"] == "failed", row.name
            elif row.decision == "deny":
                assert asked == 0 and update["status"] == "failed", row.name
                assert "is not allowed" in update["content"][0]["content"]["text"], row.name
            else:  # it ran (make finds no Makefile here: a failure of its own)
                text = update["content"][0]["content"]["text"]
                assert asked == 0 and "not allowed" not in text and "denied" not in text, text
        client.clear()
        answer = await call(conn.set_config_option(config_id="mode", session_id=sid,
                                                   value="plan"))
        assert answer.config_options[0].current_value == "plan"
        assert [u["currentModeId"] for u in client.of(sid, "current_mode_update")] == ["plan"]
        await call(conn.prompt(session_id=sid, prompt=prompt("write it")))
        assert client.permissions == [] and not (ws / "planned.txt").exists()
        failed = client.of(sid, "tool_call_update")[-1]
        assert failed["status"] == "failed" and "plan mode" in failed["content"][0][
            "content"]["text"]
    assert env.cli("permissions", "--workspace", str(ws))["mode"] == "plan"  # logged


async def test_plan_mode_the_task_list_as_plan_updates_and_the_plan_approval(env: Env) -> None:
    """``/plan <task>`` over ACP: plan mode, the task list as ``plan`` updates (priority
    ``medium``), the plan asked with ``session/request_permission`` (Keep planning, then
    Approve and accept edits) and carried out in the same run."""
    ws = env.folder()
    tasks = {"name": "update_tasks", "arguments": {"tasks": [
        {"content": "write new.txt", "status": "in_progress"}]}}
    plan = {"name": "exit_plan_mode", "arguments": {"plan": "# Plan\n1. write new.txt"}}
    write = {"name": "write_file", "arguments": {"path": "new.txt", "content": "x\n"}}
    env.fake.add_turns({"tool_calls": [tasks, plan]}, {"tool_calls": [plan]},
                       {"tool_calls": [write]}, {"text": "Done."})
    client = Recorder()
    answers = iter(["keep_planning", "approve_accept_edits"])

    async def choose(options: Any, session_id: str, tool_call: Any,
                     **kwargs: Any) -> RequestPermissionResponse:
        client.permissions.append({"options": [o.option_id for o in options],
                                   "toolCall": tool_call.model_dump(mode="json",
                                                                    by_alias=True)})
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=next(answers)))

    client.request_permission = choose  # type: ignore[method-assign]
    async with agent(env, client) as conn:
        sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("/plan write new.txt")))
        assert answer.stop_reason == "end_turn"
        assert [p["options"] for p in client.permissions] == [
            ["approve", "approve_accept_edits", "keep_planning"]] * 2
        shown = client.permissions[0]["toolCall"]["content"][0]["content"]["text"]
        assert shown.startswith("# Plan")
        [entries] = [u["entries"] for u in client.of(sid, "plan")][:1]
        assert entries == [{"content": "write new.txt", "priority": "medium",
                            "status": "in_progress"}]
        modes = [u["currentModeId"] for u in client.of(sid, "current_mode_update")]
        assert modes == ["plan", "acceptEdits"]
        assert (ws / "new.txt").read_text() == "x\n"  # carried out, not asked (acceptEdits)


# -- resume, close, delete and the model option ----------------------------------------------------


STALLED = {"text": ["Working", " on it", " slowly"], "delay": 0.05, "stall": 30, "stall_after": 5}
"""A prompt that runs until it is cancelled (after its first words)."""


def model_requests(env: Env) -> list[dict[str, Any]]:
    """The bodies of the requests of runs (memory updates send no tools)."""
    return [r["body"] for r in env.fake.requests if r["body"].get("tools")]


async def test_resume_without_replay_then_close_releases_the_session(env: Env) -> None:
    """``session/resume`` opens a session another process made, replays nothing, and answers
    modes and config options; commands, usage and the task list follow. While the other process
    runs a prompt in it, it cannot write it; ``session/close`` there cancels that prompt and
    releases the session's lock before it answers, and this process then writes it."""
    ws = env.folder()
    tasks = {"name": "update_tasks", "arguments": {"tasks": [
        {"content": "say hello", "status": "in_progress"}]}}
    env.fake.add_turns({"tool_calls": [tasks]}, {"text": "Hello."},
                       STALLED,
                       {"text": "Picked up here."})
    first, second = Recorder(), Recorder()
    async with agent(env, first) as one, agent(env, second) as two:
        sid = (await call(one.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        await call(one.prompt(session_id=sid, prompt=prompt("hi")))

        resumed = await call(two.resume_session(cwd=str(ws), session_id=sid, mcp_servers=[]))
        assert resumed.modes.current_mode_id == "default"
        assert [(o.id, o.current_value) for o in resumed.config_options] == [
            ("mode", "default"), ("model", DEFAULT_ANTHROPIC_MODEL)]
        await until(lambda: second.of(sid, "plan"))
        assert [u["sessionUpdate"] for u in second.of(sid)] == [
            "available_commands_update", "usage_update", "plan"]  # no history replayed
        assert second.of(sid, "plan")[0]["entries"] == [
            {"content": "say hello", "priority": "medium", "status": "in_progress"}]

        running = asyncio.ensure_future(one.prompt(session_id=sid,
                                                   prompt=prompt("take your time")))
        await until(lambda: "Working" in first.text(sid))
        with pytest.raises(RequestError) as busy:
            await call(two.prompt(session_id=sid, prompt=prompt("me too")))
        assert busy.value.code == -32001 and busy.value.data["pid"]
        await call(one.close_session(session_id=sid))
        assert holder(SessionStore(ws / ".PseudoClaude").session_dir(sid)) is None
        assert (await call(running)).stop_reason == "cancelled"
        with pytest.raises(RequestError) as closed:
            await call(one.prompt(session_id=sid, prompt=prompt("still there?")))
        assert closed.value.code == -32002

        second.clear()
        answer = await call(two.prompt(session_id=sid, prompt=prompt("now me")))
        assert answer.stop_reason == "end_turn" and second.text(sid) == "Picked up here."
        sent = json.dumps(model_requests(env)[-1]["messages"])
        assert "hi" in sent and "take your time" in sent  # the other process's turns

        again = await call(one.resume_session(cwd=str(ws), session_id=sid, mcp_servers=[]))
        assert again.config_options[0].id == "mode"
        with pytest.raises(RequestError) as unknown:
            await call(one.resume_session(cwd=str(ws), session_id="20200101-000000-abcd",
                                          mcp_servers=[]))
        assert unknown.value.code == -32002
    shown = env.cli("sessions", "show", sid, "--workspace", str(ws))
    assert [m["content"] for m in shown["messages"] if m["role"] == "user"
            and m.get("content")] == ["hi", "take your time", "now me"]
    assert shown["bad_lines"] == 0


async def test_delete_removes_the_folder_unless_a_prompt_runs(env: Env) -> None:
    """``session/delete`` (served although the package has no route for it): refused with
    ``-32001`` while a prompt runs in the session, in another process or this one; then the
    session's folder is gone and it is no longer listed; an unknown session is ``-32002``."""
    ws = env.folder()
    env.fake.add_turns({"text": "Hello."},
                       STALLED,
                       STALLED)
    store = SessionStore(ws / ".PseudoClaude")
    client = Recorder()
    raw = await Raw.start(env)
    await raw.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
    async with agent(env, client) as other:
        sid = (await call(other.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        await call(other.prompt(session_id=sid, prompt=prompt("hi")))
        listed = await raw.request("session/list", {"cwd": str(ws)})
        assert [s["sessionId"] for s in listed["result"]["sessions"]] == [sid]

        running = asyncio.ensure_future(other.prompt(session_id=sid, prompt=prompt("go on")))
        await until(lambda: "Working" in client.text(sid))
        refused = await raw.request("session/delete", {"sessionId": sid})
        assert refused["error"]["code"] == -32001 and refused["error"]["data"]["pid"]
        assert store.session_dir(sid).is_dir()
        await other.cancel(session_id=sid)
        assert (await call(running)).stop_reason == "cancelled"

        deleted = await raw.request("session/delete", {"sessionId": sid})
        assert deleted["result"] == {}
        assert not store.session_dir(sid).exists()
        listed = await raw.request("session/list", {"cwd": str(ws)})
        assert listed["result"]["sessions"] == []
        gone = await raw.request("session/delete", {"sessionId": sid})
        assert gone["error"]["code"] == -32002 and "unknown session" in gone["error"]["message"]
        bad = await raw.request("session/delete", {})
        assert bad["error"]["code"] == -32602 and "sessionId" in bad["error"]["message"]

    own = (await raw.request("session/new", {"cwd": str(ws), "mcpServers": []}))["result"][
        "sessionId"]  # a prompt of this process
    running_id = raw.send("session/prompt", {"sessionId": own, "prompt": [
        {"type": "text", "text": "mine"}]})
    await until(lambda: raw.updates(own, "agent_message_chunk"))
    refused = await raw.request("session/delete", {"sessionId": own})
    assert refused["error"]["code"] == -32001 and "running" in refused["error"]["message"]
    raw.write({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": own}})
    assert (await raw.answer(running_id))["result"]["stopReason"] == "cancelled"
    assert (await raw.request("session/delete", {"sessionId": own}))["result"] == {}
    assert not store.session_dir(own).exists()
    unknown = await raw.request("session/prompt", {"sessionId": own, "prompt": [
        {"type": "text", "text": "hello?"}]})
    assert unknown["error"]["code"] == -32002
    assert await raw.close() == 0
    assert env.cli("sessions", "list", "--workspace", str(ws))["sessions"] == []


async def test_the_model_option_switches_the_sessions_model(env: Env) -> None:
    """The ``model`` config option lists the ``model`` setting and ``compact.model``; a choice
    applies to that session's next requests only and is written nowhere."""
    user_config = env.home / ".PseudoClaude" / "config.yaml"
    user_config.write_text(user_config.read_text() + "compact:\n  model: claude-haiku-4-5\n")
    ws = env.folder()
    settings_before = {path: path.read_text() for path in
                       (user_config, ws / ".PseudoClaude" / "config.yaml")}
    env.fake.add_turns({"text": "one"}, {"text": "two"}, {"text": "three"})
    client = Recorder()
    async with agent(env, client) as conn:
        made = await call(conn.new_session(cwd=str(ws), mcp_servers=[]))
        sid = made.session_id
        model = made.config_options[1]
        assert (model.id, model.category, model.current_value) == (
            "model", "model", DEFAULT_ANTHROPIC_MODEL)
        assert [o.value for o in model.options] == [DEFAULT_ANTHROPIC_MODEL, "claude-haiku-4-5"]
        await call(conn.prompt(session_id=sid, prompt=prompt("first")))
        assert model_requests(env)[-1]["model"] == DEFAULT_ANTHROPIC_MODEL

        client.clear()
        answer = await call(conn.set_config_option(config_id="model", session_id=sid,
                                                   value="claude-haiku-4-5"))
        assert answer.config_options[1].current_value == "claude-haiku-4-5"
        [update] = client.of(sid, "config_option_update")
        assert [o["currentValue"] for o in update["configOptions"]] == [
            "default", "claude-haiku-4-5"]
        await call(conn.prompt(session_id=sid, prompt=prompt("second")))
        assert model_requests(env)[-1]["model"] == "claude-haiku-4-5"

        other = await call(conn.new_session(cwd=str(ws), mcp_servers=[]))
        assert other.config_options[1].current_value == DEFAULT_ANTHROPIC_MODEL
        await call(conn.prompt(session_id=other.session_id, prompt=prompt("third")))
        assert model_requests(env)[-1]["model"] == DEFAULT_ANTHROPIC_MODEL

        with pytest.raises(RequestError) as bad:
            await call(conn.set_config_option(config_id="model", session_id=sid,
                                              value="gpt-9"))
        assert bad.value.code == -32602 and "claude-haiku-4-5" in str(bad.value.data)
        with pytest.raises(RequestError) as unknown:
            await call(conn.set_config_option(config_id="effort", session_id=sid, value="x"))
        assert unknown.value.code == -32602 and "model" in str(unknown.value.data)
    assert {path: path.read_text() for path in settings_before} == settings_before



# -- sub-agents -------------------------------------------------------------------------------
GENERAL = "You are a general-purpose sub-agent"


def sub_rule(reply: dict[str, Any], *, after_result: bool) -> dict[str, Any]:
    return {"when": {"system_contains": GENERAL, "last_is_tool_result": after_result},
            "reply": reply, "times": 1}


async def test_a_sub_agent_is_a_tool_call_whose_content_streams_its_progress(env: Env) -> None:
    """The parent's ``agent`` call is a card; the sub-agent's tool calls and text update its
    content (never the session's own calls or messages); its approval is asked on that card;
    it ends ``completed`` with its steps and its answer."""
    ws = env.folder(write="ask")
    write = {"name": "write_file", "arguments": {"path": "made.txt", "content": "x\n"}}
    env.fake.script.rules[:0] = [
        sub_rule({"text": "SUBTEXT reading first.",
                  "tool_calls": [read_file("notes.txt"), write]}, after_result=False),
        sub_rule({"text": "SUBANSWER: wrote made.txt"}, after_result=True)]
    env.fake.add_turns({"text": "Handing it over.", "tool_calls": [{
                            "name": "agent", "arguments": {
                                "prompt": "write made.txt", "description": "make the file"}}]},
                       {"text": "The sub-agent made it."})
    client = Recorder()
    async with agent(env, client) as conn:
        sid = (await call(conn.new_session(cwd=str(ws), mcp_servers=[]))).session_id
        answer = await call(conn.prompt(session_id=sid, prompt=prompt("make a file")))
        assert answer.stop_reason == "end_turn"
    [start] = client.of(sid, "tool_call")  # the sub-agent's calls are no cards of their own
    card = start["toolCallId"]
    assert start["title"] == "general-purpose agent: make the file"
    assert client.text(sid) == "Handing it over.The sub-agent made it."  # not SUBTEXT
    updates = client.of(sid, "tool_call_update")
    assert {u["toolCallId"] for u in updates} == {card}
    [asked] = client.permissions  # the write, asked on the sub-agent's card
    assert asked["toolCall"]["toolCallId"] == card
    assert asked["toolCall"]["title"].startswith("general-purpose agent: make the file: ")
    assert "write_file" in asked["toolCall"]["title"]

    def texts(update: dict[str, Any]) -> list[str]:
        return [c["content"]["text"] for c in update.get("content", [])]

    shown = [texts(u) for u in updates]
    assert ["… read_file: notes.txt"] in [t[1:2] for t in shown if len(t) > 1]
    assert any("SUBTEXT reading first." in t for t in shown[0])  # its text, as it streams
    assert all(u["status"] == "in_progress" for u in updates[:-1])
    done = updates[-1]
    assert done["status"] == "completed"
    final = texts(done)
    assert final[0] == "✓ read_file: notes.txt" and final[1].startswith("✓ ")
    assert "write_file" in final[1]
    assert "SUBANSWER: wrote made.txt" in final[-1]
    assert (ws / "made.txt").read_text() == "x\n"
