"""Reading one skill: its Markdown file (frontmatter and instructions) and its ``tools.json``.

A skill file is Markdown with an optional YAML frontmatter between ``---`` lines, as Claude
Code and the Agent Skills format write it::

    ---
    name: review                     # default: the folder's name (or the file's, name.md)
    description: Review a change...  # default: the first paragraph of the instructions
    argument-hint: [path]            # shown after /review in the chats' completion
    allowed-tools: Read, Grep        # (or `tools`) named to the model; grants nothing
    disable-model-invocation: false  # true: only the user runs it (/review)
    user-invocable: true             # false: no /review command
    ---
    The instructions...

Other keys (``license``, ``metadata``, ``model``, ``context``, ``mode``...) are accepted and
ignored. ``tools.json`` (a folder skill's)::

    {"tools": [{"name": "lint", "description": "...", "input_schema": {"type": "object"},
                "command": ["scripts/lint.sh", "--fast"]}]}

``command[0]`` is a file of the skill's folder. What cannot be read is a :class:`Problem`
naming the file, the line and why. Pure (the caller reads the files).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pseudoclaude.skills.model import (
    MAX_DESCRIPTION,
    NAME_RULE,
    TOOL_NAME,
    Problem,
    Skill,
    SkillTool,
    Source,
    valid_name,
)

FENCE = "---"
_HINT = re.compile(r"^argument-hint\s*:(?P<value>.*)$")
_TOOL_WORD = re.compile(r"[^\s,()]+(?:\([^)]*\))?")
"""One entry of an ``allowed-tools`` line: ``Read``, ``Bash(git add:*)``."""


class _Problems:
    """The problems of one file."""

    def __init__(self, shown: str, source: Source) -> None:
        self.shown = shown
        self.source = source
        self.found: list[Problem] = []
        self.name = ""

    def add(self, line: int | None, message: str) -> None:
        self.found.append(Problem(self.shown, line, message, self.source, self.name))


def split_frontmatter(text: str) -> tuple[list[str] | None, str, int]:
    """``(frontmatter lines, body, line of the body's first line)``; ``None`` lines when the
    file has no frontmatter; :class:`ValueError` when it opens one and never closes it."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != FENCE:
        return None, text, 1
    for index in range(1, len(lines)):
        if lines[index].rstrip() in (FENCE, "..."):
            return lines[1:index], "\n".join(lines[index + 1:]), index + 2
    raise ValueError("the frontmatter opened on line 1 has no closing '---' line")


def _unquote(value: str) -> str:
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def _key_line(front: list[str], key: str) -> int:
    """The file line of ``key:`` in the frontmatter (1: the file's first line when absent)."""
    pattern = re.compile(rf"^{re.escape(key)}\s*:")
    for index, line in enumerate(front):
        if pattern.match(line):
            return index + 2
    return 1


def first_paragraph(body: str) -> str:
    """The first paragraph of Markdown text that is not a heading, on one line."""
    words: list[str] = []
    for line in body.splitlines():
        stripped = line.strip()
        if not stripped:
            if words:
                break
            continue
        if stripped.startswith("#") and not words:
            continue
        words.append(stripped)
    return " ".join(" ".join(words).split())


def tool_words(value: str) -> tuple[str, ...]:
    """``Read, Grep Bash(git add:*)`` → ``("Read", "Grep", "Bash(git add:*)")``."""
    return tuple(_TOOL_WORD.findall(value))


def parse_skill(text: str, path: Path, source: Source, *, default_name: str,
                folder: Path | None, shown: str) -> tuple[Skill | None, list[Problem]]:
    """The skill of ``text`` (the file at ``path``, ``shown`` so in problems), or ``None``
    with the problems that keep it from loading."""
    import yaml  # type: ignore[import-untyped]

    problems = _Problems(shown, source)
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    try:
        front, body, body_line = split_frontmatter(text)
    except ValueError as exc:
        problems.add(1, str(exc))
        return None, problems.found
    hint = ""
    data: Any = {}
    if front is not None:
        masked = list(front)
        for index, line in enumerate(front):
            match = _HINT.match(line)
            if match:  # `argument-hint: [path] [mode]` is no YAML: taken as written
                hint = _unquote(match.group("value"))
                masked[index] = ""
        try:
            data = yaml.safe_load("\n".join(masked))
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = mark.line + 2 if mark is not None else 1
            why = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            problems.add(where, f"the frontmatter is not valid YAML: {why}")
            return None, problems.found
        if data is None:
            data = {}
        if not isinstance(data, dict):
            problems.add(2, "the frontmatter is not a set of `key: value` lines")
            return None, problems.found
    lines = front or []

    name = data.get("name")
    if name is None:
        name = default_name
        if not valid_name(name):
            problems.add(1, f"{name!r} (the {'folder' if folder else 'file'}'s name) is not a "
                            f"valid skill name ({NAME_RULE}): give the skill a `name:`")
            return None, problems.found
    elif not isinstance(name, str) or not valid_name(name):
        problems.add(_key_line(lines, "name"),
                     f"name {name!r} is not a valid skill name ({NAME_RULE})")
        return None, problems.found
    problems.name = name

    described = data.get("description")
    if described is not None and not isinstance(described, str):
        problems.add(_key_line(lines, "description"), "description must be text")
        return None, problems.found
    description = " ".join((described or "").split()) or first_paragraph(body)
    if not description:
        problems.add(_key_line(lines, "description"),
                     "the skill has no description: add `description:` to its frontmatter")
        return None, problems.found
    if len(description) > MAX_DESCRIPTION:
        description = description[:MAX_DESCRIPTION - 1].rstrip() + "…"

    key = "allowed-tools" if "allowed-tools" in data else "tools"
    allowed_value = data.get(key)
    allowed: tuple[str, ...] = ()
    if isinstance(allowed_value, str):
        allowed = tool_words(allowed_value)
    elif isinstance(allowed_value, list) and all(isinstance(t, str) for t in allowed_value):
        allowed = tuple(t.strip() for t in allowed_value if t.strip())
    elif allowed_value is not None:
        problems.add(_key_line(lines, key), f"{key} must be a list of tool names")
        return None, problems.found

    flags: dict[str, bool] = {}
    for flag, default in (("disable-model-invocation", False), ("user-invocable", True)):
        value = data.get(flag, default)
        if not isinstance(value, bool):
            problems.add(_key_line(lines, flag), f"{flag} must be true or false, not {value!r}")
            return None, problems.found
        flags[flag] = value

    body = body.strip("\n")
    if not body.strip():
        problems.add(body_line, "the skill has no instructions after its frontmatter")
        return None, problems.found
    return Skill(name=name, description=description, source=source, path=path, body=body,
                 folder=folder, allowed_tools=allowed, argument_hint=hint,
                 model_invocable=not flags["disable-model-invocation"],
                 user_invocable=flags["user-invocable"]), problems.found


def _entry_line(text: str, name: object) -> int | None:
    if not isinstance(name, str):
        return None
    match = re.search(rf'"name"\s*:\s*"{re.escape(name)}"', text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def parse_tools(text: str, folder: Path, skill: str, *, shown: str, source: Source,
                taken: frozenset[str] = frozenset()) -> tuple[list[SkillTool], list[Problem]]:
    """The tools of a skill's ``tools.json`` (``text``, ``shown`` so in problems); an entry
    that cannot be used is a problem and is left out. ``taken``: names no tool may have (the
    built-in tools'). Reads nothing but checks ``command[0]`` is a file of ``folder``
    (blocking: a ``stat``)."""
    problems = _Problems(shown, source)
    problems.name = skill
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        problems.add(exc.lineno, f"not valid JSON: {exc.msg}")
        return [], problems.found
    entries = data.get("tools") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        problems.add(1, 'tools.json must be {"tools": [...]}')
        return [], problems.found
    tools: list[SkillTool] = []
    seen: set[str] = set()
    root = folder.resolve()
    for index, entry in enumerate(entries):
        name = entry.get("name") if isinstance(entry, dict) else None
        line = _entry_line(text, name)
        where = f"tools[{index}]" + (f" ({name})" if isinstance(name, str) else "")
        if not isinstance(entry, dict):
            problems.add(line, f"{where} must be an object")
            continue
        if not isinstance(name, str) or not TOOL_NAME.match(name):
            problems.add(line, f"{where}: name must be letters, digits, '_' or '-' (1 to 64)")
            continue
        if name in seen or name in taken:
            whose = "another tool of this skill" if name in seen else "a built-in tool"
            problems.add(line, f"{where}: the name {name!r} is taken by {whose}")
            continue
        description = entry.get("description")
        if not isinstance(description, str) or not description.strip():
            problems.add(line, f"{where}: description must be non-empty text")
            continue
        schema = entry.get("input_schema", {"type": "object", "properties": {}})
        if not isinstance(schema, dict) or schema.get("type", "object") != "object":
            problems.add(line, f"{where}: input_schema must be a JSON Schema object "
                               '({"type": "object", ...})')
            continue
        command = entry.get("command")
        if not isinstance(command, list) or not command or not all(
                isinstance(part, str) and part and "\x00" not in part for part in command):
            problems.add(line, f"{where}: command must be a list of strings (a program of the "
                               "skill's folder, then its arguments)")
            continue
        program = Path(command[0])
        target = (folder / program).resolve()
        if program.is_absolute() or not target.is_relative_to(root) or target == root:
            problems.add(line, f"{where}: command[0] {command[0]!r} must be a file of the "
                               "skill's folder")
            continue
        if not target.is_file():
            problems.add(line, f"{where}: command[0] {command[0]!r} is not a file of the "
                               "skill's folder")
            continue
        seen.add(name)
        tools.append(SkillTool(name=name, description=" ".join(description.split()),
                               input_schema={"type": "object", **schema},
                               command=tuple(command), folder=folder, skill=skill))
    return tools, problems.found
