"""What a rewind must never do silently, on both kinds of checkpoints: take back a file changed
by hand since the agent last changed it (also after an earlier rewind), fail every snapshot
because of one file it cannot read, forget an ignored file the agent overwrote, or hide that
the agent's edits of unsaved editor buffers cannot be taken back."""

from __future__ import annotations

import os
import socket
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from pseudoclaude.agent.tools.base import ToolOutput, envelope
from pseudoclaude.checkpoints import (
    BEFORE,
    MAX_FILE_BYTES,
    BeforeImages,
    Checkpoints,
    ShadowRepo,
    git_available,
)
from pseudoclaude.checkpoints import shadow as shadow_module
from pseudoclaude.llm.types import Message, ToolCall, ToolResult
from pseudoclaude.rewind import plan, restore_files, unsaved_edits
from pseudoclaude.session.timeline import Timeline, Turn

needs_git = pytest.mark.skipif(not git_available(), reason="needs the git command")


def _permissions_stop_reads() -> bool:
    """Whether a file of mode 000 cannot be read here (root, or a process with the
    capability to override permissions, reads it all the same)."""
    with tempfile.TemporaryDirectory() as folder:
        probe = Path(folder) / "probe"
        probe.write_text("x")
        probe.chmod(0)
        try:
            probe.read_bytes()
        except PermissionError:
            return True
        return False


PERMISSIONS_STOP_READS = _permissions_stop_reads()
SESSION = "20260101-000000-aaaa"


def shadow(ws: Path, limit: int = MAX_FILE_BYTES) -> ShadowRepo:
    return ShadowRepo(ws, ws / ".PseudoClaude" / "checkpoints",
                      excluded=[ws / ".PseudoClaude"], max_file_bytes=limit)


def images(ws: Path, limit: int = MAX_FILE_BYTES) -> BeforeImages:
    return BeforeImages(ws, ws / ".PseudoClaude" / "checkpoints", max_file_bytes=limit)


Kind = Callable[..., Checkpoints]
KINDS = [pytest.param(shadow, marks=needs_git, id="git"), pytest.param(images, id="no-git")]


class Session:
    """Prompts run as the workspace runs them: a snapshot before each prompt (named
    ``before``), the agent's writes (before-images first), a snapshot after each."""

    def __init__(self, repo: Checkpoints) -> None:
        self.repo = repo
        self.turns: list[Turn] = []
        self.last: str | None = None

    def prompt(self, *writes: tuple[str, str | None]) -> None:
        turn = Turn(turn=len(self.turns) + 1, prompt=f"prompt {len(self.turns) + 1}", ts=0.0,
                    before=[])
        self.turns.append(turn)
        turn.checkpoints.append(self.repo.snapshot(f"{BEFORE}prompt {turn.turn}", SESSION).ref)
        for path, text in writes:
            self.repo.before_write(path, SESSION)
            target = self.repo.workspace / path
            if text is None:
                target.unlink()
            else:
                target.write_text(text)
            turn.checkpoints.append(self.repo.snapshot(f"prompt {turn.turn}", SESSION,
                                                       [path]).ref)
        self.last = turn.checkpoints[-1]

    def timeline(self) -> Timeline:
        return Timeline(turns=self.turns, last_checkpoint=self.last)

    def preview(self, turn: int) -> dict[str, bool]:
        planned = plan(self.timeline(), turn, "code", [], self.repo)
        assert not planned.problem, planned.problem
        return {f.path: f.conflict for f in planned.files}

    def rewind(self, turn: int, force: bool = False) -> tuple[list[str], list[str]]:
        planned = plan(self.timeline(), turn, "code", [], self.repo)
        done = restore_files(self.repo, planned, force, SESSION)
        self.last = self.repo.head(SESSION)
        return done


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "calc.py").write_text("x = 1\n")
    return root


# -- 1. a hand edit is a conflict in every rewind -----------------------------------------------

@pytest.mark.parametrize("kind", KINDS)
def test_a_hand_edit_stays_a_conflict_after_an_earlier_rewind(
        ws: Path, kind: Kind) -> None:
    session = Session(kind(ws))
    session.prompt(("calc.py", "x = 2\n"))
    session.prompt(("new.txt", "made\n"))
    (ws / "calc.py").write_text("x = 2\n# my edit\n")
    assert session.preview(2) == {"new.txt": False}
    assert session.rewind(2) == (["new.txt"], [])
    assert not (ws / "new.txt").exists()
    # the rewind's own snapshot took the hand edit in: it must still count as one
    assert session.preview(1) == {"calc.py": True}
    assert session.rewind(1) == ([], ["calc.py"])
    assert (ws / "calc.py").read_text() == "x = 2\n# my edit\n"
    assert session.rewind(1, force=True) == (["calc.py"], [])
    assert (ws / "calc.py").read_text() == "x = 1\n"


@pytest.mark.parametrize("kind", KINDS)
def test_a_hand_edit_between_prompts_is_a_conflict(
        ws: Path, kind: Kind) -> None:
    """The snapshot before prompt 2 holds the hand edit: going back to before prompt 1 would
    drop it, so it is a conflict; a file the agent changed after the hand edit is not."""
    (ws / "other.py").write_text("y = 1\n")
    session = Session(kind(ws))
    session.prompt(("calc.py", "x = 2\n"), ("other.py", "y = 2\n"))
    (ws / "calc.py").write_text("x = 2\n# my edit\n")
    (ws / "other.py").write_text("y = 2\n# mine too\n")
    session.prompt(("other.py", "y = 3\n"))
    assert session.preview(1) == {"calc.py": True, "other.py": False}
    assert session.preview(2) == {"other.py": False}


# -- 2. a file that cannot be read --------------------------------------------------------------

@needs_git
def test_an_unreadable_file_is_left_out_and_named(ws: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The failure injected (as root nothing is unreadable by its permissions): the snapshot is
    taken, the file keeps what the snapshot before had, and it is named."""
    repo = shadow(ws)
    (ws / "secret.txt").write_text("v1\n")
    session = Session(repo)
    session.prompt(("calc.py", "x = 2\n"))
    real = shadow_module.readable
    monkeypatch.setattr(shadow_module, "readable",
                        lambda path: path.name != "secret.txt" and real(path))
    (ws / "secret.txt").write_text("v2, longer\n")
    (ws / "fresh.txt").write_text("new\n")
    snap = repo.snapshot(f"{BEFORE}prompt 2", SESSION)
    assert snap.unreadable == ["secret.txt"] and repo.unreadable() == ["secret.txt"]
    assert repo.content(snap.ref, "secret.txt") == b"v1\n"  # as before: not lost, not new
    assert repo.content(snap.ref, "fresh.txt") == b"new\n"  # the others are snapshotted
    assert "secret.txt" in repo.changed_since(snap.ref)  # its state cannot be told
    session.turns[0].checkpoints.append(snap.ref)
    session.last = snap.ref
    planned = plan(session.timeline(), 1, "code", [], repo)
    assert not planned.problem
    assert "cannot be read: secret.txt" in planned.message
    monkeypatch.setattr(shadow_module, "readable", real)
    again = repo.snapshot("prompt 2", SESSION)
    assert again.unreadable == [] and repo.unreadable() == []
    assert repo.content(again.ref, "secret.txt") == b"v2, longer\n"


def _make_unreadable(path: Path, how: str) -> None:
    if how == "chmod":
        path.chmod(0)
    elif how == "fifo":
        path.unlink()
        os.mkfifo(path)
    else:
        path.unlink()
        with socket.socket(socket.AF_UNIX) as sock:
            sock.bind(str(path))


@needs_git
@pytest.mark.parametrize("how", ["chmod", "fifo", "socket"] if PERMISSIONS_STOP_READS
                         else ["fifo", "socket"])  # root reads a mode-000 file
def test_a_path_git_cannot_read_does_not_fail_the_snapshots(ws: Path, how: str) -> None:
    """A file made unreadable (permissions) or replaced by something git cannot snapshot:
    every snapshot still works, the others are kept, a rewind still restores them."""
    repo = shadow(ws)
    (ws / "data.txt").write_text("data\n")
    session = Session(repo)
    session.prompt(("calc.py", "x = 2\n"))
    _make_unreadable(ws / "data.txt", how)
    try:
        session.prompt(("new.txt", "made\n"))
        assert repo.unreadable() == ["data.txt"]
        head = repo.head(SESSION)
        assert head is not None and repo.content(head, "new.txt") == b"made\n"
        planned = plan(session.timeline(), 1, "code", [], repo)
        assert not planned.problem, planned.problem
        assert {f.path: f.conflict for f in planned.files} == {"calc.py": False,
                                                               "new.txt": False}
        assert "cannot be read: data.txt" in planned.message
        assert sorted(restore_files(repo, planned, False, SESSION)[0]) == ["calc.py",
                                                                           "new.txt"]
        assert (ws / "calc.py").read_text() == "x = 1\n" and not (ws / "new.txt").exists()
    finally:
        if how == "chmod":
            (ws / "data.txt").chmod(0o644)


def test_without_git_an_unreadable_written_file_is_named_not_fatal(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = images(ws)
    session = Session(repo)
    session.prompt(("calc.py", "x = 2\n"))
    real = Path.read_bytes

    def refuse(path: Path) -> bytes:
        if path.name == "calc.py":
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)

    monkeypatch.setattr(Path, "read_bytes", refuse)
    snap = repo.snapshot("prompt 1", SESSION)
    assert snap.unreadable == ["calc.py"]
    assert repo.content(snap.ref, "calc.py") == b"x = 2\n"  # as the snapshot before had it
    assert repo.changed_since(snap.ref) == {"calc.py"} and repo.unreadable() == ["calc.py"]


# -- 3. ignored files the agent wrote -----------------------------------------------------------

@needs_git
def test_ignored_files_the_agent_wrote_come_back(ws: Path) -> None:
    (ws / ".gitignore").write_text("*.local\n.env\n")
    (ws / ".env").write_text("TOKEN=mine\n")
    (ws / "app.local").write_text("debug = false\n")
    repo = shadow(ws)
    session = Session(repo)
    session.prompt(("calc.py", "x = 2\n"))
    session.prompt((".env", "TOKEN=agent\n"), ("made.local", "new\n"))
    session.prompt(("app.local", "debug = true\n"))
    before = repo.snapshot("a look", "another session")  # ignored files stay out of git
    assert ".env" not in repo._git("ls-tree", "-r", "--name-only", before.ref).stdout.decode()
    (ws / "app.local").write_text("debug = true\n# by hand\n")
    assert session.preview(2) == {".env": False, "made.local": False, "app.local": True}
    assert session.preview(3) == {"app.local": True}
    done, conflicts = session.rewind(2)
    assert sorted(done) == [".env", "made.local"] and conflicts == ["app.local"]
    assert (ws / ".env").read_text() == "TOKEN=mine\n" and not (ws / "made.local").exists()
    assert (ws / "app.local").read_text() == "debug = true\n# by hand\n"
    session.prompt()  # the rewind's snapshot has them as it left them: nothing to take back
    assert session.preview(4) == {}
    # a new process knows the snapshots' sessions from git alone
    fresh = shadow(ws)
    assert fresh.content(session.turns[0].checkpoints[0], ".env") == b"TOKEN=mine\n"
    assert sorted(repo.prune([])) == sorted([SESSION, "another_session"])
    assert not (ws / ".PseudoClaude" / "checkpoints" / "ignored" / "baselines" /
                f"{SESSION}.json").exists()


@pytest.mark.parametrize("kind", KINDS)
def test_a_file_whose_earlier_content_was_not_kept_is_named(
        ws: Path, kind: Kind) -> None:
    """Over the size limit when the agent first wrote it: the preview says it cannot come
    back, and a rewind leaves it alone."""
    (ws / ".gitignore").write_text("*.csv\n")
    (ws / "big.csv").write_text("x" * 2000)
    repo = kind(ws, 1000)
    session = Session(repo)
    session.prompt(("big.csv", "small\n"))
    planned = plan(session.timeline(), 1, "code", [], repo)
    assert [f.path for f in planned.files] == []
    assert "big.csv cannot be restored: it was over 1 MiB" in planned.message
    session.rewind(1, force=True)
    assert (ws / "big.csv").read_text() == "small\n"


# -- 4. edits in unsaved editor buffers ---------------------------------------------------------

def test_edits_that_went_into_the_editor_are_named_in_the_preview(ws: Path) -> None:
    edited, _ = envelope("edit_file", ToolOutput("Edited calc.py in the editor", unsaved=True))
    wrote, _ = envelope("write_file", ToolOutput("Wrote notes.txt"))
    messages = [
        Message("user", "go"),
        Message("assistant", tool_calls=[
            ToolCall("c1", "edit_file", {"path": "calc.py", "old_text": "1", "new_text": "2"}),
            ToolCall("c2", "write_file", {"path": "notes.txt", "content": "n\n"})]),
        Message("user", tool_result=ToolResult("c1", "edit_file", edited)),
        Message("user", tool_result=ToolResult("c2", "write_file", wrote)),
        Message("assistant", "done"),
    ]
    assert unsaved_edits(messages) == ["calc.py"]
    turn = Turn(turn=1, prompt="go", ts=0.0, before=[])
    planned = plan(Timeline(turns=[turn], last_checkpoint=None), 1, "code", messages,
                   images(ws))
    assert "edits to calc.py went into your editor without being saved" in planned.message
    quiet = plan(Timeline(turns=[turn], last_checkpoint=None), 1, "conversation", messages,
                 images(ws))
    assert "editor" not in quiet.message
