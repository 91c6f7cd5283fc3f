"""What the tools see of an editor: the smallest edits, new problems."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from pseudoclaude.agent.editor import TextEdit, apply_edits, new_problems, text_edits
from pseudoclaude.llm.editor import Diagnostic, Position, Range

LINES = st.lists(st.sampled_from(["alpha\n", "beta\n", "gamma", "\r\n", "😀 x\n", "\n",
                                  "δ\r", "tab\there\n"]), max_size=12)


@given(LINES, LINES)
def test_the_edits_turn_before_into_after_without_overlapping(a: list[str], b: list[str]
                                                              ) -> None:
    before, after = "".join(a), "".join(b)
    edits = text_edits(before, after)
    assert apply_edits(before, edits) == after
    spans = sorted((e.start, e.end) for e in edits)
    assert all(end <= nxt for (_, end), (nxt, _) in itertools.pairwise(spans))
    assert (edits == []) == (before == after)


def test_one_changed_word_is_one_small_edit() -> None:
    before = "def f():\n    return beta\n\nprint(f())\n"
    assert text_edits(before, before.replace("beta", "BETA")) == [TextEdit(20, 24, "BETA")]
    assert text_edits("a\nb\n", "a\nb\nc\n") == [TextEdit(4, 4, "c\n")]
    assert text_edits("", "new\n") == [TextEdit(0, 0, "new\n")]


def _d(message: str, severity: str = "error", line: int = 0) -> Diagnostic:
    at = Position(line=line, character=0)
    return Diagnostic(path="a.py", range=Range(start=at, end=at), severity=severity,  # type: ignore[arg-type]
                      message=message, source="lint")


def test_new_problems_are_errors_and_warnings_not_there_before_wherever_they_moved() -> None:
    before = [_d("old", line=3), _d("kept warning", "warning", 5)]
    after = [_d("old", line=9), _d("kept warning", "warning", 1), _d("new error", line=2),
             _d("new hint", "hint"), _d("new warning", "warning", 1), _d("old", line=10)]
    # a second "old" is new; errors first, then by line
    assert [(d.message, d.range.start.line) for d in new_problems(before, after)] == [
        ("new error", 2), ("old", 10), ("new warning", 1)]
