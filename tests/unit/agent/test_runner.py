"""The ReAct runner end to end: a real Workspace, real tools, the real Anthropic SDK against the
fake model over loopback (SPEC §6)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.agent.approvals import ApprovalRequest, Decision
from pseudoclaude.config import Settings, load_settings
from pseudoclaude.events import CompactEvent, Event, StopEvent, TextEvent, ToolCallEvent
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.session import SessionStore, load_session
from pseudoclaude.session.repair import is_valid
from pseudoclaude.workspace import Workspace, WorkspaceBusy


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
                   events=lambda sid, e: events.append((sid, e)))
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


def test_busy_workspace_refuses_a_second_run(tmp_path: Path) -> None:
    script = {"turns": [{"text": "slow answer", "stall": 1.0}]}
    with FakeModelServer(script) as fake:
        ws, _ = workspace(tmp_path, fake)

        async def both() -> None:
            first = asyncio.create_task(ws.run("one"))
            await asyncio.sleep(0.2)
            with pytest.raises(WorkspaceBusy):
                await ws.run("two")
            with pytest.raises(WorkspaceBusy):
                await ws.compact()
            assert ws.context()["messageCount"] == 1  # read-only answers at once
            await first

        asyncio.run(both())
        asyncio.run(ws.close())


def test_cancel_during_a_slow_command_leaves_a_valid_session(tmp_path: Path) -> None:
    marker = tmp_path / "pid.txt"
    sleeper = f"import os,time; open({str(marker)!r},'w').write(str(os.getpid())); time.sleep(60)"
    script = {"turns": [{"tool_calls": [
        read("a.txt"),
        {"name": "run_command", "arguments": {"command": sys.executable,
                                              "args": ["-c", sleeper]}},
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
    assert marker.exists()
    pid = int(marker.read_text())
    for _ in range(50):  # the command's process group was killed
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the command survived the cancellation")
    assert isinstance(events[-1][1], StopEvent) and events[-1][1].stop_reason == "canceled"
    assert ws.session is not None
    live = ws.session.conversation.messages()
    assert is_valid(live)
    results = [json.loads(m.tool_result.content) for m in live if m.tool_result]
    assert results[0]["ok"] is True  # finished before the cancel: kept
    assert [r.get("error_type") for r in results[1:]] == ["canceled", "canceled"]
    loaded = load_session(ws.store, ws.session.session_id)
    assert loaded.messages == live and loaded.repaired == 0


def test_a_run_that_crosses_the_threshold_compacts_and_finishes(tmp_path: Path) -> None:
    summary = {"when": {"has_tools": False},
               "reply": {"text": "<summary>what happened so far</summary>"}}
    turns = [{"tool_calls": [read("big.txt")]} for _ in range(6)] + [{"text": "finished"}]
    with FakeModelServer({"rules": [summary], "turns": turns}) as fake:
        ws, events = workspace(tmp_path, fake, contextWindow=30_000,
                               **{"compact.singleResultBytes": 10**9,
                                  "compact.roundBytes": 10**9})
        (ws.root / "big.txt").write_text("line of text\n" * 1_250)  # ~16 KB a read
        session_id, result = asyncio.run(ws.run("read big.txt several times"))
        asyncio.run(ws.close())
        assert result.stop_reason == "completed" and result.text == "finished"
        kinds = ["summary" if not r["body"].get("tools") else "turn" for r in fake.requests]
        assert "summary" in kinds
        first = kinds.index("summary")
        assert kinds[first + 1] == "turn"  # the next ordinary request follows the summary
        after = fake.requests[first + 1]["body"]["messages"][0]
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
        assert len(update) == 1 and "how do I build this?" in json.dumps(update[0]["body"])
        last_turn = [r for r in fake.requests if r["body"].get("tools")][-1]
        assert line in json.dumps(last_turn["body"]["system"], ensure_ascii=False)
    statuses = [e.payload()["status"] for _, e in events if e.kind == "memory"]
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
