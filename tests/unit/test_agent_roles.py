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
