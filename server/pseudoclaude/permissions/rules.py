"""Permission rules: ``Tool`` or ``Tool(pattern)``, parsed once and matched many times. Pure.

Tools by their rule names (the friendly name or the tool's own name): ``Bash`` = ``run_command``,
``Read`` = ``read_file``, ``Write`` = ``write_file``, ``Edit`` = ``edit_file``, ``Glob`` =
``find_files``, ``Grep`` = ``search_code``; an MCP tool by its own name ``mcp__server__tool``,
which may be a glob (``mcp__gh__*``) or a server alone (``mcp__gh``: every tool of that
server). MCP rules take no pattern.

A pattern starts with ``!`` (the rule matches what the rest does not match), then ``=`` (the
text exactly), ``~`` (a regular expression, searched anywhere: not anchored), or is a glob,
anchored at both ends. ``Bash`` globs run over the whole command text: ``*`` is any characters
(``**`` the same), ``?`` one character. ``Bash(prefix:*)`` is a prefix of whole words: the
command is ``prefix`` or starts with ``prefix`` and a space. Path globs (the file tools) run over
the cleaned, workspace-relative, ``/``-separated path: ``*`` and ``?`` stop at ``/``, ``**/`` is
any folders (none too), ``**`` anything.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.permissions.words import join_words

RUN_COMMAND = "run_command"
READ_FILE = "read_file"
WRITE_FILE = "write_file"
EDIT_FILE = "edit_file"
FIND_FILES = "find_files"
SEARCH_CODE = "search_code"
MCP_PREFIX = "mcp__"

FRIENDLY: dict[str, str] = {
    "Bash": RUN_COMMAND, "Read": READ_FILE, "Write": WRITE_FILE, "Edit": EDIT_FILE,
    "Glob": FIND_FILES, "Grep": SEARCH_CODE,
}
"""Rule names of the built-in tools rules can name."""
RULE_NAME: dict[str, str] = {tool: name for name, tool in FRIENDLY.items()}
"""The friendly rule name of each tool rules can name."""
PATH_TOOLS = frozenset({READ_FILE, WRITE_FILE, EDIT_FILE, FIND_FILES, SEARCH_CODE})

PatternKind = Literal["any", "exact", "regex", "glob", "prefix"]


class PermissionsError(PseudoClaudeError):
    """A permission setting, mode or file that cannot be used; one line for the user."""


class RuleError(PermissionsError):
    """A rule that cannot be used; ``why`` says what is wrong with it."""

    def __init__(self, text: str, why: str) -> None:
        super().__init__(f'rule "{text}": {why}')
        self.text = text
        self.why = why


@dataclass(frozen=True, slots=True)
class Rule:
    """One parsed rule. ``tool`` is the tool's own name (``run_command``, ...) or, for an MCP
    rule, the name as written (``mcp__gh__*``)."""

    text: str
    tool: str
    kind: PatternKind = "any"
    pattern: str = ""
    negate: bool = False
    _regex: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    @property
    def is_mcp(self) -> bool:
        return self.tool.startswith(MCP_PREFIX)

    def names(self, tool: str) -> bool:
        """Whether the rule is about ``tool`` (a call's tool name)."""
        if not self.is_mcp:
            return tool == self.tool
        if not tool.startswith(MCP_PREFIX):
            return False
        if self._regex is not None:  # a glob over the name
            return self._regex.fullmatch(tool) is not None
        return tool == self.tool or tool.startswith(self.tool + "__")

    def matches(self, subject: str) -> bool:
        """Whether the pattern matches ``subject`` (a command text or a relative path); a rule
        without a pattern matches everything."""
        if self.kind == "any":
            return True
        if self.kind == "exact":
            hit = subject == self.pattern
        elif self.kind == "prefix":
            hit = subject == self.pattern or subject.startswith(self.pattern + " ")
        elif self.kind == "regex":
            assert self._regex is not None
            hit = self._regex.search(subject) is not None
        else:
            assert self._regex is not None
            hit = self._regex.fullmatch(subject) is not None
        return hit != self.negate


def _command_glob(pattern: str) -> str:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "*":
            while i < len(pattern) and pattern[i] == "*":
                i += 1
            out.append(".*")
            continue
        out.append("." if ch == "?" else re.escape(ch))
        i += 1
    return "".join(out)


def path_glob(pattern: str) -> str:
    """The regular expression of a path glob (to be matched whole)."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def _name_glob(pattern: str) -> str:
    return "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)


def _normal_prefix(prefix: str) -> str:
    """A prefix as the command texts are written (quotes only where needed)."""
    try:
        words = shlex.split(prefix)
    except ValueError:
        return prefix
    return join_words(words) if words else prefix


def _clean_path_pattern(text: str, pattern: str) -> str:
    if pattern.startswith("/"):
        raise RuleError(text, "a path in a rule is relative to the workspace: write it "
                              "without the leading /")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if pattern in ("", "."):
        return "."
    cleaned = posixpath.normpath(pattern)
    if cleaned == ".." or cleaned.startswith("../"):
        raise RuleError(text, "a path in a rule cannot leave the workspace")
    return cleaned


def tool_of(name: str) -> str | None:
    """The tool a rule's tool name stands for (``Bash`` → ``run_command``), ``None`` when it
    stands for none rules can name."""
    if name in FRIENDLY:
        return FRIENDLY[name]
    if name in RULE_NAME:
        return name
    if name.startswith(MCP_PREFIX) and len(name) > len(MCP_PREFIX):
        return name
    return None


def parse_rule(text: str) -> Rule:
    """Parse one rule; raises :class:`RuleError` with the reason when it cannot be used."""
    if not isinstance(text, str):
        raise RuleError(str(text), "a rule is a string")
    source = text.strip()
    if not source:
        raise RuleError(text, "empty rule")
    if "(" in source:
        name, _, rest = source.partition("(")
        name = name.strip()
        if not rest.endswith(")"):
            raise RuleError(text, "missing closing parenthesis")
        pattern: str | None = rest[:-1]
    elif ")" in source:
        raise RuleError(text, "closing parenthesis without an opening one")
    else:
        name, pattern = source, None
    if not name:
        raise RuleError(text, "missing tool name")
    tool = tool_of(name)
    if tool is None:
        hint = next((f" (did you mean {known}?)" for known in (*FRIENDLY, *RULE_NAME)
                     if known.lower() == name.lower()), "")
        raise RuleError(text, f'unknown tool "{name}"{hint}')
    if tool.startswith(MCP_PREFIX):
        if pattern is not None:
            raise RuleError(text, "an MCP tool's rule takes no pattern: write its name alone "
                                  "(a glob such as mcp__server__* may name several)")
        if "*" in tool or "?" in tool:
            return Rule(source, tool, _regex=re.compile(_name_glob(tool), re.DOTALL))
        return Rule(source, tool)
    if pattern is None:
        return Rule(source, tool)
    if pattern == "":
        raise RuleError(text, f"empty pattern (write {name} alone to match every call)")
    negate = pattern.startswith("!")
    if negate:
        pattern = pattern[1:]
    if pattern.startswith("="):
        body = pattern[1:]
        if tool in PATH_TOOLS and tool != FIND_FILES:
            body = _clean_path_pattern(text, body)
        return Rule(source, tool, "exact", body, negate)
    if pattern.startswith("~"):
        try:
            regex = re.compile(pattern[1:], re.DOTALL)
        except re.error as exc:
            raise RuleError(text, f"invalid regular expression: {exc}") from None
        return Rule(source, tool, "regex", pattern[1:], negate, regex)
    if not pattern:
        raise RuleError(text, "empty pattern after !")
    if tool == RUN_COMMAND:
        if pattern.endswith(":*"):
            prefix = _normal_prefix(pattern[:-2].strip())
            if not prefix:
                raise RuleError(text, "empty prefix before :*")
            return Rule(source, tool, "prefix", prefix, negate)
        return Rule(source, tool, "glob", pattern, negate,
                    re.compile(_command_glob(pattern), re.DOTALL))
    if tool == FIND_FILES:  # rules see the whole glob pattern of find_files
        while pattern.startswith("./"):
            pattern = pattern[2:]
    else:
        pattern = _clean_path_pattern(text, pattern)
    return Rule(source, tool, "glob", pattern, negate,
                re.compile(path_glob(pattern), re.DOTALL))


def parse_rules(texts: Sequence[object]) -> tuple[list[Rule], list[RuleError]]:
    """Every rule that parses, and the errors of the others."""
    rules: list[Rule] = []
    errors: list[RuleError] = []
    for text in texts:
        if not isinstance(text, str):
            errors.append(RuleError(str(text), "a rule is a string"))
            continue
        try:
            rules.append(parse_rule(text))
        except RuleError as exc:
            errors.append(exc)
    return rules, errors
