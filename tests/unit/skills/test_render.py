"""What the model reads: the Go original's "Available Skills" text, a skill's block with its
placeholders filled in, and the prompt of a ``/<skill> [arguments]`` command (recognised again
in a log)."""

from __future__ import annotations

from pathlib import Path

from pseudoclaude.skills import Skill, block, command, invocation, invoked, listing
from pseudoclaude.skills.render import fill


def skill(body: str, **kw: object) -> Skill:
    return Skill(name=str(kw.pop("name", "review")), description="Review code.",
                 source="workspace", path=Path("/w/.PseudoClaude/skills/review/SKILL.md"),
                 body=body, folder=Path("/w/.PseudoClaude/skills/review"), **kw)  # type: ignore


def test_listing_is_the_go_original_module() -> None:
    assert listing([skill("x"), skill("y", name="commit")]) == (
        "Available Skills\n"
        "Only names and short descriptions are listed here. When you need a skill's full SOP, "
        "call the load_skill system tool by name.\n"
        "- review: Review code.\n- commit: Review code.")
    assert listing([]) == ""


def test_placeholders() -> None:
    body = ("all=$ARGUMENTS go={{arguments}} first=$ARGUMENTS[0] second=$1 third=$2 "
            "dir=${CLAUDE_SKILL_DIR} sid=${CLAUDE_SESSION_ID} money=$$5 keep=x$1y")
    assert fill(skill(body), 'src "a b"', session_id="S1") == (
        'all=src "a b" go=src "a b" first=src second=a b third= '
        "dir=/w/.PseudoClaude/skills/review sid=S1 money=$$5 keep=x$1y")
    assert fill(skill("Review $ARGUMENTS."), "") == "Review ."  # load_skill: empty


def test_arguments_without_a_placeholder_are_added() -> None:
    assert fill(skill("Review the code."), "src/") == "Review the code.\n\nARGUMENTS: src/"
    assert fill(skill("Review the code."), "") == "Review the code."


def test_block_says_the_folder_and_the_tools() -> None:
    text = block(skill("Body.", allowed_tools=("read_file", "Bash(git diff:*)")),
                 folder_label=".PseudoClaude/skills/review")
    assert text == ('<skill name="review">\n'
                    "Skill folder (its other files are there): .PseudoClaude/skills/review\n"
                    "Allowed tools for this skill: read_file, Bash(git diff:*)\n\n"
                    "Body.\n</skill>")


def test_invocation_round_trip() -> None:
    typed = "/review src\nand the tests"
    found = command(typed)
    assert found == ("review", "src\nand the tests")
    text = invocation(skill("Look at $ARGUMENTS."), typed, found[1])
    assert text == ('/review src\nand the tests\n\n<skill name="review">\n'
                    "Look at src\nand the tests.\n</skill>")
    assert invoked(text) == "review"
    assert invoked("/review src") is None
    assert invoked('/other x\n\n<skill name="review">\nx\n</skill>') is None
    assert invoked("plain text </skill>") is None


def test_command() -> None:
    assert command("/review") == ("review", "")
    assert command("  /test   tests/unit  ") == ("test", "tests/unit")
    assert command("/Review x") is None and command("review") is None
    assert command("/not-ok- x") is None and command("/a/b") is None
