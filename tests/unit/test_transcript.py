"""The transcript: a session as the user lived it, from its log (every item, inContext)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pseudoclaude.compact.layer2 import assemble
from pseudoclaude.llm.types import Message, ToolCall, ToolResult, error_envelope
from pseudoclaude.session.codec import MessageEntry, OffloadEntry, ReplaceEntry, encode
from pseudoclaude.transcript import INTERRUPTED, build_transcript, to_wire


def ok(tool: str, content: str) -> str:
    return json.dumps({"ok": True, "tool": tool, "content": content})


def user(text: str) -> Message:
    return Message("user", text)


def answer(text: str, *calls: ToolCall) -> Message:
    return Message("assistant", text, list(calls))


def result(call: ToolCall, content: str, is_error: bool = False) -> Message:
    return Message("user", tool_result=ToolResult(call.id, call.name, content, is_error))


READ = ToolCall("c1", "read_file", {"path": "a.py"})
WRITE = ToolCall("c2", "write_file", {"path": "b.py", "content": "x"})
RUN = ToolCall("c3", "run_command", {"command": "make"})
GREP = ToolCall("c4", "search_code", {"pattern": "TODO"})

LIVED = [
    user("read a.py"),
    answer("Reading it.", READ),
    result(READ, ok("read_file", "line one\nline two")),
    answer("", WRITE),
    result(WRITE, error_envelope("write_file", "denied", "write_file was denied by the user"),
           True),
    answer("", RUN),
    result(RUN, error_envelope("run_command", "not_found", "no such command: make"), True),
    answer("Done."),
    user("now grep"),
    answer("", GREP),
    result(GREP, error_envelope("search_code", "canceled", "the run was canceled"), True),
]


def write_log(path: Path, *entries: Any) -> Path:
    with open(path, "wb") as f:
        for n, entry in enumerate(entries, 1):
            if isinstance(entry, Message):
                entry = MessageEntry.from_message(entry, ts=1000.0 + n)
            f.write(encode(entry))
    return path


def kinds(items: list[Any]) -> list[str]:
    return [i["kind"] for i in to_wire(items)]


def test_every_kind_of_tool_call_reads_as_the_user_saw_it(tmp_path: Path) -> None:
    items = to_wire(build_transcript(write_log(tmp_path / "log.jsonl", *LIVED)))
    assert kinds(build_transcript(tmp_path / "log.jsonl")) == [
        "user", "assistant", "toolCall", "toolCall", "toolCall", "assistant", "user",
        "toolCall"]
    read, write, run, grep = (i for i in items if i["kind"] == "toolCall")
    assert read == {"kind": "toolCall", "inContext": True, "ts": 1002.0, "id": "c1",
                    "name": "read_file", "arguments": {"path": "a.py"}, "status": "done",
                    "preview": "line one\nline two", "bytes": len(LIVED[2].tool_result.content)}
    assert (write["status"], write["error"]) == ("denied", "write_file was denied by the user")
    assert (run["status"], run["preview"]) == ("error", "no such command: make")
    assert grep["status"] == "canceled"
    assert all(i["inContext"] for i in items)
    assert "{" not in read["preview"]  # readable, not the JSON envelope


def test_a_call_without_a_result_is_pending_while_running_else_canceled(tmp_path: Path) -> None:
    log = write_log(tmp_path / "log.jsonl", user("go"), answer("", READ))
    [_, running] = to_wire(build_transcript(log, running=True))
    assert running["status"] == "pending" and running["preview"] == ""
    [_, ended] = to_wire(build_transcript(log))
    assert (ended["status"], ended["error"]) == ("canceled", INTERRUPTED)


def test_a_compaction_keeps_what_it_summarised_out_of_context(tmp_path: Path) -> None:
    recent = LIVED[8:]
    summarised = assemble("The user asked to read a.py; b.py was not written.", recent)
    log = write_log(tmp_path / "log.jsonl", *LIVED,
                    ReplaceEntry(reason="compact", messages=summarised, ts=2000.0),
                    user("thanks"))
    items = to_wire(build_transcript(log))
    assert kinds(build_transcript(log)) == [
        "user", "assistant", "toolCall", "toolCall", "toolCall", "assistant", "user",
        "toolCall", "compaction", "summary", "user"]
    inside = {n for n, i in enumerate(items) if i["inContext"]}
    assert inside == {6, 7, 9, 10}  # the recent window, the summary, the new prompt
    compaction, summary = items[8], items[9]
    assert (compaction["summarized"], compaction["kept"]) == (8, 3)
    assert "8 messages" in compaction["message"] and compaction["ts"] == 2000.0
    assert summary["text"] == "The user asked to read a.py; b.py was not written."
    assert not any(i["kind"] == "assistant" and i["text"].startswith("Understood")
                   for i in items)  # the acknowledgement is part of the summary


def test_an_undo_brings_the_same_items_back(tmp_path: Path) -> None:
    recent = LIVED[8:]
    log = write_log(tmp_path / "log.jsonl", *LIVED,
                    ReplaceEntry(reason="compact", messages=assemble("S", recent), ts=2000.0),
                    ReplaceEntry(reason="undo", messages=LIVED, ts=3000.0))
    items = to_wire(build_transcript(log))
    assert kinds(build_transcript(log))[-3:] == ["compaction", "summary", "undo"]
    assert len(items) == 11  # nothing lived twice
    assert [n for n, i in enumerate(items) if not i["inContext"]] == [8, 9, 10]
    assert items[10]["restored"] == 8 and "8 messages" in items[10]["message"]


def test_a_repeated_prompt_keeps_the_latest_in_context(tmp_path: Path) -> None:
    lived = [user("continue"), answer("one"), user("continue"), answer("two")]
    log = write_log(tmp_path / "log.jsonl", *lived,
                    ReplaceEntry(reason="compact", messages=assemble("S", lived[2:])))
    items = to_wire(build_transcript(log))
    assert [i["inContext"] for i in items[:4]] == [False, False, True, True]


def test_spilled_results_keep_what_the_user_saw_and_repairs_are_noticed(tmp_path: Path) -> None:
    log = write_log(tmp_path / "log.jsonl", user("go"), answer("", READ),
                    result(READ, ok("read_file", "the whole text")),
                    OffloadEntry("c1", "tool-results/c1.txt", 99, "[content offloaded]"),
                    answer("", WRITE),
                    ReplaceEntry(reason="repair", messages=[
                        user("go"), answer("", READ),
                        result(READ, "[content offloaded]")]))
    items = to_wire(build_transcript(log))
    assert items[1]["preview"] == "the whole text" and items[1]["inContext"]
    assert items[2]["name"] == "write_file" and not items[2]["inContext"]
    assert items[2]["status"] == "canceled"  # its run ended before it had a result
    assert items[-1]["kind"] == "notice" and "repaired" in items[-1]["text"]


def test_bad_lines_are_skipped(tmp_path: Path) -> None:
    log = write_log(tmp_path / "log.jsonl", user("hello"), answer("hi"))
    with open(log, "ab") as f:
        f.write(b'{"type": "message", "role": \n')
    assert kinds(build_transcript(log)) == ["user", "assistant"]
