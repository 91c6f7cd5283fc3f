"""The decision: may this tool call run, must the user be asked, or is it refused.

Order (the first that applies decides): ``load_skill`` runs; in ``plan`` mode a tool that is not
read-only is refused (source ``mode``); a path outside the workspace is refused (``sandbox``); a
command on the dangerous-command list is refused (``blacklist``); a deny rule of any source
refuses; a part of a command that cannot be understood asks (in every mode); an ask rule asks
(not in ``bypassPermissions``); an allow rule (or a hook that allowed the call: ``Call.allowed_by``,
source ``hook``) allows; else the mode decides. A command line is
judged part by part (:mod:`pseudoclaude.permissions.shell`): one refused part refuses the call,
one part that asks asks, and it runs unasked only when every part may.

What the mode decides when no rule does (reading tools / writes and edits / commands / MCP tools /
bookkeeping and ``agent``):

* ``strict``: ask / ask / ask / ask / ask;
* ``default``: allow / ``approvals.write`` / ``approvals.runCommand`` / ``approvals.mcp`` / allow;
* ``acceptEdits``: allow / allow / ``approvals.runCommand`` / ``approvals.mcp`` / allow;
* ``plan``: allow / refused / refused / ``approvals.mcp`` for read-only tools, else refused / the
  read-only ones allow, the others are refused;
* ``bypassPermissions``: allow everywhere.

A tool the engine does not know asks (``bypassPermissions``: runs; ``plan``: refused), as
``install_skill`` does every time (no rule or hook lets it run unasked).
Pure but for ``realpath`` calls of the paths checked; not thread-safe for changes (mode,
session rules), safe for concurrent :meth:`PermissionEngine.check` calls.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from pseudoclaude.permissions import danger
from pseudoclaude.permissions.paths import clean_pattern, resolve, static_prefix
from pseudoclaude.permissions.rules import (
    EDIT_FILE,
    FIND_FILES,
    MCP_PREFIX,
    PATH_TOOLS,
    READ_FILE,
    RULE_NAME,
    RUN_COMMAND,
    SEARCH_CODE,
    WRITE_FILE,
    PermissionsError,
    Rule,
    parse_rule,
)
from pseudoclaude.permissions.shell import Parsed, Part, parse_argv, parse_line, snippet
from pseudoclaude.permissions.words import join_words

Mode = Literal["strict", "default", "acceptEdits", "plan", "bypassPermissions"]
MODES: tuple[Mode, ...] = get_args(Mode)
MODE_RANK: dict[str, int] = {"strict": 0, "plan": 0, "default": 1, "acceptEdits": 2,
                             "bypassPermissions": 3}
"""How much a mode lets run unasked; ``plan`` counts as not above ``default``."""
Decision = Literal["allow", "ask", "deny"]
DECISIONS: tuple[Decision, ...] = get_args(Decision)
RuleSource = Literal["user", "project", "local", "settings", "session"]
Source = Literal["user", "project", "local", "settings", "session", "mode", "blacklist",
                 "sandbox", "hook"]
RULE_SOURCES: tuple[RuleSource, ...] = ("session", "local", "project", "user", "settings")
"""The order rule sources are searched for the rule a verdict names."""

LOAD_SKILL = "load_skill"
INSTALL_SKILL = "install_skill"
"""Installs into the user's skills folder, for every project: asked each time (but in
``bypassPermissions``); no rule names it."""
GET_DIAGNOSTICS = "get_diagnostics"
AGENT = "agent"
BOOKKEEPING = frozenset({"update_tasks", "exit_plan_mode"})
"""Tools that only keep the session's own notes (and ``task_*``)."""
PLAN_READ_ONLY = frozenset({READ_FILE, FIND_FILES, SEARCH_CODE, GET_DIAGNOSTICS, LOAD_SKILL,
                            "update_tasks", "task_list", "task_get", "exit_plan_mode"})
PLAN_AGENTS = frozenset({"explore", "plan"})
PLAN_REASON = "plan mode: only reading tools run until the plan is approved"
BYPASS_NEEDS = ("bypassPermissions mode needs permissions.allowBypass: true in the user "
                "settings")

_Kind = Literal["read", "write", "command", "mcp", "bookkeeping", "unknown"]
_NOUNS: dict[_Kind, str] = {"read": "reading tools", "write": "edits", "command": "commands",
                            "mcp": "MCP tools", "bookkeeping": "this tool",
                            "unknown": "tools it does not know"}
_SETTINGS: dict[_Kind, str] = {"write": "approvals.write", "command": "approvals.runCommand",
                               "mcp": "approvals.mcp"}
_EXACT_ONLY = frozenset({
    "rm", "rmdir", "mv", "dd", "shred", "truncate", "chmod", "chown", "chgrp", "kill",
    "pkill", "killall", "sudo", "doas", "su", "shutdown", "reboot", "sh", "bash", "zsh", "dash",
    "ksh", "fish", "eval", "python", "python3", "node", "ruby", "perl", "php", "deno", "bun",
    "curl", "wget", "ssh", "scp", "rsync", "docker", "kubectl",
})
"""Programs whose "allow always" covers the exact command only (the first words of
``rm -rf build`` or ``python -c '…'`` would allow far more)."""
_RUNNERS = frozenset({"npm", "pnpm", "yarn", "bun", "uv", "poetry", "pipenv", "hatch",
                      "pdm", "rye", "npx", "bundle", "cargo", "go", "dotnet", "mvn", "gradle"})
"""Programs whose second word names an action with its own argument (``npm run test``)."""
_SUBCOMMAND = r"[A-Za-z][A-Za-z0-9._:+-]*"
_WITH_SUBCOMMANDS = _RUNNERS | frozenset({
    "git", "make", "gmake", "just", "task", "rake", "ninja", "cmake", "ctest", "meson",
    "docker", "podman", "kubectl", "helm", "terraform", "gh", "glab", "pip", "pip3", "pipx",
    "conda", "mamba", "apt", "apt-get", "brew", "systemctl", "composer", "mix", "deno", "nx",
    "turbo", "lerna", "tox", "nox", "flutter", "dart", "swift", "rustup", "cargo-nextest",
})
"""Programs whose second word names what they do (``git status``, ``make test``): an "allow
always" keeps it; for others the first word is the rule (``touch a`` → ``Bash(touch:*)``)."""


@dataclass(frozen=True, slots=True)
class Approvals:
    """The ``approvals.*`` settings: what ``default`` mode does with each kind of tool."""

    write: Decision = "allow"
    run_command: Decision = "ask"
    mcp: Decision = "ask"

    def __post_init__(self) -> None:
        for name, value in (("approvals.write", self.write),
                            ("approvals.runCommand", self.run_command),
                            ("approvals.mcp", self.mcp)):
            if value not in DECISIONS:
                raise PermissionsError(f"{name} must be one of allow, ask, deny (got {value!r})")

    def of(self, kind: _Kind) -> Decision:
        if kind == "write":
            return self.write
        if kind == "command":
            return self.run_command
        if kind == "mcp":
            return self.mcp
        return "allow"


@dataclass(frozen=True, slots=True)
class Call:
    """A tool call: the tool's name (an MCP tool's as the model sees it, ``mcp__server__tool``),
    its arguments, and for an MCP tool whether its server says it only reads."""

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    read_only: bool = False
    allowed_by: str | None = None
    """A hook that allowed the call (its name): it counts as an allow rule that names the call
    (deny and ask rules, the dangerous-command list, the workspace boundary and plan mode still
    decide first)."""


@dataclass(frozen=True, slots=True)
class Verdict:
    """The decision on a call: ``rule`` is the rule that decided (``None`` when the mode, the
    dangerous-command list or the workspace boundary did), ``reason`` says why in plain words,
    ``part`` is the part of a command line it is about."""

    decision: Decision
    rule: str | None
    source: Source
    reason: str
    part: str | None = None


@dataclass(frozen=True, slots=True)
class RuleSet:
    """The rules of one source in effect; ``origin`` names where they come from (a file)."""

    source: RuleSource
    origin: str
    allow: tuple[Rule, ...] = ()
    ask: tuple[Rule, ...] = ()
    deny: tuple[Rule, ...] = ()

    def of(self, decision: Decision) -> tuple[Rule, ...]:
        return self.allow if decision == "allow" else self.ask if decision == "ask" \
            else self.deny


@dataclass(frozen=True, slots=True)
class _Subject:
    """What rules are matched against for one call or one part of a command line: deny and ask
    rules against any of ``forms``, allow rules must match every one of ``allow_forms``."""

    label: str
    forms: tuple[str, ...]
    allow_forms: tuple[str, ...]
    problem: str | None = None


def _source_order(rule_set: RuleSet) -> int:
    return RULE_SOURCES.index(rule_set.source)


_Hit = tuple[int, Rule, RuleSet]
"""A rule found: its place in the search order of its decision, the rule, its rule set."""
_LAST = 1 << 62
"""After every place in a search order."""


class _Matcher:
    """The rules of one decision that name one tool (not an MCP tool), arranged so a text is
    tested only against the rules that could match it: an exact rule is looked up by its text,
    a prefix rule by its first word (``Bash(git status:*)`` under ``git``: a text the prefix
    matches starts with the same word); the others (globs, regular expressions, negated rules,
    rules without a pattern) are tested in order. :meth:`first` finds the rule the search in
    order would find."""

    __slots__ = ("exact", "other", "prefix")

    def __init__(self, hits: Iterable[_Hit]) -> None:
        self.exact: dict[str, _Hit] = {}
        self.prefix: dict[str, list[tuple[int, str, str, Rule, RuleSet]]] = {}
        self.other: list[_Hit] = []
        for hit in hits:
            _, rule, rs = hit
            if rule.negate or rule.kind not in ("exact", "prefix"):
                self.other.append(hit)
            elif rule.kind == "exact":
                self.exact.setdefault(rule.pattern, hit)  # the first in order decides
            else:
                self.prefix.setdefault(rule.pattern.partition(" ")[0], []).append(
                    (hit[0], rule.pattern, rule.pattern + " ", rule, rs))

    def first(self, text: str) -> _Hit | None:
        """The first rule in order that matches ``text``."""
        best = self.exact.get(text)
        limit = _LAST if best is None else best[0]
        bucket = self.prefix.get(text.partition(" ")[0])
        if bucket is not None:
            for order, pattern, spaced, rule, rs in bucket:
                if order >= limit:
                    break
                if text == pattern or text.startswith(spaced):
                    best = (order, rule, rs)
                    limit = order
                    break
        for hit in self.other:
            if hit[0] >= limit:
                break
            if hit[1].matches(text):
                return hit
        return best


class _Index:
    """The rules in effect, each decision's in search order (session, local, project, user,
    settings; in each, as written) and by the tool they name; built when the rules change."""

    __slots__ = ("matchers", "mcp")

    def __init__(self, sets: Sequence[RuleSet]) -> None:
        self.matchers: dict[str, dict[str, _Matcher]] = {}
        self.mcp: dict[str, tuple[_Hit, ...]] = {}
        for decision in DECISIONS:
            by_tool: dict[str, list[_Hit]] = {}
            mcp: list[_Hit] = []
            order = 0
            for rs in sets:
                for rule in rs.of(decision):
                    hit = (order, rule, rs)
                    order += 1
                    if rule.is_mcp:
                        mcp.append(hit)
                    else:
                        by_tool.setdefault(rule.tool, []).append(hit)
            self.matchers[decision] = {tool: _Matcher(hits) for tool, hits in by_tool.items()}
            self.mcp[decision] = tuple(mcp)

    def find(self, decision: Decision, tool: str, forms: Iterable[str]) -> _Hit | None:
        """The first rule of ``decision`` in order that names ``tool`` and matches any of
        ``forms``."""
        matcher = self.matchers[decision].get(tool)
        if matcher is not None:  # a rule that is not an MCP rule names only its own tool
            best: _Hit | None = None
            for form in forms:
                hit = matcher.first(form)
                if hit is not None and (best is None or hit[0] < best[0]):
                    best = hit
            return best
        if not tool.startswith(MCP_PREFIX):
            return None
        forms = tuple(forms)
        for hit in self.mcp[decision]:
            rule = hit[1]
            if rule.names(tool) and any(rule.matches(form) for form in forms):
                return hit
        return None


class PermissionEngine:
    """Decides tool calls for one session (see the module docstring).

    ``workspace``: the root file tools are confined to; ``rule_sets``: the rules of the files
    and settings in effect; ``extra_read_roots``: folders outside the workspace reads may reach
    (the session's spill folder).
    """

    def __init__(self, workspace: Path | str, rule_sets: Iterable[RuleSet] = (), *,
                 mode: Mode = "default", approvals: Approvals | None = None,
                 allow_bypass: bool = False, problems: Iterable[str] = (),
                 extra_read_roots: Sequence[Path | str] = ()) -> None:
        self.workspace = Path(workspace)
        self.approvals = approvals or Approvals()
        self.allow_bypass = allow_bypass
        self.extra_read_roots = tuple(extra_read_roots)
        self.problems: list[str] = list(problems)
        self.sandbox_auto_allow = False
        """Commands run in a working sandbox and ``sandbox.autoAllow`` is on: in ``default``
        and ``acceptEdits`` a command no rule names runs without asking."""
        self._session: list[Rule] = []
        self._files: list[RuleSet] = []
        self._sets: list[RuleSet] = []
        self._index = _Index(())
        self.replace_rules(rule_sets)
        self._mode: Mode = "default"
        self.set_mode(mode)

    # -- state -------------------------------------------------------------------------------
    @property
    def mode(self) -> Mode:
        return self._mode

    def set_mode(self, mode: str) -> None:
        """Switch the session's mode; raises :class:`PermissionsError` for an unknown mode and
        for ``bypassPermissions`` unless the user settings allow it."""
        if mode not in MODES:
            raise PermissionsError(f'unknown permission mode "{mode}" (one of '
                                   f'{", ".join(MODES)})')
        if mode == "bypassPermissions" and not self.allow_bypass:
            raise PermissionsError(BYPASS_NEEDS)
        self._mode = mode

    def replace_rules(self, rule_sets: Iterable[RuleSet],
                      problems: Iterable[str] | None = None) -> None:
        """The rules of the files and settings changed, after a file changed or the user
        approved one (the session's rules and mode stay); ``problems``: the new ones."""
        if problems is not None:
            self.problems = list(problems)
        sets = [rs for rs in rule_sets if rs.source != "session"]
        self._files = sorted(sets, key=_source_order)
        self._rebuild()

    def allow_for_session(self, rule: str) -> Rule:
        """Add an allow rule for the rest of the session ("allow for this session"); raises
        :class:`~pseudoclaude.permissions.rules.RuleError` when it does not parse."""
        parsed = parse_rule(rule)
        if parsed not in self._session:
            self._session.append(parsed)
            self._rebuild()
        return parsed

    def _rebuild(self) -> None:
        session = RuleSet("session", "this session", tuple(self._session))
        sets = [session, *self._files] if self._session else list(self._files)
        self._sets, self._index = sets, _Index(sets)

    @property
    def rule_sets(self) -> tuple[RuleSet, ...]:
        return tuple(self._sets)

    def listing(self) -> list[dict[str, str]]:
        """Every rule in effect: ``{rule, decision, source}``, deny rules first, then ask, then
        allow, each by source (session, local, project, user, settings)."""
        return [{"rule": rule.text, "decision": decision, "source": rs.source}
                for decision in ("deny", "ask", "allow") for rs in self._sets
                for rule in rs.of(decision)]

    # -- the decision ------------------------------------------------------------------------
    def check(self, call: Call) -> Verdict:
        """The verdict on ``call``."""
        tool = call.tool
        args: Mapping[str, Any] = call.arguments if isinstance(call.arguments, Mapping) else {}
        if tool == LOAD_SKILL:
            return Verdict("allow", None, "mode", "loading a skill runs without asking")
        if self._mode == "plan" and not _plan_allows(tool, args, call.read_only):
            return Verdict("deny", None, "mode", PLAN_REASON)
        hook = call.allowed_by
        if tool == RUN_COMMAND:
            return self._command(args, hook)
        if tool in PATH_TOOLS:
            return self._file(tool, args, hook)
        if tool.startswith(MCP_PREFIX):
            return self._decide(tool, "mcp", [_Subject(tool, (tool,), (tool,))], hook)
        if tool in (GET_DIAGNOSTICS,):
            return self._decide(tool, "read", [], hook)
        if tool in BOOKKEEPING or tool.startswith("task_") or tool == AGENT:
            return self._decide(tool, "bookkeeping", [], hook)
        if tool == INSTALL_SKILL:
            return Verdict("allow", None, "mode", "bypassPermissions mode asks nothing") \
                if self._mode == "bypassPermissions" else \
                Verdict("ask", None, "mode", "installing a skill asks every time")
        return self._decide(tool, "unknown", [], hook)

    def _command(self, args: Mapping[str, Any], hook: str | None = None) -> Verdict:
        parsed = self._parse_command(args)
        if parsed is None:
            return Verdict("ask", None, "mode", "the call does not say which command to run")
        line = args.get("command", "")
        for hit in parsed.dangers:
            shown = snippet(line) if isinstance(line, str) and line else hit
            return Verdict("deny", None, "blacklist",
                           f"command matches the dangerous-command list: {shown}", shown)
        for part in parsed.parts:
            for form in part.forms:
                if danger.command_hit(form.words):
                    return Verdict("deny", None, "blacklist",
                                   f"command matches the dangerous-command list: {form.text}",
                                   form.text)
        subjects = [_Subject(part.text or part.forms[-1].text, part.subjects(),
                             (part.allow_subject(),), part.problem) for part in parsed.parts]
        return self._decide(RUN_COMMAND, "command", subjects, hook)

    @staticmethod
    def _parse_command(args: Mapping[str, Any]) -> Parsed | None:
        command = args.get("command")
        extra = args.get("args")
        if not isinstance(command, str):
            return None
        if isinstance(extra, list | tuple) and extra:
            if not all(isinstance(arg, str) for arg in extra):
                return None
            return parse_argv([command, *extra])
        return parse_line(command)

    def _file(self, tool: str, args: Mapping[str, Any], hook: str | None = None) -> Verdict:
        pattern = ""
        if tool == FIND_FILES:
            given = args.get("pattern")
            if not isinstance(given, str) or not given:
                return Verdict("ask", None, "mode", "the call does not say which files")
            pattern = given
            raw = static_prefix(pattern)
        else:
            path = args.get("path")
            raw = path if isinstance(path, str) and path else \
                "." if tool == SEARCH_CODE and path is None else ""
            if not raw:
                return Verdict("ask", None, "mode", "the call does not say which file")
        try:
            target = resolve(self.workspace, raw,
                             self.extra_read_roots if tool not in (WRITE_FILE, EDIT_FILE) else ())
        except (ValueError, OSError):
            return Verdict("ask", None, "mode", f"the path cannot be checked: {snippet(raw)}")
        if not target.inside:
            return Verdict("deny", None, "sandbox",
                           f"{snippet(raw)} is outside the workspace ({target.absolute})",
                           snippet(raw))
        forms = (clean_pattern(self.workspace, pattern),) if tool == FIND_FILES \
            else target.forms
        kind: _Kind = "write" if tool in (WRITE_FILE, EDIT_FILE) else "read"
        return self._decide(tool, kind, [_Subject(raw, forms, forms)], hook)

    def _decide(self, tool: str, kind: _Kind, subjects: list[_Subject],
                hook: str | None = None) -> Verdict:
        for subject in subjects:
            found = self._find("deny", tool, subject.forms)
            if found is not None:
                rule, rs = found
                return Verdict("deny", rule.text, rs.source,
                               f"denied by permission rule {rule.text} ({rs.source})",
                               subject.label)
        for subject in subjects:
            if subject.problem is not None:
                return Verdict("ask", None, "mode", subject.problem, subject.label)
        if self._mode != "bypassPermissions":
            for subject in subjects:
                found = self._find("ask", tool, subject.forms)
                if found is not None:
                    rule, rs = found
                    return Verdict("ask", rule.text, rs.source,
                                   f"permission rule {rule.text} ({rs.source}) asks first",
                                   subject.label)
        if hook is not None:  # as an allow rule that names every part
            return Verdict("allow", None, "hook", f"allowed by hook {hook}",
                           subjects[0].label if len(subjects) == 1 else None)
        allowed: list[tuple[Rule, RuleSet, str]] = []
        fallback: Verdict | None = None
        for subject in subjects:
            covering = [self._find("allow", tool, (form,)) for form in subject.allow_forms]
            if all(found is not None for found in covering):
                rule, rs = covering[0]  # type: ignore[misc]  # checked just above
                allowed.append((rule, rs, subject.label))
                continue
            verdict = self._by_mode(tool, kind, subject.label)
            if verdict.decision == "deny":
                return verdict
            if fallback is None or (verdict.decision == "ask" and fallback.decision == "allow"):
                fallback = verdict
        if not subjects:
            return self._by_mode(tool, kind, None)
        if fallback is not None:
            return fallback
        named = list(dict.fromkeys((rule.text, rs.source) for rule, rs, _ in allowed))
        label = allowed[0][2] if len(subjects) == 1 else None
        shown = ", ".join(f"{text} ({source})" for text, source in named)
        return Verdict("allow", ", ".join(text for text, _ in named), named[0][1],
                       f"allowed by permission rule{'s' if len(named) > 1 else ''} {shown}",
                       label)

    def _find(self, decision: Decision, tool: str, forms: Iterable[str]
              ) -> tuple[Rule, RuleSet] | None:
        hit = self._index.find(decision, tool, forms)
        return None if hit is None else (hit[1], hit[2])

    def _by_mode(self, tool: str, kind: _Kind, label: str | None) -> Verdict:
        mode = self._mode
        if mode == "strict":
            return Verdict("ask", None, "mode", "strict mode asks before every tool", label)
        if mode == "bypassPermissions":
            return Verdict("allow", None, "mode", "bypassPermissions mode asks nothing", label)
        if kind == "unknown":
            return Verdict("ask", None, "mode",
                           f"{tool} is a tool the permission rules do not know: asking first",
                           label)
        if kind in ("read", "bookkeeping"):
            what = "reading tools" if kind == "read" else f"{tool}"
            return Verdict("allow", None, "mode", f"{mode} mode runs {what} without asking",
                           label)
        if kind == "write" and mode == "acceptEdits":
            return Verdict("allow", None, "mode", "acceptEdits mode allows edits", label)
        decision = self.approvals.of(kind)
        if kind == "command" and decision == "ask" and self.sandbox_auto_allow:
            return Verdict("allow", None, "sandbox",
                           f"{mode} mode runs sandboxed commands without asking "
                           "(sandbox.autoAllow)", label)
        verb = {"allow": "allows", "ask": "asks before", "deny": "denies"}[decision]
        reason = f"{mode} mode {verb} {_NOUNS[kind]}"
        if decision != Approvals().of(kind):
            reason += f" ({_SETTINGS[kind]}: {decision})"
        return Verdict(decision, None, "mode", reason, label)

    # -- "allow always" ----------------------------------------------------------------------
    def suggest_rule(self, tool: str, arguments: Mapping[str, Any]) -> str | None:
        """The rule an "allow always" of this call would add (``None`` when none would be
        right: a command that cannot be understood or is on the dangerous-command list, a path
        outside the workspace, a tool rules cannot name).

        A command: the first part of the line no allow rule covers yet (the first part when all
        are covered), as a prefix rule of its first word, or of its first two when the second
        looks like a subcommand (``git status`` → ``Bash(git status:*)``), or three for the
        ``run``/``exec``/``x`` of a runner (``npm run test`` → ``Bash(npm run test:*)``).
        Programs that delete, change owners, elevate or run code given inline (``rm``,
        ``chmod``, ``sudo``, ``python``, ``sh``, ``curl``, …) get the exact command instead
        (``Bash(rm -rf build)``). A file tool: the exact path (``Edit(src/app.py)``). An MCP
        tool: its name.
        """
        args: Mapping[str, Any] = arguments if isinstance(arguments, Mapping) else {}
        if tool == RUN_COMMAND:
            return self._suggest_command(args)
        if tool.startswith(MCP_PREFIX):
            return tool
        if tool not in PATH_TOOLS:
            return None
        name = RULE_NAME[tool]
        if tool == FIND_FILES:
            pattern = args.get("pattern")
            if not isinstance(pattern, str) or not pattern:
                return None
            if not resolve(self.workspace, static_prefix(pattern)).inside:
                return None
            return f"{name}(={clean_pattern(self.workspace, pattern)})"
        path = args.get("path")
        if path is None and tool == SEARCH_CODE:
            return name
        if not isinstance(path, str) or not path:
            return None
        try:
            target = resolve(self.workspace, path)
        except (ValueError, OSError):
            return None
        if not target.inside:
            return None
        rel = target.forms[0]
        if rel == "." and tool == SEARCH_CODE:
            return name
        return f"{name}(={rel})" if any(c in rel for c in "*?") or rel.startswith("!") \
            else f"{name}({rel})"

    def _suggest_command(self, args: Mapping[str, Any]) -> str | None:
        parsed = self._parse_command(args)
        if parsed is None or parsed.dangers or parsed.problems:
            return None
        parts = [part for part in parsed.parts if part.words]
        if not parts or any(danger.command_hit(f.words) for p in parts for f in p.forms):
            return None
        part = next((p for p in parts
                     if self._find("allow", RUN_COMMAND, (p.allow_subject(),)) is None),
                    parts[0])
        return _command_rule(part)


def _command_rule(part: Part) -> str | None:
    words = part.words
    program = words[0].rsplit("/", 1)[-1]
    if program in _EXACT_ONLY:
        if part.open_args:
            return None  # ``xargs rm``: the files are only known when it runs
        text = join_words(words)
        plain = not any(c in text for c in "*?") and not text.startswith(("!", "=", "~")) \
            and not text.endswith(":*")
        return f"Bash({text})" if plain else f"Bash(={text})"
    if words[0].startswith(("!", "=", "~")):
        return None  # a prefix rule cannot start with a pattern's mark
    count = 1
    if len(words) > 1 and program in _WITH_SUBCOMMANDS and re.fullmatch(_SUBCOMMAND, words[1]):
        count = 2
        if program in _RUNNERS and words[1] in ("run", "exec", "x") and len(words) > 2 \
                and re.fullmatch(_SUBCOMMAND, words[2]):
            count = 3
    return f"Bash({join_words(words[:count])}:*)"


def _plan_allows(tool: str, args: Mapping[str, Any], read_only: bool) -> bool:
    if tool in PLAN_READ_ONLY:
        return True
    if tool.startswith(MCP_PREFIX):
        return read_only
    if tool == AGENT:
        kind = args.get("subagent_type")
        return isinstance(kind, str) and kind.strip().lower() in PLAN_AGENTS
    return False
