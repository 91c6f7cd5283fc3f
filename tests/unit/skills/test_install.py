"""Installing a skill package: a zip file or a folder, checked whole first; a member with
``..``, an absolute path, a backslash or a symbolic link refuses it, and nothing is written."""

from __future__ import annotations

import os
import stat
import zipfile
from pathlib import Path

import pytest

from pseudoclaude.skills import InstallError, discover, inspect, install, roots, shown_path

SKILL_MD = "---\nname: lint\ndescription: Lint the code.\n---\nRun the linter on $ARGUMENTS.\n"
TOOLS = '{"tools": [{"name": "lint_now", "description": "Lint.", "command": ["run.sh"]}]}'


def make_zip(path: Path, members: dict[str, str], links: dict[str, str] | None = None,
             executable: tuple[str, ...] = ()) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in members.items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFREG | (0o755 if name in executable else 0o644)) << 16
            archive.writestr(info, text)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            archive.writestr(info, target)
    return path


def everything(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() \
        else []


def test_a_zip_installs_into_the_skills_folder(tmp_path: Path) -> None:
    package = inspect(make_zip(tmp_path / "lint.zip", {
        "lint/SKILL.md": SKILL_MD, "lint/tools.json": TOOLS, "lint/run.sh": "#!/bin/sh\n",
        "lint/docs/more.md": "more"}, executable=("lint/run.sh",)))
    assert package.name == "lint"
    manifest = package.manifest("~/.PseudoClaude/skills/lint")
    assert "Installed into ~/.PseudoClaude/skills/lint" in manifest
    assert "run.sh (10 bytes) executable" in manifest and "--- SKILL.md ---" in manifest
    skills = tmp_path / "user" / "skills"
    target = install(package, skills)
    assert target == skills / "lint"
    assert everything(skills) == ["lint", "lint/SKILL.md", "lint/docs", "lint/docs/more.md",
                                  "lint/run.sh", "lint/tools.json"]
    assert os.access(target / "run.sh", os.X_OK) and not os.access(target / "SKILL.md", os.X_OK)
    catalog = discover(roots(tmp_path / "ws", tmp_path / "user"), shown_path(tmp_path))
    lint = catalog.get("lint")
    assert lint is not None and lint.source == "user" and lint.tools[0].name == "lint_now"
    with pytest.raises(InstallError, match="installed already"):
        install(package, skills)  # never replaced


@pytest.mark.parametrize(("member", "why"), [
    ("lint/../../evil.md", "'..'"),
    ("/etc/evil.md", "an absolute path"),
    ("lint\\..\\evil.md", "a backslash"),
    ("C:/evil.md", "an absolute path"),
])
def test_a_bad_path_refuses_the_whole_package(tmp_path: Path, member: str, why: str) -> None:
    source = make_zip(tmp_path / "bad.zip", {"lint/SKILL.md": SKILL_MD, member: "x"})
    with pytest.raises(InstallError, match=why):
        inspect(source)
    assert everything(tmp_path / "user") == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.zip"]  # nothing anywhere


def test_a_symbolic_link_refuses_the_package(tmp_path: Path) -> None:
    source = make_zip(tmp_path / "link.zip", {"lint/SKILL.md": SKILL_MD},
                      links={"lint/passwd": "/etc/passwd"})
    with pytest.raises(InstallError, match="a symbolic link"):
        inspect(source)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.zip"]


def test_a_folder_installs_and_a_link_in_it_refuses_it(tmp_path: Path) -> None:
    source = tmp_path / "src" / "lint"
    source.mkdir(parents=True)
    (source / "SKILL.md").write_text(SKILL_MD)
    (source / "notes.md").write_text("notes")
    target = install(inspect(source), tmp_path / "skills")
    assert everything(target) == ["SKILL.md", "notes.md"]
    (source / "key").symlink_to(Path.home() / ".ssh" / "id_rsa")
    with pytest.raises(InstallError, match="a symbolic link"):
        inspect(source)


def test_what_is_checked_before_anything_is_written(tmp_path: Path) -> None:
    cases = {
        "two.zip": ({"a/SKILL.md": SKILL_MD, "b/SKILL.md": SKILL_MD}, "one folder"),
        "none.zip": ({"lint/README.md": "x"}, "no SKILL.md"),
        "broken.zip": ({"lint/SKILL.md": "---\nname: Lint Tool\n---\nx\n"},
                       "not a valid skill name"),
        "tools.zip": ({"lint/SKILL.md": SKILL_MD, "lint/tools.json": TOOLS},
                      "'run.sh' is not a file"),
    }
    for name, (members, why) in cases.items():
        with pytest.raises(InstallError, match=why):
            inspect(make_zip(tmp_path / name, members))
    (tmp_path / "not.zip").write_text("not a zip")
    with pytest.raises(InstallError, match="not a zip file"):
        inspect(tmp_path / "not.zip")
    with pytest.raises(InstallError, match="not from a URL"):
        inspect("https://example.com/skill.zip")
    with pytest.raises(InstallError, match="does not exist"):
        inspect(tmp_path / "missing.zip")
    assert not (tmp_path / "skills").exists()


def test_skill_md_at_the_top_of_the_zip(tmp_path: Path) -> None:
    package = inspect(make_zip(tmp_path / "anything.zip", {"SKILL.md": SKILL_MD,
                                                           "extra/a.txt": "a"}))
    target = install(package, tmp_path / "skills")
    assert target.name == "lint" and everything(target) == ["SKILL.md", "extra", "extra/a.txt"]


def test_members_that_say_no_file_type_are_plain_files(tmp_path: Path) -> None:
    """Zip tools that write no Unix mode (Windows', ``zipfile.writestr``): plain files."""
    source = tmp_path / "plain.zip"
    with zipfile.ZipFile(source, "w") as archive:
        archive.writestr("lint/SKILL.md", SKILL_MD)
        info = zipfile.ZipInfo("lint/data.txt")
        info.external_attr = 0x20  # the DOS "archive" bit only
        archive.writestr(info, "data")
        fifo = zipfile.ZipInfo("lint/pipe")
        fifo.external_attr = (stat.S_IFIFO | 0o644) << 16
    target = install(inspect(source), tmp_path / "skills")
    assert everything(target) == ["SKILL.md", "data.txt"]
    with zipfile.ZipFile(source, "a") as archive:
        archive.writestr(fifo, "")
    with pytest.raises(InstallError, match="not a regular file"):
        inspect(source)
