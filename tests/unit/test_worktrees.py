"""Worktree sessions with the real ``git``: a worktree made from HEAD and set up, the session's
changes told and applied to the main tree (all or nothing), and removal — while the user's
branch, index, HEAD and stash are never touched."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

from pseudoclaude.worktrees import (
    FileChange,
    Worktree,
    WorktreeError,
    apply,
    core,
    create,
    git_available,
    load,
    remove,
    status,
    unapplied,
)

pytestmark = pytest.mark.skipif(not git_available(), reason="needs the git command")

SID = "20250101-120000-abcd"
BINARY = bytes(range(256)) * 8 + b"\0\xff\xfe"


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "GIT_OPTIONAL_LOCKS": "0",
        "GIT_AUTHOR_NAME": "User", "GIT_AUTHOR_EMAIL": "user@example.invalid",
        "GIT_COMMITTER_NAME": "User", "GIT_COMMITTER_EMAIL": "user@example.invalid",
    })
    done = subprocess.run(["git", *args], cwd=cwd, env=env, capture_output=True, check=True)
    return done.stdout.decode()


def write(path: Path, text: str | bytes, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    if mode is not None:
        path.chmod(mode)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository with a commit, a stash, a staged file, a file changed but not staged and
    the workspace's settings and dependency folders (not committed)."""
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q", "-b", "trunk")
    write(main / ".gitignore", "*.log\nnode_modules/\n.venv/\n")
    write(main / "README.md", "# Project\n")
    write(main / "src" / "app.py", "print('v1')\n")
    write(main / "bin" / "run.sh", "#!/bin/sh\necho run\n", 0o755)
    write(main / "assets" / "logo.bin", BINARY)
    write(main / ".PseudoClaude" / "config.yaml", "model: committed\n")
    git(main, "add", "-A")
    git(main, "commit", "-q", "-m", "first")
    write(main / "src" / "app.py", "print('stashed')\n")
    git(main, "stash", "-q")
    write(main / "staged.txt", "staged by the user\n")
    git(main, "add", "staged.txt")
    write(main / ".PseudoClaude" / "config.yaml", "model: the user's own\n")  # not committed
    data = main / ".PseudoClaude"
    write(data / ".gitignore", "sessions/\n")
    write(data / "permissions.local.yaml", "allow: [read_file]\n")
    write(data / "hooks.yaml", "hooks: []\n")
    write(data / "agents" / "reviewer.md", "---\nname: reviewer\n---\nReview.\n")
    write(data / "skills" / "lint" / "SKILL.md", "# Lint\n")
    write(data / "notes.txt", "not a setting\n")
    write(main / "node_modules" / "left-pad" / "index.js", "module.exports = 1\n")
    write(main / ".venv" / "pyvenv.cfg", "home = /usr\n")
    return main


def data_dir(repo: Path) -> Path:
    return repo / ".PseudoClaude"


def user_state(repo: Path) -> dict[str, object]:
    """Everything of the user's that must never change: branch, HEAD, index (its bytes, and
    what is staged), stash, refs but ours, what ``git status`` says."""
    refs = [line for line in git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
            .splitlines() if "refs/heads/pseudoclaude/" not in line]
    return {
        "branch": git(repo, "symbolic-ref", "HEAD"),
        "head": git(repo, "rev-parse", "HEAD"),
        "index": hashlib.sha256((repo / ".git" / "index").read_bytes()).hexdigest(),
        "staged": git(repo, "diff", "--cached", "--name-status"),
        "stash": git(repo, "stash", "list"),
        "refs": refs,
        "status": git(repo, "status", "--porcelain", "-uall"),
    }


def porcelain_paths(repo: Path) -> set[str]:
    return {line[3:] for line in git(repo, "status", "--porcelain", "-uall").splitlines()}


def paths(files: list[FileChange]) -> dict[str, str]:
    return {f.path: f.action for f in files}


# -- create --------------------------------------------------------------------------------
def test_create_makes_a_worktree_on_its_branch_from_head(repo: Path) -> None:
    before = user_state(repo)
    wt = create(repo, data_dir(repo), SID)
    head = git(repo, "rev-parse", "HEAD").strip()
    assert wt.path == (data_dir(repo) / "worktrees" / SID).resolve() and wt.path.is_absolute()
    assert wt.branch == f"pseudoclaude/{SID}" and wt.base == head and len(wt.base) == 40
    assert git(wt.path, "rev-parse", "HEAD").strip() == head
    assert git(wt.path, "symbolic-ref", "HEAD").strip() == f"refs/heads/pseudoclaude/{SID}"
    assert (wt.path / "src" / "app.py").read_text() == "print('v1')\n"
    assert not (wt.path / "staged.txt").exists()  # from HEAD, not from the user's index
    record = json.loads((data_dir(repo) / "worktrees" / f"{SID}.json").read_text())
    assert {record[k] for k in ("path", "branch", "base")} == {str(wt.path), wt.branch, head}
    assert record["created"]
    assert load(data_dir(repo), SID) == wt and load(data_dir(repo), "other") is None
    assert load(data_dir(repo), "../main") is None
    st = status(wt)
    assert st.files == [] and st.message == "no changes yet"
    assert user_state(repo) == before  # nor does `git status` show the worktree


def test_setup_copies_the_settings_and_links_the_dependency_folders(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    settings = wt.path / ".PseudoClaude"
    for name in ("config.yaml", "permissions.local.yaml", "hooks.yaml", "agents/reviewer.md",
                 "skills/lint/SKILL.md"):
        assert (settings / name).read_bytes() == (data_dir(repo) / name).read_bytes(), name
    assert (settings / "config.yaml").read_text() == "model: the user's own\n"
    assert not (settings / "notes.txt").exists() and not (settings / "worktrees").exists()
    for name in ("node_modules", ".venv"):
        link = wt.path / name
        assert link.is_symlink() and link.resolve() == (repo / name).resolve()
    assert (wt.path / "node_modules" / "left-pad" / "index.js").is_file()
    assert not os.path.lexists(wt.path / "vendor")  # the main tree has none
    # what setup wrote is not a change of the session's (the links are not ignored by
    # `node_modules/`, which matches folders only)
    assert status(wt).files == []


def test_a_committed_vendor_folder_is_the_worktrees_own(repo: Path) -> None:
    write(repo / "vendor" / "lib.go", "package lib\n")
    git(repo, "add", "vendor")
    git(repo, "commit", "-q", "-m", "vendor")
    wt = create(repo, data_dir(repo), SID)
    assert not (wt.path / "vendor").is_symlink() and (wt.path / "vendor" / "lib.go").is_file()


def test_a_workspace_in_a_folder_of_the_repository(repo: Path) -> None:
    workspace = repo / "pkg"
    write(workspace / "lib.py", "A = 1\n")
    git(repo, "add", "pkg")
    git(repo, "commit", "-q", "-m", "pkg")
    write(workspace / ".PseudoClaude" / "hooks.yaml", "hooks: [pkg]\n")
    wt = create(workspace, workspace / ".PseudoClaude", SID)
    assert wt.prefix == "pkg" and wt.workspace == wt.path / "pkg" and wt.repo == repo.resolve()
    assert (wt.workspace / ".PseudoClaude" / "hooks.yaml").read_text() == "hooks: [pkg]\n"
    write(wt.workspace / "lib.py", "A = 2\n")
    assert paths(status(wt).files) == {"pkg/lib.py": "modify"}
    assert apply(workspace, wt).applied == ["pkg/lib.py"]
    assert (workspace / "lib.py").read_text() == "A = 2\n"


def test_the_data_folders_gitignore_ignores_worktrees(repo: Path, tmp_path: Path) -> None:
    create(repo, data_dir(repo), SID)
    assert (data_dir(repo) / ".gitignore").read_text() == "sessions/\nworktrees/\n"
    create(repo, data_dir(repo), "second")  # already there: not appended twice
    assert (data_dir(repo) / ".gitignore").read_text() == "sessions/\nworktrees/\n"

    other = tmp_path / "data-elsewhere"
    create(repo, other, "third")
    gitignore = other / ".gitignore"
    lines = gitignore.read_text().splitlines()
    assert "sessions/" in lines and "worktrees/" in lines
    assert stat.S_IMODE(gitignore.stat().st_mode) == 0o600

    no_newline = tmp_path / "data-3"
    write(no_newline / ".gitignore", "mine")
    create(repo, no_newline, "fourth")
    assert (no_newline / ".gitignore").read_text() == "mine\nworktrees/\n"


def test_errors_are_one_clear_line(repo: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorktreeError, match="is not a git repository: worktree sessions need "
                                            "git"):
        create(plain, plain / ".PseudoClaude", SID)
    assert not (plain / ".PseudoClaude").exists()

    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "-q")
    with pytest.raises(WorktreeError, match="has no commit yet"):
        create(empty, empty / ".PseudoClaude", SID)

    create(repo, data_dir(repo), SID)
    with pytest.raises(WorktreeError, match="already exists"):
        create(repo, data_dir(repo), SID)
    with pytest.raises(WorktreeError, match="cannot name a worktree"):
        create(repo, data_dir(repo), "../escape")

    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    with pytest.raises(WorktreeError, match="need the `git` command, which is not on PATH"):
        create(repo, data_dir(repo), "no-git")


def test_a_failed_setup_leaves_no_worktree(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(*args: object) -> list[str]:
        raise OSError("disk full")

    monkeypatch.setattr(core, "prepare", broken)
    with pytest.raises(OSError, match="disk full"):
        create(repo, data_dir(repo), SID)
    assert not (data_dir(repo) / "worktrees" / SID).exists()
    assert load(data_dir(repo), SID) is None
    assert not git(repo, "branch", "--list", f"pseudoclaude/{SID}").strip()
    assert str(data_dir(repo) / "worktrees") not in git(repo, "worktree", "list")


# -- status --------------------------------------------------------------------------------
def test_status_has_committed_staged_modified_new_and_deleted_files(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    before = user_state(repo)
    write(wt.path / "src" / "app.py", "print('v2')\n")
    git(wt.path, "commit", "-q", "-am", "the session's commit")
    write(wt.path / "src" / "util.py", "X = 1\n")
    git(wt.path, "add", "src/util.py")
    write(wt.path / "docs" / "new.md", "untracked\n")
    (wt.path / "README.md").unlink()
    write(wt.path / "debug.log", "ignored\n")
    (wt.path / "bin" / "run.sh").chmod(0o644)  # the mode alone
    st = status(wt)
    assert paths(st.files) == {"src/app.py": "modify", "src/util.py": "create",
                               "docs/new.md": "create", "README.md": "delete",
                               "bin/run.sh": "modify"}
    assert st.path == wt.path and st.path.is_absolute()
    assert (st.branch, st.base) == (wt.branch, wt.base)
    assert st.message == f"5 files changed in the worktree on branch pseudoclaude/{SID}"
    assert st.as_json()["files"][0] == {"path": st.files[0].path, "action": st.files[0].action}
    assert user_state(repo) == before

    write(wt.path / "src" / "app.py", "print('v1')\n")  # back as base had it: no change
    assert "src/app.py" not in paths(status(wt).files)


def test_a_changed_setup_file_is_a_change(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    write(wt.path / ".PseudoClaude" / "hooks.yaml", "hooks: [lint]\n")
    assert paths(status(wt).files) == {".PseudoClaude/hooks.yaml": "create"}


# -- apply ---------------------------------------------------------------------------------
def test_apply_writes_the_main_trees_files_only(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    write(wt.path / "src" / "app.py", "print('v2')\n")
    git(wt.path, "commit", "-q", "-am", "committed in the worktree")
    write(wt.path / "assets" / "logo.bin", BINARY[::-1])
    write(wt.path / "assets" / "new.bin", b"\0\x01\x02" + BINARY)
    write(wt.path / "tools" / "fmt.sh", "#!/bin/sh\n", 0o755)
    os.symlink("../src/app.py", wt.path / "assets" / "app-link")
    (wt.path / "README.md").unlink()
    before = user_state(repo)

    result = apply(repo, wt)
    assert result.conflicts == []
    assert sorted(result.applied) == ["README.md", "assets/app-link", "assets/logo.bin",
                                      "assets/new.bin", "src/app.py", "tools/fmt.sh"]
    assert result.message == "applied 6 files to the main tree"
    assert (repo / "src" / "app.py").read_text() == "print('v2')\n"
    assert (repo / "assets" / "logo.bin").read_bytes() == BINARY[::-1]
    assert (repo / "assets" / "new.bin").read_bytes() == b"\0\x01\x02" + BINARY
    assert os.readlink(repo / "assets" / "app-link") == "../src/app.py"
    assert os.access(repo / "tools" / "fmt.sh", os.X_OK)
    assert os.access(repo / "bin" / "run.sh", os.X_OK)
    assert not (repo / "README.md").exists()

    after = user_state(repo)
    for key in ("branch", "head", "staged", "stash", "refs"):
        assert after[key] == before[key], key
    assert git(repo, "diff", "--cached", "--name-only") == "staged.txt\n"
    changed = porcelain_paths(repo) - {line[3:] for line in str(before["status"]).splitlines()}
    assert changed == {"README.md", "assets/app-link", "assets/logo.bin", "assets/new.bin",
                       "src/app.py", "tools/fmt.sh"}
    record = load(data_dir(repo), SID)
    assert record is not None and record.applied.keys() == set(result.applied)
    assert unapplied(wt) == []


def test_apply_with_conflicts_changes_nothing(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    write(wt.path / "src" / "app.py", "print('session')\n")
    write(wt.path / "fresh.txt", "from the session\n")
    write(wt.path / "both.txt", "from the session\n")
    (wt.path / "assets" / "logo.bin").unlink()
    write(repo / "src" / "app.py", "print('user')\n")  # the user changed it too
    write(repo / "both.txt", "from the user\n")  # and made a file the session made
    before = user_state(repo)

    result = apply(repo, wt)
    assert result.applied == [] and sorted(result.conflicts) == ["both.txt", "src/app.py"]
    assert result.message.startswith("nothing applied: 2 files changed in the main tree too")
    assert (repo / "src" / "app.py").read_text() == "print('user')\n"
    assert not (repo / "fresh.txt").exists() and (repo / "assets" / "logo.bin").exists()
    assert user_state(repo) == before
    record = load(data_dir(repo), SID)
    assert record is not None and record.applied == {}
    with pytest.raises(WorktreeError, match="apply them or remove with force"):
        remove(repo, wt)


def test_apply_again_after_more_changes(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    write(wt.path / "src" / "app.py", "print('v2')\n")
    assert apply(repo, wt).applied == ["src/app.py"]
    write(wt.path / "src" / "app.py", "print('v3')\n")
    write(wt.path / "same.txt", "the same\n")
    write(repo / "same.txt", "the same\n")  # the user made the same change: not a conflict
    assert unapplied(wt) == ["same.txt", "src/app.py"]
    # the main tree holds what the last apply wrote: not a conflict
    result = apply(repo, wt)
    assert result.applied == ["same.txt", "src/app.py"] and result.conflicts == []
    assert (repo / "src" / "app.py").read_text() == "print('v3')\n"
    assert apply(repo, wt).conflicts == [] and unapplied(wt) == []


def test_a_change_the_session_took_back_is_taken_back_by_the_next_apply(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    write(wt.path / "src" / "app.py", "print('v2')\n")
    write(wt.path / "extra.txt", "for a while\n")
    (wt.path / "README.md").unlink()
    assert apply(repo, wt).conflicts == []
    git(wt.path, "checkout", "-q", "--", "src/app.py", "README.md")
    (wt.path / "extra.txt").unlink()
    assert status(wt).files == [] and unapplied(wt) == ["README.md", "extra.txt", "src/app.py"]
    with pytest.raises(WorktreeError, match="apply them or remove with force"):
        remove(repo, wt)
    result = apply(repo, wt)
    assert result.applied == ["README.md", "extra.txt", "src/app.py"] and not result.conflicts
    assert (repo / "src" / "app.py").read_text() == "print('v1')\n"
    assert (repo / "README.md").read_text() == "# Project\n" and not (repo / "extra.txt").exists()
    assert unapplied(wt) == []
    again = apply(repo, wt)
    assert again.applied == [] and again.message.startswith("nothing to apply: the main tree")
    remove(repo, wt)


def test_apply_with_nothing_to_apply(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    before = user_state(repo)
    result = apply(repo, wt)
    assert (result.applied, result.conflicts) == ([], [])
    assert result.message == "nothing to apply: no changes yet"
    assert user_state(repo) == before


def test_a_file_replaced_by_a_folder(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    (wt.path / "README.md").unlink()
    write(wt.path / "README.md" / "index.md", "now a folder\n")
    (wt.path / "src" / "app.py").unlink()
    (wt.path / "src").rmdir()
    write(wt.path / "src", "now a file\n")
    assert paths(status(wt).files) == {"README.md": "delete", "README.md/index.md": "create",
                                       "src/app.py": "delete", "src": "create"}
    assert apply(repo, wt).conflicts == []
    assert (repo / "README.md" / "index.md").read_text() == "now a folder\n"
    assert (repo / "src").read_text() == "now a file\n"


# -- remove --------------------------------------------------------------------------------
def gone(repo: Path, wt: Worktree) -> bool:
    listed = git(repo, "worktree", "list", "--porcelain")
    return (not os.path.lexists(wt.path) and str(wt.path) not in listed
            and not git(repo, "branch", "--list", wt.branch).strip()
            and load(wt.data_dir, wt.session_id) is None)


def test_remove_is_refused_with_changes_not_applied(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    write(wt.path / "src" / "app.py", "print('v2')\n")
    write(wt.path / "new.txt", "new\n")
    with pytest.raises(WorktreeError) as refused:
        remove(repo, wt)
    message = str(refused.value)
    assert "src/app.py" in message and "new.txt" in message
    assert message.endswith("apply them or remove with force") and "\n" not in message
    assert wt.path.is_dir() and load(data_dir(repo), SID) is not None


def test_remove_after_apply_needs_no_force(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    write(wt.path / "src" / "app.py", "print('v2')\n")
    assert apply(repo, wt).conflicts == []
    before = user_state(repo)
    remove(repo, wt)
    assert gone(repo, wt)
    # the linked folders were unlinked, never emptied
    assert (repo / "node_modules" / "left-pad" / "index.js").is_file()
    assert (repo / ".venv" / "pyvenv.cfg").is_file()
    assert user_state(repo) == before


def test_remove_with_force_and_without_changes(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    write(wt.path / "src" / "app.py", "print('lost')\n")
    git(wt.path, "commit", "-q", "-am", "a commit on the session's branch")
    before = user_state(repo)
    remove(repo, wt, force=True)
    assert gone(repo, wt)
    assert (repo / "node_modules" / "left-pad" / "index.js").is_file()
    assert (repo / "src" / "app.py").read_text() != "print('lost')\n"
    assert user_state(repo) == before

    clean = create(repo, data_dir(repo), "clean")
    remove(repo, clean)  # nothing to lose
    assert gone(repo, clean)


def test_remove_a_worktree_whose_folder_was_deleted(repo: Path) -> None:
    wt = create(repo, data_dir(repo), SID)
    for name in ("node_modules", ".venv"):
        (wt.path / name).unlink()
    subprocess.run(["rm", "-rf", str(wt.path)], check=True)
    remove(repo, wt)
    assert gone(repo, wt)
