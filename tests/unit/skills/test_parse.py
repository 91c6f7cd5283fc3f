"""Reading one skill file: Claude Code's and the Agent Skills' ``SKILL.md`` as written, the Go
original's frontmatter, and every problem named with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from pseudoclaude.skills.parse import parse_skill, parse_tools, tool_words

FOLDER = Path("/skills/pdf-tools")


def parse(text: str, default: str = "pdf-tools", folder: Path | None = FOLDER):
    return parse_skill(text, FOLDER / "SKILL.md", "claude", default_name=default,
                       folder=folder, shown="SKILL.md")


def test_claude_code_skill_loads_as_written() -> None:
    skill, problems = parse(
        "---\n"
        "name: explain-code\n"
        "description: Explains code with visual diagrams and analogies. Use when explaining\n"
        "  how code works.\n"
        "argument-hint: [file] [depth]\n"
        "allowed-tools: Read, Grep, Bash(git log:*)\n"
        "disable-model-invocation: false\n"
        "user-invocable: true\n"
        "model: sonnet\n"
        "context: fork\n"
        "metadata:\n  author: someone\n"
        "---\n"
        "When explaining code, start with an analogy.\n")
    assert problems == []
    assert skill is not None
    assert skill.name == "explain-code"
    assert skill.description == ("Explains code with visual diagrams and analogies. Use when "
                                 "explaining how code works.")
    assert skill.argument_hint == "[file] [depth]"  # not YAML: taken as written
    assert skill.allowed_tools == ("Read", "Grep", "Bash(git log:*)")
    assert skill.model_invocable and skill.user_invocable
    assert skill.body == "When explaining code, start with an analogy."
    assert skill.folder == FOLDER and skill.source == "claude"


def test_defaults_the_folder_name_and_the_first_paragraph() -> None:
    skill, problems = parse("# PDF tools\n\nFill PDF forms and\nmerge files.\n\nMore text.\n")
    assert problems == [] and skill is not None
    assert skill.name == "pdf-tools"
    assert skill.description == "Fill PDF forms and merge files."
    assert skill.body.startswith("# PDF tools")


def test_go_original_fields() -> None:
    skill, _ = parse("---\nname: deploy_app\ndescription: Deploy.\ntools: [read_file, "
                     "run_command]\nmode: isolated\nhistory: none\n---\nSteps.\n")
    assert skill is not None and skill.name == "deploy_app"
    assert skill.allowed_tools == ("read_file", "run_command")


def test_invocation_flags() -> None:
    skill, _ = parse("---\ndescription: d\ndisable-model-invocation: true\n"
                     "user-invocable: false\n---\nbody\n")
    assert skill is not None and not skill.model_invocable and not skill.user_invocable


@pytest.mark.parametrize(("text", "line", "words"), [
    ("---\nname: x\ndescription: [unclosed\n---\nbody\n", 3, "not valid YAML"),
    ("---\nname: Bad Name\ndescription: d\n---\nbody\n", 2, "not a valid skill name"),
    ("---\nname: ends-\ndescription: d\n---\nbody\n", 2, "not a valid skill name"),
    ("---\nname: ok\ndescription: d\nbody without end\n", 1, "no closing '---'"),
    ("---\nname: ok\ndescription: d\n---\n\n   \n", 5, "no instructions"),
    ("---\nname: ok\n\ndescription: 42\n---\nbody\n", 4, "description must be text"),
    ("---\nname: ok\ndescription: d\nuser-invocable: sometimes\n---\nbody\n", 4,
     "user-invocable must be true or false"),
    ("---\n- a list\n---\nbody\n", 2, "not a set of `key: value` lines"),
    ("---\nname: ok\ndescription: d\n---\n", 5, "no instructions"),
    ("---\nname: ok\nallowed-tools: {a: 1}\n---\nbody\n", 3, "allowed-tools must be a list"),
])
def test_problems_name_the_line_and_why(text: str, line: int, words: str) -> None:
    skill, problems = parse(text)
    assert skill is None
    [problem] = problems
    assert (problem.line, problem.path) == (line, "SKILL.md")
    assert words in problem.message, problem.message
    assert problem.text().startswith(f"SKILL.md:{line}: ")


def test_a_folder_name_that_is_no_skill_name_asks_for_one() -> None:
    skill, [problem] = parse("Some text.\n", default="My Skill")
    assert skill is None and "give the skill a `name:`" in problem.message


def test_no_description_anywhere_is_a_problem() -> None:
    skill, [problem] = parse("---\nname: ok\n---\n# Only a heading\n")
    assert skill is None and "no description" in problem.message


def test_a_long_description_is_cut() -> None:
    skill, _ = parse("---\ndescription: " + "word " * 400 + "\n---\nbody\n")
    assert skill is not None and len(skill.description) == 1024
    assert skill.description.endswith("…")


def test_windows_line_ends_and_a_byte_order_mark() -> None:
    skill, problems = parse("\ufeff---\r\nname: ok\r\ndescription: d\r\n---\r\nbody\r\n")
    assert problems == [] and skill is not None and skill.body == "body"


def test_tool_words() -> None:
    assert tool_words("Read Grep Bash(git add:*), Bash(npm run test:*)") == (
        "Read", "Grep", "Bash(git add:*)", "Bash(npm run test:*)")


def test_tools_json(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "lint.sh").write_text("#!/bin/sh\n")
    text = ('{"tools": [\n'
            ' {"name": "lint", "description": "Lint.", "command": ["scripts/lint.sh", "-q"],\n'
            '  "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}},\n'
            ' {"name": "escape", "description": "Out.", "command": ["../other.sh"]},\n'
            ' {"name": "missing", "description": "No file.", "command": ["nope.sh"]},\n'
            ' {"name": "read_file", "description": "Taken.", "command": ["scripts/lint.sh"]},\n'
            ' {"name": "bad name!", "description": "x", "command": ["scripts/lint.sh"]},\n'
            ' {"name": "noschema", "description": "x", "command": ["/bin/sh"]}\n'
            ']}\n')
    tools, problems = parse_tools(text, tmp_path, "lints", shown="tools.json", source="user",
                                  taken=frozenset({"read_file"}))
    assert [t.name for t in tools] == ["lint"]
    [lint] = tools
    assert lint.command == ("scripts/lint.sh", "-q") and lint.program == tmp_path / \
        "scripts" / "lint.sh"
    assert lint.input_schema["properties"]["path"]["type"] == "string"
    assert [(p.line, p.message.split(": ", 1)[1][:25]) for p in problems] == [
        (4, "command[0] '../other.sh' "), (5, "command[0] 'nope.sh' is n"),
        (6, "the name 'read_file' is t"), (7, "name must be letters, dig"),
        (8, "command[0] '/bin/sh' must")]


def test_tools_json_that_is_not_json(tmp_path: Path) -> None:
    tools, [problem] = parse_tools('{"tools": [\n  {"name": }\n]}', tmp_path, "x",
                                   shown="tools.json", source="user")
    assert tools == [] and problem.line == 2 and "not valid JSON" in problem.message
