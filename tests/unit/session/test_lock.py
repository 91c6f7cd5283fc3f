"""One writer per session: the OS lock on ``<session dir>/lock`` (real processes, SIGKILL)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pseudoclaude.session.lock import SessionBusy, SessionLock, holder

HOLD = """
import sys, time
from pathlib import Path
from pseudoclaude.session.lock import SessionLock
lock = SessionLock(Path(sys.argv[1]), "s")
lock.acquire()
print("held", flush=True)
time.sleep(600)
"""


def hold_in_child(session_dir: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(session_dir)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline() == "held\n"
    return child


def test_another_process_holding_it_is_named_by_pid(tmp_path: Path) -> None:
    child = hold_in_child(tmp_path / "s")
    try:
        assert holder(tmp_path / "s") == child.pid
        with pytest.raises(SessionBusy) as busy:
            SessionLock(tmp_path / "s", "s").acquire()
        assert busy.value.pid == child.pid and busy.value.session_id == "s"
        assert str(busy.value) == f"session s is busy: process {child.pid} is writing it"
    finally:
        child.kill()
        child.wait()


def test_a_killed_holder_never_blocks(tmp_path: Path) -> None:
    child = hold_in_child(tmp_path / "s")
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    assert holder(tmp_path / "s") is None  # the lock died with its process
    with SessionLock(tmp_path / "s", "s"):
        assert holder(tmp_path / "s") == os.getpid()
    assert holder(tmp_path / "s") is None


def test_two_holders_in_one_process_exclude_each_other(tmp_path: Path) -> None:
    first = SessionLock(tmp_path / "s", "s")
    first.acquire()
    try:
        with pytest.raises(SessionBusy) as busy:
            SessionLock(tmp_path / "s", "s").acquire()
        assert busy.value.pid == os.getpid()
        with pytest.raises(SessionBusy):
            first.acquire()  # not re-entrant either
    finally:
        first.release()
    assert holder(tmp_path / "s") is None
    assert holder(tmp_path / "never-made") is None and not (tmp_path / "never-made").exists()


PROBE = """
import sys
from pathlib import Path
from pseudoclaude.session.lock import holder
print("probing", flush=True)
while True:
    holder(Path(sys.argv[1]))
"""


def test_listing_sessions_never_makes_a_write_busy(tmp_path: Path) -> None:
    """``holder`` (``running`` in the session list) takes a shared lock for a moment: a writer
    taking the lock then must not be refused (it was, about 6 % of the time, ``pid: null``)."""
    child = subprocess.Popen([sys.executable, "-c", PROBE, str(tmp_path / "s")],
                             stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "probing\n"
        for _ in range(3000):
            with SessionLock(tmp_path / "s", "s"):
                pass
    finally:
        child.kill()
        child.wait()
