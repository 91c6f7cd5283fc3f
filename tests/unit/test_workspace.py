"""One workspace folder through :class:`Workspace`'s public API, against the scripted fake model
over loopback (SPEC §1): one writer per session and sessions in parallel, sessions (new,
resume, continue), message paging,
the errors raised before anything happens, and close()."""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.agent.approvals import ApprovalRequest, Decision
from pseudoclaude.config import load_settings
from pseudoclaude.events import Event, MemoryEvent
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.errors import NoProviderConfigured
from pseudoclaude.session import SessionNotFound, load_session
from pseudoclaude.workspace import Hooks, SessionBusy, Workspace, WorkspaceBusy, WorkspaceError

MEMORY_OPS = [{"action": "create", "level": "project", "type": "project_knowledge",
               "title": "Build command", "summary": "use make build",
               "content": "Build with `make build`."}]


class Allow:
    async def ask(self, request: ApprovalRequest) -> Decision | None:
        return "allow_once"


class Made:
    """A workspace and the events it sent, as ``(session id, event)``."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self.events: list[tuple[str, Event]] = []


def tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def sent(fake: FakeModelServer, index: int) -> list[str]:
    """The texts of the messages the model was sent in request ``index``."""
    out = []
    for message in fake.requests[index]["body"]["messages"]:
        content = message["content"]
        out.append(content if isinstance(content, str) else " ".join(
            b.get("text", "") for b in content if isinstance(b, dict)))
    return out


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer({"default": {"text": "default answer", "chunks": 1}}) as server:
        yield server


@pytest.fixture
async def workspace(tmp_path: Path, fake: FakeModelServer
                    ) -> AsyncIterator[Callable[..., Made]]:
    """``workspace(**settings)``: a Workspace on ``<tmp>/ws`` with the Anthropic provider on the
    fake model (``provider=None`` in the settings: no provider at all), memory off unless asked;
    every workspace made is closed at the end."""
    made: list[Made] = []
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")

    def make(**extra: Any) -> Made:
        overrides: dict[str, Any] = {
            "provider": "anthropic", "baseUrl": fake.base_url, "apiKey": "sk-test-workspace",
            "maxRetries": 0, "memory.enabled": False,
            "memory.userDir": str(tmp_path / "user-memory")}
        overrides.update(extra)
        if overrides["provider"] is None:
            for key in ("provider", "baseUrl", "apiKey"):
                del overrides[key]
        settings = load_settings(root, overrides, home=tmp_path / "home", env={})
        holder: list[Made] = []
        ws = Workspace(root, settings, approver=Allow(),
                       hooks=Hooks(events=lambda sid, event: holder[0].events.append((sid, event))))
        holder.append(Made(ws))
        made.append(holder[0])
        return holder[0]

    yield make
    for m in made:
        await m.ws.close()


async def test_a_run_in_a_fresh_workspace_opens_a_session(workspace: Any,
                                                          fake: FakeModelServer) -> None:
    fake.add_turns({"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
                   {"text": "It says alpha."})
    w = workspace()
    assert w.ws.session is None and w.ws.session_id is None
    session_id, result = await w.ws.run("what does a.txt say?")
    assert result.stop_reason == "completed" and result.text == "It says alpha."
    assert w.ws.session_id == session_id
    assert {sid for sid, _ in w.events} == {session_id}
    assert [s.id for s in await w.ws.sessions()] == [session_id]


async def test_the_empty_prompt_is_refused_before_anything_happens(
        workspace: Any, fake: FakeModelServer, tmp_path: Path) -> None:
    w = workspace()
    before = tree(tmp_path)
    for prompt in ("", "   ", "\n\t "):
        with pytest.raises(WorkspaceError, match="the prompt is empty"):
            await w.ws.run(prompt)
        with pytest.raises(WorkspaceError, match="the prompt is empty"):
            await w.ws.run(prompt, session="new")
    assert fake.requests == [] and w.ws.session is None and w.events == []
    assert tree(tmp_path) == before
    first, _ = await w.ws.run("a real prompt")
    with pytest.raises(WorkspaceError, match="the prompt is empty"):
        await w.ws.run(" ", session="new")  # no new session was opened for it
    assert w.ws.session_id == first and len(await w.ws.sessions()) == 1
    assert len(fake.requests) == 1


async def test_no_provider_fails_before_anything_is_written(workspace: Any, tmp_path: Path,
                                                            fake: FakeModelServer) -> None:
    w = workspace(provider=None, **{"memory.enabled": True})
    before = tree(tmp_path)
    assert before == ["ws", "ws/a.txt"]
    with pytest.raises(NoProviderConfigured, match="ANTHROPIC_API_KEY"):
        await w.ws.run("hello")
    with pytest.raises(NoProviderConfigured):
        await w.ws.run("hello", session="new")
    assert w.ws.session is None and w.events == [] and fake.requests == []
    assert tree(tmp_path) == before  # no .PseudoClaude/, no .gitignore, no memory folder


@pytest.mark.parametrize("failure", ["prompt_too_long", "server_error"])
async def test_a_session_whose_first_run_failed_is_kept_but_not_latest(
        workspace: Any, fake: FakeModelServer, failure: str) -> None:
    """A new session whose first run fails before any answer keeps its prompt (listed,
    resumable by id) but is not ``latest``: a later process's ``context`` and ``compact`` act on
    the session that answered. Once it answers, it is ``latest``."""
    fake.add_turns({"text": "first answer"}, {"error": failure})
    w = workspace()
    first, _ = await w.ws.run("a real question")
    failed, result = await w.ws.run("this one fails", session="new")
    assert result.stop_reason == "error" and result.error and failed != first
    listed = {s.id: s for s in await w.ws.sessions()}
    assert set(listed) == {first, failed}
    assert listed[failed].answered is False and listed[first].answered is True
    assert (await w.ws.load(failed)).messages[0].content == "this one fails"  # nothing lost
    assert (await w.ws.load("latest")).session_id == first
    later = workspace()  # the next process (the CLI's context, compact, --session latest)
    assert await later.ws.has_latest()
    assert (await later.ws.resume("latest")).session_id == first
    # Run again in the failed session: once it answers, it is latest.
    fake.add_turns({"text": "now it works"})
    _, result = await w.ws.run("try again", session=failed)
    assert result.stop_reason == "completed"
    assert (await w.ws.load("latest")).session_id == failed


async def test_only_failed_sessions_means_no_latest(workspace: Any,
                                                     fake: FakeModelServer) -> None:
    fake.add_turns({"error": "server_error"})
    w = workspace()
    failed, result = await w.ws.run("fails")
    assert result.stop_reason == "error"
    assert [s.id for s in await w.ws.sessions()] == [failed]
    later = workspace()
    assert not await later.ws.has_latest()
    with pytest.raises(SessionNotFound, match="the model never answered in 1 session"):
        await later.ws.load("latest")


async def test_one_writer_per_session_and_sessions_in_parallel(
        workspace: Any, fake: FakeModelServer) -> None:
    fake.add_turns({"text": "slow answer", "stall": 30}, {"text": "in parallel"},
                   {"text": "slow too", "stall": 30}, {"text": "after the cancel"})
    w = workspace(**{"sessions.maxParallel": 2})
    first = asyncio.create_task(w.ws.run("one"))
    while not fake.requests:  # the run is streaming its first turn
        await asyncio.sleep(0.01)
    one = w.ws.session_id
    assert one is not None
    started = time.monotonic()
    # Its session has one writer: another run, a compaction, an undo, a rewind are refused.
    for attempt in (lambda: w.ws.run("two"), lambda: w.ws.run("two", session=one),
                    lambda: w.ws.compact(), lambda: w.ws.undo_compact(),
                    lambda: w.ws.rewind(1, "conversation")):
        with pytest.raises(SessionBusy) as busy:
            await attempt()
        assert busy.value.session_id == one and busy.value.pid == os.getpid()
    assert time.monotonic() - started < 5  # at once, not after the run
    # Read-only requests answer during the run.
    session_id, total, messages = await w.ws.messages(None)
    assert session_id == one and total == 1 and [m.content for m in messages] == ["one"]
    assert [(s.id, running) for s, running in await w.ws.session_list()] == [(one, True)]
    # Another session runs at the same time, with its own conversation.
    two, result = await w.ws.run("parallel", session="new")
    assert two != one and result.text == "in parallel" and w.ws.session_id == two
    assert sent(fake, 1) == ["parallel"]
    assert w.ws.context(two).message_count == 2 and w.ws.context(one).message_count == 1
    # The limit: one more session than sessions.maxParallel is refused, nothing written.
    third = asyncio.create_task(w.ws.run("stalls too", session=two))
    while len(w.ws.running()) < 2:  # (sessions.maxParallel: 2, both running now)
        await asyncio.sleep(0.01)
    before = [s.id for s in await w.ws.sessions()]
    with pytest.raises(WorkspaceBusy, match=r"sessions\.maxParallel is 2"):
        await w.ws.run("three", session="new")
    assert [s.id for s in await w.ws.sessions()] == before
    for task in (first, third):
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    # The cancelled runs released their sessions.
    again, result = await w.ws.run("three", session=one)
    assert again == one and result.text == "after the cancel"


async def test_run_session_new_versus_continuing(workspace: Any, fake: FakeModelServer) -> None:
    fake.add_turns({"text": "answer one"}, {"text": "answer two"}, {"text": "answer three"},
                   {"text": "answer four"})
    w = workspace()
    one, _ = await w.ws.run("prompt one")
    two, _ = await w.ws.run("prompt two")  # no session given: the current one goes on
    assert two == one
    assert sent(fake, 1) == ["prompt one", "answer one", "prompt two"]
    three, _ = await w.ws.run("prompt three", session="new")
    assert three != one and w.ws.session_id == three
    assert sent(fake, 2) == ["prompt three"]
    four, _ = await w.ws.run("prompt four", session=one)  # back to the first one by its id
    assert four == one and w.ws.session_id == one
    assert sent(fake, 3) == ["prompt one", "answer one", "prompt two", "answer two",
                             "prompt four"]
    assert sorted(s.id for s in await w.ws.sessions()) == sorted([one, three])
    with pytest.raises(SessionNotFound):
        await w.ws.run("prompt five", session="20200101-000000-abcd")
    assert w.ws.session_id == one and len(fake.requests) == 4


async def test_new_session_resume_latest_and_message_paging(workspace: Any,
                                                            fake: FakeModelServer) -> None:
    fake.add_turns({"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
                   {"text": "It says alpha."}, {"text": "Still alpha."})
    w = workspace()
    with pytest.raises(WorkspaceError, match="no active session"):
        await w.ws.messages(None)
    with pytest.raises(SessionNotFound, match="no session"):
        await w.ws.resume("latest")
    first, _ = await w.ws.run("read a.txt")
    await w.ws.close()

    # Another workspace on the same folder (a new process): resume the latest session.
    w2 = workspace()
    info = await w2.ws.resume("latest")
    assert (info.session_id, info.message_count, info.bad_lines, info.repaired) == (
        first, 4, 0, 0)
    assert w2.ws.session_id == first
    sid, total, everything = await w2.ws.messages(None)
    assert sid == first and total == 4
    assert [m.role for m in everything] == ["user", "assistant", "user", "assistant"]
    assert everything[1].tool_calls[0].name == "read_file"
    assert everything[2].tool_result is not None and "alpha" in everything[2].tool_result.content
    assert await w2.ws.messages(None, offset=1, limit=2) == (first, 4, everything[1:3])
    assert await w2.ws.messages(None, offset=3) == (first, 4, everything[3:])
    assert await w2.ws.messages(None, offset=10, limit=5) == (first, 4, [])
    assert await w2.ws.messages(first, limit=1) == (first, 4, everything[:1])
    _, result = await w2.ws.run("and now?")  # continues the resumed session
    assert result.text == "Still alpha." and sent(fake, 2)[0] == "read a.txt"

    fresh = await w2.ws.new_session()
    assert fresh != first and w2.ws.session_id == fresh
    assert await w2.ws.messages(None) == (fresh, 0, [])
    sid, total, old = await w2.ws.messages(first)  # another session by its id
    assert (sid, total) == (first, 6) and old[:4] == everything
    assert first in {s.id for s in await w2.ws.sessions()}
    resumed = await w2.ws.resume(first)
    assert resumed.message_count == 6 and w2.ws.session_id == first


async def test_close_waits_for_the_memory_update_and_leaves_a_complete_log(
        workspace: Any, fake: FakeModelServer, tmp_path: Path) -> None:
    fake.script.rules.append({"when": {"has_tools": False},
                              "reply": {"text": json.dumps(MEMORY_OPS), "delay": 0.05},
                              "times": None})
    fake.add_turns({"text": "Noted: make build."})
    w = workspace(**{"memory.enabled": True})
    session_id, result = await w.ws.run("how do I build this?")
    assert result.stop_reason == "completed"
    await w.ws.close()
    memory = tmp_path / "ws" / ".PseudoClaude" / "memory"
    assert "make build" in (memory / "project_knowledge_build-command.md").read_text()
    statuses = [e.status for _, e in w.events if isinstance(e, MemoryEvent)]
    assert statuses == ["updated"]
    loaded = load_session(w.ws.store, session_id)
    assert [m.content for m in loaded.messages] == ["how do I build this?", "Noted: make build."]
    await w.ws.close()  # a second close does nothing


async def test_close_of_an_unused_workspace_writes_nothing(workspace: Any,
                                                           tmp_path: Path) -> None:
    w = workspace(**{"memory.enabled": True})
    before = tree(tmp_path)
    await w.ws.close()
    assert tree(tmp_path) == before


async def test_compact_model_and_memory_model_reach_the_wire(workspace: Any,
                                                            fake: FakeModelServer) -> None:
    """``compact.model`` and ``memory.model`` send the summary and the memory update to
    those models (same provider, same server); the runs keep the session's model."""
    for i in range(4):
        fake.add_turns({"text": f"answer {i} " * 400}, {"text": "Memory operations: []"})
    fake.add_turns({"text": "<summary>Work so far.</summary>"})
    w = workspace(**{"model": "big-model", "compact.model": "small-model",
                     "memory.model": "tiny-model", "memory.enabled": True,
                     "contextWindow": 32_000})
    for i in range(4):
        await w.ws.run(f"prompt {i} " * 1500)
        assert await w.ws.memory.drain(10)
    outcome = await w.ws.compact()
    assert outcome.summarized
    models = [r["body"]["model"] for r in fake.requests]
    assert models == ["big-model", "tiny-model"] * 4 + ["small-model"]
    # Another model cannot read the session's cache: the summary is the transcript form.
    summary = fake.requests[-1]["body"]
    assert "tools" not in summary and "<transcript>" in json.dumps(summary)


async def test_a_cache_friendly_summary_that_calls_a_tool_falls_back_to_the_transcript(
        workspace: Any, fake: FakeModelServer) -> None:
    """The summary request with the session's tools and history: when the model calls a tool
    instead of summarising (or gives no summary), the transcript form summarises; nothing of
    the tool call runs or reaches the conversation."""
    fake.script.rules[:0] = [
        {"when": {"summary": True, "has_tools": True}, "times": 1,
         "reply": {"tool_calls": [{"name": "write_file",
                                   "arguments": {"path": "x.txt", "content": "no"}}]}},
        {"when": {"summary": True}, "times": None,
         "reply": {"text": "<summary>Work so far.</summary>"}}]
    for i in range(4):
        fake.add_turns({"text": f"answer {i} " * 400})
    w = workspace(contextWindow=32_000)
    for i in range(4):
        await w.ws.run(f"prompt {i} " * 1500)
    outcome = await w.ws.compact()
    assert outcome.summarized, [(r["reply"], r["status"]) for r in fake.requests]
    in_place, transcript = fake.requests[-2:]
    assert in_place["body"]["tools"] and in_place["reply"] == "rule 0"
    assert "tools" not in transcript["body"] and transcript["reply"] == "rule 1"
    assert not (w.ws.root / "x.txt").exists()
    assert "Work so far." in w.ws.session.conversation.messages()[0].content


async def test_the_run_and_prompt_counters_agree_with_the_log_after_a_rewind(
        workspace: Any, fake: FakeModelServer) -> None:
    """Two numbers per session: the run (memory provenance: never renumbered) and the prompt's
    turn (the timeline's: a rewind of the conversation takes it back). Counted on in this
    process or counted afresh from the log by another one, they are the same."""
    w = workspace()
    sid, _ = await w.ws.run("one")
    for prompt in ("two", "three"):
        await w.ws.run(prompt, sid)
    await w.ws.rewind(2, "conversation", session_id=sid)
    await w.ws.run("four", sid)
    session = w.ws.open_sessions[sid]
    assert (session.runs, session.turns_known) == (4, 2)
    assert [t.prompt for t in await w.ws.turns(sid)] == ["one", "four"]
    other = workspace()
    await other.ws.resume(sid)
    fresh = other.ws.open_sessions[sid]
    assert (await other.ws._runs_so_far(fresh), await other.ws._next_prompt_turn(fresh)) == (
        4, 3)


async def test_a_memory_update_is_told_to_the_session_whose_run_it_remembers(
        workspace: Any, fake: FakeModelServer) -> None:
    w = workspace(**{"memory.enabled": True})
    first, _ = await w.ws.run("first prompt", "new")
    second, _ = await w.ws.run("second prompt", "new")  # now the current session
    assert await w.ws.memory.drain(10)
    told = [sid for sid, event in w.events if isinstance(event, MemoryEvent)]
    assert sorted(told) == sorted([first, second])
