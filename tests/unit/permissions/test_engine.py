"""The engine: (mode, rules, call) → verdict; precedence, modes, paths, "allow always"."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.permissions import (
    PLAN_REASON,
    Approvals,
    Call,
    PermissionEngine,
    PermissionsError,
    RuleError,
    RuleSet,
    Verdict,
    parse_rule,
)

Rules = dict[str, dict[str, list[str]]]
"""``{source: {"allow"|"ask"|"deny": [rule, ...]}}``."""


def rule_sets(rules: Rules) -> list[RuleSet]:
    return [RuleSet(source, source,  # type: ignore[arg-type]
                    *(tuple(parse_rule(r) for r in lists.get(k, ()))
                      for k in ("allow", "ask", "deny")))
            for source, lists in rules.items()]


def make_workspace(base: Path) -> Path:
    root = base / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    (base / "outside").mkdir()
    return root


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace the tests only read."""
    return make_workspace(tmp_path_factory.mktemp("engine"))


@pytest.fixture
def own_ws(tmp_path: Path) -> Path:
    """A workspace a test changes."""
    return make_workspace(tmp_path)


def check(ws: Path, mode: str, rules: Rules, tool: str, args: dict[str, Any] | None = None,
          read_only: bool = False, approvals: Approvals | None = None) -> Verdict:
    engine = PermissionEngine(ws, rule_sets(rules), mode=mode,  # type: ignore[arg-type]
                              approvals=approvals, allow_bypass=True)
    return engine.check(Call(tool, args or {}, read_only))


def cmd(line: str) -> dict[str, Any]:
    return {"command": line}


NONE: Rules = {}

# -- modes without rules -------------------------------------------------------------------------

MODE_TABLE: list[tuple[str, str, dict[str, Any], bool, str]] = [
    # mode, tool, arguments, MCP read-only, decision
    ("default", "read_file", {"path": "src/app.py"}, False, "allow"),
    ("default", "find_files", {"pattern": "**/*.py"}, False, "allow"),
    ("default", "search_code", {"pattern": "x"}, False, "allow"),
    ("default", "get_diagnostics", {}, False, "allow"),
    ("default", "write_file", {"path": "src/new.py"}, False, "allow"),
    ("default", "edit_file", {"path": "src/app.py"}, False, "allow"),
    ("default", "run_command", cmd("ls"), False, "ask"),
    ("default", "mcp__gh__list", {}, True, "ask"),
    ("default", "update_tasks", {}, False, "allow"),
    ("default", "task_create", {}, False, "allow"),
    ("default", "exit_plan_mode", {}, False, "allow"),
    ("default", "agent", {"subagent_type": "general"}, False, "allow"),
    ("default", "load_skill", {}, False, "allow"),
    ("default", "mystery_tool", {}, False, "ask"),
    ("strict", "read_file", {"path": "src/app.py"}, False, "ask"),
    ("strict", "write_file", {"path": "src/app.py"}, False, "ask"),
    ("strict", "run_command", cmd("ls"), False, "ask"),
    ("strict", "mcp__gh__list", {}, True, "ask"),
    ("strict", "update_tasks", {}, False, "ask"),
    ("strict", "get_diagnostics", {}, False, "ask"),
    ("strict", "load_skill", {}, False, "allow"),
    ("acceptEdits", "write_file", {"path": "src/new.py"}, False, "allow"),
    ("acceptEdits", "edit_file", {"path": "src/app.py"}, False, "allow"),
    ("acceptEdits", "run_command", cmd("ls"), False, "ask"),
    ("acceptEdits", "mcp__gh__list", {}, False, "ask"),
    ("plan", "read_file", {"path": "src/app.py"}, False, "allow"),
    ("plan", "find_files", {"pattern": "*.md"}, False, "allow"),
    ("plan", "search_code", {"pattern": "x", "path": "src"}, False, "allow"),
    ("plan", "get_diagnostics", {}, False, "allow"),
    ("plan", "load_skill", {}, False, "allow"),
    ("plan", "update_tasks", {}, False, "allow"),
    ("plan", "task_list", {}, False, "allow"),
    ("plan", "task_get", {}, False, "allow"),
    ("plan", "exit_plan_mode", {}, False, "allow"),
    ("plan", "agent", {"subagent_type": "Explore"}, False, "allow"),
    ("plan", "agent", {"subagent_type": "plan"}, False, "allow"),
    ("plan", "mcp__gh__list", {}, True, "ask"),
    ("plan", "write_file", {"path": "src/new.py"}, False, "deny"),
    ("plan", "edit_file", {"path": "src/app.py"}, False, "deny"),
    ("plan", "run_command", cmd("ls"), False, "deny"),
    ("plan", "mcp__gh__create", {}, False, "deny"),
    ("plan", "agent", {"subagent_type": "general"}, False, "deny"),
    ("plan", "agent", {}, False, "deny"),
    ("plan", "task_create", {}, False, "deny"),
    ("plan", "mystery_tool", {}, False, "deny"),
    ("bypassPermissions", "run_command", cmd("rm -rf build && make"), False, "allow"),
    ("bypassPermissions", "write_file", {"path": "src/new.py"}, False, "allow"),
    ("bypassPermissions", "mcp__gh__create", {}, False, "allow"),
    ("bypassPermissions", "update_tasks", {}, False, "allow"),
    ("bypassPermissions", "mystery_tool", {}, False, "allow"),
]


@pytest.mark.parametrize(("mode", "tool", "args", "read_only", "decision"), MODE_TABLE)
def test_what_each_mode_decides_without_rules(ws: Path, mode: str, tool: str,
                                              args: dict[str, Any], read_only: bool,
                                              decision: str) -> None:
    verdict = check(ws, mode, NONE, tool, args, read_only)
    assert verdict.decision == decision, verdict
    assert verdict.source == "mode"
    assert verdict.rule is None


def test_plan_mode_refusals_say_why(ws: Path) -> None:
    verdict = check(ws, "plan", {"user": {"allow": ["Write"]}}, "write_file", {"path": "a"})
    assert verdict == Verdict("deny", None, "mode", PLAN_REASON)
    assert PLAN_REASON == "plan mode: only reading tools run until the plan is approved"


@pytest.mark.parametrize(("approvals", "tool", "args", "decision", "reason"), [
    (Approvals(), "run_command", cmd("ls"), "ask", "default mode asks before commands"),
    (Approvals(run_command="allow"), "run_command", cmd("ls"), "allow",
     "default mode allows commands (approvals.runCommand: allow)"),
    (Approvals(run_command="deny"), "run_command", cmd("ls"), "deny",
     "default mode denies commands (approvals.runCommand: deny)"),
    (Approvals(), "write_file", {"path": "a"}, "allow", "default mode allows edits"),
    (Approvals(write="ask"), "write_file", {"path": "a"}, "ask",
     "default mode asks before edits (approvals.write: ask)"),
    (Approvals(write="deny"), "edit_file", {"path": "a"}, "deny",
     "default mode denies edits (approvals.write: deny)"),
    (Approvals(), "mcp__s__t", {}, "ask", "default mode asks before MCP tools"),
    (Approvals(mcp="allow"), "mcp__s__t", {}, "allow",
     "default mode allows MCP tools (approvals.mcp: allow)"),
])
def test_default_mode_is_the_approvals_settings(ws: Path, approvals: Approvals, tool: str,
                                                args: dict[str, Any], decision: str,
                                                reason: str) -> None:
    verdict = check(ws, "default", NONE, tool, args, approvals=approvals)
    assert (verdict.decision, verdict.source, verdict.reason) == (decision, "mode", reason)


def test_accept_edits_writes_even_when_the_setting_asks(ws: Path) -> None:
    verdict = check(ws, "acceptEdits", NONE, "write_file", {"path": "a"},
                    approvals=Approvals(write="deny"))
    assert (verdict.decision, verdict.reason) == ("allow", "acceptEdits mode allows edits")


def test_approvals_are_checked() -> None:
    with pytest.raises(PermissionsError, match=r"approvals\.write must be one of"):
        Approvals(write="sometimes")  # type: ignore[arg-type]


# -- rules and precedence ------------------------------------------------------------------------

RULE_TABLE: list[tuple[str, Rules, str, dict[str, Any], str, str, str | None]] = [
    # mode, rules, tool, arguments, decision, source, rule
    ("default", {"user": {"allow": ["Bash(git *)"]}}, "run_command", cmd("git push x"),
     "allow", "user", "Bash(git *)"),
    ("default", {"user": {"allow": ["Bash(git *)"]}}, "run_command", cmd("git"),
     "ask", "mode", None),
    ("default", {"user": {"allow": ["Bash(git *)"]}, "project": {"deny": ["Bash(git push:*)"]}},
     "run_command", cmd("git push"), "deny", "project", "Bash(git push:*)"),
    ("default", {"user": {"allow": ["Bash(git *)"], "ask": ["Bash(git push:*)"]}},
     "run_command", cmd("git push"), "ask", "user", "Bash(git push:*)"),
    ("default", {"settings": {"deny": ["Bash(git push:*)"]}, "user": {"ask": ["Bash"]}},
     "run_command", cmd("git push"), "deny", "settings", "Bash(git push:*)"),
    ("strict", {"user": {"allow": ["Bash(npm run test:*)"]}}, "run_command",
     cmd("npm run test --x"), "allow", "user", "Bash(npm run test:*)"),
    ("strict", {"user": {"allow": ["Bash(npm run test:*)"]}}, "run_command",
     cmd("npm run testing"), "ask", "mode", None),
    ("acceptEdits", {"local": {"deny": ["Edit(src/**)"]}}, "edit_file", {"path": "src/app.py"},
     "deny", "local", "Edit(src/**)"),
    ("acceptEdits", {"local": {"ask": ["Write(**/*.lock)"]}}, "write_file",
     {"path": "a/b/c.lock"}, "ask", "local", "Write(**/*.lock)"),
    ("default", {"local": {"deny": ["Edit(src/**)"]}}, "write_file", {"path": "src/app.py"},
     "allow", "mode", None),  # Edit names edit_file only
    ("strict", {"project": {"allow": ["Read(src/**)"]}}, "read_file", {"path": "src/app.py"},
     "allow", "project", "Read(src/**)"),
    ("strict", {"project": {"allow": ["Read(src/**)"]}}, "read_file", {"path": "README"},
     "ask", "mode", None),
    ("default", {"user": {"deny": ["Read(**/.env)"]}}, "read_file", {"path": "./x/../.env"},
     "deny", "user", "Read(**/.env)"),
    ("default", {"user": {"deny": ["Grep(secrets/**)"]}}, "search_code",
     {"pattern": "k", "path": "secrets/a"}, "deny", "user", "Grep(secrets/**)"),
    ("default", {"user": {"deny": ["Grep(.)"]}}, "search_code", {"pattern": "k"},
     "deny", "user", "Grep(.)"),
    ("default", {"user": {"deny": ["Glob(**/*.pem)"]}}, "find_files", {"pattern": "**/*.pem"},
     "deny", "user", "Glob(**/*.pem)"),
    ("default", {"user": {"deny": ["Glob(=**/*.pem)"]}}, "find_files",
     {"pattern": "./**/*.pem"}, "deny", "user", "Glob(=**/*.pem)"),
    ("default", {"user": {"allow": ["mcp__gh__*"]}}, "mcp__gh__create", {}, "allow", "user",
     "mcp__gh__*"),
    ("default", {"user": {"allow": ["mcp__gh__*"]}}, "mcp__gl__create", {}, "ask", "mode", None),
    ("bypassPermissions", {"project": {"deny": ["mcp__gh"]}}, "mcp__gh__create", {},
     "deny", "project", "mcp__gh"),
    ("default", {"settings": {"allow": ["Bash"]}}, "run_command", cmd("anything | goes"),
     "allow", "settings", "Bash"),
    ("default", {"user": {"allow": ["run_command(ls)"]}}, "run_command", cmd("ls"),
     "allow", "user", "run_command(ls)"),
    # a rule source's allow beats the mode's deny
    ("default", {"user": {"allow": ["Bash(ls)"]}}, "run_command", cmd("ls"), "allow", "user",
     "Bash(ls)"),
    # bypass: ask rules are ignored, deny rules hold
    ("bypassPermissions", {"user": {"ask": ["Bash(git push:*)"]}}, "run_command",
     cmd("git push"), "allow", "mode", None),
    ("bypassPermissions", {"user": {"deny": ["Bash(rm:*)"]}}, "run_command",
     cmd("cd x && rm -rf y"), "deny", "user", "Bash(rm:*)"),
    # plan: reads keep their rules
    ("plan", {"user": {"deny": ["Read(.env)"]}}, "read_file", {"path": ".env"},
     "deny", "user", "Read(.env)"),
    ("plan", {"user": {"ask": ["Read(.env)"]}}, "read_file", {"path": ".env"},
     "ask", "user", "Read(.env)"),
]


@pytest.mark.parametrize(("mode", "rules", "tool", "args", "decision", "source", "rule"),
                         RULE_TABLE)
def test_rules(ws: Path, mode: str, rules: Rules, tool: str, args: dict[str, Any],
               decision: str, source: str, rule: str | None) -> None:
    verdict = check(ws, mode, rules, tool, args)
    assert (verdict.decision, verdict.source, verdict.rule) == (decision, source, rule), verdict


def test_reasons_in_plain_words(ws: Path) -> None:
    rules: Rules = {"project": {"deny": ["Bash(rm:*)"], "ask": ["Bash(git push:*)"]},
                    "user": {"allow": ["Bash(git *)"]}}
    assert check(ws, "default", rules, "run_command", cmd("rm x")).reason == \
        "denied by permission rule Bash(rm:*) (project)"
    assert check(ws, "default", rules, "run_command", cmd("git push")).reason == \
        "permission rule Bash(git push:*) (project) asks first"
    assert check(ws, "default", rules, "run_command", cmd("git log")).reason == \
        "allowed by permission rule Bash(git *) (user)"
    assert check(ws, "default", rules, "run_command", cmd("ls")).reason == \
        "default mode asks before commands"
    assert check(ws, "strict", rules, "read_file", {"path": "a"}).reason == \
        "strict mode asks before every tool"


# -- command lines, part by part -----------------------------------------------------------------

DENY_RM: Rules = {"project": {"deny": ["Bash(rm:*)"], "allow": ["Bash(cd:*)", "Bash(echo:*)",
                                                                  "Bash(find:*)", "Bash(ls:*)",
                                                                  "Bash(git *)"]}}

PART_TABLE: list[tuple[str, str]] = [
    ("cd x && rm -rf y", "deny"),
    ('sh -c "rm -rf y"', "deny"),
    ("bash -c 'cd a; rm -r b'", "deny"),
    ("find . | xargs rm", "deny"),
    ("find . | xargs -0 rm -f", "deny"),
    ("find . -name '*.o' -exec rm {} \\;", "deny"),
    ("find . -delete", "deny"),
    ("FOO=1 rm x", "deny"),
    ("timeout 5 rm x", "deny"),
    ("echo $(rm x)", "deny"),
    ("echo `rm x`", "deny"),
    ("(cd a && rm b)", "deny"),
    ("{ rm b; }", "deny"),
    ("cat <<EOF\n$(rm x)\nEOF", "deny"),
    ("/bin/rm x", "deny"),
    ("sudo rm x", "deny"),
    ("env -S 'rm x'", "deny"),
    ("eval 'rm x'", "deny"),
    ("trap 'rm x' EXIT", "deny"),
    ('echo "a && rm b"', "allow"),
    ("echo 'rm x'", "allow"),
    ("cd a && ls && git status", "allow"),
    ("cd a; ls | git apply", "allow"),
    ("find . -name '*.py'", "allow"),
    ("cd a && make", "ask"),
    ("ls $(pwd)", "ask"),  # pwd is not allowed
    ('echo "unterminated', "ask"),
    ("$CMD x", "ask"),
    ("echo x | sh", "ask"),
    ("echo hi > out.txt", "allow"),
]


@pytest.mark.parametrize(("line", "decision"), PART_TABLE)
@pytest.mark.parametrize("mode", ["default", "acceptEdits", "bypassPermissions"])
def test_command_lines_are_judged_part_by_part(ws: Path, mode: str, line: str,
                                               decision: str) -> None:
    verdict = check(ws, mode, DENY_RM, "run_command", cmd(line))
    expected = "allow" if mode == "bypassPermissions" and decision == "ask" \
        and line in ("cd a && make", "ls $(pwd)") else decision
    assert verdict.decision == expected, verdict


@pytest.mark.parametrize("mode", ["default", "strict", "acceptEdits", "bypassPermissions"])
def test_a_part_that_cannot_be_parsed_asks_in_every_mode(ws: Path, mode: str) -> None:
    verdict = check(ws, mode, {"user": {"allow": ["Bash"]}}, "run_command",
                    cmd('echo "unterminated'))
    assert (verdict.decision, verdict.source) == ("ask", "mode")
    assert verdict.reason == 'a part of the command could not be parsed: "unterminated'


def test_a_deny_rule_still_wins_over_a_part_that_cannot_be_parsed(ws: Path) -> None:
    verdict = check(ws, "default", {"user": {"deny": ["Bash(rm:*)"]}}, "run_command",
                    cmd('rm -rf y "unterminated'))
    assert verdict.decision == "deny"


def test_wrappers_do_not_widen_allow_rules(ws: Path) -> None:
    rules: Rules = {"user": {"allow": ["Bash(timeout:*)", "Bash(sudo:*)", "Bash(sh:*)",
                                       "Bash(ls:*)"]}}
    for line in ("timeout 5 rm x", "sudo rm x", "sh -c 'rm x'", "ls | xargs rm"):
        assert check(ws, "default", rules, "run_command", cmd(line)).decision == "ask", line
    assert check(ws, "default", {"user": {"allow": ["Bash(rm:*)"]}}, "run_command",
                 cmd("timeout 5 nice rm x")).decision == "allow"
    # sudo needs both: the elevated command and the command
    assert check(ws, "default", {"user": {"allow": ["Bash(rm:*)"]}}, "run_command",
                 cmd("sudo rm x")).decision == "ask"
    assert check(ws, "default", {"user": {"allow": ["Bash(rm:*)", "Bash(sudo rm:*)"]}},
                 "run_command", cmd("sudo rm x")).decision == "allow"


def test_deny_rules_see_the_wrappers_too(ws: Path) -> None:
    rules: Rules = {"user": {"deny": ["Bash(sudo:*)", "Bash(sh -c:*)"], "allow": ["Bash"]}}
    assert check(ws, "default", rules, "run_command", cmd("sudo ls")).decision == "deny"
    assert check(ws, "default", rules, "run_command", cmd("sh -c 'ls'")).decision == "deny"
    assert check(ws, "default", rules, "run_command", cmd("ls")).decision == "allow"


def test_xargs_parts_match_as_if_arguments_followed(ws: Path) -> None:
    allow = {"user": {"allow": ["Bash(find:*)", "Bash(grep *)"]}}
    assert check(ws, "default", allow, "run_command", cmd("find . | xargs grep -l x")).decision \
        == "allow"
    exact = {"user": {"allow": ["Bash(find:*)", "Bash(grep -l x)"]}}
    assert check(ws, "default", exact, "run_command", cmd("find . | xargs grep -l x")).decision \
        == "ask"


def test_the_args_form_is_one_part_without_a_shell(ws: Path) -> None:
    rules: Rules = {"user": {"allow": ["Bash(echo *)", 'Bash(git commit -m "a b")'],
                             "deny": ["Bash(rm:*)"]}}
    assert check(ws, "default", rules, "run_command",
                 {"command": "echo", "args": ["a && rm b"]}).decision == "allow"
    assert check(ws, "default", rules, "run_command",
                 {"command": "git", "args": ["commit", "-m", "a b"]}).decision == "allow"
    assert check(ws, "default", rules, "run_command",
                 {"command": "sh", "args": ["-c", "rm x"]}).decision == "deny"
    assert check(ws, "default", rules, "run_command", {"command": 3}).decision == "ask"
    assert check(ws, "default", rules, "run_command",
                 {"command": "ls", "args": [1]}).decision == "ask"


def test_a_multi_part_allow_names_every_rule(ws: Path) -> None:
    verdict = check(ws, "default", DENY_RM, "run_command", cmd("cd a && git status"))
    assert verdict.rule == "Bash(cd:*), Bash(git *)"
    assert verdict.reason == "allowed by permission rules Bash(cd:*) (project), Bash(git *) " \
        "(project)"


def test_the_verdict_names_the_part(ws: Path) -> None:
    verdict = check(ws, "default", DENY_RM, "run_command", cmd("cd a && rm -rf b"))
    assert verdict.part == "rm -rf b"
    verdict = check(ws, "default", DENY_RM, "run_command", cmd("cd a && make x"))
    assert (verdict.part, verdict.reason) == ("make x", "default mode asks before commands")


# -- paths ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("tool", "args"), [
    ("read_file", {"path": "../outside/x"}),
    ("read_file", {"path": "/etc/passwd"}),
    ("write_file", {"path": "src/../../outside/new"}),
    ("search_code", {"pattern": "x", "path": ".."}),
    ("find_files", {"pattern": "../**/*.py"}),
    ("find_files", {"pattern": "/etc/*"}),
])
@pytest.mark.parametrize("mode", ["default", "bypassPermissions"])
def test_paths_outside_the_workspace_are_refused(ws: Path, mode: str, tool: str,
                                                 args: dict[str, Any]) -> None:
    verdict = check(ws, mode, {"user": {"allow": ["Read", "Write", "Grep", "Glob"]}}, tool, args)
    assert (verdict.decision, verdict.source) == ("deny", "sandbox"), verdict
    assert "is outside the workspace" in verdict.reason


def test_symbolic_links_are_resolved(own_ws: Path) -> None:
    ws = own_ws
    (ws / "out").symlink_to(ws.parent / "outside")
    (ws / "code").symlink_to(ws / "src")
    assert check(ws, "default", NONE, "write_file", {"path": "out/x"}).source == "sandbox"
    assert check(ws, "default", NONE, "write_file", {"path": "out/new/deeper/x"}).source \
        == "sandbox"
    # rules see the written and the real path: deny matches either, allow must match both
    deny = {"user": {"deny": ["Edit(src/**)"]}}
    assert check(ws, "default", deny, "edit_file", {"path": "code/app.py"}).decision == "deny"
    allow = {"user": {"allow": ["Read(code/**)"]}}
    assert check(ws, "strict", allow, "read_file", {"path": "code/app.py"}).decision == "ask"
    both = {"user": {"allow": ["Read(code/**)", "Read(src/**)"]}}
    assert check(ws, "strict", both, "read_file", {"path": "code/app.py"}).decision == "allow"


def test_the_workspace_may_be_reached_through_a_link(own_ws: Path, tmp_path: Path) -> None:
    ws = own_ws
    link = tmp_path / "link"
    link.symlink_to(ws)
    engine = PermissionEngine(link, rule_sets({"user": {"deny": ["Read(src/app.py)"]}}))
    assert engine.check(Call("read_file", {"path": str(ws / "src/app.py")})).decision == "deny"
    assert engine.check(Call("read_file", {"path": "src/app.py"})).decision == "deny"
    assert engine.check(Call("read_file", {"path": str(link / "README")})).decision == "allow"


def test_reads_may_reach_extra_roots(own_ws: Path, tmp_path: Path) -> None:
    ws = own_ws
    spill = tmp_path / "outside"
    engine = PermissionEngine(ws, extra_read_roots=[spill])
    assert engine.check(Call("read_file", {"path": str(spill / "x")})).decision == "allow"
    assert engine.check(Call("write_file", {"path": str(spill / "x")})).source == "sandbox"


def test_calls_without_a_path_ask(ws: Path) -> None:
    for tool, args in (("read_file", {}), ("write_file", {"path": ""}),
                       ("find_files", {}), ("read_file", {"path": "a\x00b"})):
        assert check(ws, "bypassPermissions", NONE, tool, args).decision == "ask", tool


# -- mode switches and session rules -------------------------------------------------------------

def test_bypass_needs_the_user_setting(ws: Path) -> None:
    engine = PermissionEngine(ws)
    with pytest.raises(PermissionsError, match=r"permissions\.allowBypass: true"):
        engine.set_mode("bypassPermissions")
    with pytest.raises(PermissionsError, match=r"permissions\.allowBypass"):
        PermissionEngine(ws, mode="bypassPermissions")
    with pytest.raises(PermissionsError, match='unknown permission mode "yolo"'):
        engine.set_mode("yolo")
    engine.set_mode("acceptEdits")
    assert engine.mode == "acceptEdits"


def test_session_rules(ws: Path) -> None:
    engine = PermissionEngine(ws, rule_sets({"project": {"deny": ["Bash(npm publish:*)"]}}))
    engine.allow_for_session("Bash(npm:*)")
    verdict = engine.check(Call("run_command", cmd("npm test")))
    assert (verdict.decision, verdict.source, verdict.rule) == ("allow", "session", "Bash(npm:*)")
    assert engine.check(Call("run_command", cmd("npm publish"))).decision == "deny"
    with pytest.raises(RuleError):
        engine.allow_for_session("Bash(")
    engine.set_mode("strict")
    engine.replace_rules([], problems=["a new problem"])
    assert engine.check(Call("run_command", cmd("npm publish"))).decision == "allow"
    assert (engine.mode, engine.problems) == ("strict", ["a new problem"])


def test_listing(ws: Path) -> None:
    engine = PermissionEngine(ws, rule_sets({
        "user": {"allow": ["Bash(ls)"]},
        "project": {"deny": ["Read(.env)"], "ask": ["Bash(git push:*)"]},
    }), problems=["a problem"])
    engine.allow_for_session("Bash(make:*)")
    assert engine.listing() == [
        {"rule": "Read(.env)", "decision": "deny", "source": "project"},
        {"rule": "Bash(git push:*)", "decision": "ask", "source": "project"},
        {"rule": "Bash(make:*)", "decision": "allow", "source": "session"},
        {"rule": "Bash(ls)", "decision": "allow", "source": "user"},
    ]
    assert engine.problems == ["a problem"]


# -- "allow always" ------------------------------------------------------------------------------

@pytest.mark.parametrize(("tool", "args", "rule"), [
    ("run_command", cmd("npm run test --watch=false"), "Bash(npm run test:*)"),
    ("run_command", cmd("npm install left-pad"), "Bash(npm install:*)"),
    ("run_command", cmd("uv run pytest -q"), "Bash(uv run pytest:*)"),
    ("run_command", cmd("git status -s"), "Bash(git status:*)"),
    ("run_command", cmd("git -C x log"), "Bash(git:*)"),
    ("run_command", cmd("ls -la"), "Bash(ls:*)"),
    ("run_command", cmd("make"), "Bash(make:*)"),
    ("run_command", cmd("pytest tests/unit"), "Bash(pytest:*)"),
    ("run_command", cmd("timeout 60 make test"), "Bash(make test:*)"),
    ("run_command", cmd("rm -rf build"), "Bash(rm -rf build)"),
    ("run_command", cmd("rm *.o"), "Bash(=rm *.o)"),
    ("run_command", cmd("rm a:*"), "Bash(=rm a:*)"),
    ("run_command", cmd("rm =x"), "Bash(rm =x)"),
    ("run_command", cmd("python -c 'print(1)'"), "Bash(python -c print(1))"),
    ("run_command", cmd("python -c 'print(1, 2)'"), 'Bash(python -c "print(1, 2)")'),
    ("run_command", cmd("cd sub && make test"), "Bash(make test:*)"),  # cd is allowed already
    ("run_command", cmd("cd sub && ls"), "Bash(cd:*)"),  # all allowed: the first
    ("run_command", cmd("touch made"), "Bash(touch:*)"),  # no subcommands: the program
    ("run_command", cmd("cargo build --release"), "Bash(cargo build:*)"),
    ("run_command", {"command": "git", "args": ["commit", "-m", "a b"]}, "Bash(git commit:*)"),
    ("run_command", cmd("ls | xargs rm"), None),  # rm's files are only known when it runs
    ("run_command", cmd("ls | xargs grep -l x"), "Bash(grep:*)"),
    ("run_command", cmd("rm -rf /"), None),
    ("run_command", cmd('echo "unterminated'), None),
    ("run_command", cmd("$X y"), None),
    ("run_command", cmd(""), None),
    ("write_file", {"path": "./src/app.py"}, "Write(src/app.py)"),
    ("edit_file", {"path": "src/app.py"}, "Edit(src/app.py)"),
    ("edit_file", {"path": "src/a*b.py"}, "Edit(=src/a*b.py)"),
    ("edit_file", {"path": "../x.py"}, None),
    ("read_file", {"path": "src/app.py"}, "Read(src/app.py)"),
    ("search_code", {"pattern": "x"}, "Grep"),
    ("search_code", {"pattern": "x", "path": "src"}, "Grep(src)"),
    ("find_files", {"pattern": "./src/**/*.py"}, "Glob(=src/**/*.py)"),
    ("find_files", {"pattern": "../**"}, None),
    ("mcp__gh__create_issue", {"title": "x"}, "mcp__gh__create_issue"),
    ("update_tasks", {}, None),
])
def test_suggest_rule(ws: Path, tool: str, args: dict[str, Any], rule: str | None) -> None:
    engine = PermissionEngine(ws, rule_sets({"user": {"allow": ["Bash(cd:*)", "Bash(ls:*)"]}}))
    suggested = engine.suggest_rule(tool, args)
    assert suggested == rule
    if suggested is not None:  # what it suggests parses, and allows the call
        engine.allow_for_session(suggested)
        engine.set_mode("strict")
        assert engine.check(Call(tool, args)).decision == "allow"


def test_no_real_file_is_needed_for_the_engine(tmp_path: Path) -> None:
    missing = tmp_path / "not-yet"
    engine = PermissionEngine(missing)
    assert engine.check(Call("write_file", {"path": "a/b.py"})).decision == "allow"
    assert engine.check(Call("write_file", {"path": "../b.py"})).source == "sandbox"
    assert not os.path.exists(missing)
