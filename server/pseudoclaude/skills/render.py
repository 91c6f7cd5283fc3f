"""What the model reads of skills: the list in the system prompt, a skill's instructions
(``load_skill``'s result), and the prompt a ``/<skill> [arguments]`` command sends. Pure.

The instructions are the skill's body with its placeholders filled in: ``$ARGUMENTS`` (and the
Go original's ``{{arguments}}``) the whole argument text, ``$ARGUMENTS[N]`` and ``$N`` the Nth
argument (from 0, split as a shell would), ``${CLAUDE_SKILL_DIR}`` the skill's folder and
``${CLAUDE_SESSION_ID}`` the session's id. Arguments given to a skill that has no placeholder
for them are added at the end as ``ARGUMENTS: <text>``. ``load_skill`` gives no arguments.

A ``/review src`` prompt is sent (and logged) as the line the user typed, a blank line, and the
skill's block::

    /review src

    <skill name="review">
    ...the instructions, with "src" as the arguments...
    </skill>
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from pseudoclaude.skills.model import Skill, valid_name

LISTING_TITLE = "Available Skills"
LISTING_INTRO = ("Only names and short descriptions are listed here. When you need a skill's "
                 "full SOP, call the load_skill system tool by name.")
ALLOWED_TOOLS = "Allowed tools for this skill: "
OPEN = '<skill name="{name}">'
CLOSE = "</skill>"
LOAD_SKILL = "load_skill"
"""The tool that loads a skill (its results count under the breakdown's ``skills``)."""
_PLACEHOLDER = re.compile(
    r"\$ARGUMENTS\[(?P<index>\d+)\]|\$ARGUMENTS|\{\{\s*arguments\s*\}\}"
    r"|(?<![\w$\\])\$(?P<short>\d+)(?!\w)|\$\{CLAUDE_SKILL_DIR\}|\$\{CLAUDE_SESSION_ID\}")
_INVOKED = re.compile(r'\A/(?P<name>[a-z0-9_][a-z0-9_-]*)[^\n]*(?:\n[^\n]*)*?\n\n'
                      r'<skill name="(?P=name)">\n', re.DOTALL)
_COMMAND = re.compile(r"\A/(?P<name>[a-z0-9_][a-z0-9_-]*)(?:[ \t\n]+(?P<arguments>.*))?\Z",
                      re.DOTALL)


def listing(skills: Sequence[Skill]) -> str:
    """The "Available Skills" part of the system prompt (``""`` without skills)."""
    if not skills:
        return ""
    lines = [f"- {skill.name}: {skill.description}" for skill in skills]
    return "\n".join([LISTING_TITLE, LISTING_INTRO, *lines])


def _split(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:  # an unclosed quote: plain words
        return arguments.split()


def fill(skill: Skill, arguments: str = "", *, session_id: str = "") -> str:
    """The skill's body with its placeholders filled in (see the module docstring)."""
    words: list[str] | None = None
    used = False
    folder = skill.folder if skill.folder is not None else skill.path.parent

    def replace(match: re.Match[str]) -> str:
        nonlocal words, used
        text = match.group(0)
        if text == "${CLAUDE_SKILL_DIR}":
            return str(folder)
        if text == "${CLAUDE_SESSION_ID}":
            return session_id
        used = True
        index = match.group("index") or match.group("short")
        if index is None:
            return arguments
        if words is None:
            words = _split(arguments)
        position = int(index)
        return words[position] if position < len(words) else ""

    body = _PLACEHOLDER.sub(replace, skill.body)
    if arguments.strip() and not used:
        body += f"\n\nARGUMENTS: {arguments.strip()}"
    return body


def block(skill: Skill, arguments: str = "", *, session_id: str = "",
          folder_label: str | None = None) -> str:
    """The skill as the model reads it: ``<skill name="...">``, its folder (when it has one:
    ``folder_label``), the tools it means to use, its filled-in instructions, ``</skill>``."""
    head: list[str] = []
    if folder_label:
        head.append(f"Skill folder (its other files are there): {folder_label}")
    if skill.allowed_tools:
        head.append(ALLOWED_TOOLS + ", ".join(skill.allowed_tools))
    body = fill(skill, arguments, session_id=session_id)
    return "\n".join([OPEN.format(name=skill.name), *head, *([""] if head else []), body,
                      CLOSE])


def invocation(skill: Skill, typed: str, arguments: str, *, session_id: str = "",
               folder_label: str | None = None) -> str:
    """The user turn a ``/<skill> [arguments]`` prompt sends: what was typed, then the
    skill's block with the arguments."""
    return f"{typed.strip()}\n\n" + block(skill, arguments, session_id=session_id,
                                          folder_label=folder_label)


def command(prompt: str) -> tuple[str, str] | None:
    """``(name, arguments)`` of a prompt that is ``/<name> [arguments]`` (a name a skill may
    have), else ``None``."""
    match = _COMMAND.match(prompt.strip())
    if match is None or not valid_name(match.group("name")):
        return None
    return match.group("name"), (match.group("arguments") or "").strip()


def invoked(content: str) -> str | None:
    """The skill a user turn invoked (one :func:`invocation` made), else ``None``."""
    if not content.startswith("/") or not content.endswith(CLOSE):
        return None
    match = _INVOKED.match(content)
    return match.group("name") if match else None


def folder_label(skill: Skill, workspace: Path) -> str | None:
    """How the model is told where a folder skill's files are: relative to the workspace when
    they are in it, else the absolute path (``None``: a single-file skill)."""
    if skill.folder is None:
        return None
    try:
        return skill.folder.relative_to(workspace).as_posix()
    except ValueError:
        return str(skill.folder)
