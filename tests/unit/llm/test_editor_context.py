"""The "Editor context" block the model reads before a prompt, and how a prompt carries it."""

from __future__ import annotations

import msgspec

from pseudoclaude.llm.anthropic import to_anthropic_messages
from pseudoclaude.llm.editor import (
    MAX_CONTEXT_CHARS,
    Diagnostic,
    EditorContext,
    Position,
    Range,
    Selection,
    context_block,
)
from pseudoclaude.llm.openai import to_openai_messages
from pseudoclaude.llm.types import Message, copy_message
from pseudoclaude.session.codec import MessageEntry


def _range(a: int, b: int, c: int, d: int) -> Range:
    return Range(start=Position(line=a, character=b), end=Position(line=c, character=d))


def test_the_lines_of_a_range() -> None:
    assert _range(9, 0, 14, 0).lines == "10-14"
    assert _range(9, 0, 14, 2).lines == "10-15"
    assert _range(9, 3, 9, 8).lines == "10"
    assert _range(9, 0, 9, 0).lines == "10"


CONTEXT = EditorContext(
    active_file="src/app.py",
    selection=Selection(path="src/app.py", range=_range(9, 0, 11, 0), text="x = 1\ny = 2\n"),
    open_files=["src/app.py", "README.md"],
    diagnostics=[Diagnostic(path="src/app.py", range=_range(10, 0, 10, 1), severity="error",
                            message="y is\n  unused", source="lint")])


def test_the_block_names_the_file_the_selection_the_problems_and_the_open_files() -> None:
    assert context_block(CONTEXT) == (
        "Editor context (what the user has open; the request follows):\n"
        "- Active file: src/app.py\n"
        "- Selection in src/app.py, lines 10-11:\n```\nx = 1\ny = 2\n```\n"
        "- Problems the editor reports there:\n"
        "  src/app.py:11: error: y is unused (lint)\n"
        "- Open files: src/app.py, README.md")


def test_a_long_selection_is_cut_and_fences_in_it_do_not_close_the_block() -> None:
    text = "```\n" + "line\n" * 5000
    block = context_block(EditorContext(selection=Selection(
        path="a.md", range=_range(0, 0, 5001, 0), text=text)))
    assert "\n````\n" in block and block.count("````") == 2
    assert len(block) < MAX_CONTEXT_CHARS + 300
    assert "more line(s) of the selection left out]" in block
    files = [f"f{i}.py" for i in range(25)]
    assert context_block(EditorContext(open_files=files)).endswith("f19.py (and 5 more)")


def test_providers_send_the_block_before_the_prompt_and_the_log_keeps_it() -> None:
    prompt = Message(role="user", content="why?", context=CONTEXT)
    [turn] = to_anthropic_messages([prompt], cache=False)
    assert [b["text"] for b in turn["content"]] == [context_block(CONTEXT), "why?"]
    [_, user] = to_openai_messages("system", [prompt])
    assert user == {"role": "user", "content": context_block(CONTEXT) + "\n\nwhy?"}
    line = msgspec.json.encode(MessageEntry.from_message(prompt, 1.0))
    assert b'"context":{"activeFile":"src/app.py"' in line
    back = msgspec.json.decode(line, type=MessageEntry).to_message()
    assert back.context == CONTEXT and back.content == "why?"
    assert copy_message(prompt).context == CONTEXT
    plain = msgspec.json.encode(MessageEntry.from_message(Message(role="user", content="x"), 1))
    assert b"context" not in plain
