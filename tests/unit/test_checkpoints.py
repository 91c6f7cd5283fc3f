"""The shadow Git repository of checkpoints, with the real ``git``: snapshots that respect the
workspace's ignore rules and never touch its own ``.git``, large files skipped, what changed
between snapshots, what changed outside since one, and files put back whole."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pseudoclaude.checkpoints import (
    BeforeImages,
    CheckpointError,
    ShadowRepo,
    git_available,
    open_checkpoints,
)

pytestmark = pytest.mark.skipif(not git_available(), reason="needs the git command")


@pytest.fixture
def repo(tmp_path: Path) -> ShadowRepo:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "app.py").write_text("print('v1')\n")
    (ws / "README.md").write_text("# Project\n")
    data = ws / ".PseudoClaude"
    data.mkdir()
    (data / "sessions.log").write_text("not a workspace file\n")
    return ShadowRepo(ws, data / "checkpoints", excluded=[data])


def tree(repo: ShadowRepo, ref: str) -> list[str]:
    out = repo._git("ls-tree", "-r", "--name-only", ref).stdout.decode()
    return sorted(out.splitlines())


def test_a_snapshot_has_the_files_but_not_the_data_folder(repo: ShadowRepo) -> None:
    snap = repo.snapshot("before run 1")
    assert tree(repo, snap.ref) == ["README.md", "src/app.py"]
    assert snap.skipped == [] and repo.head() == snap.ref
    again = repo.snapshot("nothing changed")
    assert again.ref != snap.ref and repo.changes(snap.ref, again.ref) == []


def test_the_users_git_is_never_touched_and_ignore_rules_apply(repo: ShadowRepo) -> None:
    ws = repo.workspace
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    (ws / ".gitignore").write_text("build/\n*.log\n")
    (ws / "build").mkdir()
    (ws / "build" / "out.bin").write_bytes(b"\0" * 10)
    (ws / "debug.log").write_text("noise\n")
    user_git = sorted(p.relative_to(ws / ".git").as_posix() for p in (ws / ".git").rglob("*"))
    snap = repo.snapshot("s")
    assert tree(repo, snap.ref) == [".gitignore", "README.md", "src/app.py"]
    after = sorted(p.relative_to(ws / ".git").as_posix() for p in (ws / ".git").rglob("*"))
    assert after == user_git  # no index, no object, no config written in the user's .git
    (ws / ".PseudoClaude" / "sessions.log").unlink()  # only the snapshots are left in it
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ws,
                            capture_output=True, text=True, check=True).stdout
    assert "checkpoints" not in status, status  # the snapshots ignore themselves


def test_files_over_the_limit_are_skipped_and_said(repo: ShadowRepo) -> None:
    small = ShadowRepo(repo.workspace, repo.folder, excluded=repo._excluded,
                       max_file_bytes=100)
    (repo.workspace / "big.csv").write_bytes(b"x" * 101)
    snap = small.snapshot("s")
    assert snap.skipped == ["big.csv"] and "big.csv" not in tree(small, snap.ref)


def test_changes_and_restore_take_a_command_back(repo: ShadowRepo) -> None:
    ws = repo.workspace
    before = repo.snapshot("before the run")
    # what a run_command might do: edit one file, delete one, create one
    (ws / "src" / "app.py").write_text("print('v2')\n")
    (ws / "README.md").unlink()
    (ws / "src" / "new.py").write_text("x = 1\n")
    (ws / "src" / "app.py").chmod(0o755)
    after = repo.snapshot("after run_command")
    changes = {c.path: c.action for c in repo.changes(before.ref, after.ref)}
    assert changes == {"src/app.py": "restore", "README.md": "create", "src/new.py": "delete"}
    assert repo.changed_since(after.ref) == set()
    done = repo.restore(before.ref, sorted(changes))
    assert sorted(done) == sorted(changes)
    assert (ws / "src" / "app.py").read_text() == "print('v1')\n"
    assert os.stat(ws / "src" / "app.py").st_mode & 0o777 == 0o755  # the file's mode is kept
    assert (ws / "README.md").read_text() == "# Project\n"
    assert not (ws / "src" / "new.py").exists()
    assert not list(ws.rglob("*.tmp"))


def test_changed_since_sees_edits_made_outside_the_agent(repo: ShadowRepo) -> None:
    snap = repo.snapshot("s")
    (repo.workspace / "README.md").write_text("# Edited by hand\n")
    (repo.workspace / "notes.txt").write_text("new\n")
    assert repo.changed_since(snap.ref) == {"README.md", "notes.txt"}
    assert repo.head() == snap.ref  # looking commits nothing


def test_restore_never_writes_outside_the_workspace(repo: ShadowRepo, tmp_path: Path) -> None:
    snap = repo.snapshot("s")
    assert repo.restore(snap.ref, ["../outside.txt"]) == []
    assert not (tmp_path / "outside.txt").exists()


def test_without_git_a_clear_error(repo: ShadowRepo) -> None:
    missing = ShadowRepo(repo.workspace, repo.folder, git="git-that-is-not-there")
    with pytest.raises(CheckpointError, match="need the `git` command"):
        missing.snapshot("s")


def test_a_snapshot_stages_only_what_changed_and_sees_every_kind_of_change(
        repo: ShadowRepo) -> None:
    """Incremental staging: a file grown over the limit leaves the snapshot (and says so), a
    deleted one is gone, a name with pathspec characters is taken literally."""
    ws = repo.workspace
    first = repo.snapshot("s", "sess-1")
    (ws / "[odd]*name?.txt").write_text("literal\n")
    (ws / "README.md").unlink()
    (ws / "src" / "app.py").write_bytes(b"x" * (repo.max_file_bytes + 1))
    second = repo.snapshot("s", "sess-1")
    assert second.skipped == ["src/app.py"]
    assert tree(repo, second.ref) == ["[odd]*name?.txt"]
    assert {c.path: c.action for c in repo.changes(first.ref, second.ref)} == {
        "[odd]*name?.txt": "delete", "README.md": "create", "src/app.py": "create"}
    (ws / "src" / "app.py").write_text("small again\n")
    third = repo.snapshot("s", "sess-1")
    assert third.skipped == [] and "src/app.py" in tree(repo, third.ref)
    assert repo.count_changes([(first.ref, second.ref), (second.ref, second.ref),
                               (first.ref, third.ref)]) == [3, 0, 3]


def test_snapshots_are_per_session_and_pruned_with_their_session(repo: ShadowRepo) -> None:
    a = repo.snapshot("a1", "20260101-000000-aaaa")
    (repo.workspace / "README.md").write_text("only in b\n")
    b = repo.snapshot("b1", "20260101-000000-bbbb")
    assert repo.head("20260101-000000-aaaa") == a.ref
    assert repo.head("20260101-000000-bbbb") == b.ref
    assert repo.prune({"20260101-000000-bbbb"}) == ["20260101-000000-aaaa"]
    assert repo.head("20260101-000000-aaaa") is None and repo.exists(b.ref)
    assert repo.prune({"20260101-000000-bbbb"}) == []  # nothing more to drop


def test_before_images_cover_the_agents_own_writes(tmp_path: Path) -> None:
    """Without git: what the agent wrote comes back (an edited file, a created one), what it
    did not write is not touched, edits by hand since are conflicts, and a pruned session's
    contents go."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    (ws / "other.txt").write_text("left alone\n")
    images = BeforeImages(ws, ws / ".PseudoClaude" / "checkpoints")
    assert images.covers == "writes"
    before = images.snapshot("prompt 1", "s1")
    images.before_write("a.txt", "s1")
    (ws / "a.txt").write_text("ALPHA\n")
    images.before_write("new.txt", "s1")
    (ws / "new.txt").write_text("made\n")
    (ws / "other.txt").write_text("changed by a command\n")  # not the agent's write
    after = images.snapshot("after the tools", "s1")
    changes = {c.path: c.action for c in images.changes(before.ref, after.ref)}
    assert changes == {"a.txt": "restore", "new.txt": "delete"}
    assert images.changed_since(after.ref) == set()
    (ws / "a.txt").write_text("by hand\n")
    assert images.changed_since(after.ref) == {"a.txt"}
    assert sorted(images.restore(before.ref, sorted(changes))) == ["a.txt", "new.txt"]
    assert (ws / "a.txt").read_text() == "alpha\n" and not (ws / "new.txt").exists()
    assert (ws / "other.txt").read_text() == "changed by a command\n"
    assert images.content(before.ref, "a.txt") == b"alpha\n"
    blobs = ws / ".PseudoClaude" / "checkpoints" / "blobs"
    assert len(list(blobs.iterdir())) == 3  # alpha, ALPHA, made
    assert images.prune(set()) == ["s1"]
    assert not images.exists(before.ref) and list(blobs.iterdir()) == []


def test_open_checkpoints_without_git_uses_before_images(tmp_path: Path) -> None:
    chosen = open_checkpoints(tmp_path, tmp_path / "cp", git="git-that-is-not-there")
    assert isinstance(chosen, BeforeImages)
    assert isinstance(open_checkpoints(tmp_path, tmp_path / "cp"), ShadowRepo)


def test_steps_name_each_snapshot_and_what_it_changed(repo: ShadowRepo) -> None:
    ws = repo.workspace
    first = repo.snapshot("before prompt 1", "sess-1")
    (ws / "README.md").write_text("# Changed\n")
    second = repo.snapshot("prompt 1", "sess-1", ["README.md"])
    third = repo.snapshot("before prompt 2", "sess-1")
    (ws / "new.txt").write_text("n\n")
    fourth = repo.snapshot("prompt 2", "sess-1")
    steps = repo.steps(first.ref, fourth.ref)
    assert steps is not None
    assert [(s.message, sorted(s.paths), s.outside) for s in steps] == [
        ("prompt 1", ["README.md"], False), ("before prompt 2", [], True),
        ("prompt 2", ["new.txt"], False)]
    assert repo.steps(third.ref, third.ref) == []
    other = repo.snapshot("another chain", "sess-2")
    assert repo.steps(other.ref, second.ref) is None  # not one chain
    assert repo.steps(fourth.ref, first.ref) is None  # not after it


def test_looking_for_hand_edits_leaves_the_next_snapshot_alone(repo: ShadowRepo) -> None:
    """A preview during a run looks at the whole tree; the snapshot after the next file edit
    must still hold only that edit, so a hand edit is never taken for the agent's."""
    ws = repo.workspace
    snap = repo.snapshot("before prompt 1", "sess-1")
    (ws / "README.md").write_text("# Edited by hand\n")
    assert repo.changed_since(snap.ref) == {"README.md"}
    (ws / "src" / "app.py").write_text("print('agent')\n")
    after = repo.snapshot("prompt 1", "sess-1", ["src/app.py"])
    assert {c.path for c in repo.changes(snap.ref, after.ref)} == {"src/app.py"}
    assert repo.changed_since(after.ref) == {"README.md"}
