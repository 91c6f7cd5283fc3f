"""The ACP front end's parts in process: a loaded session's replay from transcript items, the
slash commands' listing and answers (the subprocess tests in ``test_acp.py`` drive the whole)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pseudoclaude import words
from pseudoclaude.acp import slash
from pseudoclaude.acp.outbox import Outbox
from pseudoclaude.acp.replay import SUMMARY_HEADING, replay
from pseudoclaude.acp.turns import Turn
from pseudoclaude.acp.updates import wire
from pseudoclaude.api import commands
from pseudoclaude.compact import CompactOutcome
from pseudoclaude.compact.plan import UndoOutcome
from pseudoclaude.events import FactCheck
from pseudoclaude.transcript import (
    AssistantItem,
    CompactionItem,
    Item,
    NoticeItem,
    SummaryItem,
    ToolCallItem,
    UndoItem,
    UserItem,
)

ROOT = Path("/w")
READ = {"path": "notes.txt"}
ITEMS: list[Item] = [
    UserItem(text="read the notes", in_context=False),
    AssistantItem(text="Reading.", thinking="the user wants the notes", in_context=False),
    ToolCallItem(id="c1", name="read_file", arguments=READ, status="done",
                 preview="alpha\nbeta", bytes=60, in_context=False),
    ToolCallItem(id="c2", name="run_command", arguments={"command": "false", "args": []},
                 status="error", preview="exit 1", error="the command failed (exit 1)",
                 bytes=80, in_context=False),
    ToolCallItem(id="c3", name="run_command", arguments={"command": "rm", "args": ["x"]},
                 status="denied", preview="denied", error="denied by the user", bytes=40,
                 in_context=False),
    ToolCallItem(id="c4", name="run_command", arguments={"command": "sleep", "args": ["9"]},
                 status="canceled", preview="the tool call did not finish",
                 error="the tool call did not finish (the run ended first)", in_context=False),
    CompactionItem(summarized=6, kept=0, message=words.summarized_away(6, 0), in_context=False),
    SummaryItem(text="The user read the notes: alpha and beta."),
    AssistantItem(text="Done."),
    UndoItem(restored=6, message=words.undo_item(6), in_context=False),
    NoticeItem(text=words.REPLACE_NOTICES["repair"], in_context=False),
]


def as_wire(updates: Any) -> list[dict[str, Any]]:
    return [u if isinstance(u, dict) else wire("s", u)["update"] for u in updates]


def test_load_replays_every_item_even_those_out_of_context() -> None:
    shown = as_wire(replay(ITEMS, ROOT, compaction_updates=False))
    assert [u["sessionUpdate"] for u in shown] == [
        "user_message_chunk", "agent_thought_chunk", "agent_message_chunk",
        "tool_call", "tool_call", "tool_call", "tool_call",
        "agent_message_chunk", "agent_message_chunk", "agent_message_chunk",
        "agent_message_chunk"]
    calls = [u for u in shown if u["sessionUpdate"] == "tool_call"]
    assert [(c["toolCallId"], c["status"]) for c in calls] == [
        ("c1", "completed"), ("c2", "failed"), ("c3", "failed"), ("c4", "failed")]
    texts = [c["content"][0]["content"]["text"] for c in calls]
    assert texts == ["alpha\nbeta", "the command failed (exit 1)", "denied by the user",
                     "the tool call did not finish (the run ended first)"]
    assert calls[0]["title"] == "read_file: notes.txt" and calls[0]["rawInput"] == READ
    assert calls[0]["rawOutput"] == {"bytes": 60}
    assert calls[2]["rawOutput"] == {"bytes": 40, "error": "denied by the user"}
    assert "rawOutput" not in calls[3]
    summary = shown[7]["content"]["text"]  # the compaction's line, the summary under it
    assert summary == (f"{words.summarized_away(6, 0)}\n\n{SUMMARY_HEADING}\n\n"
                       "The user read the notes: alpha and beta.")
    assert [u["content"]["text"] for u in shown[8:]] == [  # paragraphs of one message
        "\n\nDone.", f"\n\n{words.undo_item(6)}", f"\n\n{words.REPLACE_NOTICES['repair']}"]


def test_load_shows_a_summary_as_a_compaction_to_a_capable_client() -> None:
    shown = as_wire(replay(ITEMS, ROOT, compaction_updates=True))
    [compaction] = [u for u in shown if u["sessionUpdate"] == "compaction_update"]
    assert compaction["status"] == "completed"
    assert compaction["summary"] == [{"type": "text",
                                      "text": "The user read the notes: alpha and beta."}]
    texts = [u["content"]["text"] for u in shown if u["sessionUpdate"] == "agent_message_chunk"]
    assert not any("summarized" in t for t in texts)  # the compaction's line: the card says it
    assert texts[1] == "Done."  # after the compaction card: a new message


def test_a_pending_call_of_a_running_session_stays_pending() -> None:
    item = ToolCallItem(id="c9", name="read_file", arguments=READ)
    [update] = as_wire(replay([item], ROOT, compaction_updates=False))
    assert update["status"] == "pending" and "content" not in update


def test_available_commands_are_the_servers_but_new() -> None:
    listed = slash.available_commands().available_commands
    expected = [c for c in commands.COMMANDS  # new sessions: the client's own
                if c.request != "pseudoclaude/sessions/new"]
    assert [(c.name, c.description) for c in listed] == [
        (c.name, c.description) for c in expected]
    assert [c.input.root.hint if c.input else None for c in listed] == [
        c.hint for c in expected]


class Sent:
    """A transport that keeps what would be written."""

    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    def post(self, message: dict[str, Any]) -> None:
        self.messages.append(message)

    def texts(self) -> list[str]:
        return [m["params"]["update"]["content"]["text"] for m in self.messages
                if m["params"]["update"]["sessionUpdate"] == "agent_message_chunk"]


SID = "20250101-000000-abcd"


class StubWorkspace:
    """What the commands call of a workspace, with outcomes given."""

    session_id = SID

    def __init__(self) -> None:
        self.instructions: list[str] = []
        self.sessions: list[str | None] = []

    def check_session(self, session_id: str) -> str:
        return session_id

    async def compact(self, instructions: str = "", session_id: str | None = None
                      ) -> CompactOutcome:
        self.instructions.append(instructions)
        self.sessions.append(session_id)
        return CompactOutcome(before_tokens=48_210, after_tokens=9_877, offloaded=2,
                              summarized=True,
                              fact_check=FactCheck(checked=12, missing=3, added=3))

    async def undo_compact(self, session_id: str | None = None) -> UndoOutcome:
        return UndoOutcome(restored=False, before_tokens=100, after_tokens=100, message_count=0,
                           reason="no compaction left to undo")


async def run_command(text: str, *, capable: bool = False,
                      ws: StubWorkspace | None = None) -> Sent:
    sent = Sent()
    outbox = Outbox(sent)  # type: ignore[arg-type]
    outbox.compaction = capable
    parsed = commands.parse(text)
    assert parsed is not None
    await slash.run(ws or StubWorkspace(), Turn(SID), outbox, *parsed)  # type: ignore[arg-type]
    return sent


async def test_compact_answers_with_the_words_of_the_result() -> None:
    ws = StubWorkspace()
    sent = await run_command("/compact focus on the parser", ws=ws)
    assert ws.instructions == ["focus on the parser"]
    assert ws.sessions == [SID]  # the command's own session, whichever is current
    assert sent.texts() == [words.compacted(48_210, 9_877, 2, True,
                                            FactCheck(checked=12, missing=3, added=3))]
    sent = await run_command("/compact", capable=True)
    statuses = [m["params"]["update"].get("status") for m in sent.messages]
    assert statuses == ["in_progress", "completed", None]


async def test_undo_and_new_answer_in_words() -> None:
    assert (await run_command("/undo")).texts() == [
        words.undone(False, 100, 100, 0, "no compaction left to undo")]
    assert (await run_command("/new")).texts() == [slash.NEW_SESSION]
