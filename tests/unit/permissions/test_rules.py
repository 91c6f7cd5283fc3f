"""Rules: each syntax parses to what it means, matches what it should, and a bad rule says why."""

from __future__ import annotations

import pytest

from pseudoclaude.permissions.rules import RuleError, parse_rule, parse_rules
from pseudoclaude.permissions.words import go_quote, join_words


@pytest.mark.parametrize(("text", "tool", "kind", "pattern", "negate"), [
    ("Bash", "run_command", "any", "", False),
    ("run_command", "run_command", "any", "", False),
    ("Bash(git *)", "run_command", "glob", "git *", False),
    ("Bash(npm run test:*)", "run_command", "prefix", "npm run test", False),
    ("Bash(=git status)", "run_command", "exact", "git status", False),
    ("Bash(~^git (push|pull))", "run_command", "regex", "^git (push|pull)", False),
    ("Bash(!git *)", "run_command", "glob", "git *", True),
    ("Bash(!=ls)", "run_command", "exact", "ls", True),
    ("Read(src/**)", "read_file", "glob", "src/**", False),
    ("Read(./src/a.py)", "read_file", "glob", "src/a.py", False),
    ("Write(=docs/a*.md)", "write_file", "exact", "docs/a*.md", False),
    ("Edit(src/**/*.py)", "edit_file", "glob", "src/**/*.py", False),
    ("Glob(./**/*.py)", "find_files", "glob", "**/*.py", False),
    ("Grep(.)", "search_code", "glob", ".", False),
    ("mcp__gh__create_issue", "mcp__gh__create_issue", "any", "", False),
    ("mcp__gh__*", "mcp__gh__*", "any", "", False),
    ("  Bash(ls)  ", "run_command", "glob", "ls", False),
])
def test_each_syntax_parses(text: str, tool: str, kind: str, pattern: str, negate: bool) -> None:
    rule = parse_rule(text)
    assert (rule.tool, rule.kind, rule.pattern, rule.negate) == (tool, kind, pattern, negate)
    assert rule.text == text.strip()


@pytest.mark.parametrize(("text", "why"), [
    ("Bsh(ls)", 'unknown tool "Bsh"'),
    ("bash(ls)", 'unknown tool "bash" (did you mean Bash?)'),
    ("update_tasks", 'unknown tool "update_tasks"'),
    ("Bash(ls", "missing closing parenthesis"),
    ("Bash(ls) x", "missing closing parenthesis"),
    ("Bash ls)", "closing parenthesis without an opening one"),
    ("(ls)", "missing tool name"),
    ("", "empty rule"),
    ("Bash()", "empty pattern (write Bash alone to match every call)"),
    ("Bash(:*)", "empty prefix before :*"),
    ("Bash(!)", "empty pattern after !"),
    ("Read(/etc/passwd)", "a path in a rule is relative to the workspace: write it without "
                          "the leading /"),
    ("Read(../x)", "a path in a rule cannot leave the workspace"),
    ("mcp__gh__x(a)", "an MCP tool's rule takes no pattern: write its name alone (a glob such "
                      "as mcp__server__* may name several)"),
])
def test_bad_rules_say_why(text: str, why: str) -> None:
    with pytest.raises(RuleError) as caught:
        parse_rule(text)
    assert caught.value.why == why
    assert str(caught.value) == f'rule "{text}": {why}'


def test_a_bad_regex_names_the_regex_error() -> None:
    with pytest.raises(RuleError) as caught:
        parse_rule("Bash(~git (push)")
    assert caught.value.why.startswith("invalid regular expression: missing ), unterminated")


def test_parse_rules_keeps_the_good_ones() -> None:
    rules, errors = parse_rules(["Bash(ls)", "Nope", 3, "Read(a)"])
    assert [r.text for r in rules] == ["Bash(ls)", "Read(a)"]
    assert [e.why for e in errors] == ['unknown tool "Nope"', "a rule is a string"]


@pytest.mark.parametrize(("rule", "text", "hit"), [
    ("Bash(git *)", "git push x", True),
    ("Bash(git *)", "git", False),
    ("Bash(git *)", "gitk", False),
    ("Bash(git **)", "git push", True),
    ("Bash(ls ?)", "ls a", True),
    ("Bash(ls ?)", "ls ab", False),
    ("Bash(ls)", "ls", True),
    ("Bash(ls)", "ls -la", False),
    ("Bash(*.sh)", "run.sh", True),
    ("Bash(echo [a])", "echo [a]", True),
    ("Bash(echo [a])", "echo a", False),
    ("Bash(npm run test:*)", "npm run test", True),
    ("Bash(npm run test:*)", "npm run test --x", True),
    ("Bash(npm run test:*)", "npm run testing", False),
    ("Bash(npm run test:*)", "npm run", False),
    ("Bash(rm:*)", "rm -rf y", True),
    ("Bash(rm:*)", "rmdir y", False),
    ("Bash(git commit -m 'a b':*)", 'git commit -m "a b" --amend', True),
    ("Bash(=git status)", "git status", True),
    ("Bash(=git status)", "git status -s", False),
    ("Bash(~push)", "git push origin", True),
    ("Bash(~^push)", "git push origin", False),
    ("Bash(!git *)", "ls", True),
    ("Bash(!git *)", "git log", False),
    ("Bash", "anything at all", True),
])
def test_command_patterns(rule: str, text: str, hit: bool) -> None:
    assert parse_rule(rule).matches(text) is hit


@pytest.mark.parametrize(("rule", "path", "hit"), [
    ("Read(src/*.py)", "src/a.py", True),
    ("Read(src/*.py)", "src/x/a.py", False),
    ("Read(src/?.py)", "src/a.py", True),
    ("Read(src/?.py)", "src/ab.py", False),
    ("Read(src/**/*.py)", "src/a.py", True),
    ("Read(src/**/*.py)", "src/x/y/a.py", True),
    ("Read(src/**)", "src/x/y/a.py", True),
    ("Read(**/.env)", ".env", True),
    ("Read(**/.env)", "a/b/.env", True),
    ("Read(.env)", "a/.env", False),
    ("Read(.env)", ".env", True),
    ("Read(src/a.py)", "src/a.py", True),
    ("Read(src//x/../a.py)", "src/a.py", True),
    ("Read(=src/*.py)", "src/*.py", True),
    ("Read(=src/*.py)", "src/a.py", False),
    ("Read(~\\.pem$)", "keys/server.pem", True),
    ("Read(!src/**)", "docs/a.md", True),
    ("Read(!src/**)", "src/a.md", False),
])
def test_path_patterns(rule: str, path: str, hit: bool) -> None:
    assert parse_rule(rule).matches(path) is hit


@pytest.mark.parametrize(("rule", "tool", "hit"), [
    ("mcp__gh__create_issue", "mcp__gh__create_issue", True),
    ("mcp__gh__create_issue", "mcp__gh__create_issues", False),
    ("mcp__gh", "mcp__gh__create_issue", True),
    ("mcp__gh", "mcp__ghx__create_issue", False),
    ("mcp__gh__*", "mcp__gh__list", True),
    ("mcp__gh__*", "mcp__gl__list", False),
    ("mcp__*", "mcp__any__thing", True),
    ("mcp__*", "read_file", False),
    ("Bash", "run_command", True),
    ("Bash", "read_file", False),
    ("Read", "read_file", True),
])
def test_rules_name_their_tools(rule: str, tool: str, hit: bool) -> None:
    assert parse_rule(rule).names(tool) is hit


@pytest.mark.parametrize(("words", "text"), [
    (["git", "status"], "git status"),
    (["git", "commit", "-m", "a b"], 'git commit -m "a b"'),
    (["echo", 'say "hi"'], 'echo "say \\"hi\\""'),
    (["echo", "it's"], 'echo "it\'s"'),
    (["printf", "a\tb\n"], 'printf "a\\tb\\n"'),
    (["echo", "back\\slash"], 'echo "back\\\\slash"'),
    (["echo", ""], "echo "),
    (["echo", "x\x1by"], "echo x\x1by"),  # only space, tab, newline, quotes, \ ask for quotes
])
def test_words_join_as_go_quotes_them(words: list[str], text: str) -> None:
    assert join_words(words) == text


def test_go_quote_escapes_like_strconv_quote() -> None:
    assert go_quote("a\x1b\x7f\u00a0é😀") == '"a\\x1b\\x7f\\u00a0é😀"'
    assert go_quote("\a\b\f\r\v") == '"\\a\\b\\f\\r\\v"'
