"""The user's guide: the README leads with what a user does (install, connect a model, first
run, everyday use) and keeps the two set-up commands; one project URL, declared in the
package's metadata and used by every install line; a terminal install that works on a system
Python that refuses ``pip install`` (Debian's and Ubuntu's "externally managed"); and the
project instructions file (``PSEUDOCLAUDE.md``) documented where the agent reads it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from pseudoclaude.agent.instructions import (
    LOCAL_FILE,
    MAX_INCLUDE_DEPTH,
    MAX_INSTRUCTION_BYTES,
    NESTED_FILES,
    PROJECT_FILES,
    instruction_files,
)

ROOT = Path(__file__).resolve().parents[2]
HOME = "https://github.com/pseudoclaude/pseudoclaude-lsp"
INSTALL_DOCS = ("README.md", "editors/nvim/README.md", "editors/nvim/doc/pseudoclaude.txt")


def test_the_package_declares_its_project_urls() -> None:
    urls = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["urls"]
    assert set(urls) == {"Homepage", "Repository", "Issues", "Changelog"}
    assert urls["Homepage"] == urls["Repository"] == HOME
    assert all(url.startswith(HOME) for url in urls.values()), urls


def test_install_lines_use_the_project_url() -> None:
    for name in INSTALL_DOCS:
        text = (ROOT / name).read_text()
        assert "example.com/you" not in text, name
        assert HOME in text, name
    nvim = (ROOT / "editors/nvim/README.md").read_text()
    assert f"url = '{HOME}'" in nvim  # lazy.nvim
    assert f"src = '{HOME}'" in nvim  # vim.pack


def test_the_terminal_install_uses_an_environment_of_its_own() -> None:
    readme = (ROOT / "README.md").read_text()
    bare = [line for line in readme.splitlines()
            if re.search(r"(^|&&\s*)pip3? install\b", line.strip())]
    assert bare == [], bare  # refused by an externally managed system Python
    assert "python3 -m venv ~/.local/share/pseudoclaude" in readme
    assert "~/.local/share/pseudoclaude/bin/pip install dist/pseudoclaude_lsp-*.whl" in readme
    assert "pipx install dist/pseudoclaude_lsp-*.whl" in readme


def test_the_readme_is_a_users_guide_first() -> None:
    readme = (ROOT / "README.md").read_text()
    sections = re.findall(r"^## (.+)$", readme, re.M)
    assert sections[:4] == ["Install", "Connect a model", "First run", "Set-up: two commands"]
    assert "Everyday use" in sections and "Where things are kept" in sections
    assert "make demo   #" in readme and "make test   #" in readme
    assert len(readme.encode()) < 20_000  # the reference lives in docs/
    assert "SPEC" not in readme


def test_the_instructions_files_are_documented_where_the_agent_reads_them() -> None:
    files = instruction_files(Path("/w"), Path("/u"))
    assert [str(f.path) for f in files] == ["/u/PSEUDOCLAUDE.md", *(
        f"/w/{name}" for name in PROJECT_FILES), f"/w/{LOCAL_FILE}"]
    config = (ROOT / "docs" / "configuration.md").read_text()
    # the reference lists each file, in the order they are read
    places = ["`~/.PseudoClaude/PSEUDOCLAUDE.md`", *(f"`<workspace>/{name}`"
                                                    for name in PROJECT_FILES),
              *(f"`<workspace>/<folder>/{name}`" for name in NESTED_FILES),
              f"`<workspace>/{LOCAL_FILE}`"]
    found = [config.find(p) for p in places]
    assert -1 not in found and found == sorted(found), found
    readme = (ROOT / "README.md").read_text()
    for name in ("~/.PseudoClaude/PSEUDOCLAUDE.md", *PROJECT_FILES, LOCAL_FILE):
        assert name in readme, name
    for text in (readme, config):
        assert f"{MAX_INSTRUCTION_BYTES // 1024} KiB" in text
        assert f"up to {MAX_INCLUDE_DEPTH} levels" in text
        assert "@relative/path.md" in text
