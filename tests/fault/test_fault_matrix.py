"""Fault matrix (issue 9): provider failures through the real SDKs against the fake model.

Every case drives a real :class:`~pseudoclaude.workspace.Workspace` (real runner, tools,
session log, compaction and memory) whose provider talks to :class:`FakeModelServer` over
loopback, and checks that the run either ends cleanly (``stopReason`` ``error`` with a clear
``error`` text and one ``error`` event) or recovers (bounded retries, a ``warning`` event per
retry), that the session log stays loadable and protocol-valid, and that a failed run leaves
both memory folders exactly as they were (no model call for a memory update, no note, the same
``MEMORY.md``). Two LSP tests run the same faults through the real server over stdio.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from lsprotocol.converters import get_converter
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features

from pseudoclaude.agent.approvals import Approver
from pseudoclaude.config import load_settings
from pseudoclaude.events import (
    CompactEvent,
    ErrorEvent,
    Event,
    MemoryEvent,
    StopEvent,
    TextEvent,
    WarningEvent,
)
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.session import SessionStore, load_session
from pseudoclaude.session.repair import is_valid
from pseudoclaude.workspace import Hooks, Workspace
from support import is_summary_request, server_env

MEMORY_SYSTEM = "long-term memory"  # in the memory update's system prompt
CANARY_NOTE = {"action": "create", "level": "project", "type": "project_knowledge",
               "title": "Fault canary", "summary": "written by a memory update",
               "content": "A memory update ran after this run."}
MEMORY_RULE = {"when": {"has_tools": False, "system_contains": MEMORY_SYSTEM},
               "reply": {"text": json.dumps([CANARY_NOTE])}}
SEED_INDEX = "- [project_knowledge] Seed — seeded before the run (project_knowledge_seed.md)\n"
SEED_NOTE = "---\ntype: project_knowledge\ntitle: \"Seed\"\n---\n\nSeeded.\n"
USER_INDEX = "- [user_preference] Tabs — the user likes tabs (user_preference_tabs.md)\n"


def read(path: str) -> dict[str, Any]:
    return {"name": "read_file", "arguments": {"path": path}}


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file under ``roots`` with its bytes (the memory folders' whole state)."""
    out: dict[str, bytes] = {}
    for root in roots:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                out[str(path)] = path.read_bytes()
    return out


def seed_memory(project: Path, user: Path) -> None:
    project.mkdir(parents=True, exist_ok=True)
    user.mkdir(parents=True, exist_ok=True)
    (project / "MEMORY.md").write_text(SEED_INDEX)
    (project / "project_knowledge_seed.md").write_text(SEED_NOTE)
    (user / "MEMORY.md").write_text(USER_INDEX)


def check_log(store: SessionStore, session_id: str, live: list[Any]) -> None:
    """The log is loadable, every line is JSON, the history is protocol-valid and the same as
    what the model would see next, and nothing needed repair."""
    path = store.log_path(session_id)
    for line in path.read_bytes().splitlines():
        json.loads(line)
    loaded = load_session(store, session_id)
    assert loaded.bad_lines == 0 and loaded.repaired == 0
    assert is_valid(loaded.messages)
    assert loaded.messages == live


@dataclass
class Case:
    id: str
    turns: list[dict[str, Any]]
    settings: dict[str, Any] = field(default_factory=dict)
    outcome: str = "error"  # or "completed"
    error_has: tuple[str, ...] = ()
    model_requests: int = 1  # requests with tools (the run's turns, retries included)
    retries: int = 0
    text: str = ""


NO_RETRY = {"maxRetries": 0}
ONE_RETRY = {"maxRetries": 1}
RECOVERED = {"text": "recovered after the fault"}

# status codes as each SDK reports them: OpenAI-compatible servers say 503 for overload.
OVERLOADED = {"anthropic": ("529", "overloaded"), "openai": ("503", "overloaded")}


def cases(provider: str) -> list[Case]:
    overloaded = OVERLOADED[provider]
    return [
        Case("429", [{"error": "rate_limit"}], NO_RETRY, error_has=("429", "rate limit")),
        Case("500", [{"error": "server_error"}], NO_RETRY, error_has=("500",)),
        Case("overloaded", [{"error": "overloaded"}], NO_RETRY, error_has=overloaded),
        Case("429-retried", [{"error": "rate_limit", "retry_after": 0}, RECOVERED], ONE_RETRY,
             outcome="completed", model_requests=2, retries=1, text=RECOVERED["text"]),
        Case("500-retried", [{"error": "server_error", "retry_after": 0}, RECOVERED], ONE_RETRY,
             outcome="completed", model_requests=2, retries=1, text=RECOVERED["text"]),
        Case("overloaded-retries-exhausted",
             [{"error": "overloaded", "retry_after": 0}] * 3 + [RECOVERED],
             {"maxRetries": 2}, error_has=overloaded, model_requests=3, retries=2),
        Case("reset-mid-stream", [{"text": ["one ", "two ", "three ", "four"], "cut_after": 5},
                                  RECOVERED],
             {"maxRetries": 2}, error_has=("connection",), model_requests=1),
        Case("reset-before-output", [{"text": "lost", "cut_after": 0}, RECOVERED], ONE_RETRY,
             outcome="completed", model_requests=2, retries=1, text=RECOVERED["text"]),
        Case("stall-timeout", [{"text": "never sent", "stall": 30}, RECOVERED],
             {"maxRetries": 0, "requestTimeout": 2}, error_has=("timed out",)),
        Case("stall-mid-stream", [{"text": ["a ", "b ", "c"], "stall": 30, "stall_after": 4},
                                  RECOVERED],
             {"maxRetries": 2, "requestTimeout": 2}, error_has=("timed out",)),
        Case("malformed-tool-arguments",
             [{"tool_calls": [{"name": "read_file", "arguments": '{"path": "a.txt",,}'}]},
              {"text": "The arguments were broken; done."}],
             NO_RETRY, outcome="completed", model_requests=2,
             text="The arguments were broken; done."),
        Case("max-tokens-mid-tool-call",
             [{"text": "Writing the file now.", "stop_reason": "max_tokens",
               "tool_calls": [{"name": "write_file",
                               "arguments": {"path": "out.txt", "content": "partial"}}]},
              RECOVERED],
             # OpenAI-compatible (local) servers: the cut call is a failed result, the run
             # goes on
             NO_RETRY, error_has=("max_tokens",), **({} if provider == "anthropic" else {
                 "outcome": "completed", "model_requests": 2, "text": RECOVERED["text"]})),
    ]


ALL_CASES = [(provider, case) for provider in ("anthropic", "openai")
             for case in cases(provider)]


def make_workspace(tmp_path: Path, fake: FakeModelServer, provider: str, extra: dict[str, Any],
                   approver: Approver) -> tuple[Workspace, list[tuple[str, Event]], Path]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    user_memory = tmp_path / "user-memory"
    seed_memory(root / ".PseudoClaude" / "memory", user_memory)
    overrides: dict[str, Any] = {
        "provider": provider, "apiKey": "sk-fault-matrix-0123456789", "baseUrl": fake.base_url,
        "model": "fault-model", "approvals.runCommand": "allow", "memory.enabled": True,
        "memory.userDir": str(user_memory), "requestTimeout": 30, "connectTimeout": 10}
    overrides.update(extra)
    settings = load_settings(root, overrides, home=tmp_path / "home", env={})
    events: list[tuple[str, Event]] = []
    ws = Workspace(root, settings, approver=approver,
                   hooks=Hooks(events=lambda sid, e: events.append((sid, e))))
    return ws, events, user_memory


def tool_requests(fake: FakeModelServer) -> list[dict[str, Any]]:
    return [r for r in fake.requests if r["body"].get("tools")]


def memory_requests(fake: FakeModelServer) -> list[dict[str, Any]]:
    return [r for r in fake.requests if MEMORY_SYSTEM in json.dumps(r["body"])
            and not r["body"].get("tools")]


@pytest.mark.parametrize(("provider", "case"), ALL_CASES,
                         ids=[f"{p}-{c.id}" for p, c in ALL_CASES])
def test_fault(tmp_path: Path, provider: str, case: Case, allow: Approver) -> None:
    with FakeModelServer({"rules": [MEMORY_RULE], "turns": case.turns}) as fake:
        ws, events, user_memory = make_workspace(tmp_path, fake, provider, case.settings, allow)
        project_memory = ws.store.data_dir / "memory"
        before = snapshot(project_memory, user_memory)

        async def go() -> tuple[str, Any, bool]:
            try:
                started = time.monotonic()
                session_id, result = await asyncio.wait_for(ws.run("please do the thing"), 60)
                assert time.monotonic() - started < 30
                drained = await ws.memory.drain(20)
            finally:
                await ws.close()
            return session_id, result, drained

        session_id, result, drained = asyncio.run(go())
        assert drained
        requests = tool_requests(fake)
        memory_calls = memory_requests(fake)

    kinds = [e.kind for _, e in events]
    errors = [e.message for _, e in events if isinstance(e, ErrorEvent)]
    warnings = [e.message for _, e in events if isinstance(e, WarningEvent)]
    stops = [e.stop_reason for _, e in events if isinstance(e, StopEvent)]
    assert stops == [result.stop_reason], kinds
    assert result.stop_reason == case.outcome, (result.error, kinds)
    assert len(requests) == case.model_requests
    assert len([w for w in warnings if "retrying" in w]) == case.retries, warnings
    assert all(sid == session_id for sid, _ in events)
    assert ws.session is not None
    live = ws.session.conversation.messages()
    check_log(ws.store, session_id, live)
    after = snapshot(project_memory, user_memory)
    memory_events = [e for _, e in events if isinstance(e, MemoryEvent)]

    if case.outcome == "error":
        assert result.error, "a failed run carries its error"
        lowered = result.error.lower()
        for needle in case.error_has:
            assert needle in lowered, result.error
        assert "traceback" not in lowered and "\n" not in result.error
        assert errors == [result.error]  # exactly one error event, the same text
        assert kinds.index("error") < kinds.index("stop")
        assert after == before, "a failed run must not touch memory"
        assert not memory_calls and not memory_events
        assert live[0].role == "user" and live[0].content == "please do the thing"
        assert not any(m.tool_calls for m in live), "no call may be left in the history"
    else:
        assert result.error is None and not errors
        assert result.text == case.text
        assert [e.status for e in memory_events] == ["updated"]
        assert len(memory_calls) == 1
        assert (project_memory / "project_knowledge_fault-canary.md").is_file()
        assert after[str(project_memory / "project_knowledge_seed.md")] == SEED_NOTE.encode()

    if case.id == "malformed-tool-arguments":
        call = live[1].tool_calls[0]
        assert call.arguments == '{"path": "a.txt",,}'  # kept as the raw text, never dropped
        result_message = live[2].tool_result
        assert result_message is not None and result_message.is_error
        envelope = json.loads(result_message.content)
        assert envelope["error_type"] == "invalid_arguments"
        assert "invalid_arguments" in json.dumps(requests[1]["body"])  # the model was told
    if case.id == "max-tokens-mid-tool-call":
        assert not (ws.root / "out.txt").exists(), "a truncated call must never run"
        if provider == "anthropic":
            assert [(m.role, m.content) for m in live] == [
                ("user", "please do the thing"), ("assistant", "Writing the file now.")]
        else:
            assert [m.content for m in live if m.role == "assistant"] == [
                "Writing the file now.", RECOVERED["text"]]
            cut = live[2].tool_result
            assert cut is not None and cut.is_error and "cut off" in cut.content
    if case.id in ("reset-mid-stream", "stall-mid-stream"):
        streamed = "".join(e.delta for _, e in events if isinstance(e, TextEvent))
        assert streamed, "text streamed before the fault"
        assert [m.role for m in live] == ["user"], "a half turn is not kept"


def test_prompt_too_long_during_an_automatic_summary(tmp_path: Path, allow: Approver) -> None:
    """Auto compaction fails (every summary request is too long), the run goes on
    uncompacted to a normal answer, and each failure is an error event."""
    summary_rule = {"when": {"summary": True},
                    "reply": {"error": "prompt_too_long"}}
    turns = [{"tool_calls": [read(f"big{i}.txt")]} for i in range(6)] + [
        {"text": "finished without a summary"}]
    with FakeModelServer({"rules": [summary_rule, MEMORY_RULE], "turns": turns}) as fake:
        ws, events, _ = make_workspace(
            tmp_path, fake, "anthropic",
            {"maxRetries": 0, "contextWindow": 30_000, "compact.singleResultBytes": 10**9,
             "compact.roundBytes": 10**9}, allow)
        for i in range(6):
            (ws.root / f"big{i}.txt").write_text(f"line {i} of a big file\n" * 700)  # ~16 KB

        async def go() -> tuple[str, Any]:
            try:
                session_id, result = await asyncio.wait_for(ws.run("read all big files"), 60)
                assert await ws.memory.drain(20)
                return session_id, result
            finally:
                await ws.close()

        session_id, result = asyncio.run(go())
        summaries = [r for r in fake.requests if is_summary_request(r)]
        assert summaries and all(r["status"] == 400 for r in summaries)
    assert result.stop_reason == "completed" and result.text == "finished without a summary"
    assert result.error is None
    errors = [e.message for _, e in events if isinstance(e, ErrorEvent)]
    assert errors and all(m.startswith("automatic compaction failed") for m in errors), errors
    assert any("too long" in m or "too large" in m for m in errors), errors
    assert not any(isinstance(e, CompactEvent) and e.layer == 2 for _, e in events)
    assert ws.session.runtime is not None
    assert ws.session.runtime.failures == len(errors)
    if ws.session.runtime.tripped:  # the breaker is announced once, never silent
        assert sum("automatic compaction is off" in e.message for _, e in events
                   if isinstance(e, WarningEvent)) == 1
    assert ws.session is not None
    live = ws.session.conversation.messages()
    assert len(live) == 1 + 2 * 6 + 1  # uncompacted: every message is still there
    check_log(ws.store, session_id, live)
    log = ws.store.log_path(session_id).read_text()
    assert '"type":"replace"' not in log


# -- the same faults through the real LSP server ---------------------------------------------

HOME = tempfile.mkdtemp(prefix="pseudoclaude-fault-home-")
SERVER_ENV = server_env(HOME)
SERVER = [sys.executable, "-m", "pseudoclaude", "lsp"]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=get_converter)
    register_lsp_features(client)
    return client


class LspEnv:
    def __init__(self, tmp_path: Path, fake: FakeModelServer) -> None:
        self.root = tmp_path / "ws"
        self.user_memory = tmp_path / "user-memory"
        self.fake = fake
        self.events: list[dict[str, Any]] = []


@pytest.fixture
def lsp_fake() -> Iterator[FakeModelServer]:
    with FakeModelServer({"rules": [MEMORY_RULE]}) as server:
        yield server


@pytest.fixture
def lsp_env(tmp_path: Path, lsp_fake: FakeModelServer) -> LspEnv:
    return LspEnv(tmp_path, lsp_fake)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER, server_env=SERVER_ENV,
                                              client_factory=make_client))
async def lsp(lsp_client: LanguageClient, lsp_env: LspEnv) -> AsyncIterator[LanguageClient]:
    env = lsp_env
    env.root.mkdir()
    (env.root / "a.txt").write_text("alpha\n")
    for i in range(6):
        (env.root / f"big{i}.txt").write_text(f"line {i} of a big file\n" * 700)
    seed_memory(env.root / ".PseudoClaude" / "memory", env.user_memory)

    @lsp_client.feature("pseudoclaude/event")
    def on_event(params: Any) -> None:
        env.events.append(params)

    for method in ("pseudoclaude/contextUsage", "pseudoclaude/memoryChanged"):
        lsp_client.feature(method)(lambda params: None)

    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[types.WorkspaceFolder(uri=env.root.as_uri(), name="ws")],
        initialization_options={
            "provider": "anthropic", "apiKey": "sk-fault-lsp-0123456789",
            "baseUrl": env.fake.base_url, "maxRetries": 0, "requestTimeout": 2,
            "contextWindow": 30_000, "compact": {"singleResultBytes": 10**9,
                                                 "roundBytes": 10**9},
            "memory": {"userDir": str(env.user_memory)},
            "approvals": {"runCommand": "deny"}}))
    yield lsp_client
    await lsp_client.shutdown_session()


def stop_of(events: list[dict[str, Any]], session_id: str) -> str | None:
    stops = [e["stopReason"] for e in events
             if e["kind"] == "stop" and e["sessionId"] == session_id]
    return stops[-1] if stops else None


async def test_lsp_failed_runs_answer_with_the_error(lsp: LanguageClient, lsp_env: LspEnv,
                                                     call: Any, until: Any
                                                     ) -> None:
    """429, a stalled stream and a max_tokens stop inside a tool call: each run answers
    ``stopReason: error`` with the error, sends an ``error`` then a ``stop`` event, leaves a
    valid log, touches no memory, and the server keeps serving."""
    env = lsp_env
    memory_dirs = (env.root / ".PseudoClaude" / "memory", env.user_memory)
    faults: list[tuple[dict[str, Any], str]] = [
        ({"error": "rate_limit"}, "429"),
        ({"text": "never", "stall": 30}, "timed out"),
        ({"text": "Writing.", "stop_reason": "max_tokens",
          "tool_calls": [{"name": "write_file", "arguments": {"path": "o.txt", "content": "x"}}]},
         "max_tokens"),
    ]
    store = SessionStore(env.root / ".PseudoClaude")
    for turn, needle in faults:
        before = snapshot(*memory_dirs)
        env.fake.add_turns(turn)
        result = await call(lsp, "pseudoclaude/run", {"prompt": "go", "sessionId": "new"})
        sid = result["sessionId"]
        assert result["stopReason"] == "error" and needle in result["error"], result
        await until(lambda sid=sid: stop_of(env.events, sid) is not None)
        mine = [e for e in env.events if e["sessionId"] == sid]
        assert [e["message"] for e in mine if e["kind"] == "error"] == [result["error"]]
        assert stop_of(env.events, sid) == "error"
        context = await call(lsp, "pseudoclaude/context")
        assert context["sessionId"] == sid
        transcript = await call(lsp, "pseudoclaude/sessions/messages", {})
        loaded = load_session(store, sid)
        assert len(loaded.messages) == context["messageCount"]
        assert transcript["items"][0] == {**transcript["items"][0], "kind": "user",
                                          "inContext": True}
        assert is_valid(loaded.messages) and loaded.bad_lines == 0 and loaded.repaired == 0
        assert snapshot(*memory_dirs) == before
    assert not memory_requests(env.fake)
    assert not (env.root / "o.txt").exists()
    listed = await call(lsp, "pseudoclaude/sessions/list")
    assert len(listed["sessions"]) == len(faults)


async def test_lsp_summary_prompt_too_long_lets_the_run_finish(lsp: LanguageClient,
                                                              lsp_env: LspEnv, call: Any,
                                                              until: Any) -> None:
    env = lsp_env
    env.fake.script.rules.insert(0, {
        "when": {"summary": True},
        "reply": {"error": "prompt_too_long"}, "times": None})
    env.fake.add_turns(*[{"tool_calls": [read(f"big{i}.txt")]} for i in range(6)],
                       {"text": "finished without a summary"})
    result = await call(lsp, "pseudoclaude/run", {"prompt": "read all big files"})
    assert result["stopReason"] == "completed" and "error" not in result
    assert result["text"] == "finished without a summary"
    sid = result["sessionId"]
    await until(lambda: stop_of(env.events, sid) is not None)
    errors = [e["message"] for e in env.events if e["kind"] == "error"]
    assert errors and all(m.startswith("automatic compaction failed") for m in errors)
    context = await call(lsp, "pseudoclaude/context")
    assert context["autoCompactFailures"] == len(errors)
    assert context["messageCount"] == 14
    assert context["autoCompactTripped"] == (len(errors) >= 3)
    await until(lambda: any(e["kind"] == "memory" for e in env.events))
    loaded = load_session(SessionStore(env.root / ".PseudoClaude"), sid)
    assert is_valid(loaded.messages) and len(loaded.messages) == 14
