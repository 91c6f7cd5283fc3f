"""The ReAct runner (SPEC §6): end to end (a real Workspace, real tools, the real Anthropic SDK
against the fake model over loopback), then :class:`Runner` itself with an in-test provider:
stop reasons, event order, one result per call in call order."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from pseudoclaude.agent.approvals import ApprovalRequest, Decision
from pseudoclaude.agent.runner import Runner, RunOutcome
from pseudoclaude.agent.tools import (
    Param,
    Tool,
    ToolContext,
    ToolOutput,
    ToolRegistry,
    default_tools,
)
from pseudoclaude.compact import CompactConfig, CompactRuntime
from pseudoclaude.config import Settings, load_settings
from pseudoclaude.conversation import Conversation
from pseudoclaude.events import (
    CompactEvent,
    ErrorEvent,
    Event,
    MemoryEvent,
    StopEvent,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    UsageUpdate,
    WarningEvent,
)
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.errors import (
    MaxTokensTruncated,
    NetworkError,
    NoProviderConfigured,
    RateLimited,
)
from pseudoclaude.llm.provider import (
    Provider,
    Stop,
    StreamEvent,
    TextDelta,
    ToolCallComplete,
    ToolSpec,
    UsageEvent,
)
from pseudoclaude.llm.types import Message, ToolCall, Usage
from pseudoclaude.permissions import Approvals
from pseudoclaude.session import SessionStore, load_session
from pseudoclaude.session.repair import is_valid
from pseudoclaude.workspace import Hooks, SessionBusy, Workspace
from support import policy_gate


class Allow:
    def __init__(self) -> None:
        self.asked: list[ApprovalRequest] = []

    async def ask(self, request: ApprovalRequest) -> Decision | None:
        self.asked.append(request)
        return "allow_once"


def settings_for(root: Path, fake: FakeModelServer, **extra: Any) -> Settings:
    overrides: dict[str, Any] = {"provider": "anthropic", "apiKey": "sk-test-runner",
                                 "baseUrl": fake.base_url, "maxRetries": 0,
                                 "approvals.runCommand": "allow", "memory.enabled": False}
    overrides.update(extra)
    return load_settings(root, overrides, home=root / "home", env={})


def workspace(tmp_path: Path, fake: FakeModelServer, **extra: Any
              ) -> tuple[Workspace, list[tuple[str, Event]]]:
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("beta\n")
    events: list[tuple[str, Event]] = []
    ws = Workspace(root, settings_for(root, fake, **extra), approver=Allow(),
                   hooks=Hooks(events=lambda sid, e: events.append((sid, e))))
    return ws, events


def read(path: str) -> dict[str, Any]:
    return {"name": "read_file", "arguments": {"path": path}}


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for message in body["messages"]:
        if isinstance(message["content"], list):
            out += [b for b in message["content"] if b.get("type") == "tool_result"]
    return out


def test_several_tool_rounds_then_an_answer(tmp_path: Path) -> None:
    script = {"turns": [{"tool_calls": [read("a.txt")]}, {"tool_calls": [read("b.txt")]},
                        {"text": ["The files say ", "alpha and beta."]}]}
    with FakeModelServer(script) as fake:
        ws, events = workspace(tmp_path, fake)
        session_id, result = asyncio.run(ws.run("read both files"))
        asyncio.run(ws.close())
        assert result.stop_reason == "completed" and result.iterations == 3
        assert result.text == "The files say alpha and beta."
        assert len(fake.requests) == 3
        systems = [json.dumps(r["body"]["system"]) for r in fake.requests]
        assert len(set(systems)) == 1  # the system prompt is built once per run
        assert "alpha" in json.dumps(tool_results(fake.requests[1]["body"]))
    kinds = [e.kind for _, e in events]
    assert kinds.count("toolCall") == 2 and kinds.count("toolResult") == 2
    assert kinds[-1] == "stop" and all(sid == session_id for sid, _ in events)
    assert "".join(e.delta for _, e in events if isinstance(e, TextEvent)) == result.text
    loaded = load_session(ws.store, session_id)
    assert len(loaded.messages) == 6 and is_valid(loaded.messages)


def test_two_calls_in_one_turn_results_in_call_order(tmp_path: Path) -> None:
    script = {"turns": [{"tool_calls": [read("b.txt"), read("a.txt"),
                                        {"name": "find_files",
                                         "arguments": {"pattern": "*.txt"}}]},
                        {"text": "ok"}]}
    with FakeModelServer(script) as fake:
        ws, _ = workspace(tmp_path, fake)
        _, result = asyncio.run(ws.run("go"))
        asyncio.run(ws.close())
        assert result.stop_reason == "completed"
        calls = fake.requests[0]  # the first request carries no results yet
        assert not tool_results(calls["body"])
        results = tool_results(fake.requests[1]["body"])
        assert len(results) == 3
        assert "beta" in json.dumps(results[0]) and "alpha" in json.dumps(results[1])
    messages = ws.session.conversation.messages() if ws.session else []
    ids = [c.id for c in messages[1].tool_calls]
    assert [m.tool_result.call_id for m in messages[2:5] if m.tool_result] == ids


def test_unknown_tool_twice_stops_the_run(tmp_path: Path) -> None:
    script = {"turns": [{"tool_calls": [{"name": "launch_rocket", "arguments": {}}]},
                        {"tool_calls": [{"name": "launch_rocket", "arguments": {}}]},
                        {"text": "never reached"}]}
    with FakeModelServer(script) as fake:
        ws, _ = workspace(tmp_path, fake)
        session_id, result = asyncio.run(ws.run("go"))
        asyncio.run(ws.close())
        assert result.stop_reason == "unknown_tool_limit" and len(fake.requests) == 2
    loaded = load_session(ws.store, session_id)
    errors = [json.loads(m.tool_result.content) for m in loaded.messages if m.tool_result]
    assert [e["error_type"] for e in errors] == ["unknown_tool", "unknown_tool"]
    assert is_valid(loaded.messages)


def test_max_iterations(tmp_path: Path) -> None:
    script = {"rules": [{"when": {"has_tools": True}, "reply": {"tool_calls": [read("a.txt")]}}]}
    with FakeModelServer(script) as fake:
        ws, events = workspace(tmp_path, fake, maxIterations=3)
        session_id, result = asyncio.run(ws.run("loop forever"))
        asyncio.run(ws.close())
        assert result.stop_reason == "max_iterations" and result.iterations == 3
        assert len(fake.requests) == 3
    assert isinstance(events[-1][1], StopEvent)
    assert is_valid(load_session(ws.store, session_id).messages)


def test_a_running_session_refuses_a_second_writer(tmp_path: Path) -> None:
    script = {"turns": [{"text": "slow answer", "stall": 1.0}]}
    with FakeModelServer(script) as fake:
        ws, _ = workspace(tmp_path, fake)

        async def both() -> None:
            first = asyncio.create_task(ws.run("one"))
            while not fake.requests:  # the run is streaming
                await asyncio.sleep(0.01)
            with pytest.raises(SessionBusy):
                await ws.run("two")
            with pytest.raises(SessionBusy):
                await ws.compact()
            assert ws.context().message_count == 1  # read-only answers at once
            await first

        asyncio.run(both())
        asyncio.run(ws.close())


def running_with(token: str) -> list[int]:
    """The processes whose command line holds ``token`` (seen from here: a sandboxed command
    runs in its own PID namespace, so its own ``getpid()`` means nothing outside)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and int(entry.name) != os.getpid():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:  # gone meanwhile
                continue
    return found


def test_cancel_during_a_slow_command_leaves_a_valid_session(tmp_path: Path) -> None:
    # the marker is in the workspace: a sandboxed command writes nowhere else (its /tmp is
    # its own), and the line runs with /bin/sh, which a sandbox shows (a Python under the
    # host's /tmp it would not)
    marker = tmp_path / "ws" / "started.txt"
    token = f"slow-command-{os.getpid()}-{time.monotonic_ns()}"
    sleeper = f"echo {token} > started.txt && sleep 60; echo {token}"
    script = {"turns": [{"tool_calls": [
        read("a.txt"),
        {"name": "run_command", "arguments": {"command": sleeper}},
        read("b.txt")]}]}
    with FakeModelServer(script) as fake:
        ws, events = workspace(tmp_path, fake)

        async def cancel_midway() -> None:
            task = asyncio.create_task(ws.run("run the slow thing"))
            for _ in range(200):
                if marker.exists():
                    break
                await asyncio.sleep(0.05)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        asyncio.run(cancel_midway())
        asyncio.run(ws.close())
    assert marker.read_text() == token + "\n"
    for _ in range(50):  # the command (and the sandbox around it) was killed
        if not running_with(token):
            break
        time.sleep(0.05)
    else:
        pytest.fail(f"the command survived the cancellation: {running_with(token)}")
    assert isinstance(events[-1][1], StopEvent) and events[-1][1].stop_reason == "canceled"
    assert ws.session is not None
    live = ws.session.conversation.messages()
    assert is_valid(live)
    results = [json.loads(m.tool_result.content) for m in live if m.tool_result]
    assert results[0]["ok"] is True  # finished before the cancel: kept
    assert [r.get("error_type") for r in results[1:]] == ["canceled", "canceled"]
    loaded = load_session(ws.store, ws.session.id)
    assert loaded.messages == live and loaded.repaired == 0


def strip_cache_control(value: Any) -> Any:
    """A request's JSON without its ``cache_control`` marks (where the breakpoints are)."""
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def test_a_run_that_crosses_the_threshold_compacts_and_finishes(tmp_path: Path) -> None:
    """The automatic summary is cache-friendly: the same system prompt (with its breakpoint)
    and tools as the turn before it, and that turn's messages up to its last breakpoint, then
    the instruction as the last user message."""
    summary = {"when": {"summary": True},
               "reply": {"text": "<summary>what happened so far</summary>"}}
    turns = [{"tool_calls": [read("big.txt")]} for _ in range(12)] + [{"text": "finished"}]
    with FakeModelServer({"rules": [summary], "turns": turns, "cache": True}) as fake:
        ws, events = workspace(tmp_path, fake, contextWindow=60_000,
                               **{"compact.singleResultBytes": 10**9,
                                  "compact.roundBytes": 10**9})
        (ws.root / "big.txt").write_text("line of text\n" * 1_250)  # ~16 KB a read
        session_id, result = asyncio.run(ws.run("read big.txt several times"))
        asyncio.run(ws.close())
        assert result.stop_reason == "completed" and result.text == "finished"
        requests = fake.requests
        kinds = [r["reply"] for r in requests]
        first = kinds.index("rule 0")  # the summary
        assert first > 0
        turn, summary_body = requests[first - 1]["body"], requests[first]["body"]
        assert summary_body["system"] == turn["system"]  # breakpoint included
        assert summary_body["tools"] == turn["tools"] and summary_body["model"] == turn["model"]
        sent, asked = turn["messages"], summary_body["messages"]
        # The turn before, whole (its last breakpoint included), is the summary's prefix ...
        assert strip_cache_control(asked[:len(sent)]) == strip_cache_control(sent)
        assert "cache_control" in sent[-1]["content"][-1]
        # ... then what that turn added, and the instruction last, with the breakpoint.
        instruction = asked[-1]["content"][-1]
        assert asked[-1]["role"] == "user" and "cache_control" in instruction
        assert instruction["text"].startswith("[Context compaction]")
        usage = requests[first]["usage"]  # the cache simulation: the history is read
        prompt = usage["input"] + usage["cache_read"] + usage["cache_write"]
        assert usage["cache_read"] >= prompt // 2, usage
        assert requests[first + 1]["reply"] != "rule 0"  # the next turn follows the summary
        after = requests[first + 1]["body"]["messages"][0]
        assert "what happened so far" in json.dumps(after)
    assert any(isinstance(e, CompactEvent) and e.layer == 2 for _, e in events)
    loaded = load_session(ws.store, session_id)
    assert is_valid(loaded.messages) and "what happened so far" in loaded.messages[0].content


def test_resume_in_a_new_process_keeps_messages_and_previews(tmp_path: Path) -> None:
    script = {"turns": [{"tool_calls": [read("big.txt")]}, {"text": "read it"},
                        {"text": "second answer"}]}
    with FakeModelServer(script) as fake:
        ws, _ = workspace(tmp_path, fake)
        (ws.root / "big.txt").write_text("row of the big file\n" * 4_000)  # ~80 KB
        session_id, result = asyncio.run(ws.run("read big.txt"))
        asyncio.run(ws.close())
        assert result.stop_reason == "completed"
        spill_dir = ws.store.spill_dir(session_id)
        spilled = sorted(p.name for p in spill_dir.iterdir())
        assert len(spilled) == 1
        preview_before = tool_results(fake.requests[1]["body"])[0]["content"]
        assert "[content offloaded]" in json.dumps(preview_before)

        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["ANTHROPIC_API_KEY"] = "sk-test-runner"
        env["HOME"] = str(tmp_path / "ws" / "home")
        proc = subprocess.run(
            [sys.executable, "-m", "pseudoclaude", "run", "--workspace", str(ws.root),
             "--session", "latest", "--base-url", fake.base_url, "--json", "and now?"],
            capture_output=True, text=True, timeout=60, env=env)
        assert proc.returncode == 0, proc.stderr
        final = json.loads(proc.stdout.splitlines()[-1])
        assert final["sessionId"] == session_id and final["text"] == "second answer"
        body = [r for r in fake.requests if r["body"].get("tools")][-1]["body"]
        assert tool_results(body)[0]["content"] == preview_before  # the same preview
        assert sorted(p.name for p in spill_dir.iterdir()) == spilled  # nothing re-spilled
    loaded = load_session(SessionStore(ws.store.data_dir), session_id)
    assert [m.content for m in loaded.messages if m.role == "user" and m.content] == [
        "read big.txt", "and now?"]


def test_no_provider_fails_before_touching_the_session(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    settings = load_settings(root, {"memory.enabled": False}, home=tmp_path / "home", env={})
    ws = Workspace(root, settings, approver=Allow())
    with pytest.raises(Exception, match="ANTHROPIC_API_KEY"):
        asyncio.run(ws.run("hello"))
    assert ws.session is None and not (root / ".PseudoClaude" / "sessions").exists()


def test_tool_call_events_carry_the_arguments(tmp_path: Path) -> None:
    script = {"turns": [{"tool_calls": [read("a.txt")], "arg_chunks": 5}, {"text": "ok"}]}
    with FakeModelServer(script) as fake:
        ws, events = workspace(tmp_path, fake)
        asyncio.run(ws.run("go"))
        asyncio.run(ws.close())
    [call] = [e for _, e in events if isinstance(e, ToolCallEvent)]
    assert call.name == "read_file" and call.arguments == {"path": "a.txt"}


def test_memory_update_after_a_run_reaches_the_next_system_prompt(tmp_path: Path) -> None:
    ops = [{"action": "create", "level": "project", "type": "project_knowledge",
            "title": "Build command", "summary": "use make build",
            "content": "Build with `make build`; tests with `make test`."}]
    memory = {"when": {"has_tools": False},
              "reply": {"text": "Here you go:\n" + json.dumps(ops) + "\nDone."}, "times": 1}
    script = {"rules": [memory], "turns": [{"text": "Noted: use make build."},
                                           {"text": "second"}]}
    with FakeModelServer(script) as fake:
        ws, events = workspace(tmp_path, fake, **{"memory.enabled": True,
                                                  "memory.userDir": str(tmp_path / "um")})

        async def two_runs() -> None:
            await ws.run("how do I build this?")
            assert await ws.memory.drain(10)
            await ws.run("thanks")

        asyncio.run(two_runs())
        asyncio.run(ws.close())
        note = ws.store.data_dir / "memory" / "project_knowledge_build-command.md"
        assert "make build" in note.read_text()
        index = (ws.store.data_dir / "memory" / "MEMORY.md").read_text()
        line = ("- [project_knowledge] Build command — use make build "
                "(project_knowledge_build-command.md)")
        assert line in index
        update = [r for r in fake.requests if not r["body"].get("tools")]
        # the first update had the first run's messages (the second run's may or may not have
        # reached the model before the loop ended)
        assert 1 <= len(update) <= 2 and "how do I build this?" in json.dumps(update[0]["body"])
        last_turn = [r for r in fake.requests if r["body"].get("tools")][-1]
        assert line in json.dumps(last_turn["body"]["system"], ensure_ascii=False)
    statuses = [e.status for _, e in events if isinstance(e, MemoryEvent)]
    assert statuses == ["updated", "failed"]  # the second run's update had no reply scripted


def test_the_idle_note_is_seen_by_the_model_but_not_counted(tmp_path: Path) -> None:
    from pseudoclaude.session.codec import MessageEntry, encode

    with FakeModelServer({"turns": [{"text": "welcome back"}]}) as fake:
        ws, _ = workspace(tmp_path, fake)
        sid = "20200101-120000-abcd"
        ws.store.session_dir(sid).mkdir(parents=True)
        ws.store.log_path(sid).write_bytes(b"".join(encode(e) for e in [
            MessageEntry(role="user", content="old question", ts=1_600_000_000.0),
            MessageEntry(role="assistant", content="old answer", ts=1_600_000_001.0)]))
        info = asyncio.run(ws.resume("latest"))
        assert info.message_count == 2
        _, total, messages = asyncio.run(ws.messages(None))
        assert total == 2 and [m.content for m in messages] == ["old question", "old answer"]
        asyncio.run(ws.run("and now?"))
        asyncio.run(ws.close())
        sent = json.dumps(fake.requests[0]["body"]["messages"])
        assert "more than 6 hours" in sent  # the model was told
    loaded = load_session(ws.store, sid)
    assert [m.content for m in loaded.messages] == ["old question", "old answer", "and now?",
                                                    "welcome back"]


# -- the Runner itself: an in-test provider, real and in-test tools ----------------------------

class ScriptedProvider:
    """A :class:`Provider` answering each request with the next turn of its script (a list of
    stream events, or an exception to raise once they are streamed); it records what it was
    sent."""

    name = "scripted"
    model = "scripted-model"

    def __init__(self, *turns: list[StreamEvent] | tuple[list[StreamEvent], BaseException]
                 ) -> None:
        self.turns = list(turns)
        self.requests: list[list[Message]] = []
        self.tools: list[list[str]] = []

    async def stream(self, system: str, messages: list[Message], tools: list[ToolSpec],
                     **_: object) -> AsyncGenerator[StreamEvent, None]:
        assert system == "SYSTEM PROMPT"
        self.requests.append(messages)
        self.tools.append([t.name for t in tools])
        turn = self.turns.pop(0)
        events, error = turn if isinstance(turn, tuple) else (turn, None)
        for event in events:
            yield event
        if error is not None:
            raise error

    async def aclose(self) -> None:
        return None


class Hold(ScriptedProvider):
    """Streams its turn, then never ends (until cancelled)."""

    async def stream(self, system: str, messages: list[Message], tools: list[ToolSpec],
                     **_: object) -> AsyncGenerator[StreamEvent, None]:
        async for event in super().stream(system, messages, tools):
            yield event
        await asyncio.sleep(60)


class Echo(Tool):
    """Read-only: answers ``text`` after ``delay`` seconds."""

    name: ClassVar[str] = "echo"
    description: ClassVar[str] = "Echo."
    params: ClassVar[tuple[Param, ...]] = (Param("text", "string", "what to say", required=True),
                                           Param("delay", "number", "seconds to wait first"))
    read_only: ClassVar[bool] = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        await asyncio.sleep(args.get("delay", 0))
        return ToolOutput(args["text"])


class Block(Tool):
    """With a side effect (runs alone): never finishes; ``started`` is set when it runs."""

    name: ClassVar[str] = "block"
    description: ClassVar[str] = "Blocks."
    params: ClassVar[tuple[Param, ...]] = ()
    read_only: ClassVar[bool] = False

    def __init__(self) -> None:
        self.started = asyncio.Event()

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        self.started.set()
        await asyncio.sleep(60)
        return ToolOutput("never")


class OnlyTestTools:
    """Allows the test's own tools (``echo``, ``block``: tools the permission engine does not
    know, so it asks about them); nothing else should be asked about."""

    async def ask(self, request: ApprovalRequest) -> Decision | None:
        if request.tool in ("echo", "block"):
            return "allow_once"
        raise AssertionError(f"nobody should be asked: {request}")


class Run:
    """A :class:`Runner` on a fresh conversation in ``tmp_path`` (holding a.txt and b.txt);
    ``provider`` an exception: the provider source raises it (no provider configured)."""

    def __init__(self, tmp_path: Path, provider: Provider | Exception, max_iterations: int = 15,
                 secrets: tuple[str, ...] = ()) -> None:
        (tmp_path / "a.txt").write_text("alpha\n")
        (tmp_path / "b.txt").write_text("beta\n")
        self.block = Block()
        self.conversation = Conversation()
        self.events: list[Event] = []
        self.completed: list[list[Message]] = []

        async def source() -> Provider:
            if isinstance(provider, Exception):
                raise provider
            return provider

        async def system_prompt() -> str:
            return "SYSTEM PROMPT"

        self.runner = Runner(
            self.conversation,
            compact=CompactRuntime(self.conversation, config=CompactConfig(window=200_000),
                                   spill_dir=tmp_path / "spill", workspace=tmp_path),
            provider=source,
            tools=ToolRegistry(tmp_path, tools=[*default_tools(), Echo(), self.block]),
            gate=policy_gate(Approvals(run_command="deny", write="allow"), OnlyTestTools(),
                             root=tmp_path),
            system_prompt=system_prompt, emit=self.events.append,
            max_iterations=max_iterations, on_completed=self.completed.append,
            secrets=secrets)

    def go(self, prompt: str = "go") -> RunOutcome:
        return asyncio.run(self.runner.run(prompt))

    def kinds(self) -> list[str]:
        return [KINDS[type(e)] for e in self.events]

    def results(self) -> list[dict[str, Any]]:
        return [json.loads(m.tool_result.content) for m in self.conversation.messages()
                if m.tool_result]


KINDS: dict[type[Event], str] = {
    TextEvent: "text", ToolCallEvent: "toolCall", ToolResultEvent: "toolResult",
    UsageUpdate: "usage", WarningEvent: "warning", ErrorEvent: "error", StopEvent: "stop",
    CompactEvent: "compact"}


def turn(*calls: ToolCall, text: str = "", usage: Usage | None = None) -> list[StreamEvent]:
    """One streamed model turn: its text, its calls, its usage, its stop."""
    events: list[StreamEvent] = [TextDelta(text)] if text else []
    events += [ToolCallComplete(c) for c in calls]
    events.append(UsageEvent(usage or Usage(input_tokens=100, output_tokens=10)))
    events.append(Stop("tool_use" if calls else "end_turn"))
    return events


def reading(call_id: str, path: str) -> ToolCall:
    return ToolCall(call_id, "read_file", {"path": path})


def echo(call_id: str, text: str, delay: float = 0) -> ToolCall:
    return ToolCall(call_id, "echo", {"text": text, "delay": delay})


def answered_in_call_order(messages: list[Message]) -> bool:
    """Every call is followed by exactly one result each, in call order, and no result
    stands anywhere else."""
    i = 0
    while i < len(messages):
        calls = messages[i].tool_calls
        if messages[i].tool_result is not None:
            return False
        following = messages[i + 1:i + 1 + len(calls)]
        if [m.tool_result.call_id if m.tool_result else None for m in following] != [
                c.id for c in calls]:
            return False
        i += 1 + len(calls)
    return True


def test_runner_completes_with_its_events_in_order(tmp_path: Path) -> None:
    provider = ScriptedProvider(
        turn(reading("c1", "a.txt"), reading("c2", "b.txt"), text="Reading both."),
        [TextDelta("They say "), TextDelta("alpha and beta."),
         UsageEvent(Usage(200, 20, cache_read=50)), Stop("end_turn")])
    run = Run(tmp_path, provider)
    result = run.go("what do the files say?")
    assert result.stop_reason == "completed" and result.error is None
    assert result.iterations == 2 and result.text == "They say alpha and beta."
    assert result.usage == Usage(300, 30, cache_read=50)
    assert run.kinds() == ["text", "toolCall", "toolCall", "usage", "toolResult", "toolResult",
                           "text", "text", "usage", "stop"]
    calls = [e for e in run.events if isinstance(e, ToolCallEvent)]
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("c1", "read_file", {"path": "a.txt"}), ("c2", "read_file", {"path": "b.txt"})]
    reported = [e for e in run.events if isinstance(e, ToolResultEvent)]
    assert {e.id for e in reported} == {"c1", "c2"} and not any(e.is_error for e in reported)
    stop = run.events[-1]
    assert isinstance(stop, StopEvent) and stop.stop_reason == "completed"
    messages = run.conversation.messages()
    assert [m.role for m in messages] == ["user", "assistant", "user", "user", "assistant"]
    assert messages[0].content == "what do the files say?"
    assert messages[1].content == "Reading both." and len(messages[1].tool_calls) == 2
    assert [r["content"] for r in run.results()] == ["alpha\n", "beta\n"]
    assert answered_in_call_order(messages)
    assert provider.requests[0] == messages[:1] and provider.requests[1] == messages[:4]
    assert "read_file" in provider.tools[0] and "echo" in provider.tools[0]
    assert run.completed == [messages]  # on_completed: everything this run appended


def test_results_follow_the_call_order_not_the_finishing_order(tmp_path: Path) -> None:
    calls = [echo("c1", "slow", 0.3), echo("c2", "fast"),
             ToolCall("c3", "write_file", {"path": "out.txt", "content": "written"}),
             echo("c4", "after the write")]
    run = Run(tmp_path, ScriptedProvider(turn(*calls), turn(text="done")))
    result = run.go()
    assert result.stop_reason == "completed"
    # c1 and c2 (read-only) run together, c2 finishes first; the write runs alone, then c4.
    reported = [e.id for e in run.events if isinstance(e, ToolResultEvent)]
    assert reported == ["c2", "c1", "c3", "c4"]
    assert answered_in_call_order(run.conversation.messages())
    assert [r["content"] for r in run.results()][:2] == ["slow", "fast"]
    assert (tmp_path / "out.txt").read_text() == "written"


def test_max_iterations_stops_a_run_that_keeps_calling_tools(tmp_path: Path) -> None:
    provider = ScriptedProvider(*[turn(reading(f"c{i}", "a.txt")) for i in range(3)],
                                turn(text="never reached"))
    run = Run(tmp_path, provider, max_iterations=3)
    result = run.go()
    assert result.stop_reason == "max_iterations" and result.iterations == 3
    assert len(provider.requests) == 3 and result.text == ""
    messages = run.conversation.messages()
    assert len(messages) == 1 + 3 * 2 and answered_in_call_order(messages)
    assert run.kinds()[-1] == "stop" and run.kinds().count("toolResult") == 3
    assert run.events[-1] == StopEvent("max_iterations")
    assert run.completed == []  # only a completed run schedules the memory update


def test_two_unknown_tools_in_a_row_stop_the_run(tmp_path: Path) -> None:
    provider = ScriptedProvider(turn(ToolCall("c1", "launch_rocket", {})),
                                turn(ToolCall("c2", "launch_rocket", {}), text="Trying again."),
                                turn(text="never reached"))
    run = Run(tmp_path, provider)
    result = run.go()
    assert result.stop_reason == "unknown_tool_limit" and result.iterations == 2
    assert result.text == "Trying again." and len(provider.requests) == 2
    assert [r["error_type"] for r in run.results()] == ["unknown_tool", "unknown_tool"]
    assert answered_in_call_order(run.conversation.messages())
    assert run.events[-1] == StopEvent("unknown_tool_limit")


def test_a_known_tool_in_between_resets_the_unknown_count(tmp_path: Path) -> None:
    provider = ScriptedProvider(turn(ToolCall("c1", "launch_rocket", {})),
                                turn(reading("c2", "a.txt")),
                                turn(ToolCall("c3", "launch_rocket", {})),
                                turn(text="fine"))
    run = Run(tmp_path, provider)
    result = run.go()
    assert result.stop_reason == "completed" and result.iterations == 4
    assert [r["ok"] for r in run.results()] == [False, True, False]


def test_two_unknown_tools_in_one_turn_stop_the_run(tmp_path: Path) -> None:
    provider = ScriptedProvider(turn(ToolCall("c1", "nope", {}), ToolCall("c2", "nada", {})),
                                turn(text="never reached"))
    run = Run(tmp_path, provider)
    result = run.go()
    assert result.stop_reason == "unknown_tool_limit" and result.iterations == 1
    assert answered_in_call_order(run.conversation.messages())


def test_a_provider_error_stops_the_run_with_the_error(tmp_path: Path) -> None:
    failure = RateLimited("429 rate limited", provider="scripted", status=429)
    provider = ScriptedProvider(turn(reading("c1", "a.txt")), ([], failure))
    run = Run(tmp_path, provider)
    result = run.go()
    assert result.stop_reason == "error" and result.error == "429 rate limited"
    assert result.iterations == 2
    assert run.kinds()[-2:] == ["error", "stop"]
    assert run.events[-2] == ErrorEvent("429 rate limited")
    assert run.events[-1] == StopEvent("error")
    messages = run.conversation.messages()
    assert len(messages) == 3 and answered_in_call_order(messages)  # the failed turn adds none
    assert run.completed == []


def test_a_stream_that_fails_after_some_text_keeps_no_half_turn(tmp_path: Path) -> None:
    cut = NetworkError("connection reset", provider="scripted")
    run = Run(tmp_path, ScriptedProvider(([TextDelta("Half an ans")], cut)))
    result = run.go()
    assert result.stop_reason == "error" and result.error == "connection reset"
    assert run.kinds() == ["text", "error", "stop"]
    assert [m.role for m in run.conversation.messages()] == ["user"]


def test_max_tokens_inside_a_tool_call_keeps_the_text_and_stops(tmp_path: Path) -> None:
    truncated = MaxTokensTruncated("max_tokens (8192) reached inside a tool call",
                                   provider="scripted", partial_text="Writing the file.")
    run = Run(tmp_path, ScriptedProvider(([TextDelta("Writing the file.")], truncated)))
    result = run.go()
    assert result.stop_reason == "error" and "max_tokens" in (result.error or "")
    messages = run.conversation.messages()
    assert [(m.role, m.content, m.tool_calls) for m in messages] == [
        ("user", "go", []), ("assistant", "Writing the file.", [])]


def test_no_provider_is_an_error_after_the_prompt(tmp_path: Path) -> None:
    run = Run(tmp_path, NoProviderConfigured("no model provider configured"))
    result = run.go()
    assert result.stop_reason == "error" and result.iterations == 0
    assert result.error == "no model provider configured"
    assert run.kinds() == ["error", "stop"]
    assert [m.role for m in run.conversation.messages()] == ["user"]


def test_cancel_gives_every_unfinished_call_a_canceled_result(tmp_path: Path) -> None:
    calls = [echo("c1", "finished first"), ToolCall("c2", "block", {}), echo("c3", "never")]
    run = Run(tmp_path, ScriptedProvider(turn(*calls)))

    async def cancel_while_blocked() -> None:
        task = asyncio.create_task(run.runner.run("go"))
        await asyncio.wait_for(run.block.started.wait(), 10)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cancel_while_blocked())
    messages = run.conversation.messages()
    assert len(messages) == 5 and answered_in_call_order(messages)
    results = run.results()
    assert results[0]["ok"] is True and results[0]["content"] == "finished first"
    assert [(r["tool"], r["error_type"]) for r in results[1:]] == [("block", "canceled"),
                                                                    ("echo", "canceled")]
    assert [e.id for e in run.events if isinstance(e, ToolResultEvent)] == ["c1"]
    assert run.events[-1] == StopEvent("canceled")
    assert run.completed == []


def test_cancel_while_streaming_keeps_no_half_turn(tmp_path: Path) -> None:
    run = Run(tmp_path, Hold([TextDelta("Thinking about it")]))

    async def cancel_mid_stream() -> None:
        task = asyncio.create_task(run.runner.run("go"))
        while not any(isinstance(e, TextEvent) for e in run.events):
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(asyncio.wait_for(cancel_mid_stream(), 10))
    assert run.kinds() == ["text", "stop"] and run.events[-1] == StopEvent("canceled")
    assert [m.role for m in run.conversation.messages()] == ["user"]


def test_denied_calls_and_keys_in_tool_output(tmp_path: Path) -> None:
    key = "sk-runner-secret-0123456789"
    calls = [ToolCall("c1", "run_command", {"command": "true"}), echo("c2", f"key={key}")]
    run = Run(tmp_path, ScriptedProvider(turn(*calls), turn(text="ok")), secrets=(key,))
    result = run.go()
    assert result.stop_reason == "completed"
    denied, echoed = run.results()
    assert denied["error_type"] == "permission_denied"
    assert denied["error"] == ("run_command is not allowed: default mode denies commands "
                               "(approvals.runCommand: deny)")
    assert denied["metadata"] == {"source": "mode"}
    assert echoed["content"] == "key=[redacted]"
    assert key not in json.dumps([m.tool_result.content for m in run.conversation.messages()
                                  if m.tool_result])
    assert all(key not in e.preview for e in run.events if isinstance(e, ToolResultEvent))
