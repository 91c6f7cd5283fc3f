"""Sub-agent roles (SPEC §13): the Markdown frontmatter, tool names and their problems."""

from __future__ import annotations

from pathlib import Path

from pseudoclaude.agents.roles import BUILTIN, load_roles, parse_role


def test_tools_as_a_string_of_friendly_names_and_a_model() -> None:
    role, problems = parse_role(
        "---\nname: reviewer\ndescription: Reviews\ntools: Read, Grep, Bash(git *)\n"
        "model: small-model\nmaxTurns: 4\n---\nReview the code.\n",
        source="workspace", path="x.md")
    assert problems == []
    assert role is not None
    assert role.tools == ("read_file", "search_code", "run_command")
    assert role.model == "small-model" and role.max_turns == 4
    assert role.prompt == "Review the code."
    assert role.allows("read_file") and not role.allows("write_file")


def test_a_yaml_list_with_an_unknown_name_warns_and_loads() -> None:
    role, problems = parse_role(
        "---\nname: r\ndescription: d\ntools: [read_file, Teleport]\nmaxTurns: zero\n---\n",
        source="user", path="r.md")
    assert role is not None and role.tools == ("read_file",)
    assert role.max_turns is None
    assert any("Teleport" in p.message for p in problems)
    assert any("maxTurns" in p.message for p in problems)


def test_no_description_or_a_bad_name_is_refused() -> None:
    assert parse_role("---\nname: r\n---\nbody", source="user", path="r.md")[0] is None
    assert parse_role("---\nname: Bad Name\ndescription: d\n---\n", source="user",
                      path="r.md")[0] is None
    assert parse_role("no frontmatter", source="user", path="r.md")[0] is None


def test_sources_and_precedence(tmp_path: Path) -> None:
    home = tmp_path / "home"
    ws = tmp_path / "ws"
    for folder, text in ((ws / ".claude" / "agents", "from claude"),
                         (home / ".PseudoClaude" / "agents", "from user"),
                         (ws / ".PseudoClaude" / "agents", "from workspace")):
        folder.mkdir(parents=True)
        (folder / "helper.md").write_text(f"---\nname: helper\ndescription: {text}\n---\n")
    (home / ".PseudoClaude" / "agents" / "mine.md").write_text(
        "---\nname: mine\ndescription: only mine\n---\n")
    roles = load_roles(ws, home)
    assert roles.names[:3] == [role.name for role in BUILTIN]
    helper = roles.get("helper")
    assert helper is not None and helper.description == "from workspace"
    assert roles.get("mine") is not None
    assert "- explore: " in roles.listing() and "- helper: from workspace" in roles.listing()
    assert roles.listing(plan=True).count("\n") == 1  # explore and plan only


def test_background_isolation_and_a_narrowing_permission_mode() -> None:
    role, problems = parse_role(
        "---\nname: watcher\ndescription: d\nbackground: true\nisolation: worktree\n"
        "permissionMode: plan\n---\n", source="workspace", path="w.md")
    assert problems == [] and role is not None
    assert role.background and role.isolation == "worktree" and role.mode == "plan"
    # plan: read-only tools only, whatever its tools say
    assert role.allows("read_file") and not role.allows("write_file")
    assert not role.allows("run_command")
    strict, problems = parse_role("---\nname: s\ndescription: d\npermissionMode: strict\n---\n",
                                  source="user", path="s.md")
    assert problems == [] and strict is not None and strict.mode == "strict"
    assert strict.allows("write_file")


def test_a_role_cannot_widen_the_sessions_mode() -> None:
    """A repository's role file asking for more than the session allows is not applied and
    says so; a bad value falls back too."""
    for wide in ("bypassPermissions", "acceptEdits", "dontAsk"):
        role, problems = parse_role(
            f"---\nname: w\ndescription: d\npermissionMode: {wide}\n---\n",
            source="claude", path="w.md")
        assert role is not None and role.mode == ""
        assert [p.message for p in problems] == [
            f"permissionMode {wide} is not applied: a role cannot allow more than the session's "
            "mode (only plan and strict narrow it)"]
    for quiet in ("inherit", "default"):
        role, problems = parse_role(
            f"---\nname: q\ndescription: d\npermissionMode: {quiet}\n---\n",
            source="user", path="q.md")
        assert role is not None and role.mode == "" and problems == []
    role, problems = parse_role(
        "---\nname: b\ndescription: d\npermissionMode: yolo\nbackground: often\n"
        "isolation: docker\n---\n", source="user", path="b.md")
    assert role is not None and (role.mode, role.background, role.isolation) == ("", False, "")
    assert len(problems) == 3
