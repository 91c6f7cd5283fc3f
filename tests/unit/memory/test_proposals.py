"""Memory with consent (SPEC §11): ``memory.mode: confirm`` queues proposals and writes nothing;
proposals persist atomically in ``<dataDir>/proposals/``, one per target note; review accepts
(as proposed, or an edited whole file or body), rejects, refuses a stale proposal and keeps it;
provenance names the session and the run's turn, across restarts; the index health warning."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from pseudoclaude.agent.approvals import ApprovalRequest, Decision
from pseudoclaude.config import load_settings
from pseudoclaude.events import Event, MemoryChange, MemoryEvent, WarningEvent
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.provider import Provider
from pseudoclaude.llm.types import Message
from pseudoclaude.memory import MemoryManager, MemoryStoreError
from pseudoclaude.memory.atomic import digest
from pseudoclaude.memory.index import MAX_LINES, build_index_text
from pseudoclaude.memory.notes import parse_note
from pseudoclaude.memory.operations import Operation
from pseudoclaude.memory.proposals import (
    ProposalQueue,
    ProposalRecord,
    ProposalStale,
    UnknownProposal,
    accept_state,
    accepted_bytes,
    decode_proposal,
    encode_proposal,
    with_updated,
)
from pseudoclaude.memory.store import Change
from pseudoclaude.session.turns import count_prompts
from pseudoclaude.workspace import Workspace

SID = "20250101-000000-abcd"
RUN = [Message(role="user", content="I am a Go engineer. Please fix the build."),
       Message(role="assistant", content="Fixed: run make build.")]
CREATE_BOTH = [
    {"action": "create", "level": "user", "type": "user_preference", "title": "User Profile",
     "slug": "user-profile", "summary": "Go engineer", "content": "The user is a Go engineer."},
    {"action": "create", "level": "project", "type": "project_knowledge", "title": "Build",
     "slug": "build", "summary": "make build", "content": "Run `make build`."},
]


def provider_source(fake: FakeModelServer) -> Callable[[], Awaitable[Provider]]:
    return fake.provider_source(model="m", read_timeout=5.0)


def reply_rule(ops: Any) -> dict[str, Any]:
    return {"when": {"has_tools": False}, "reply": {"text": json.dumps(ops)}}


class Harness:
    def __init__(self, tmp: Path, fake: FakeModelServer | None = None, **kwargs: Any) -> None:
        self.tmp = tmp
        self.events: list[Event] = []
        self.changes: list[tuple[str, str]] = []
        self.counts: list[int] = []
        self.data_dir = tmp / "ws" / ".PseudoClaude"
        self.project_dir = self.data_dir / "memory"
        self.user_dir = tmp / "home" / ".PseudoClaude" / "memory"
        self.proposals_dir = self.data_dir / "proposals"
        self.manager = MemoryManager(
            self.project_dir, self.user_dir,
            provider=provider_source(fake) if fake else None,
            emit=self.events.append,
            on_change=lambda level, source: self.changes.append((level, source)),
            on_proposals=self.counts.append, **kwargs)

    def memory_events(self) -> list[MemoryEvent]:
        return [e for e in self.events if isinstance(e, MemoryEvent)]

    def warnings(self) -> list[str]:
        return [e.message for e in self.events if isinstance(e, WarningEvent)]

    def propose(self, *ops: dict[str, Any], source: str = f"{SID} turn 1") -> list[ProposalRecord]:
        proposed, refused = self.manager.propose([Operation(**op) for op in ops], source, SID)
        assert not refused, refused
        self.manager.announce_proposals()
        return proposed

    def pending(self) -> list[ProposalRecord]:
        return self.manager.pending_proposals()

    def review(self, proposal_id: str, decision: str, content: str | None = None) -> Any:
        return asyncio.run(self.manager.review(proposal_id, decision, content))

    def notes(self) -> list[str]:
        return sorted(p.name for d in (self.project_dir, self.user_dir) if d.is_dir()
                      for p in d.iterdir())


def note(name: str, **fields: str) -> dict[str, Any]:
    return {"action": "create", "level": "project", "type": "project_knowledge",
            "title": name, "content": f"About {name}.", **fields}


# -- confirm mode ------------------------------------------------------------------------------
def test_confirm_mode_writes_nothing_and_queues_proposals(tmp_path: Path) -> None:
    with FakeModelServer({"rules": [reply_rule(CREATE_BOTH)]}) as fake:
        h = Harness(tmp_path, fake, mode="confirm")
        event = asyncio.run(h.manager.run_update(RUN, SID, 3))
    assert event.status == "proposed"
    assert event.changes == [MemoryChange("create", "project", "project_knowledge_build.md"),
                             MemoryChange("create", "user", "user_preference_user-profile.md")]
    assert h.notes() == [] and h.changes == [] and h.manager.index_text() == ""
    proposals = h.pending()
    assert [(p.action, p.level, p.filename) for p in proposals] == [
        ("create", "project", "project_knowledge_build.md"),
        ("create", "user", "user_preference_user-profile.md")]
    build = proposals[0]
    assert build.before == "" and build.before_digest is None
    assert build.after.startswith("---\ntype: project_knowledge\ntitle: \"Build\"\n")
    assert f'source: "{SID} turn 3"' in build.after and "Run `make build`." in build.after
    assert (build.session_id, build.type, build.title, build.summary) == (
        SID, "project_knowledge", "Build", "make build")
    assert h.counts == [2]  # one notification for the queue change


def test_auto_mode_still_writes_and_a_job_keeps_its_mode(tmp_path: Path) -> None:
    with FakeModelServer({"rules": [reply_rule(CREATE_BOTH[1:])]}) as fake:
        h = Harness(tmp_path, fake, mode="confirm")

        async def scenario() -> None:
            h.manager.schedule_update(RUN, SID, 1, "auto")
            h.manager.mode = "auto"
            h.manager.schedule_update(RUN, SID, 2, "confirm")
            assert await h.manager.drain(20)

        asyncio.run(scenario())
    assert [e.status for e in h.memory_events()] == ["updated", "proposed"]
    assert (h.project_dir / "project_knowledge_build.md").is_file()
    (proposal,) = h.pending()
    assert proposal.action == "update" and f'"{SID} turn 1"' in proposal.before
    assert f'"{SID} turn 2"' in proposal.after


def test_secret_content_is_refused_at_proposal_time(tmp_path: Path) -> None:
    ops = [{"action": "create", "level": "user", "type": "reference_material", "title": "Keys",
            "content": "Anthropic key: sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"}]
    with FakeModelServer({"rules": [reply_rule(ops)]}) as fake:
        h = Harness(tmp_path, fake, mode="confirm")
        event = asyncio.run(h.manager.run_update(RUN, SID, 1))
    assert event.status == "failed" and "Anthropic API key" in event.error
    assert h.pending() == [] and h.notes() == []
    assert not h.proposals_dir.exists() or not any(h.proposals_dir.iterdir())


def test_an_update_of_a_missing_note_is_refused(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    proposed, refused = h.manager.propose(
        [Operation("update", "project", filename="project_knowledge_nope.md", content="x")],
        "s", SID)
    assert proposed == [] and "there is no note" in refused[0]


# -- persistence -------------------------------------------------------------------------------
def test_proposal_files_are_private_atomic_and_reloadable(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    first, second = h.propose(note("Alpha"), note("Beta"))
    names = sorted(os.listdir(h.proposals_dir))
    assert names == sorted([f"{first.id}.json", f"{second.id}.json"])  # no temp file left
    assert stat.S_IMODE(h.proposals_dir.stat().st_mode) == 0o700
    for name in names:
        assert stat.S_IMODE((h.proposals_dir / name).stat().st_mode) == 0o600
    # another process (a fresh queue on the same folder) reads the same queue, oldest first
    assert ProposalQueue(h.proposals_dir).load() == [first, second]
    assert Harness(tmp_path).pending() == [first, second]


def test_torn_and_hand_broken_files_are_skipped_with_a_log_line(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    h = Harness(tmp_path)
    (kept,) = h.propose(note("Alpha"))
    data = encode_proposal(kept)
    torn = h.proposals_dir / "20250101-000000-0000aaaa.json"
    torn.write_bytes(data[: len(data) // 2])
    renamed = h.proposals_dir / "20250101-000000-0000bbbb.json"  # its id is not its name
    renamed.write_bytes(data)
    (h.proposals_dir / "20250101-000000-0000cccc.json").write_bytes(b"\x00\xff junk")
    (h.proposals_dir / ".x.json.tmp").write_bytes(b"{")  # a temp file left by a kill: ignored
    with caplog.at_level(logging.WARNING, "pseudoclaude.memory"):
        assert h.pending() == [kept]
    assert str(torn) in caplog.text and "does not match the file name" in caplog.text


def test_one_pending_proposal_per_target_file(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    (old,) = h.propose(note("Alpha", content="First."))
    (new,) = h.propose(note("alpha", content="Second."))  # the same title: the same note
    assert new.filename == old.filename == "project_knowledge_alpha.md"
    assert h.pending() == [new] and "Second." in new.after
    assert not (h.proposals_dir / f"{old.id}.json").exists()
    # a crash between writing the new one and removing the old one leaves both: the newest wins
    (h.proposals_dir / f"{old.id}.json").write_bytes(encode_proposal(old))
    assert h.pending() == [new]
    assert sorted(os.listdir(h.proposals_dir)) == [f"{new.id}.json"]
    # two new notes whose titles slugify alike get two names
    (other,) = h.propose(note("Alpha!"))
    assert other.filename == "project_knowledge_alpha-2.md" and len(h.pending()) == 2


# -- review ------------------------------------------------------------------------------------
def test_accept_writes_the_note_and_its_index_line(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    (proposal,) = h.propose(note("Build", summary="make build", content="Run `make build`."))
    h.counts.clear()
    reviewed = h.review(proposal.id, "accept")
    assert (reviewed.applied, reviewed.filename) == (True, "project_knowledge_build.md")
    text = (h.project_dir / "project_knowledge_build.md").read_text()
    written = parse_note(text.encode(), reviewed.filename)
    proposed = parse_note(proposal.after.encode(), reviewed.filename)
    assert (written.type, written.title, written.body, written.created, written.source) == (
        proposed.type, proposed.title, proposed.body, proposed.created, proposed.source)
    assert text == with_updated(proposal.after, written.updated)  # only `updated` differs
    assert "- [project_knowledge] Build — make build (project_knowledge_build.md)" in \
        h.manager.index_text()
    assert h.changes == [("project", "review")] and h.counts == [0]
    assert h.pending() == []


def test_accept_of_an_update_and_of_a_delete(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    filename, _ = asyncio.run(h.manager.remember("Use tabs.", "user", title="Style"))
    (update,) = h.propose({"action": "update", "level": "user", "filename": filename,
                           "content": "Use spaces.", "summary": "spaces"})
    assert update.action == "update" and update.before == (h.user_dir / filename).read_text()
    assert h.review(update.id, "accept").applied
    assert "Use spaces." in (h.user_dir / filename).read_text()
    assert "Style — spaces" in h.manager.index_text()
    (delete,) = h.propose({"action": "delete", "level": "user", "filename": filename})
    assert (delete.action, delete.after, delete.title) == ("delete", "", "Style")
    assert h.review(delete.id, "accept").applied
    assert not (h.user_dir / filename).exists() and h.manager.index_text() == ""


def test_edited_accept_of_a_whole_file_and_of_a_body(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    first, second = h.propose(note("Alpha"), note("Beta"))
    whole = first.after.replace("About Alpha.", "About Alpha, edited.").replace(
        'title: "Alpha"', 'title: "Alpha edited"')
    assert h.review(first.id, "accept", whole).applied
    written = (h.project_dir / first.filename).read_text()
    assert "About Alpha, edited." in written and 'title: "Alpha edited"' in written
    assert "Alpha edited — About Alpha." in h.manager.index_text()  # the proposal's summary
    assert h.review(second.id, "accept", "Just the body.\r\n").applied
    body = parse_note((h.project_dir / second.filename).read_bytes(), second.filename)
    assert (body.type, body.title, body.body) == ("project_knowledge", "Beta", "Just the body.")
    assert body.source == f"{SID} turn 1"


@pytest.mark.parametrize("content, fragment", [
    ("password = hunter2hunter2", "looks like it contains a password"),
    ("---\ntype: gossip\ntitle: x\n---\nbody", "unknown type"),
])
def test_an_unusable_edited_text_is_refused_and_the_proposal_kept(
        tmp_path: Path, content: str, fragment: str) -> None:
    h = Harness(tmp_path)
    (proposal,) = h.propose(note("Alpha"))
    with pytest.raises(MemoryStoreError) as info:
        h.review(proposal.id, "accept", content)
    assert info.value.field == "content" and fragment in str(info.value)
    assert "hunter2" not in str(info.value)
    assert h.pending() == [proposal] and h.notes() == []


def test_reject_deletes_the_proposal_and_writes_nothing(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    (proposal,) = h.propose(note("Alpha"))
    reviewed = h.review(proposal.id, "reject")
    assert (reviewed.applied, reviewed.filename) == (False, proposal.filename)
    assert h.pending() == [] and h.notes() == [] and h.changes == []
    assert os.listdir(h.proposals_dir) == []


def test_a_stale_proposal_is_refused_and_stays_until_rejected(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    filename, path = asyncio.run(h.manager.remember("Use tabs.", "project", title="Style"))
    (proposal,) = h.propose({"action": "update", "level": "project", "filename": filename,
                             "content": "Use spaces."})
    path.write_text(path.read_text().replace("Use tabs.", "Use tabs, by hand."))
    with pytest.raises(ProposalStale) as info:
        h.review(proposal.id, "accept")
    assert "stale" in str(info.value) and filename in str(info.value)
    assert "by hand" in path.read_text()  # never applied over the change
    assert h.pending() == [proposal]  # kept, without an accept mark
    with pytest.raises(ProposalStale):
        h.review(proposal.id, "accept", "An edited text is refused too.")
    assert not h.review(proposal.id, "reject").applied
    assert h.pending() == []


def test_a_create_proposal_is_stale_once_the_note_exists(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    (proposal,) = h.propose(note("Alpha"))
    h.project_dir.mkdir(parents=True)
    (h.project_dir / proposal.filename).write_text("made by hand\n")
    with pytest.raises(ProposalStale):
        h.review(proposal.id, "accept")
    assert (h.project_dir / proposal.filename).read_text() == "made by hand\n"


def test_an_unknown_id_is_a_bad_param(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.propose(note("Alpha"))
    for bad in ("20250101-000000-00000000", "../../etc/passwd", ""):
        with pytest.raises(UnknownProposal) as info:
            h.review(bad, "accept")
        assert info.value.field == "id"
    assert len(h.pending()) == 1


def test_an_accept_interrupted_after_the_note_was_written_is_finished(tmp_path: Path) -> None:
    """A crash between the note's write and the proposal's removal (the journal)."""
    h = Harness(tmp_path)
    (proposal,) = h.propose(note("Alpha", summary="alpha things"))
    data = accepted_bytes(proposal, None)
    assert data is not None
    marked = msgspec.structs.replace(proposal, accepting=accept_state(data))
    h.manager.proposals.save(marked)
    h.project_dir.mkdir(parents=True)
    (h.project_dir / proposal.filename).write_bytes(data)  # the note, not yet its index line
    fresh = Harness(tmp_path)
    assert fresh.pending() == []
    assert "Alpha — alpha things" in fresh.manager.index_text()
    assert fresh.changes == [("project", "review")]
    # the mark alone (the note was never written) leaves the proposal pending
    (again,) = fresh.propose(note("Beta"))
    fresh.manager.proposals.save(msgspec.structs.replace(
        again, accepting=accept_state(b"never written")))
    assert [p.id for p in fresh.pending()] == [again.id]


def test_an_accept_journals_accepting_on_disk_before_it_writes_the_note(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the journalled accept (``memory/consent.py``): when the store writes the note,
    the proposal file on disk already says ``accepting`` (the digest of the bytes written),
    so a crash between the two can be finished on the next load."""
    h = Harness(tmp_path)
    (proposal,) = h.propose(note("Alpha"))
    store = h.manager.project
    real_replace = store.replace_note
    seen: list[tuple[str, str]] = []  # (accepting on disk, the state the write gives)

    def spy(filename: str, expected: str | None, data: bytes | None, *,
            summary: str = "") -> Change:
        path = h.proposals_dir / f"{proposal.id}.json"
        on_disk = decode_proposal(path.read_bytes(), proposal.id)
        seen.append((on_disk.accepting, accept_state(data)))
        return real_replace(filename, expected, data, summary=summary)

    monkeypatch.setattr(store, "replace_note", spy)
    assert h.review(proposal.id, "accept").applied
    assert len(seen) == 1
    on_disk, written = seen[0]
    assert on_disk == written != ""
    assert written == accept_state((h.project_dir / proposal.filename).read_bytes())
    assert h.pending() == []


# -- provenance --------------------------------------------------------------------------------
class Allow:
    async def ask(self, request: ApprovalRequest) -> Decision | None:
        return "allow_once"


@pytest.fixture
def fake_model() -> Iterator[FakeModelServer]:
    ops = [{"action": "create", "level": "project", "type": "project_knowledge",
            "title": "Build", "content": "make build"}]
    with FakeModelServer({"rules": [reply_rule(ops)],
                          "default": {"text": "done", "chunks": 1}}) as server:
        yield server


def workspace(tmp_path: Path, fake: FakeModelServer, **extra: Any) -> Workspace:
    root = tmp_path / "ws"
    root.mkdir(parents=True, exist_ok=True)
    overrides = {"provider": "anthropic", "baseUrl": fake.base_url, "apiKey": "sk-test-ws",
                 "maxRetries": 0, "memory.userDir": str(tmp_path / "user-memory"), **extra}
    settings = load_settings(root, overrides, home=tmp_path / "home", env={})
    return Workspace(root, settings, approver=Allow())


async def test_provenance_names_session_and_turn_across_a_restart(
        tmp_path: Path, fake_model: FakeModelServer) -> None:
    ws = workspace(tmp_path, fake_model)
    sid, _ = await ws.run("first")
    await ws.run("second")
    await ws.close()
    note_path = tmp_path / "ws" / ".PseudoClaude" / "memory" / "project_knowledge_build.md"
    assert f'source: "{sid} turn 2"' in note_path.read_text()
    assert count_prompts(ws.store.log_path(sid)) == 2

    again = workspace(tmp_path, fake_model, **{"memory.mode": "confirm"})  # a new process
    await again.resume("latest")
    _, path = await again.remember("Tests use pytest.", "project", title="Tests")
    assert f'source: "{sid} turn 2"' in path.read_text()  # the latest run of the session
    await again.run("third")
    await again.memory.drain()
    (proposal,) = await again.memory.list_proposals()
    assert f'source: "{sid} turn 3"' in proposal.after
    new_sid = await again.new_session()
    await again.run("in a new session")
    await again.memory.drain()
    assert f'"{new_sid} turn 1"' in (await again.memory.list_proposals())[0].after
    await again.close()
    loose = workspace(tmp_path / "other", fake_model)  # no session: remember says so
    _, loose_path = await loose.remember("Loose note.", "project", title="Loose")
    assert 'source: "remember"' in loose_path.read_text()
    await loose.close()


async def test_mode_off_schedules_no_update_but_keeps_the_index(
        tmp_path: Path, fake_model: FakeModelServer) -> None:
    ws = workspace(tmp_path, fake_model, **{"memory.mode": "off"})
    await ws.remember("Use tabs.", "project", title="Style")
    await ws.run("hello")
    assert ws.memory.pending == 0
    assert fake_model.requests and all(r["body"].get("tools") for r in fake_model.requests)
    assert "Style" in await ws.session.system_prompt()
    await ws.close()


def test_count_prompts_counts_runs_not_tool_results(tmp_path: Path) -> None:
    from pseudoclaude.llm.types import ToolCall, ToolResult
    from pseudoclaude.session import SessionStore, new_session

    store = SessionStore(tmp_path / "data")
    opened = new_session(store)
    c = opened.conversation
    c.add_user('prompt one with "tool_result":{ inside')
    c.append(Message(role="assistant", tool_calls=[ToolCall("c1", "read_file", {"path": "a"})]))
    c.append(Message(role="user", tool_result=ToolResult("c1", "read_file", "x")))
    c.add_user("prompt two")
    opened.writer.close()
    path = store.log_path(opened.session_id)
    with open(path, "ab") as f:
        f.write(b'{"type":"message","role":"user","content":"torn')
    assert count_prompts(path) == 2
    assert count_prompts(tmp_path / "missing.jsonl") == 0


# -- index health ------------------------------------------------------------------------------
def test_index_health_counts_the_text_before_the_cut() -> None:
    line = "- [project_knowledge] T — s (f.md)"
    text = build_index_text("\n".join([line] * 250), "")
    assert text.truncated and text.lines == 251 and text.crowded
    assert build_index_text(line, "").lines == 2 and not build_index_text(line, "").crowded


def test_the_health_warning_comes_once_per_crossing(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    limit = int(MAX_LINES * 0.8)
    h.project_dir.mkdir(parents=True)
    index = h.project_dir / "MEMORY.md"
    hand = [f"- [project_knowledge] Old {i} — by hand (old-{i}.md)" for i in range(limit - 4)]
    index.write_text("\n".join(hand) + "\n")
    h.manager.refresh()

    async def remember(n: int, prefix: str) -> list[int]:
        crossed = []
        for i in range(n):
            before = len(h.warnings())
            await h.manager.remember(f"{prefix} {i}.", "project", title=f"{prefix} {i}")
            if len(h.warnings()) > before:
                crossed.append(h.manager.index().lines)
        return crossed

    assert asyncio.run(remember(8, "Fact")) == [limit]  # once, at the crossing (+ heading)
    index.write_text("\n".join(index.read_text().splitlines()[20:]) + "\n")  # consolidated
    h.manager.refresh()
    assert asyncio.run(remember(24, "Again")) == [limit]  # up once more: warned again
    assert "80% of its limit" in h.warnings()[0] and "consolidat" in h.warnings()[0]
    assert len(h.warnings()) == 2


def test_digest_of_proposals_matches_the_note_bytes(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    filename, path = asyncio.run(h.manager.remember("x", "project", title="X"))
    (proposal,) = h.propose({"action": "delete", "level": "project", "filename": filename})
    assert proposal.before_digest == digest(path.read_bytes())


def test_the_memory_mode_setting(tmp_path: Path) -> None:
    from pseudoclaude.config import ConfigError

    assert load_settings(tmp_path, {}, home=tmp_path, env={}).memory.mode == "auto"
    settings = load_settings(tmp_path, {"memory": {"mode": "Confirm"}}, home=tmp_path, env={})
    assert settings.memory.mode == "confirm" and settings.memory.enabled
    with pytest.raises(ConfigError) as info:
        load_settings(tmp_path, {"memory.mode": "ask"}, home=tmp_path, env={})
    assert "memory.mode must be one of auto, confirm, off" in str(info.value)
