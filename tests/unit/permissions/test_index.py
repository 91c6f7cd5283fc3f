"""The engine's rule index finds the rule a search of every rule in order would find."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pseudoclaude.permissions import Call, PermissionEngine, Rule, RuleSet, parse_rule
from pseudoclaude.permissions.engine import DECISIONS, Decision
from pseudoclaude.permissions.rules import RuleError
from pseudoclaude.permissions.words import join_words

SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
SOURCES = ("local", "project", "user", "settings")
TOOLS = ("run_command", "read_file", "edit_file", "search_code", "mcp__gh__issue",
         "mcp__gh", "mcp__other__x", "unknown_tool")

word = st.sampled_from(["git", "gitx", "-f", "a b"])
command = st.lists(word, min_size=1, max_size=2).map(join_words)
long_command = st.lists(word, min_size=1, max_size=3).map(join_words)
text = st.one_of(long_command, long_command, long_command.map(lambda t: t + " "),
                 st.sampled_from(["", "git  status", " git", "x*", "src/app.py", "src", ".",
                                  "secrets/key", "mcp__gh__issue"]))
pattern = st.one_of(
    command.map(lambda t: f"!{t}:*"), command.map(lambda t: f"!={t}"),
    st.sampled_from(["*", "git *", "* -f*", "~^git", "~-f$", "!~-f", "?it*", "src/**",
                     "**/*.py", "src/*", "=src/app.py", "!src/**", "secrets", "x*:*"]))
bare = st.sampled_from(["Read", "Grep", "mcp__gh", "mcp__gh__*", "mcp__gh__issue",
                        "mcp__other__?", "mcp__*"])
rule_text = st.one_of(
    command.map(lambda t: f"Bash({t}:*)"), command.map(lambda t: f"Bash({t}:*)"),
    command.map(lambda t: f"Bash(={t})"),
    st.builds(lambda name, p: f"{name}({p})",
              st.sampled_from(["Bash", "Bash", "Read", "Edit", "Grep"]), pattern),
    bare, st.integers(0, 9).map(lambda i: "Bash" if i == 0 else "Bash(gitx:*)"))


def parsed(texts: list[str]) -> tuple[Rule, ...]:
    rules: list[Rule] = []
    for t in texts:
        with contextlib.suppress(RuleError):
            rules.append(parse_rule(t))
    return tuple(rules)


rule_list = st.lists(rule_text, max_size=8).map(parsed)
rule_set = st.builds(lambda source, allow, ask, deny: RuleSet(source, source, allow, ask, deny),
                     st.sampled_from(SOURCES), rule_list, rule_list, rule_list)


def in_order(engine: PermissionEngine, decision: Decision, tool: str,
             forms: tuple[str, ...]) -> tuple[Rule, RuleSet] | None:
    """The search the index stands for: every rule, in order."""
    for rs in engine.rule_sets:
        for rule in rs.of(decision):
            if rule.names(tool) and any(rule.matches(form) for form in forms):
                return rule, rs
    return None


@pytest.fixture(scope="module")
def ws(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("index")


@SETTINGS
@given(sets=st.lists(rule_set, max_size=4), session=st.lists(rule_text, max_size=3),
       tool=st.one_of(st.just("run_command"), st.sampled_from(TOOLS)),
       forms=st.lists(text, max_size=3).map(tuple))
def test_the_index_finds_the_first_rule_in_order(
        ws: Path, sets: list[RuleSet], session: list[str], tool: str,
        forms: tuple[str, ...]) -> None:
    engine = PermissionEngine(ws, sets)
    for rule in session:
        with contextlib.suppress(RuleError):
            engine.allow_for_session(rule)
    for decision in DECISIONS:
        found = engine._find(decision, tool, forms)
        expected = in_order(engine, decision, tool, forms)
        assert found == expected, (decision, tool, forms)
        if found is not None and expected is not None:
            assert found[1] is expected[1]  # the same rule set: the verdict names its source


def test_the_index_follows_rule_changes(ws: Path) -> None:
    engine = PermissionEngine(ws, [RuleSet("user", "user", allow=(parse_rule("Bash(ls:*)"),))])
    call = Call("run_command", {"command": "ls -la && git status"})
    assert engine.check(call).decision == "ask"
    engine.allow_for_session("Bash(git status:*)")
    verdict = engine.check(call)
    assert (verdict.decision, verdict.rule, verdict.source) == \
        ("allow", "Bash(ls:*), Bash(git status:*)", "user")
    engine.replace_rules([RuleSet("project", "project", deny=(parse_rule("Bash(git:*)"),))])
    verdict = engine.check(call)
    assert (verdict.decision, verdict.rule, verdict.source) == \
        ("deny", "Bash(git:*)", "project")
    engine.replace_rules([])
    verdict = engine.check(call)
    assert (verdict.decision, verdict.source) == ("ask", "mode")  # ls is no longer allowed


def test_an_earlier_rule_wins_over_a_later_exact_or_prefix_one(ws: Path) -> None:
    engine = PermissionEngine(ws, [
        RuleSet("local", "local", deny=(parse_rule("Bash(~status)"),)),
        RuleSet("user", "user", deny=(parse_rule("Bash(=git status)"),
                                      parse_rule("Bash(git:*)"))),
    ])
    verdict = engine.check(Call("run_command", {"command": "git status"}))
    assert (verdict.rule, verdict.source) == ("Bash(~status)", "local")
    verdict = engine.check(Call("run_command", {"command": "git log"}))
    assert (verdict.rule, verdict.source) == ("Bash(git:*)", "user")


def test_of_two_rules_for_the_same_text_the_first_in_order_decides(ws: Path) -> None:
    engine = PermissionEngine(ws, [
        RuleSet("user", "user", ask=(parse_rule("Bash(=git status)"),)),
        RuleSet("local", "local", ask=(parse_rule("Bash(=git status)"),
                                       parse_rule("Bash(git:*)"))),
        RuleSet("project", "project", ask=(parse_rule("Bash(git:*)"),)),
    ])
    verdict = engine.check(Call("run_command", {"command": "git status"}))
    assert (verdict.rule, verdict.source) == ("Bash(=git status)", "local")
    verdict = engine.check(Call("run_command", {"command": "git log"}))
    assert (verdict.rule, verdict.source) == ("Bash(git:*)", "local")


def test_a_prefix_rule_matches_whole_words_only(ws: Path) -> None:
    engine = PermissionEngine(ws, [RuleSet("user", "user", deny=(
        parse_rule("Bash(git stat:*)"), parse_rule("Bash(gi:*)"), parse_rule("Bash(git:*)")))])
    verdict = engine.check(Call("run_command", {"command": "git status"}))
    assert (verdict.decision, verdict.rule) == ("deny", "Bash(git:*)")
    verdict = engine.check(Call("run_command", {"command": "git stat -v"}))
    assert (verdict.decision, verdict.rule) == ("deny", "Bash(git stat:*)")
