"""The crash campaign's two-process lane (``bench/crash_sessions.py``) in small, in ``make test``.

Two real servers have one folder open and take turns on ONE session against the fake model;
while one writes, the other's run or compaction of that session must be ``SessionBusy``
(-32011, naming the writer's pid) and write nothing; the next run, by the other process,
carries exactly what the log holds (the first one's turns included). One of the two is
SIGKILLed at random moments and started again: after each kill the lock is free, the log loads,
no acknowledged message is lost, each prompt is in the history once and in order with its turns
under it. Every count must be zero. A second test breaks things on purpose (a lock held by a
process that is not writing, two prompts swapped in the log) to show the checks catch them.

``PSEUDOCLAUDE_TWO_PROCESS_KILLS`` sets the number of kills of the first test (default 10).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pseudoclaude.session.lock import SessionLock

KILLS = int(os.environ.get("PSEUDOCLAUDE_TWO_PROCESS_KILLS", "10"))

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def lane(bench_module: Callable[[str], ModuleType]) -> ModuleType:
    return bench_module("crash_sessions")


def test_two_servers_on_one_session_killed_lose_and_split_nothing(tmp_path: Path,
                                                                  lane: Any) -> None:
    config = lane.TwoProcessConfig(kills=KILLS, seed=20261203, root=tmp_path, progress=None)
    report = asyncio.run(lane.run_two_process_lane(config))
    summary = report.as_json()
    assert report.kills == KILLS, summary
    assert report.ok, (summary["counts"], summary["problems"])
    info = summary["info"]
    # It did what it claims to: refusals while the other wrote, hand-offs, fresh processes.
    assert info["busy refusals (expected): run"] + \
        info["busy refusals (expected): compaction"] > 0, info
    assert info["hand-offs checked (a run after the other process's run)"] > 0, info
    assert info["runs completed"] > 0 and info["acknowledged items"] > 0, info
    assert info["servers started"] == 2 + KILLS, info  # one fresh process after each kill
    assert report.resumes == KILLS, summary  # each resumed the session


def test_the_checks_catch_a_stale_lock_and_a_split_conversation(tmp_path: Path,
                                                                 lane: Any) -> None:
    planted: dict[str, Any] = {}

    def break_things(lane: Any) -> None:
        """At the first check after a kill: hold the session's lock in this process (as if
        it outlived its holder); at the next one, let it go; at the first one after that with
        two prompts in the history, swap them everywhere in the log (every line stays valid
        JSON)."""
        if lane.session_id is None or lane.report.kills == 0:
            return
        if "lock" not in planted:
            lock = SessionLock(lane.store.session_dir(lane.session_id), lane.session_id)
            lock.acquire()
            planted["lock"] = lock
            return
        planted["lock"].release()  # (again: a no-op)
        if "swapped" in planted:
            return
        prompts = [m for m in lane.logged_markers() if m.startswith("P")]
        if len(prompts) >= 2:
            a, b = (f"<<{m}>>".encode() for m in prompts[-2:])
            log = lane.store.log_path(lane.session_id)
            data = log.read_bytes().replace(a, b"<<SWAP>>").replace(b, a)
            log.write_bytes(data.replace(b"<<SWAP>>", b))
            planted["swapped"] = prompts[-2:]

    config = lane.TwoProcessConfig(kills=5, seed=7, root=tmp_path, progress=None,
                                   before_check=break_things)
    report = asyncio.run(lane.run_two_process_lane(config))
    assert "lock" in planted, "no kill happened"
    assert report.counts["locks held after the holder died"] >= 1, report.problems
    # the fresh process's first write was refused by that lock, naming this process
    assert report.counts["writes refused with no other writer"] >= 1, report.problems
    assert any(f"'pid': {os.getpid()}" in p for p in report.problems
               if p.startswith("writes refused")), report.problems
    assert "swapped" in planted, "no two prompts to swap"
    assert report.counts["prompts out of order"] >= 1, report.problems
    assert report.counts["turns under another prompt"] >= 1, report.problems
    assert report.counts["protocol-invalid histories"] == 0, report.problems
