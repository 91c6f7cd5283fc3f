"""Issue 7, server lifecycle: kill -9 a real server mid-run, start a new one, resume ``latest``.

Each case starts ``python -m pseudoclaude lsp`` over stdio (pygls's ``LanguageClient``) on one
workspace folder with the scripted fake model, starts a ``pseudoclaude/run`` that makes two
``read_file`` rounds and then a slow third turn, and SIGKILLs the server at one moment of that
run, always after at least one tool result reached the session log. A second server process
then resumes ``latest``: the same session, at most one torn line, a history that loads and is
protocol-valid, and a new run in that session that completes and sends the earlier messages to
the model. Half the cases talk Anthropic, half OpenAI (both wire formats carry the resumed
history; the OpenAI SDK also imports faster, which keeps the file quick on a loaded machine).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from lsprotocol.converters import get_converter
from pygls.lsp.client import LanguageClient

from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.session import SessionStore, load_session, replay_file
from pseudoclaude.session.repair import is_valid
from support import server_env

TIMEOUT = 30.0  # generous: a loaded 2-core CI machine, a cold `anthropic` import per process
SERVER = [sys.executable, "-m", "pseudoclaude", "lsp"]
MEMORY_REPLY = {"when": {"has_tools": False}, "reply": {"text": "[]"}}
FIRST_PROMPT = "read the notes and the readme, then explain them"
NEXT_PROMPT = "continue where you stopped"
NOTES = "alpha\nbeta\n"

pytestmark = pytest.mark.timeout(180)


def read(path: str) -> dict[str, Any]:
    return {"name": "read_file", "arguments": {"path": path}}


async def until(predicate: Callable[[], bool], what: str, timeout: float = TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.005)


class Editor:
    """One server process over stdio, driven as an editor would, and what it sent back."""

    def __init__(self, tmp: Path, folder: Path, fake: FakeModelServer, provider: str) -> None:
        self.tmp = tmp
        self.folder = folder
        self.fake = fake
        self.provider = provider
        self.client = LanguageClient("pseudoclaude-crash-test", "1",
                                     converter_factory=get_converter)  # results stay dicts
        self.process: asyncio.subprocess.Process | None = None
        self.events: list[dict[str, Any]] = []
        self.context_usage: list[dict[str, Any]] = []
        self.approvals: list[types.ShowMessageRequestParams] = []
        self.pending: set[asyncio.Task[Any]] = set()  # unanswered approval requests
        self.stderr = bytearray()
        self._drain: asyncio.Task[None] | None = None

        @self.client.feature("pseudoclaude/event")
        def on_event(params: Any) -> None:
            self.events.append(params)

        @self.client.feature(types.WINDOW_SHOW_MESSAGE_REQUEST)
        async def on_approval(params: types.ShowMessageRequestParams) -> None:
            self.approvals.append(params)
            task = asyncio.current_task()
            assert task is not None
            self.pending.add(task)
            await asyncio.Event().wait()  # a user who has not answered yet

        @self.client.feature("pseudoclaude/contextUsage")
        def on_usage(params: Any) -> None:
            self.context_usage.append(params)

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            self.stderr.extend(f"[logMessage] {params.message}\n".encode())

    async def start(self) -> None:
        await self.client.start_io(*SERVER, env=server_env(self.tmp / "home"),
                                   cwd=str(self.tmp))
        self.process = self.client._server  # pygls keeps the process it spawned here
        assert self.process is not None and self.process.stderr is not None
        self._drain = asyncio.ensure_future(self._read_stderr(self.process.stderr))
        folder = types.WorkspaceFolder(uri=self.folder.as_uri(), name=self.folder.name)
        await asyncio.wait_for(self.client.initialize_async(types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            process_id=os.getpid(),
            root_uri=folder.uri,
            workspace_folders=[folder],
            initialization_options={
                "provider": self.provider, "apiKey": "sk-test-crash-0123456789",
                "baseUrl": self.fake.base_url, "maxRetries": 0,
                "memory": {"userDir": str(self.tmp / "user-memory")},
                "approvals": {"runCommand": "ask"},
                "sandbox": {"enabled": False},  # sandboxed commands would run unasked
            },
        )), TIMEOUT)
        self.client.initialized(types.InitializedParams())

    async def _read_stderr(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self.stderr.extend(chunk)

    def send(self, method: str, params: Any = None) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.ensure_future(
            self.client.protocol.send_request_async(method, params))
        return future

    async def request(self, method: str, params: Any = None) -> Any:
        return await asyncio.wait_for(self.send(method, params), TIMEOUT)

    def diagnostics(self) -> str:
        return self.stderr.decode(errors="replace")[-4000:]

    async def kill(self) -> None:
        """SIGKILL the server, then let the client notice that it is gone."""
        assert self.process is not None
        self.forget_pending()
        os.kill(self.process.pid, signal.SIGKILL)
        await asyncio.wait_for(self.process.wait(), TIMEOUT)
        assert self.process.returncode == -signal.SIGKILL
        await self.stop()

    async def shutdown(self) -> None:
        """``shutdown`` and ``exit`` as an editor closes a server; it must exit cleanly."""
        await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        assert self.process is not None
        await asyncio.wait_for(self.process.wait(), TIMEOUT)
        assert self.process.returncode == 0, self.diagnostics()
        await self.stop()

    def forget_pending(self) -> None:
        """Drop unanswered approval handlers without answering them: pygls's client fails
        every pending request future when the server exits, and a handler task cannot take
        that exception (``RuntimeError: Task does not support set_exception operation``)."""
        for task in self.pending:
            task.cancel()

    async def stop(self) -> None:
        self.forget_pending()
        if self.process is not None and self.process.returncode is None:
            self.process.kill()
        await asyncio.wait_for(self.client.stop(), TIMEOUT)
        if self._drain is not None:
            await asyncio.wait_for(self._drain, TIMEOUT)


@dataclass
class Moment:
    """When to kill: the model's script and a predicate over the running state."""

    provider: str  # both wire formats must carry the resumed history
    turns: list[dict[str, Any]]
    ready: Callable[[Editor, Crash], bool]
    results_logged: int  # tool results in the history after the crash
    repaired: int  # fixes the resume makes to that history


@dataclass
class Crash:
    store: SessionStore
    session_id: str = ""

    def logged_results(self, editor: Editor) -> int:
        """Tool results in the session log as the server left it on disk so far."""
        if not editor.events:
            return 0
        self.session_id = editor.events[0]["sessionId"]
        log = self.store.log_path(self.session_id)
        if not log.exists():
            return 0
        return sum(m.tool_result is not None for m in replay_file(log).messages)


def sent_history(body: dict[str, Any]) -> tuple[list[str], list[tuple[str, Any]]]:
    """The user prompts and the tool results ``(call id, content)`` of a request body, in
    order, in either wire format."""
    prompts: list[str] = []
    results: list[tuple[str, Any]] = []
    for message in body["messages"]:
        content = message.get("content")
        if message["role"] == "tool":  # OpenAI
            results.append((message["tool_call_id"], content))
        elif message["role"] == "user" and isinstance(content, str):
            prompts.append(content)
        elif message["role"] == "user" and isinstance(content, list):  # Anthropic blocks
            for block in content:
                if block.get("type") == "tool_result":
                    results.append((block["tool_use_id"], block["content"]))
                elif block.get("type") == "text":
                    prompts.append(block["text"])
    return prompts, results


def text_events(editor: Editor) -> int:
    return sum(e["kind"] == "text" for e in editor.events)


def two_rounds_then(third: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"tool_calls": [read("notes.txt")]}, {"tool_calls": [read("README.md")]}, third]


SILENT = {"text": "never", "stall": 60}
MOMENTS = {
    # the first result's line is in the log; the next turn is still streaming (slowly: a
    # second between events), so nothing else can have reached the log
    "right-after-a-result": Moment(
        provider="anthropic",
        turns=[{"tool_calls": [read("notes.txt")]},
               {"tool_calls": [read("README.md")], "delay": 1.0}, SILENT],
        ready=lambda editor, crash: True, results_logged=1, repaired=0),
    # the third turn calls run_command and the server waits for the editor's approval: the
    # call is logged without a result, and the resume drops it
    "during-a-tool-call": Moment(
        provider="openai",
        turns=two_rounds_then({"tool_calls": [{"name": "run_command", "arguments": {
            "command": "touch", "args": ["crashed"]}}]}),
        ready=lambda editor, crash: bool(editor.approvals), results_logged=2, repaired=1),
    # the third request reached the model, which has not answered a byte yet
    "awaiting-the-model": Moment(
        provider="anthropic", turns=two_rounds_then(SILENT),
        ready=lambda editor, crash: len(editor.fake.requests) >= 3,
        results_logged=2, repaired=0),
    # the third turn streams its text slowly; some deltas reached the editor
    "during-streaming-text": Moment(
        provider="openai",
        turns=two_rounds_then({"text": [f"part {i}. " for i in range(600)], "delay": 0.05}),
        ready=lambda editor, crash: text_events(editor) >= 3, results_logged=2, repaired=0),
}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "README.md").write_text("# ws\nA small sample project.\n")
    (folder / "notes.txt").write_text(NOTES)
    return folder


@pytest.fixture
async def editors() -> AsyncIterator[list[Editor]]:
    started: list[Editor] = []
    yield started
    for editor in started:  # whatever happened, leave no server process behind
        await editor.stop()


@pytest.mark.parametrize("moment", list(MOMENTS))
async def test_kill_9_mid_run_then_resume_latest_and_continue(
        moment: str, tmp_path: Path, workspace: Path, editors: list[Editor]) -> None:
    when = MOMENTS[moment]
    store = SessionStore(workspace / ".PseudoClaude")
    crash = Crash(store)

    # -- the first server: a run with two read_file rounds, killed at `moment` ----------------
    with FakeModelServer({"rules": [MEMORY_REPLY], "turns": when.turns}) as fake:
        first = Editor(tmp_path, workspace, fake, when.provider)
        editors.append(first)
        await first.start()
        run = first.send("pseudoclaude/run", {"prompt": FIRST_PROMPT})
        await until(lambda: run.done() or (crash.logged_results(first) >= 1
                                           and when.ready(first, crash)),
                    f"the moment {moment!r}")
        assert not run.done(), (run.result(), first.diagnostics())
        await first.kill()
        with pytest.raises(RuntimeError, match="exited"):  # pygls fails the pending request
            await asyncio.wait_for(run, TIMEOUT)

    # -- what the crash left on disk ------------------------------------------------------------
    session_id = crash.session_id
    assert session_id and all(e["sessionId"] == session_id for e in first.events)
    full = replay_file(store.log_path(session_id), fast=False)
    assert full.bad_lines <= 1, "only the last line can be torn"
    crashed = load_session(store, "latest")
    assert crashed.session_id == session_id and is_valid(crashed.messages)
    assert crashed.messages[0].role == "user" and crashed.messages[0].content == FIRST_PROMPT
    results = [m.tool_result for m in crashed.messages if m.tool_result is not None]
    assert results and results[0].name == "read_file"
    assert json.loads(results[0].content)["content"] == NOTES
    assert len(results) == when.results_logged, crashed.messages
    assert crashed.repaired == when.repaired, crashed.messages
    assert not (workspace / "crashed").exists()  # the unapproved command never ran

    # -- a new server resumes `latest` and continues the session -------------------------------
    with FakeModelServer({"rules": [MEMORY_REPLY],
                          "turns": [{"text": "resumed answer"}]}) as fake:
        second = Editor(tmp_path, workspace, fake, when.provider)
        editors.append(second)
        await second.start()
        resumed = await second.request("pseudoclaude/sessions/resume", {"sessionId": "latest"})
        assert resumed == {"sessionId": session_id, "messageCount": len(crashed.messages),
                           "badLines": full.bad_lines, "repaired": when.repaired}
        after_resume = load_session(store, session_id)
        assert is_valid(after_resume.messages) and after_resume.messages == crashed.messages
        assert after_resume.repaired == 0  # the repair was committed to the log
        await until(lambda: any(u["sessionId"] == session_id for u in second.context_usage),
                    "the context meter of the resumed session")

        result = await second.request("pseudoclaude/run", {"prompt": NEXT_PROMPT})
        assert result["sessionId"] == session_id, second.diagnostics()
        assert result["stopReason"] == "completed" and result["text"] == "resumed answer"
        assert result["iterations"] == 1 and "error" not in result

        # the model saw the whole history from before the crash, then the new prompt
        [request] = [r for r in fake.requests if r["body"].get("tools")]
        assert request["protocol"] == when.provider
        prompts, sent_results = sent_history(request["body"])
        assert prompts == [FIRST_PROMPT, NEXT_PROMPT]
        assert sent_results == [(r.call_id, r.content) for r in results]
        await second.shutdown()

    final = load_session(store, session_id)
    assert is_valid(final.messages) and final.bad_lines <= full.bad_lines
    assert final.messages[:len(crashed.messages)] == crashed.messages
    assert [(m.role, m.content) for m in final.messages[len(crashed.messages):]] == [
        ("user", NEXT_PROMPT), ("assistant", "resumed answer")]
