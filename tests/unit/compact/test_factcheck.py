"""The summary fact check (SPEC §11): mechanical, no second model call."""

from __future__ import annotations

from pseudoclaude.compact.factcheck import HEADING, Facts, check, gather
from pseudoclaude.compact.layer2 import assemble
from pseudoclaude.llm.types import Message, ToolCall, ToolResult


def write(call_id: str, path: str, ok: bool = True, tool: str = "write_file") -> list[Message]:
    return [Message(role="assistant", tool_calls=[ToolCall(call_id, tool, {"path": path})]),
            Message(role="user", tool_result=ToolResult(call_id, tool, "{}", not ok))]


def test_gather_prompts_and_successful_writes_only() -> None:
    messages = [Message(role="user", content="Use  tabs,\nnot spaces."),
                *write("c1", "src/a.py"), *write("c2", "src/failed.py", ok=False),
                *write("c3", "src/b.py", tool="edit_file"),
                Message(role="user", tool_result=ToolResult("x", "read_file", "not a prompt")),
                Message(role="assistant", content="done"),
                Message(role="user", content="Now the tests.")]
    facts = gather(messages)
    assert facts.prompts == ["Use  tabs,\nnot spaces.", "Now the tests."]
    assert facts.paths == ["src/a.py", "src/b.py"]
    assert facts.last_prompt == "Now the tests."


def test_present_facts_count_as_present_whitespace_collapsed_and_stay_listed() -> None:
    """A fact the summary holds is not "added", but it is listed all the same, so that the
    next compaction still knows it is one (a later summary may drop it)."""
    facts = Facts(prompts=["Use  tabs,\nnot spaces.", "Now the tests."], paths=["src/a.py"])
    done = check("The user said: Use tabs, not spaces. Now the tests. Changed src/a.py.", facts)
    assert (done.counts.checked, done.counts.missing, done.counts.added) == (3, 0, 0)
    assert HEADING in done.summary
    later = check("A later summary that dropped everything.",
                  gather(assemble(done.summary, [])[:1]))
    assert later.counts.missing == 3 and later.counts.added == 3
    for fact in ("Use tabs, not spaces.", "Now the tests.", "src/a.py"):
        assert fact in later.summary


def test_missing_facts_are_carried_newest_first_within_the_budget() -> None:
    old = [f"prompt {i} " + "p" * 3_000 for i in range(10)]  # ~860 tokens each
    facts = Facts(prompts=[*old, "the last request"], paths=["a.py", "b.py"])
    done = check("A bare summary.", facts)
    assert done.counts.checked == 13 and done.counts.missing == 13
    text = done.summary
    assert text.startswith("A bare summary.") and HEADING in text
    assert "the last request" in text and "a.py" in text and "b.py" in text
    carried = [i for i in range(10) if f"prompt {i} " in text]
    assert carried == [6, 7, 8, 9]  # the newest ones that fit 4,000 tokens (860 each)
    assert done.counts.added == 1 + len(carried) + 2  # all listed items were missing
    assert text.index("the last request") < text.index("prompt 9 ") < text.index("prompt 8 ")


def test_the_last_prompt_is_carried_even_beyond_the_budget() -> None:
    huge = "do this: " + "q" * 40_000
    done = check("summary", Facts(prompts=[huge]))
    assert done.counts.added == 1 and " ".join(huge.split()) in done.summary


def test_carried_facts_count_again_at_the_next_compaction() -> None:
    first = check("bare", Facts(prompts=["CONSTRAINT: never touch vendor/"], paths=["x.py"]))
    summary_message = assemble(first.summary, [])[0]
    again = gather([summary_message, Message(role="user", content="next task")])
    assert again.prompts == ["CONSTRAINT: never touch vendor/", "next task"]
    assert again.paths == ["x.py"]
    second = check("still bare", again)
    assert "CONSTRAINT: never touch vendor/" in second.summary and "x.py" in second.summary


def test_presence_is_case_sensitive() -> None:
    """Paths are case-sensitive on most systems: ``src/app.py`` in the summary does not carry
    ``src/App.py``, and a prompt differing in case is not the prompt."""
    facts = Facts(prompts=["Rename App"], paths=["src/App.py"])
    done = check("The user asked to rename app; changed src/app.py.", facts)
    assert (done.counts.checked, done.counts.missing, done.counts.added) == (2, 2, 2)
    assert "- src/App.py" in done.summary and "- Rename App" in done.summary
