"""The memory manager: injected index, background updates against the fake model through the
real Anthropic SDK, timeouts, draining, direct edits (SPEC §5)."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from msgspec import UNSET

from pseudoclaude.events import Event, MemoryChange, MemoryEvent
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.provider import Provider
from pseudoclaude.llm.types import Message, ToolCall, ToolResult
from pseudoclaude.memory import MemoryManager, MemoryStoreError
from pseudoclaude.memory.index import TRUNCATED_MARKER
from pseudoclaude.memory.manager import MemoryView


def provider_source(fake: FakeModelServer) -> Callable[[], Awaitable[Provider]]:
    return fake.provider_source(model="m", read_timeout=5.0)


def reply_rule(ops: Any, **extra: Any) -> dict[str, Any]:
    text = ops if isinstance(ops, str) else json.dumps(ops, ensure_ascii=False)
    return {"when": {"has_tools": False}, "reply": {"text": text, **extra}}


class Harness:
    def __init__(self, tmp: Path, fake: FakeModelServer | None = None, **kwargs: Any) -> None:
        self.events: list[Event] = []
        self.changes: list[tuple[str, str]] = []
        self.project_dir = tmp / "ws" / ".PseudoClaude" / "memory"
        self.user_dir = tmp / "home" / ".PseudoClaude" / "memory"
        self.manager = MemoryManager(
            self.project_dir, self.user_dir,
            provider=provider_source(fake) if fake else None,
            emit=self.events.append,
            on_change=lambda level, source: self.changes.append((level, source)),
            **kwargs)

    def memory_events(self) -> list[MemoryEvent]:
        return [e for e in self.events if isinstance(e, MemoryEvent)]


RUN = [Message(role="user", content="I am a Go engineer. Please fix the build."),
       Message(role="assistant", content="Fixed: run make build.")]

CREATE_BOTH = [
    {"action": "create", "level": "user", "type": "user_preference", "title": "User Profile",
     "slug": "user-profile", "summary": "Go engineer", "content": "The user is a Go engineer."},
    {"action": "create", "level": "project", "type": "project_knowledge", "title": "Build",
     "slug": "build", "summary": "make build", "content": "Run `make build`."},
]


# -- the injected index ----------------------------------------------------------------------
def test_refresh_and_index_text(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    assert h.manager.index_text() == ""
    h.user_dir.mkdir(parents=True)
    (h.user_dir / "MEMORY.md").write_text(
        "- [user_preference] User Profile — Go engineer (user_preference_user-profile.md)\n")
    assert h.manager.index_text() == ""  # cached until refreshed
    h.manager.refresh()
    text = h.manager.index_text()
    assert text.startswith("## User Memory\n") and "Go engineer" in text
    assert "Project Memory" not in text


def test_index_trim_order(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.project_dir.mkdir(parents=True)
    h.user_dir.mkdir(parents=True)
    (h.user_dir / "MEMORY.md").write_text("- [user_preference] U — u (u.md)\n")
    (h.project_dir / "MEMORY.md").write_text("- [project_knowledge] P — p (p.md)\n")
    text = h.manager.refresh().text
    assert text.index("Project Memory") < text.index("User Memory")
    (h.project_dir / "MEMORY.md").write_text(
        "".join(f"- [project_knowledge] n{i} — s (n{i}.md)\n" for i in range(205)))
    index = h.manager.refresh()
    assert index.truncated and index.text.endswith(TRUNCATED_MARKER)


def test_show_returns_exactly_the_prompt_index(tmp_path: Path) -> None:
    h = Harness(tmp_path)

    async def scenario() -> MemoryView:
        await h.manager.remember("Run make build.", "project", title="Build")
        await h.manager.remember("Prefers tabs.", "user")
        return await h.manager.show()

    view = asyncio.run(scenario())
    assert view.index == h.manager.index_text()
    assert view.truncated is False
    project, user = view.stores
    assert project.level == "project" and user.level == "user"
    assert project.dir == h.project_dir
    assert project.index_path == h.project_dir / "MEMORY.md"
    (note,) = project.notes
    assert (note.filename, note.path, note.type, note.title, note.summary) == (
        "project_knowledge_build.md", h.project_dir / "project_knowledge_build.md",
        "project_knowledge", "Build", "Run make build.")
    assert user.notes[0].type == "user_preference"


@pytest.mark.parametrize("junk", [
    b"- [project_knowledge] Secret \xe2\x80\x94 SMUGGLED\x00 text (project_knowledge_x.md)\n",
    b"- [project_knowledge] Latin \xe2\x80\x94 SMUGGLED caf\xe9 (project_knowledge_x.md)\n",
], ids=["nul", "invalid-utf8"])
def test_broken_index_is_ignored_not_injected_nor_rewritten(tmp_path: Path, junk: bytes) -> None:
    h = Harness(tmp_path)
    h.project_dir.mkdir(parents=True)
    index_path = h.project_dir / "MEMORY.md"
    index_path.write_bytes(junk)
    assert "SMUGGLED" not in h.manager.refresh().text  # left out of the system prompt

    async def scenario() -> MemoryView:
        await h.manager.remember("Run make build.", "project", title="Build")
        return await h.manager.show()

    view = asyncio.run(scenario())
    assert index_path.read_bytes() == junk  # never rewritten (with its broken bytes)
    text = h.manager.index_text()
    assert view.index == text
    assert "SMUGGLED" not in text and "\x00" not in text and "\ufffd" not in text
    # ...but rebuilt from the notes, so the note just remembered is in the prompt
    assert "- [project_knowledge] Build — Run make build. (project_knowledge_build.md)" in text
    assert [n.filename for n in view.stores[0].notes] == ["project_knowledge_build.md"]
    index_path.write_text("- [project_knowledge] Fixed — by hand (project_knowledge_build.md)\n")
    assert "Fixed — by hand" in h.manager.refresh().text  # a fixed index is used again


def test_a_nul_byte_never_reaches_the_rewritten_index(tmp_path: Path) -> None:
    """A title or a summary with a NUL byte (from an editor's request, a hand-broken note's
    front matter) is written to MEMORY.md without it: the index stays usable."""
    h = Harness(tmp_path)
    index_path = h.project_dir / "MEMORY.md"

    async def scenario() -> None:
        await h.manager.remember("Run make build.\x00 Then test.", "project",
                                 title="Bu\x00ild")

    asyncio.run(scenario())
    data = index_path.read_bytes()
    assert b"\x00" not in data and b"Bu ild" in data, data
    assert "Bu ild" in h.manager.refresh().text  # not ignored as a broken index


def test_broken_tail_of_a_huge_index_is_found(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    h.project_dir.mkdir(parents=True)
    index_path = h.project_dir / "MEMORY.md"
    big = b"- [project_knowledge] filler \xe2\x80\x94 SMUGGLED (f.md)\n" * 40_000
    index_path.write_bytes(big + b"\x00tail\n")  # the NUL is past the 1 MiB read for the prompt
    assert "SMUGGLED" not in h.manager.refresh().text
    asyncio.run(h.manager.remember("Run make build.", "project", title="Build"))
    assert index_path.read_bytes() == big + b"\x00tail\n"


# -- updates ---------------------------------------------------------------------------------
def test_update_applies_project_then_user_and_reports(tmp_path: Path) -> None:
    with FakeModelServer({"rules": [reply_rule("Sure: " + json.dumps(CREATE_BOTH) + " Done.")]}
                         ) as fake:
        h = Harness(tmp_path, fake)
        event = asyncio.run(h.manager.run_update(RUN, "20250101-000000-abcd", 3))
    assert event.status == "updated" and event.error is UNSET
    assert event.changes == [
        MemoryChange("create", "project", "project_knowledge_build.md"),
        MemoryChange("create", "user", "user_preference_user-profile.md"),
    ]
    assert h.memory_events() == [event]
    assert h.changes == [("project", "update"), ("user", "update")]
    note = (h.project_dir / "project_knowledge_build.md").read_text()
    assert 'source: "20250101-000000-abcd turn 3"' in note
    index = h.manager.index_text()
    assert "## Project Memory\n- [project_knowledge] Build — make build" in index
    assert index.index("Project Memory") < index.index("User Memory")
    # the request: no tools, both raw indexes, the run's messages
    (request,) = fake.requests
    body = request["body"]
    assert not body.get("tools")
    sent = json.dumps(body, ensure_ascii=False)
    assert "I am a Go engineer. Please fix the build." in sent
    assert "Fixed: run make build." in sent
    assert "[project index]" in sent and "[user index]" in sent


def test_update_sees_raw_indexes_and_reuses_filenames(tmp_path: Path) -> None:
    update = [{"action": "update", "level": "user", "filename": "user_preference_user-profile.md",
               "content": "Go engineer; also writes Rust.", "summary": "Go and Rust"}]
    with FakeModelServer({"rules": [reply_rule(update)]}) as fake:
        h = Harness(tmp_path, fake)

        async def scenario() -> MemoryEvent:
            await h.manager.remember("Go engineer.", "user", title="User Profile")
            return await h.manager.run_update(RUN, "s", 1)

        event = asyncio.run(scenario())
        sent = json.dumps(fake.requests[0]["body"], ensure_ascii=False)
    assert event.status == "updated"
    assert "(user_preference_user-profile.md)" in sent
    assert "Go and Rust" in h.manager.index_text()
    assert "also writes Rust" in (h.user_dir / "user_preference_user-profile.md").read_text()


def test_unknown_level_is_rejected_with_a_logged_reason(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    ops = [{"action": "create", "level": "team", "type": "project_knowledge", "title": "T",
            "content": "c"}, CREATE_BOTH[1]]
    with FakeModelServer({"rules": [reply_rule(ops)]}) as fake:
        h = Harness(tmp_path, fake)
        with caplog.at_level(logging.INFO, "pseudoclaude.memory"):
            event = asyncio.run(h.manager.run_update(RUN, "s", 1))
    assert event.status == "updated"
    assert [c.filename for c in event.changes] == ["project_knowledge_build.md"]
    assert "unknown level 'team'" in event.error
    assert "unknown level 'team'" in caplog.text


def test_all_operations_rejected_is_a_failure(tmp_path: Path) -> None:
    ops = [{"action": "create", "level": "project"},
           {"action": "delete", "level": "project", "filename": "../bad.md"}]
    with FakeModelServer({"rules": [reply_rule(ops)]}) as fake:
        h = Harness(tmp_path, fake)
        event = asyncio.run(h.manager.run_update(RUN, "s", 1))
    assert event.status == "failed"
    assert "missing type, title, content" in event.error and "../bad.md" in event.error
    assert not h.project_dir.exists() or not any(h.project_dir.iterdir())


def test_secret_content_is_refused(tmp_path: Path) -> None:
    ops = [{"action": "create", "level": "user", "type": "reference_material", "title": "Keys",
            "content": "Anthropic key: sk-ant-api03-ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"}]
    with FakeModelServer({"rules": [reply_rule(ops)]}) as fake:
        h = Harness(tmp_path, fake)
        event = asyncio.run(h.manager.run_update(RUN, "s", 1))
    assert event.status == "failed" and "Anthropic API key" in event.error
    assert "sk-ant" not in event.error
    assert not h.user_dir.exists() or not any(h.user_dir.iterdir())


def test_empty_array_and_noop_are_unchanged(tmp_path: Path) -> None:
    with FakeModelServer({"rules": [{**reply_rule("Nothing worth keeping: []"), "times": 1},
                                    reply_rule([{"action": "noop"}])]}) as fake:
        h = Harness(tmp_path, fake)

        async def scenario() -> list[MemoryEvent]:
            return [await h.manager.run_update(RUN, "s", 1),
                    await h.manager.run_update(RUN, "s", 2)]

        events = asyncio.run(scenario())
    assert [e.status for e in events] == ["unchanged", "unchanged"]
    assert h.changes == []


@pytest.mark.parametrize("script, fragment", [
    ({"rules": [reply_rule("I could not decide.")]}, "no JSON array"),
    ({"rules": [{"when": {"has_tools": False}, "reply": {"error": "auth"}}]}, "401"),
])
def test_failures_are_reported(tmp_path: Path, script: dict[str, Any], fragment: str,
                               caplog: pytest.LogCaptureFixture) -> None:
    with FakeModelServer(script) as fake:
        h = Harness(tmp_path, fake)
        with caplog.at_level(logging.WARNING, "pseudoclaude.memory"):
            event = asyncio.run(h.manager.run_update(RUN, "s", 1))
    assert event.status == "failed" and fragment in event.error
    assert h.memory_events() == [event]
    assert "memory update failed" in caplog.text
    assert "sk-test" not in event.error and "sk-test" not in caplog.text


def test_no_provider_is_reported(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    event = asyncio.run(h.manager.run_update(RUN, "s", 1))
    assert event.status == "failed" and "no model" in event.error


def test_hung_model_call_times_out_and_the_next_update_runs(tmp_path: Path) -> None:
    script = {"rules": [
        {"when": {"has_tools": False}, "reply": {"text": "[]", "stall": 4}, "times": 1},
        reply_rule(CREATE_BOTH[1:]),
    ]}
    with FakeModelServer(script) as fake:
        h = Harness(tmp_path, fake, update_timeout=0.5)

        async def scenario() -> bool:
            h.manager.schedule_update(RUN, "s", 1)
            h.manager.schedule_update(RUN, "s", 2)
            assert h.manager.pending == 2
            return await h.manager.drain(timeout=20)

        drained = asyncio.run(scenario())
    assert drained is True
    first, second = h.memory_events()
    assert first.status == "failed" and "timed out after 0.5 s" in first.error
    assert second.status == "updated"
    assert (h.project_dir / "project_knowledge_build.md").is_file()
    assert h.manager.pending == 0


def test_updates_run_one_at_a_time_in_order(tmp_path: Path) -> None:
    ops = [[{"action": "create", "level": "project", "type": "project_knowledge",
             "title": f"Note {i}", "content": f"body {i}"}] for i in range(3)]
    script = {"rules": [{"when": {"has_tools": False, "last_user_contains": f"turn number {i}"},
                         "reply": {"text": json.dumps(ops[i]), "delay": 0.01}}
                        for i in range(3)]}
    with FakeModelServer(script) as fake:
        h = Harness(tmp_path, fake)

        async def scenario() -> None:
            for i in range(3):
                h.manager.schedule_update([Message(role="user", content=f"turn number {i}")],
                                          "s", i)
            assert await h.manager.drain(20)

        asyncio.run(scenario())
        records = fake.requests
    assert [e.changes[0].filename for e in h.memory_events()] == [
        "project_knowledge_note-0.md", "project_knowledge_note-1.md",
        "project_knowledge_note-2.md"]
    assert all(r["completed"] for r in records)


def test_scheduled_update_is_on_disk_after_a_clean_shutdown(tmp_path: Path) -> None:
    with FakeModelServer({"rules": [reply_rule(CREATE_BOTH, delay=0.02)]}) as fake:
        h = Harness(tmp_path, fake)

        async def run_then_shut_down() -> None:
            messages = list(RUN)
            h.manager.schedule_update(messages, "s", 1)
            messages.append(Message(role="user", content="appended after scheduling"))
            await h.manager.close()  # what the server does at shutdown

        asyncio.run(run_then_shut_down())
        sent = json.dumps(fake.requests[0]["body"])
    assert (h.project_dir / "project_knowledge_build.md").is_file()
    assert (h.user_dir / "user_preference_user-profile.md").is_file()
    assert "appended after scheduling" not in sent  # the messages were copied when scheduled


def test_close_reports_updates_it_had_to_abandon(tmp_path: Path) -> None:
    script = {"rules": [{"when": {"has_tools": False}, "reply": {"text": "[]", "stall": 4}}]}
    with FakeModelServer(script) as fake:
        h = Harness(tmp_path, fake)

        async def scenario() -> None:
            h.manager.schedule_update(RUN, "s", 1)
            h.manager.schedule_update(RUN, "s", 2)
            await asyncio.sleep(0.2)
            await h.manager.close(timeout=0.3)

        asyncio.run(scenario())
    events = h.memory_events()
    assert [e.status for e in events] == ["failed", "failed"]
    assert "did not run" in events[1].error and "cancelled" in events[0].error
    assert "server" not in events[0].error + events[1].error  # the CLI waits too (issue 17)


def test_tool_results_are_shortened_in_the_request(tmp_path: Path) -> None:
    run = [Message(role="user", content="read it"),
           Message(role="assistant", tool_calls=[ToolCall("c1", "read_file", {"path": "a"})]),
           Message(role="user", tool_result=ToolResult("c1", "read_file", "Z" * 50_000)),
           Message(role="assistant", content="done")]
    with FakeModelServer({"rules": [reply_rule([])]}) as fake:
        h = Harness(tmp_path, fake)
        asyncio.run(h.manager.run_update(run, "s", 1))
        sent = json.dumps(fake.requests[0]["body"])
    assert "Z" * 600 in sent and "Z" * 1000 not in sent


# -- direct edits ----------------------------------------------------------------------------
def test_remember_and_forget(tmp_path: Path) -> None:
    h = Harness(tmp_path)

    async def scenario() -> tuple[tuple[str, Path], bool, bool]:
        saved = await h.manager.remember("Always run the linter before committing.", "project")
        removed = await h.manager.forget("project", saved[0])
        again = await h.manager.forget("project", saved[0])
        return saved, removed, again

    (filename, path), removed, again = asyncio.run(scenario())
    assert filename.startswith("project_knowledge_always-run-the-linter")
    assert path == h.project_dir / filename
    assert removed is True and again is False
    assert h.changes == [("project", "remember"), ("project", "forget")]
    assert h.manager.index_text() == ""


def test_remember_defaults_and_title(tmp_path: Path) -> None:
    h = Harness(tmp_path)
    filename, path = asyncio.run(h.manager.remember("Likes terse answers", "user",
                                                    title="Style"))
    assert filename == "user_preference_style.md"
    assert 'title: "Style"' in path.read_text()
    assert "[user_preference] Style — Likes terse answers" in h.manager.index_text()


@pytest.mark.parametrize("args, field", [
    (("text", "team"), "level"),
    (("text", "user", "gossip"), "type"),
    (("   ", "user"), "text"),
    (("password=hunter22", "user"), "text"),
    (("fine", "user", None, "ghp_abcdefghijklmnopqrstuvwxyz0123456789"), "title"),
])
def test_remember_errors(tmp_path: Path, args: tuple[Any, ...], field: str) -> None:
    h = Harness(tmp_path)
    with pytest.raises(MemoryStoreError) as info:
        asyncio.run(h.manager.remember(*args))
    assert info.value.field == field
    assert "hunter22" not in str(info.value)


@pytest.mark.parametrize("level, filename, field", [
    ("team", "a.md", "level"), ("user", "../bad.md", "filename"), ("user", "a/b.md", "filename"),
])
def test_forget_errors(tmp_path: Path, level: str, filename: str, field: str) -> None:
    h = Harness(tmp_path)
    with pytest.raises(MemoryStoreError) as info:
        asyncio.run(h.manager.forget(level, filename))
    assert info.value.field == field
