"""Finding a folder's skills: every source, the precedence when names collide, the forms of
each source, problems named by file and line while the others load, links out refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from pseudoclaude.skills import BUILTIN_DIR, discover, roots, shown_path

SKILL = "---\nname: {name}\ndescription: {description}\n---\nDo {name} things.\n"


def write(path: Path, name: str, description: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SKILL.format(name=name, description=description or f"the {name} skill"))
    return path


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    ws, user = tmp_path / "ws", tmp_path / "user"
    ws.mkdir()
    user.mkdir()
    return ws, user


def scan(ws: Path, user: Path):
    return discover(roots(ws, user), shown_path(ws), frozenset({"read_file"}))


def test_builtin_skills_come_with_the_package(folders: tuple[Path, Path]) -> None:
    catalog = scan(*folders)
    assert [(s.name, s.source) for s in catalog.skills] == [
        ("commit", "builtin"), ("review", "builtin"), ("test", "builtin")]
    assert catalog.problems == ()
    assert all(s.path.parent.parent == BUILTIN_DIR for s in catalog.skills)
    assert all("$ARGUMENTS" in s.body for s in catalog.skills)


def test_every_source_and_the_precedence(folders: tuple[Path, Path]) -> None:
    ws, user = folders
    write(user / "skills" / "review" / "SKILL.md", "review", "user review")
    write(user / "skills" / "mine.md", "mine")  # the Go original's single-file form
    write(ws / ".agents" / "skills" / "review" / "SKILL.md", "review", "agents review")
    write(ws / ".agents" / "skills" / "shared" / "SKILL.md", "shared")
    write(ws / ".claude" / "skills" / "review" / "SKILL.md", "review", "claude review")
    write(ws / ".claude" / "skills" / "test" / "SKILL.md", "test", "claude test")
    write(ws / ".PseudoClaude" / "skills" / "review" / "SKILL.md", "review", "project review")
    write(ws / ".PseudoClaude" / "skills" / "quick.md", "quick")
    catalog = scan(ws, user)
    assert {s.name: (s.source, s.description) for s in catalog.skills} == {
        "commit": ("builtin", "Commit the changes with git, in small logical commits with "
                              "clear messages. Use when asked to commit."),
        "mine": ("user", "the mine skill"), "quick": ("workspace", "the quick skill"),
        "review": ("workspace", "project review"), "shared": ("agents", "the shared skill"),
        "test": ("claude", "claude test")}
    assert [s.name for s in catalog.skills] == sorted(s.name for s in catalog.skills)
    # without the project's own, .claude wins over .agents over the user's
    (ws / ".PseudoClaude" / "skills" / "review" / "SKILL.md").unlink()
    assert scan(ws, user).get("review").description == "claude review"  # type: ignore[union-attr]


def test_single_files_count_only_in_pseudoclaude_folders(folders: tuple[Path, Path]) -> None:
    ws, user = folders
    write(ws / ".claude" / "skills" / "README.md", "readme")
    write(ws / ".claude" / "skills" / "scripts" / "helper.md", "helper")  # no SKILL.md: none
    write(ws / ".agents" / "skills" / "legacy" / "legacy.md", "legacy")  # <dir>/<dir>.md
    catalog = scan(ws, user)
    names = {s.name for s in catalog.skills}
    assert "readme" not in names and "helper" not in names and "legacy" in names
    assert catalog.problems == ()


def test_a_malformed_skill_is_named_and_the_others_load(folders: tuple[Path, Path]) -> None:
    ws, user = folders
    base = ws / ".PseudoClaude" / "skills"
    write(base / "good" / "SKILL.md", "good")
    (base / "broken").mkdir(parents=True)
    (base / "broken" / "SKILL.md").write_text("---\nname: broken\ndescription: a: b: c\n"
                                              "---\nbody\n")
    (base / "Bad Name.md").write_text("---\ndescription: d\n---\nbody\n")
    (base / "binary.md").write_bytes(b"---\xff\xfe\n")
    write(base / "again" / "SKILL.md", "good")  # a second `good` in the same folder
    catalog = scan(ws, user)
    assert catalog.get("good") is not None and catalog.get("broken") is None
    problems = {p.path: (p.line, p.message) for p in catalog.problems}
    assert problems[".PseudoClaude/skills/broken/SKILL.md"][0] == 3
    assert "not valid YAML" in problems[".PseudoClaude/skills/broken/SKILL.md"][1]
    assert "not a valid skill name" in problems[".PseudoClaude/skills/Bad Name.md"][1]
    assert problems[".PseudoClaude/skills/binary.md"] == (None, "cannot be read: not UTF-8 text")
    assert "another skill of this folder is named 'good'" in \
        problems[".PseudoClaude/skills/good/SKILL.md"][1]  # `again` is read first
    assert {p.source for p in catalog.problems} == {"workspace"}


def test_links_out_of_the_workspace_are_not_read(folders: tuple[Path, Path],
                                                 tmp_path: Path) -> None:
    ws, user = folders
    secret = write(tmp_path / "secret" / "SKILL.md", "secret", "SECRET TEXT")
    base = ws / ".claude" / "skills"
    base.mkdir(parents=True)
    (base / "secret").symlink_to(secret.parent, target_is_directory=True)
    write(ws / ".agents" / "skills" / "inside" / "SKILL.md", "inside")
    (base / "inside").symlink_to(ws / ".agents" / "skills" / "inside")  # a link inside: fine
    catalog = scan(ws, user)
    assert catalog.get("secret") is None and catalog.get("inside") is not None
    [problem] = catalog.problems
    assert problem.path == ".claude/skills/secret/SKILL.md"
    assert "outside the workspace" in problem.message
    # the user's own folder may link anywhere
    (user / "skills").mkdir()
    (user / "skills" / "secret").symlink_to(secret.parent, target_is_directory=True)
    assert scan(ws, user).get("secret") is not None


def test_tools_json_of_a_folder_skill(folders: tuple[Path, Path]) -> None:
    ws, user = folders
    skill = write(ws / ".PseudoClaude" / "skills" / "lint" / "SKILL.md", "lint").parent
    (skill / "run.sh").write_text("#!/bin/sh\ncat\n")
    (skill / "tools.json").write_text(
        '{"tools": [{"name": "lint_now", "description": "Lint.", "command": ["run.sh"]},\n'
        '           {"name": "read_file", "description": "Taken.", "command": ["run.sh"]}]}')
    catalog = scan(ws, user)
    lint = catalog.get("lint")
    assert lint is not None and [t.name for t in lint.tools] == ["lint_now"]
    [problem] = catalog.problems
    assert (problem.path, problem.line) == (".PseudoClaude/skills/lint/tools.json", 2)
