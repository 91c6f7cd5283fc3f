"""The permission files: sources, problems, what waits for approval, the start mode, and the
local file "allow always" writes."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from pseudoclaude.permissions import (
    Call,
    Loaded,
    PermissionsError,
    RuleError,
    WaitingFile,
    add_allow_rule,
    load_permissions,
    local_file,
    project_file,
    write_local_rule,
)


class Approvals:
    """An ``approved`` callback that records what it was asked."""

    def __init__(self, *approved: tuple[Path, str]) -> None:
        self.approved = set(approved)
        self.asked: list[tuple[Path, str]] = []

    def __call__(self, path: Path, sha256: str) -> bool:
        self.asked.append((path, sha256))
        return (path, sha256) in self.approved


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home" / ".PseudoClaude"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".PseudoClaude").mkdir(parents=True)
    return root


def write(path: Path, text: str) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return hashlib.sha256(text.encode()).hexdigest()


def load(ws: Path, home: Path, approved: Any = None, **kw: Any) -> Loaded:
    return load_permissions(ws, approved=approved or Approvals(), user_dir=home, **kw)


def listing(loaded: Loaded) -> list[tuple[str, str, str]]:
    return [(rs.source, decision, rule.text) for rs in loaded.rule_sets
            for decision in ("allow", "ask", "deny") for rule in rs.of(decision)]


def test_nothing_anywhere(ws: Path, home: Path) -> None:
    loaded = load(ws, home)
    assert (loaded.rule_sets, loaded.start_mode, loaded.waiting, loaded.problems) == \
        ([], "default", [], [])


def test_four_sources(ws: Path, home: Path) -> None:
    write(home / "permissions.yaml", "permissions:\n  allow: [Bash(ls)]\n")
    write(project_file(ws), "permissions:\n  deny: [Read(.env)]\n  ask: [Bash(git push:*)]\n")
    write(local_file(ws), "permissions:\n  deny: [Bash(rm:*)]\n")
    loaded = load(ws, home, settings={"allow": ["Bash(make:*)"], "allowBypass": True})
    assert listing(loaded) == [
        ("user", "allow", "Bash(ls)"),
        ("project", "ask", "Bash(git push:*)"),
        ("project", "deny", "Read(.env)"),
        ("local", "deny", "Bash(rm:*)"),
        ("settings", "allow", "Bash(make:*)"),
    ]
    assert loaded.problems == [] and loaded.waiting == []
    engine = loaded.engine(ws)
    assert engine.check(Call("run_command", {"command": "make x && ls"})).decision == "allow"
    assert engine.check(Call("run_command", {"command": "ls; rm x"})).source == "local"


def test_the_setting_may_have_the_file_shape(ws: Path, home: Path) -> None:
    loaded = load(ws, home, settings={"defaultMode": "strict", "allowBypass": False,
                                      "permissions": {"deny": ["Bash(rm:*)"]}})
    assert listing(loaded) == [("settings", "deny", "Bash(rm:*)")]
    assert loaded.start_mode == "strict"
    assert loaded.problems == []


def test_invalid_yaml_skips_the_file_and_says_so(ws: Path, home: Path) -> None:
    write(home / "permissions.yaml", "permissions:\n  allow: [Bash(ls)\n")
    write(local_file(ws), "permissions:\n  deny: [Bash(rm:*)]\n")
    loaded = load(ws, home)
    assert listing(loaded) == [("local", "deny", "Bash(rm:*)")]
    [problem] = loaded.problems
    assert problem.startswith(f"{home / 'permissions.yaml'}: not valid YAML (line ")
    assert problem.endswith("; ignored")


def test_bad_rules_are_named_and_the_others_load(ws: Path, home: Path) -> None:
    write(project_file(ws), "permissions:\n"
                            "  deny:\n"
                            "    - Bash(rm:*)\n"
                            "    - Bsh(ls)\n"
                            "    - Bash(ls\n"
                            "    - Bash(~git (push)\n"
                            "    - 42\n"
                            "  ask: Bash(git push:*)\n")
    loaded = load(ws, home)
    assert listing(loaded) == [("project", "ask", "Bash(git push:*)"),
                               ("project", "deny", "Bash(rm:*)")]
    assert loaded.problems[:2] == [
        'rule "Bsh(ls)" in .PseudoClaude/permissions.yaml: unknown tool "Bsh"',
        'rule "Bash(ls" in .PseudoClaude/permissions.yaml: missing closing parenthesis',
    ]
    assert loaded.problems[2].startswith('rule "Bash(~git (push)" in '
                                         ".PseudoClaude/permissions.yaml: invalid regular "
                                         "expression: ")
    assert loaded.problems[3] == 'rule "42" in .PseudoClaude/permissions.yaml: a rule is a ' \
        "string"


@pytest.mark.parametrize(("text", "problem"), [
    ("- a\n- b\n", ".PseudoClaude/permissions.local.yaml: expected a mapping with defaultMode "
                   "and permissions; ignored"),
    ("defaultMode: yolo\n", '.PseudoClaude/permissions.local.yaml: defaultMode "yolo" is not a '
                            "mode (strict, default, acceptEdits, plan, bypassPermissions); "
                            "ignored"),
    ("permissions: [a]\n", ".PseudoClaude/permissions.local.yaml: permissions must be a mapping "
                           "of allow, ask and deny lists; ignored"),
    ("permissions:\n  allow: {a: 1}\n", ".PseudoClaude/permissions.local.yaml: "
                                        "permissions.allow must be a list of rules; ignored"),
    ("premissions: {}\n", '.PseudoClaude/permissions.local.yaml: unknown key "premissions" '
                          "(ignored)"),
    ("permissions:\n  alow: []\n", '.PseudoClaude/permissions.local.yaml: unknown key '
                                   '"permissions.alow" (ignored)'),
    ("\xff", ".PseudoClaude/permissions.local.yaml: not UTF-8 text; ignored"),
])
def test_shape_problems(ws: Path, home: Path, text: str, problem: str) -> None:
    path = local_file(ws)
    if text == "\xff":
        path.write_bytes(b"\xff\xfe")
    else:
        write(path, text)
    assert load(ws, home).problems == [problem]


def test_an_empty_file_is_fine(ws: Path, home: Path) -> None:
    write(project_file(ws), "# nothing yet\n")
    assert load(ws, home).problems == []


def test_a_huge_file_is_not_read(ws: Path, home: Path) -> None:
    write(project_file(ws), "#" * (1 << 20) + "\n")
    assert load(ws, home).problems == [".PseudoClaude/permissions.yaml: larger than 1024 KiB; "
                                       "ignored"]


# -- what a repository cannot grant itself -------------------------------------------------------

PROJECT = ("defaultMode: acceptEdits\n"
           "permissions:\n"
           "  allow: [Bash(make:*), Edit(src/**)]\n"
           "  ask: [Bash(git push:*)]\n"
           "  deny: [Bash(rm:*)]\n")


def test_project_allow_rules_and_a_wider_mode_wait(ws: Path, home: Path) -> None:
    sha = write(project_file(ws), PROJECT)
    approvals = Approvals()
    loaded = load(ws, home, approvals)
    real = Path(os.path.realpath(project_file(ws)))
    assert loaded.waiting == [WaitingFile(real, "project", sha, ("Bash(make:*)", "Edit(src/**)"),
                                          "acceptEdits")]
    assert approvals.asked == [(real, sha)]
    # what narrows applies at once
    assert listing(loaded) == [("project", "ask", "Bash(git push:*)"),
                               ("project", "deny", "Bash(rm:*)")]
    assert loaded.start_mode == "default"
    engine = loaded.engine(ws)
    assert engine.check(Call("run_command", {"command": "make"})).decision == "ask"
    assert engine.check(Call("run_command", {"command": "rm x"})).decision == "deny"


def test_approved_content_takes_effect(ws: Path, home: Path) -> None:
    sha = write(project_file(ws), PROJECT)
    real = Path(os.path.realpath(project_file(ws)))
    loaded = load(ws, home, Approvals((real, sha)))
    assert loaded.waiting == []
    assert loaded.start_mode == "acceptEdits"
    assert ("project", "allow", "Bash(make:*)") in listing(loaded)
    # a changed file waits again
    write(project_file(ws), PROJECT + "# changed\n")
    assert load(ws, home, Approvals((real, sha))).waiting != []


def test_narrowing_files_ask_nobody(ws: Path, home: Path) -> None:
    write(project_file(ws), "defaultMode: plan\npermissions:\n  deny: [Bash(rm:*)]\n")
    write(local_file(ws), "defaultMode: strict\n")
    approvals = Approvals()
    loaded = load(ws, home, approvals)
    assert approvals.asked == [] and loaded.waiting == []
    assert loaded.start_mode == "strict"  # local first


def test_a_default_mode_of_default_does_not_wait(ws: Path, home: Path) -> None:
    write(project_file(ws), "defaultMode: default\n")
    write(home / "permissions.yaml", "defaultMode: acceptEdits\n")
    loaded = load(ws, home)
    assert loaded.waiting == [] and loaded.start_mode == "default"


def test_the_local_file_waits_unless_this_machine_wrote_it(ws: Path, home: Path) -> None:
    sha = write(local_file(ws), "permissions:\n  allow: [Bash(make:*)]\n")
    real = Path(os.path.realpath(local_file(ws)))
    [waiting] = load(ws, home).waiting
    assert (waiting.source, waiting.rules, waiting.fingerprint) == ("local", ("Bash(make:*)",),
                                                                    sha)
    assert load(ws, home, Approvals((real, sha))).waiting == []


def test_user_and_settings_are_never_held(ws: Path, home: Path) -> None:
    write(home / "permissions.yaml", "defaultMode: acceptEdits\npermissions:\n  allow: [Bash]\n")
    approvals = Approvals()
    loaded = load(ws, home, approvals, settings={"allow": ["Read"]})
    assert approvals.asked == [] and loaded.waiting == []
    assert loaded.start_mode == "acceptEdits"


def test_start_mode_order(ws: Path, home: Path) -> None:
    write(home / "permissions.yaml", "defaultMode: strict\n")
    assert load(ws, home, settings={"defaultMode": "plan"}).start_mode == "strict"
    write(project_file(ws), "defaultMode: plan\n")
    assert load(ws, home).start_mode == "plan"
    write(local_file(ws), "defaultMode: yolo\n")
    assert load(ws, home).start_mode == "plan"  # the first *valid* one


def test_bypass_as_start_mode_needs_the_user_setting(ws: Path, home: Path) -> None:
    write(home / "permissions.yaml", "defaultMode: bypassPermissions\n")
    loaded = load(ws, home, settings={"defaultMode": "acceptEdits"})
    assert loaded.start_mode == "acceptEdits"
    assert loaded.problems == [f"{home / 'permissions.yaml'}: defaultMode bypassPermissions "
                               "needs permissions.allowBypass: true in the user settings; "
                               "ignored"]
    loaded = load(ws, home, allow_bypass=True)
    assert loaded.start_mode == "bypassPermissions"
    assert loaded.engine(ws, allow_bypass=True).mode == "bypassPermissions"


def test_a_workspace_that_is_the_home_folder(tmp_path: Path) -> None:
    home = tmp_path / ".PseudoClaude"
    write(home / "permissions.yaml", "permissions:\n  allow: [Bash]\n")
    approvals = Approvals()
    loaded = load_permissions(tmp_path, approved=approvals, user_dir=home)
    assert [rs.source for rs in loaded.rule_sets] == ["user"]
    assert approvals.asked == []


# -- write_local_rule ----------------------------------------------------------------------------

def test_write_local_rule_creates_the_file(ws: Path, home: Path) -> None:
    fingerprint = write_local_rule(ws, "Bash(npm run test:*)")
    data = local_file(ws).read_bytes()
    assert fingerprint == hashlib.sha256(data).hexdigest()
    assert yaml.safe_load(data) == {"permissions": {"allow": ["Bash(npm run test:*)"]}}
    assert data.startswith(b"# ")
    # recorded as trusted, it applies at once
    real = Path(os.path.realpath(local_file(ws)))
    loaded = load(ws, home, Approvals((real, fingerprint)))
    assert loaded.waiting == [] and ("local", "allow", "Bash(npm run test:*)") in listing(loaded)


def test_write_local_rule_creates_the_folder(tmp_path: Path) -> None:
    write_local_rule(tmp_path, "Bash(ls)")
    assert (tmp_path / ".PseudoClaude" / "permissions.local.yaml").is_file()


def test_write_local_rule_keeps_comments(ws: Path) -> None:
    write(local_file(ws), "# my rules\n"
                          "defaultMode: default  # keep\n"
                          "permissions:\n"
                          "  # what runs\n"
                          "  allow:\n"
                          "    - Bash(ls)   # listing\n"
                          "    - Read(src/**)\n"
                          "  deny:\n"
                          "    - Bash(rm:*)\n")
    write_local_rule(ws, "Bash(make:*)")
    assert local_file(ws).read_text() == ("# my rules\n"
                                          "defaultMode: default  # keep\n"
                                          "permissions:\n"
                                          "  # what runs\n"
                                          "  allow:\n"
                                          "    - Bash(ls)   # listing\n"
                                          "    - Read(src/**)\n"
                                          "    - Bash(make:*)\n"
                                          "  deny:\n"
                                          "    - Bash(rm:*)\n")


@pytest.mark.parametrize(("before", "after"), [
    ("", None),
    ("# only a comment\n", "# only a comment\npermissions:\n  allow:\n    - Bash(make:*)\n"),
    ("defaultMode: strict # c\n", "defaultMode: strict # c\npermissions:\n  allow:\n"
                                  "    - Bash(make:*)\n"),
    ("defaultMode: strict", "defaultMode: strict\npermissions:\n  allow:\n    - Bash(make:*)\n"),
    ("permissions:\n# c\n", "permissions:\n  allow:\n    - Bash(make:*)\n# c\n"),
    ("permissions:\n  deny:\n  - Bash(rm:*)  # no\n# end\n",
     "permissions:\n  deny:\n  - Bash(rm:*)  # no\n  allow:\n    - Bash(make:*)\n# end\n"),
    ("permissions:\n  allow:\n  deny: []\n",
     "permissions:\n  allow:\n    - Bash(make:*)\n  deny: []\n"),
    ("permissions:\n  allow: []  # none yet\n",
     'permissions:\n  allow: ["Bash(make:*)"]  # none yet\n'),
    ("permissions:\n  allow: [Bash(ls)]  # one\n",
     'permissions:\n  allow: [Bash(ls), "Bash(make:*)"]  # one\n'),
    ("permissions:\n  allow:\n  - Bash(ls)\n", "permissions:\n  allow:\n  - Bash(ls)\n"
                                              "  - Bash(make:*)\n"),
    ("permissions:\r\n  allow:\r\n    - Bash(ls)\r\n",
     "permissions:\r\n  allow:\r\n    - Bash(ls)\r\n    - Bash(make:*)\n"),
])
def test_add_allow_rule_edits_in_place(before: str, after: str | None) -> None:
    edited = add_allow_rule(before, "Bash(make:*)")
    if after is not None:
        assert edited == after
    data = yaml.safe_load(edited)
    assert data["permissions"]["allow"][-1] == "Bash(make:*)"


def test_add_allow_rule_rewrites_layouts_it_cannot_edit() -> None:
    text = "{defaultMode: strict, permissions: {allow: [Bash(ls)]}}\n"
    assert yaml.safe_load(add_allow_rule(text, "Bash(make:*)")) == {
        "defaultMode": "strict", "permissions": {"allow": ["Bash(ls)", "Bash(make:*)"]}}
    text = "permissions:\n  allow: Bash(ls)\n"
    assert yaml.safe_load(add_allow_rule(text, "Bash(make:*)")) == {
        "permissions": {"allow": ["Bash(ls)", "Bash(make:*)"]}}


def test_add_allow_rule_quotes_what_needs_quotes() -> None:
    for rule in ("Bash(echo #hi)", "Bash(echo 'a: b')", 'Bash(say "x")', "mcp__a__b"):
        edited = add_allow_rule("permissions:\n  allow:\n    - Bash(ls)\n", rule)
        assert yaml.safe_load(edited)["permissions"]["allow"] == ["Bash(ls)", rule]


def test_add_allow_rule_once() -> None:
    text = "permissions:\n  allow: [Bash(ls)]\n"
    assert add_allow_rule(text, "Bash(ls)") == text


@pytest.mark.parametrize("text", ["a: [", "- a\n", "permissions: 3\n",
                                  "permissions:\n  allow: {a: 1}\n"])
def test_add_allow_rule_refuses_a_broken_file(text: str) -> None:
    with pytest.raises(PermissionsError, match="the rule was not written"):
        add_allow_rule(text, "Bash(ls)")


def test_write_local_rule_refuses_bad_rules_and_broken_files(ws: Path) -> None:
    with pytest.raises(RuleError):
        write_local_rule(ws, "Bash(")
    write(local_file(ws), "a: [\n")
    with pytest.raises(PermissionsError):
        write_local_rule(ws, "Bash(ls)")
    assert local_file(ws).read_text() == "a: [\n"


def test_write_local_rule_keeps_the_file_mode(ws: Path) -> None:
    write(local_file(ws), "permissions:\n  allow: []\n")
    os.chmod(local_file(ws), 0o640)
    write_local_rule(ws, "Bash(ls)")
    assert local_file(ws).stat().st_mode & 0o777 == 0o640


def test_write_local_rule_does_not_follow_a_folder_leading_elsewhere(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (root / ".PseudoClaude").symlink_to(elsewhere)
    with pytest.raises(PermissionsError, match="leads elsewhere"):
        write_local_rule(root, "Bash(ls)")
    assert list(elsewhere.iterdir()) == []
