"""Reading hooks.yaml: every entry that cannot be read is named with its file, its line and
why; the others load."""

from __future__ import annotations

from pathlib import Path

from pseudoclaude.hooks import load_file, parse_entries, parse_text
from pseudoclaude.hooks.config import parse_duration
from pseudoclaude.hooks.model import HttpAction, PromptAction, ShellAction

FILE = """\
hooks:
  - name: good-shell
    event: PreToolUse
    if:
      all_of:
        - {field: tool_name, match: {type: exact, value: write_file}}
    action: {type: shell, command: 'exit 2'}
    timeout: 1m30s
  - name: bad-event
    event: PreTool
    action: {type: shell, command: 'true'}
  - name: bad-action
    event: Stop
    action: {type: carrier-pigeon}
  - name: bad-timeout
    event: Stop
    action: {type: shell, command: 'true'}
    timeout: soon
  - name: both
    event: Stop
    if:
      all_of: [{field: a, match: x}]
      any_of: [{field: b, match: y}]
    action: {type: prompt, text: hi}
  - name: blocking-async
    event: UserPromptSubmit
    async: true
    action: {type: shell, command: 'true'}
  - name: empty-condition
    event: Stop
    if: {any_of: []}
    action: {type: shell, command: 'true'}
  - name: good-shell
    event: Stop
    action: {type: shell, command: 'true'}
  - event: Stop
    action: {type: shell, command: 'true'}
  - name: web
    event: PostToolUse
    async: true
    action: {type: http, url: 'http://127.0.0.1:9/hook', headers: {X-Token: abc}}
  - name: says
    event: SessionStart
    only_once: true
    action: {type: prompt, text: '  Remember the style guide.  '}
  - name: bad-regex
    event: PreToolUse
    if: {any_of: [{field: tool_name, match: {type: regex, value: '(unclosed'}}]}
    action: {type: shell, command: 'true'}
"""


def test_each_bad_entry_is_named_with_its_line_and_why(tmp_path: Path) -> None:
    path = tmp_path / "hooks.yaml"
    path.write_text(FILE)
    loaded = load_file(path, "workspace")
    assert [h.name for h in loaded.hooks] == ["good-shell", "web", "says"]
    problems = {(p.name, p.line): p.message for p in loaded.problems}
    assert problems[("bad-event", 10)].startswith('unknown event "PreTool"')
    assert problems[("bad-action", 14)].startswith('unknown action "carrier-pigeon"')
    assert problems[("bad-timeout", 18)].startswith('invalid timeout "soon"')
    assert "both all_of and any_of" in problems[("both", 21)]
    assert problems[("blocking-async", 27)].startswith(
        "event UserPromptSubmit does not allow async")
    assert "at least one test" in problems[("empty-condition", 31)]
    assert "defined above already" in problems[("good-shell", 33)]
    assert problems[("hook 9", 36)] == "the hook has no name"
    assert "invalid regex" in problems[("bad-regex", 48)]
    assert all(p.origin == str(path) and p.source == "workspace" for p in loaded.problems)
    assert loaded.problems[0].text() == f"{path}:10: " + loaded.problems[0].message


def test_what_a_good_entry_holds() -> None:
    loaded = parse_text(FILE, "hooks.yaml", "user")
    shell, web, says = loaded.hooks
    assert shell.action == ShellAction("exit 2") and shell.timeout == 90.0
    assert shell.line == 2 and shell.source == "user" and shell.condition is not None
    assert shell.condition.holds({"tool_name": "write_file"})
    assert not shell.condition.holds({"tool_name": "read_file"})
    assert web.action == HttpAction("http://127.0.0.1:9/hook", "POST", {"X-Token": "abc"})
    assert web.run_async and web.timeout == 30.0
    assert says.action == PromptAction("Remember the style guide.") and says.only_once
    assert web.describe() == "http: POST http://127.0.0.1:9/hook [async]"
    assert shell.describe() == "shell: exit 2 [timeout=90s]"


def test_a_file_that_is_not_yaml_is_one_problem_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "hooks.yaml"
    path.write_text("hooks:\n  - name: x\n    event: [Stop\n")
    loaded = load_file(path, "user")
    assert loaded.hooks == ()
    [problem] = loaded.problems
    assert problem.name == "hooks.yaml" and problem.line == 4
    assert problem.message.startswith("not valid YAML")


def test_a_missing_file_holds_nothing_and_a_bare_list_is_read(tmp_path: Path) -> None:
    assert load_file(tmp_path / "absent.yaml", "user").hooks == ()
    loaded = parse_text("- {name: a, event: Stop, action: {type: prompt, text: t}}\n",
                        "f", "user")
    assert [h.name for h in loaded.hooks] == ["a"]
    assert parse_text("hooks: 3\n", "f", "user").problems[0].message == \
        "'hooks' must be a list of hooks"
    assert parse_text("other: 1\n", "f", "user").problems[0].message.startswith("expected")


def test_the_setting_names_a_bad_entry_by_its_place() -> None:
    loaded = parse_entries([{"name": "ok", "event": "Stop",
                             "action": {"type": "shell", "command": "true"}},
                            {"name": "sub", "event": "Stop",
                             "action": {"type": "subagent", "agent_name": "x"}}],
                           "settings", "settings")
    assert [h.name for h in loaded.hooks] == ["ok"]
    [problem] = loaded.problems
    assert problem.text() == "settings hooks[1]: the subagent action is not supported yet"


def test_durations() -> None:
    assert parse_duration("30s") == 30.0
    assert parse_duration("1m30s") == 90.0
    assert parse_duration("500ms") == 0.5
    assert parse_duration(5) == 5.0
    assert parse_duration("2") == 2.0
    for bad in ("soon", "30 s", "s", "", True, None, "1x"):
        assert parse_duration(bad) is None
