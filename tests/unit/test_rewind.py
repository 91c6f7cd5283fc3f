"""Checkpoints, rewind and fork on the real workspace (agent loop, session log, shadow Git
repository) against the scripted model: what a command changed comes back, conflicts are left
alone unless forced, the conversation goes back as one ``replace``, a rewind can be rewound, a
fork keeps its source, bad input is refused, and a crash mid-rewind is finished on restart."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from msgspec import UNSET

from pseudoclaude.agent.approvals import ApprovalRequest, Decision
from pseudoclaude.checkpoints import BeforeImages, git_available
from pseudoclaude.config import load_settings
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.rewind import JOURNAL, TurnOutOfRange
from pseudoclaude.session import load_session
from pseudoclaude.transcript import UserItem, build_transcript
from pseudoclaude.workspace import Workspace, WorkspaceError

pytestmark = pytest.mark.skipif(not git_available(), reason="needs the git command")


class Allow:
    async def ask(self, request: ApprovalRequest) -> Decision | None:
        return "allow_once"


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.fixture
def fake() -> Iterator[FakeModelServer]:
    with FakeModelServer({"default": {"text": "done"}}) as server:
        yield server


@pytest.fixture
async def workspace(tmp_path: Path, fake: FakeModelServer
                    ) -> AsyncIterator[Callable[[], Workspace]]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    (root / "b.txt").write_text("bravo\n")
    made: list[Workspace] = []

    def make() -> Workspace:
        settings = load_settings(root, {
            "provider": "anthropic", "baseUrl": fake.base_url, "apiKey": "sk-test-rewind",
            "maxRetries": 0, "memory.enabled": False, "approvals.runCommand": "allow",
            "memory.userDir": str(tmp_path / "user-memory")}, home=tmp_path / "home", env={})
        ws = Workspace(root, settings, approver=Allow())
        made.append(ws)
        return ws

    yield make
    for ws in made:
        await ws.close()


async def three_prompts(ws: Workspace, fake: FakeModelServer) -> str:
    """1: read and edit a.txt (one message, two calls); 2: a command deletes b.txt and creates
    c.txt; 3: only talk."""
    fake.add_turns({"tool_calls": [
                        {"name": "read_file", "arguments": {"path": "a.txt"}},
                        {"name": "edit_file", "arguments": {
                            "path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"}}]},
                   {"text": "edited"},
                   call("run_command", command="sh",
                        args=["-c", "rm b.txt && echo new > c.txt"]),
                   {"text": "ran it"},
                   {"text": "just talking"})
    sid, r1 = await ws.run("edit a")
    await ws.run("run the command")
    await ws.run("say something")
    assert r1.stop_reason == "completed"
    return sid


async def test_turns_and_checkpoint_lines(workspace: Any, fake: FakeModelServer) -> None:
    ws = workspace()
    sid = await three_prompts(ws, fake)
    turns = await ws.turns()
    assert [(t.turn, t.prompt, t.files_changed) for t in turns] == [
        (1, "edit a", 1), (2, "run the command", 2), (3, "say something", 0)]
    lines = [json.loads(line) for line in ws.store.log_path(sid).read_text().splitlines()]
    checkpoints = [line for line in lines if line["type"] == "checkpoint"]
    # one before each run, one after each tool call that may change files
    assert [c["turn"] for c in checkpoints] == [1, 1, 2, 2, 3]
    assert load_session(ws.store, sid).bad_lines == 0


async def test_a_code_rewind_takes_back_what_the_command_did(workspace: Any,
                                                             fake: FakeModelServer) -> None:
    ws = workspace()
    await three_prompts(ws, fake)
    root = ws.root
    preview = await ws.rewind_preview(2, "code")
    assert {(f.path, f.action, f.conflict) for f in preview.files} == {
        ("b.txt", "create", False), ("c.txt", "delete", False)}
    assert (root / "c.txt").exists()  # the preview changed nothing
    done = await ws.rewind(2, "code")
    assert sorted(done.restored_files) == ["b.txt", "c.txt"] and done.conflicts == []
    assert (root / "b.txt").read_text() == "bravo\n" and not (root / "c.txt").exists()
    assert (root / "a.txt").read_text() == "ALPHA\n"  # turn 1's edit stays
    assert len(ws.session.conversation) == done.message_count  # the conversation is untouched
    # the rewind is checkpointed: rewinding "to before prompt 3" takes it back
    again = await ws.rewind(3, "code")
    assert sorted(again.restored_files) == ["b.txt", "c.txt"]
    assert not (root / "b.txt").exists() and (root / "c.txt").read_text() == "new\n"


async def test_conflicts_are_left_alone_unless_forced(workspace: Any,
                                                      fake: FakeModelServer) -> None:
    ws = workspace()
    await three_prompts(ws, fake)
    (ws.root / "a.txt").write_text("edited by hand\n")
    preview = await ws.rewind_preview(1, "code")
    assert {f.path: f.conflict for f in preview.files} == {
        "a.txt": True, "b.txt": False, "c.txt": False}
    assert "1 conflict" in preview.message
    done = await ws.rewind(1, "code")
    assert done.conflicts == ["a.txt"] and sorted(done.restored_files) == ["b.txt", "c.txt"]
    assert (ws.root / "a.txt").read_text() == "edited by hand\n"
    forced = await ws.rewind(1, "code", force=True)
    assert forced.restored_files == ["a.txt"] and (ws.root / "a.txt").read_text() == "alpha\n"


async def test_a_conversation_rewind_is_one_replace_and_renumbers(workspace: Any,
                                                                  fake: FakeModelServer) -> None:
    ws = workspace()
    sid = await three_prompts(ws, fake)
    preview = await ws.rewind_preview(2, "conversation")
    assert preview.files == [] and preview.dropped_messages == len(ws.session.conversation) - 5
    done = await ws.rewind(2, "conversation")
    assert done.message_count == 5 and (ws.root / "c.txt").exists()  # files untouched
    prompts = [m.content for m in ws.session.conversation.messages()
               if m.role == "user" and m.tool_result is None]
    assert prompts == ["edit a"]
    lines = [json.loads(line) for line in ws.store.log_path(sid).read_text().splitlines()]
    replaces = [line for line in lines if line["type"] == "replace"]
    assert [(r["reason"], r["turn"]) for r in replaces] == [("rewind", 2)]
    assert [t.turn for t in await ws.turns()] == [1]
    fake.add_turns({"text": "again"})
    await ws.run("a new second prompt")
    assert [(t.turn, t.prompt) for t in await ws.turns()] == [(1, "edit a"),
                                                              (2, "a new second prompt")]
    # the transcript keeps every prompt; only those still turns carry their number
    shown = [(i.text, i.turn, i.in_context) for i in
             build_transcript(ws.store.log_path(sid)) if isinstance(i, UserItem)]
    assert shown == [("edit a", 1, True), ("run the command", UNSET, False),
                     ("say something", UNSET, False), ("a new second prompt", 2, True)]


async def test_both_and_a_fork(workspace: Any, fake: FakeModelServer) -> None:
    ws = workspace()
    sid = await three_prompts(ws, fake)
    before = ws.store.log_path(sid).read_bytes()
    forked = await ws.fork(turn=3)
    assert forked != sid and ws.store.log_path(sid).read_bytes() == before  # source unchanged
    lines = [json.loads(line) for line in ws.store.log_path(forked).read_text().splitlines()]
    assert [line["type"] for line in lines] == ["session", "fork", "replace"]
    assert (lines[1]["parent"], lines[1]["turn"]) == (sid, 3)
    assert [m["content"] for m in lines[2]["messages"] if m["role"] == "user"
            and "tool_result" not in m] == ["edit a", "run the command"]
    # the fork's prompts are its turns: its conversation can go back to them (its files
    # cannot: they were changed in the source session)
    assert [(t.turn, t.prompt) for t in await ws.turns(forked)] == [
        (1, "edit a"), (2, "run the command")]
    shown = [(i.text, i.turn) for i in build_transcript(ws.store.log_path(forked))
             if isinstance(i, UserItem)]
    assert shown == [("edit a", 1), ("run the command", 2)]
    in_fork = await ws.rewind_preview(2, "both", forked)
    assert in_fork.dropped_messages == 4 and "has no checkpoint" in in_fork.message
    done = await ws.rewind(1, "both")
    assert done.message_count == 0 and (ws.root / "a.txt").read_text() == "alpha\n"
    assert (ws.root / "b.txt").exists() and not (ws.root / "c.txt").exists()


async def test_bad_input_and_no_checkpoint(workspace: Any, fake: FakeModelServer) -> None:
    ws = workspace()
    with pytest.raises(WorkspaceError, match="no active session"):
        await ws.rewind_preview(1, "code")
    await three_prompts(ws, fake)
    with pytest.raises(TurnOutOfRange, match="turn must be between 1 and 3, got 4"):
        await ws.rewind_preview(4, "both")
    with pytest.raises(ValueError, match="got 0"):
        await ws.rewind(0, "code")


async def test_an_interrupted_rewind_is_finished_on_the_next_start(
        workspace: Any, fake: FakeModelServer) -> None:
    ws = workspace()
    await three_prompts(ws, fake)
    plan = await ws.rewind_preview(2, "code")
    repo = ws.checkpoints
    assert repo is not None
    # as if the process died after the journal and one of the two files
    journal = repo.folder / JOURNAL
    target = (await ws.turns())[1]
    assert target.turn == 2
    ref = plan.target_ref
    journal.write_text(json.dumps({"ref": ref, "paths": ["b.txt", "c.txt"]}))
    repo.restore(ref, ["b.txt"])
    left = ws.root / ".c.txt.0123456789ab.tmp"  # a write of c.txt the kill cut short
    left.write_text("half")
    (ws.root / ".c.txt.notours.tmp").write_text("someone else's")
    await ws.close()
    fresh = workspace()
    await fresh.resume("latest")
    fake.add_turns({"text": "hello"})
    await fresh.run("next")  # its first checkpoint finishes the rewind first
    assert (fresh.root / "b.txt").read_text() == "bravo\n" and not (fresh.root / "c.txt").exists()
    assert not journal.exists()
    assert not left.exists() and (ws.root / ".c.txt.notours.tmp").exists()


async def test_without_git_the_agents_own_writes_are_taken_back(workspace: Any,
                                                                fake: FakeModelServer) -> None:
    """Before-images: the edit comes back, what the command did stays (and every place that
    shows a rewind says so)."""
    ws = workspace()
    ws.checkpoints = BeforeImages(ws.root, ws.store.data_dir / "checkpoints")
    await three_prompts(ws, fake)
    status = ws.checkpoint_status()
    assert status.covers == "writes" and "git command is not on PATH" in str(status.problem)
    preview = await ws.rewind_preview(1, "code")
    assert [(f.path, f.action) for f in preview.files] == [("a.txt", "restore")]
    assert "without the git command" in preview.message
    assert [t.files_changed for t in await ws.turns()] == [1, 0, 0]
    done = await ws.rewind(1, "code")
    assert done.restored_files == ["a.txt"] and (ws.root / "a.txt").read_text() == "alpha\n"
    assert (ws.root / "c.txt").exists() and not (ws.root / "b.txt").exists()


async def test_the_checkpoints_of_expired_sessions_are_cleaned_up_with_them(
        workspace: Any, fake: FakeModelServer) -> None:
    ws = workspace()
    old, _ = await ws.run("an old prompt")
    await ws.run("a fresh prompt", session="new")
    fresh = ws.session_id
    repo = ws.checkpoints
    assert repo.head(old) and repo.head(fresh)
    expired = time.time() - 40 * 86400
    os.utime(ws.store.log_path(old), (expired, expired))
    await ws.close()
    later = workspace()
    later.start()
    assert later._cleanup is not None
    await later._cleanup
    assert not ws.store.log_path(old).exists()
    assert repo.head(old) is None and repo.head(fresh) is not None


async def test_a_deleted_checkpoint_repository_is_said_and_never_stops_a_run(
        workspace: Any, fake: FakeModelServer) -> None:
    ws = workspace()
    await three_prompts(ws, fake)
    shutil.rmtree(ws.store.data_dir / "checkpoints" / "shadow.git")
    preview = await ws.rewind_preview(2, "both")
    assert preview.files == [] and "cannot be restored" in preview.message
    assert "missing from the checkpoint repository" in preview.message
    with pytest.raises(WorkspaceError, match="cannot be restored"):
        await ws.rewind(2, "code")
    fake.add_turns(call("write_file", path="d.txt", content="new\n"), {"text": "wrote d"})
    _, result = await ws.run("write d")
    assert result.stop_reason == "completed" and ws.checkpoint_problem == ""
    assert (await ws.rewind(4, "code")).restored_files == ["d.txt"]  # a fresh repository


async def test_after_a_rewind_of_both_the_agent_edits_what_it_knew_then_without_reading(
        workspace: Callable[[], Workspace], fake: FakeModelServer) -> None:
    """Prompt 1 reads a.txt; prompt 2 edits it. Rewound to before prompt 2 (code and
    conversation), the model is back where it had read a.txt, and a.txt holds those bytes
    again: editing it needs no new read. A file changed outside after the rewind still does."""
    ws = workspace()
    fake.add_turns(call("read_file", path="a.txt"), {"text": "read"},
                   call("edit_file", path="a.txt", old_text="alpha", new_text="ALPHA"),
                   {"text": "edited"})
    sid, _ = await ws.run("read a")
    await ws.run("edit a", sid)
    assert (ws.root / "a.txt").read_text() == "ALPHA\n"
    done = await ws.rewind(2, "both", session_id=sid)
    assert done.restored_files == ["a.txt"] and (ws.root / "a.txt").read_text() == "alpha\n"
    fake.add_turns(call("edit_file", path="a.txt", old_text="alpha", new_text="Alpha"),
                   {"text": "edited again"})
    await ws.run("edit a differently", sid)
    assert (ws.root / "a.txt").read_text() == "Alpha\n"
