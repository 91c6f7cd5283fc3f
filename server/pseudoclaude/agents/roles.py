"""Sub-agent types (SPEC §13 "Sub-agents"): the built-in ``explore``, ``plan`` and
``general-purpose`` roles, and Markdown roles found in ``.PseudoClaude/agents/*.md`` (the
workspace's), ``~/.PseudoClaude/agents/*.md`` (the user's) and ``.claude/agents/*.md``.

A Markdown role is the Go original's: YAML frontmatter (``name``, ``description`` required;
``tools``, ``disallowedTools``, ``model``, ``maxTurns``, ``background``, ``isolation``,
``permissionMode``) and a body that is the sub-agent's instructions. ``permissionMode`` may
only narrow the session's mode (``plan``, ``strict``); a wider one is a problem and is not
applied. ``tools`` (and ``disallowedTools``) is a comma-separated string or a YAML list of
tool names (``read_file``) or the permission rules' friendly names (``Read``, ``Bash``); an
unknown name is a problem (a warning: the role loads without it). A bad value falls back to
its default, with a problem. A role of the workspace wins over the user's by name, and both
over ``.claude/agents``'s and the built-in ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pseudoclaude.permissions.rules import FRIENDLY
from pseudoclaude.skills.parse import split_frontmatter

NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
READ_ONLY_TOOLS = ("read_file", "find_files", "search_code", "get_diagnostics", "load_skill")
"""What ``explore`` and ``plan`` may call (and a role limited to reading)."""
ALL_TOOLS = ("read_file", "write_file", "edit_file", "run_command", "find_files",
             "search_code", "get_diagnostics", "load_skill")
"""The built-in tools a sub-agent may be given (never ``agent``, ``update_tasks``,
``exit_plan_mode`` or ``install_skill``); MCP tools (``mcp__…``) too when named."""
PLAN_TYPES = ("explore", "plan")
"""The types offered in plan mode."""
MODEL_INHERIT = "inherit"
_WORD = re.compile(r"[^\s,()]+(?:\([^)]*\))?")
"""One entry of a ``tools`` line: ``Read``, ``Bash(git add:*)``."""
MAX_TURNS_LIMIT = 200


PERMISSION_MODES = ("inherit", "default", "strict", "plan", "acceptEdits", "bypassPermissions",
                    "dontAsk")
"""The Go original's ``permissionMode`` values."""
NARROWING = ("strict", "plan")
"""Those a role may set: a role file (a cloned repository's too) never allows more than the
session's mode."""


@dataclass(frozen=True)
class Problem:
    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


@dataclass(frozen=True)
class Role:
    """One sub-agent type."""

    name: str
    description: str
    prompt: str
    """Its instructions (what it is for), before the parent's instructions and skills."""
    tools: tuple[str, ...] | None = None
    """The tools it may call (``None``: every tool of :data:`ALL_TOOLS` and MCP's)."""
    disallowed: tuple[str, ...] = ()
    model: str = MODEL_INHERIT
    """``inherit`` (the session's), ``explore`` (``agents.exploreModel``, else
    ``compact.model``, else the session's) or a model name."""
    max_turns: int | None = None
    """Model turns before it stops with ``max_turns`` (``None``: ``maxIterations``)."""
    source: str = "builtin"
    """``builtin`` | ``workspace`` | ``user`` | ``claude``."""
    path: str = ""
    background: bool = False
    """``background: true``: it runs in the background unless the call says otherwise."""
    isolation: str = ""
    """``worktree``: it works in a git worktree of its own unless the call says otherwise."""
    mode: str = ""
    """``permissionMode`` when it narrows the session's: ``plan`` (read-only tools only) or
    ``strict`` (every call asks); ``""``: the session's mode."""

    def allows(self, tool: str) -> bool:
        """Whether the sub-agent may call ``tool``."""
        if tool in self.disallowed:
            return False
        if self.mode == "plan" and tool not in READ_ONLY_TOOLS:
            return False
        if self.tools is None:
            return tool in ALL_TOOLS or tool.startswith("mcp__")
        return tool in self.tools


EXPLORE_PROMPT = (
    "You are an explore sub-agent: a fast, read-only searcher. Find what the task asks for in "
    "the workspace with find_files, search_code and read_file; never change anything. Answer "
    "with what you found: the relevant files (paths, line numbers) and a short, precise "
    "summary; the agent that started you reads only your final answer.")
PLAN_PROMPT = (
    "You are a plan sub-agent: a software architect. Read what you need (read-only tools only; "
    "never change anything) and answer with an implementation plan: the files to change, the "
    "steps in order, how to check the result, and the risks. The agent that started you reads "
    "only your final answer.")
GENERAL_PROMPT = (
    "You are a general-purpose sub-agent: carry out the task you are given with the tools you "
    "have, then answer with what you did and found (the files you changed, the results). The "
    "agent that started you reads only your final answer, not your tool calls.")

BUILTIN: tuple[Role, ...] = (
    Role("explore", "Fast read-only search of the workspace: finds files, code and facts and "
         "reports them (it cannot change anything)", EXPLORE_PROMPT,
         tools=READ_ONLY_TOOLS, model="explore", max_turns=8),
    Role("plan", "Software architect: reads the code and returns an implementation plan "
         "(read-only)", PLAN_PROMPT, tools=READ_ONLY_TOOLS, max_turns=8),
    Role("general-purpose", "General agent for multi-step tasks: searches, reads, edits and runs "
         "commands, and reports what it did", GENERAL_PROMPT, max_turns=12),
)


@dataclass
class Roles:
    """The types a session may start, by name (built-in ones first), and the problems of the
    files read."""

    by_name: dict[str, Role] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def get(self, name: str) -> Role | None:
        return self.by_name.get(name)

    @property
    def names(self) -> list[str]:
        return list(self.by_name)

    def listing(self, plan: bool = False) -> str:
        """``- <name>: <description>`` lines (in plan mode, ``explore`` and ``plan`` only)."""
        return "\n".join(f"- {role.name}: {role.description}" for role in self.by_name.values()
                         if not plan or role.name in PLAN_TYPES)


def roots(workspace: Path, home: Path | None) -> list[tuple[Path, str]]:
    """The role folders, lowest precedence first: ``.claude/agents``, the user's, the
    workspace's."""
    found = [(workspace / ".claude" / "agents", "claude")]
    if home is not None:
        found.append((home / ".PseudoClaude" / "agents", "user"))
    found.append((workspace / ".PseudoClaude" / "agents", "workspace"))
    return found


def load_roles(workspace: Path, home: Path | None) -> Roles:
    """Every type: built-in ones, then each folder's (a later folder's role replaces an
    earlier one of the same name). Blocking (reads the folders)."""
    roles = Roles({role.name: role for role in BUILTIN})
    for folder, source in roots(workspace, home):
        try:
            files = sorted(p for p in folder.glob("*.md") if p.is_file())
        except OSError:
            continue
        for path in files:
            shown = _shown(path, workspace, home)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                roles.problems.append(Problem(shown, f"cannot be read: {exc}"))
                continue
            role, problems = parse_role(text, source=source, path=shown,
                                        default_name=path.stem)
            roles.problems.extend(problems)
            if role is not None:
                roles.by_name[role.name] = role
    return roles


def _shown(path: Path, workspace: Path, home: Path | None) -> str:
    for base, prefix in ((workspace, ""), (home, "~/")):
        if base is not None and path.is_relative_to(base):
            return prefix + path.relative_to(base).as_posix()
    return str(path)


def parse_role(text: str, *, source: str, path: str, default_name: str = ""
               ) -> tuple[Role | None, list[Problem]]:
    """The role of a Markdown file, or ``None`` with why not; the problems besides."""
    import yaml  # type: ignore[import-untyped]

    problems: list[Problem] = []

    def problem(message: str) -> None:
        problems.append(Problem(path, message))

    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    try:
        front, body, _ = split_frontmatter(text)
    except ValueError as exc:
        problem(str(exc))
        return None, problems
    if front is None:
        problem("no frontmatter (a role starts with ---, name: and description:)")
        return None, problems
    try:
        data: Any = yaml.safe_load("\n".join(front)) or {}
    except yaml.YAMLError as exc:
        problem(f"the frontmatter is not valid YAML: {str(exc).splitlines()[0]}")
        return None, problems
    if not isinstance(data, dict):
        problem("the frontmatter is not a mapping of keys")
        return None, problems
    name = data.get("name", default_name)
    if not isinstance(name, str) or not NAME.match(name):
        problem(f"name {name!r} is not valid (lower-case letters, digits, - and _)")
        return None, problems
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        problem("description is required")
        return None, problems
    tools = _tools(data.get("tools"), "tools", problem)
    disallowed = _tools(data.get("disallowedTools"), "disallowedTools", problem) or ()
    model = data.get("model", MODEL_INHERIT)
    if not isinstance(model, str) or not model.strip():
        problem(f"model {model!r} is not a model name: the session's model is used")
        model = MODEL_INHERIT
    max_turns = data.get("maxTurns")
    if max_turns is not None and (isinstance(max_turns, bool) or not isinstance(max_turns, int)
                                  or not 1 <= max_turns <= MAX_TURNS_LIMIT):
        problem(f"maxTurns {max_turns!r} is not a whole number from 1 to {MAX_TURNS_LIMIT}")
        max_turns = None
    background = data.get("background", False)
    if not isinstance(background, bool):
        problem(f"background {background!r} is not true or false: it runs in the foreground")
        background = False
    isolation = data.get("isolation") or ""
    if isolation not in ("", "worktree"):
        problem(f"isolation {isolation!r} is not worktree: it works in the folder")
        isolation = ""
    mode = data.get("permissionMode") or "inherit"
    if mode not in PERMISSION_MODES:
        problem(f"permissionMode {mode!r} is not one of {', '.join(PERMISSION_MODES)}: the "
                "session's mode applies")
        mode = "inherit"
    elif mode not in NARROWING:
        if mode not in ("inherit", "default"):
            problem(f"permissionMode {mode} is not applied: a role cannot allow more than the "
                    "session's mode (only plan and strict narrow it)")
        mode = "inherit"
    prompt = body.strip() or GENERAL_PROMPT
    return Role(name, " ".join(description.split()), prompt, tools, tuple(disallowed),
                model.strip(), max_turns, source, path, background, isolation,
                "" if mode == "inherit" else mode), problems


def _tools(value: Any, key: str, problem: Any) -> tuple[str, ...] | None:
    """The tool names of ``tools``/``disallowedTools`` (``None``: not given)."""
    if value is None:
        return None
    items: Iterable[Any]
    if isinstance(value, str):
        items = _WORD.findall(value)
    elif isinstance(value, list):
        items = value
    else:
        problem(f"{key} must be a comma-separated string or a list of tool names")
        return None
    names: list[str] = []
    for item in items:
        word = str(item).strip()
        tool = tool_name(word)
        if tool is None:
            problem(f"{key}: unknown tool {word!r} (known: {', '.join(ALL_TOOLS)}, the "
                    f"rules' names {', '.join(FRIENDLY)}, or mcp__…)")
            continue
        if tool not in names:
            names.append(tool)
    return tuple(names)


def tool_name(word: str) -> str | None:
    """The tool a role's ``tools`` entry names (``Read`` → ``read_file``), or ``None``."""
    word = word.split("(", 1)[0].strip()  # `Bash(git *)`: the tool, its pattern ignored
    if word in FRIENDLY:
        return FRIENDLY[word]
    if word in ALL_TOOLS or word.startswith("mcp__"):
        return word
    lowered = word.lower()
    return lowered if lowered in ALL_TOOLS else None
