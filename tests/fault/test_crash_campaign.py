"""Issue 9: a small run of the crash campaign (``bench/crash_campaign.py``) in ``make test``.

Real servers over stdio against the fake model, killed with SIGKILL at random moments during
runs with spills, compactions and memory updates; after each kill a new server resumes
``latest``. One of the two lanes runs with ``memory.mode: confirm`` and reviews the proposals
its updates queue, so kills also land among proposal writes and accepts: every proposal file
is whole or absent, and no accepted note is half-applied. Every count of the campaign must be
zero. A second test breaks the disk on purpose
between a kill and its check, to show that the checks do catch a lost acknowledged message and
a corrupt memory note.

The rewind lane (``bench/crash_rewind.py``) in small: servers killed in the middle of code
rewinds of 66 files; right after each kill every file is its old or its new content (never torn,
never a third one), the next server finishes a journalled rewind, the session loads and the
checkpoints keep working. Its self-check plants a torn file and a third version after a kill.

``PSEUDOCLAUDE_CAMPAIGN_KILLS`` sets the number of kills of the first test (default 25),
``PSEUDOCLAUDE_REWIND_KILLS`` those of the rewind lane (default 15).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

KILLS = int(os.environ.get("PSEUDOCLAUDE_CAMPAIGN_KILLS", "25"))

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def campaign(bench_module: Callable[[str], ModuleType]) -> ModuleType:
    return bench_module("crash_campaign")


def test_sigkill_campaign_loses_nothing(tmp_path: Path, campaign: Any) -> None:
    config = campaign.Config(kills=KILLS, lanes=2, seed=20261201, root=tmp_path, progress=None)
    report = asyncio.run(campaign.run_campaign(config))
    summary = report.as_json()
    assert report.kills == KILLS, summary
    assert report.ok, (summary["counts"], summary["problems"])
    assert report.resumes == KILLS + config.lanes, summary  # + a last one per lane
    # The campaign did what it claims to: spills, compactions, memory updates, completed runs.
    info = summary["info"]
    assert info["runs completed"] > 0, info
    assert info["compact events layer 1"] > 0, info
    assert info["compact replaces"] > 0, info
    assert info["memory events updated"] > 0, info
    assert info["memory events proposed"] > 0, info  # the confirm lane
    accepted = [n for k, n in info.items() if k.startswith("memory reviews accepted")]
    assert sum(accepted) > 0, info
    assert info["acknowledged items"] > 0, info


def test_the_checks_catch_a_lost_message_and_a_corrupt_note(tmp_path: Path, campaign: Any) -> None:
    broken: dict[str, Any] = {}

    def break_disk(lane: Any) -> None:
        """Once: rename the marker of an acknowledged prompt in the log (same length, so the
        log stays valid) and overwrite a memory note with binary junk."""
        if lane.session_id is None:
            return
        log = lane.store.log_path(lane.session_id)
        data = log.read_bytes()
        for item in [] if "prompt" in broken else sorted(lane.acks.acked, reverse=True):
            marker = f"<<{item}>>".encode()
            if item.startswith("P") and data.count(marker) == 1 and \
                    data.rfind(b'"type":"replace"') < data.find(marker):
                log.write_bytes(data.replace(marker, marker.replace(b"<<P", b"<<X")))
                broken["prompt"] = item
                break
        notes = sorted((lane.folder / ".PseudoClaude" / "memory").glob("*.md"))
        notes = [n for n in notes if n.name != "MEMORY.md"]
        if notes and "note" not in broken:
            notes[0].write_bytes(b"\x00\x01 not a note")
            broken["note"] = notes[0].name

    config = campaign.Config(kills=12, lanes=1, seed=7, root=tmp_path, progress=None,
                             before_check=break_disk)
    report = asyncio.run(campaign.run_campaign(config))
    assert "prompt" in broken, "no acknowledged prompt was found to break"
    lost = [p for p in report.problems if p.startswith("acknowledged messages lost")]
    assert any(broken["prompt"] in p for p in lost), report.problems
    if "note" in broken:
        assert report.counts["memory files corrupt"] >= 1, report.problems
    assert report.counts["protocol-invalid histories"] == 0, report.problems


# -- the rewind lane (bench/crash_rewind.py) ------------------------------------------------

REWIND_KILLS = int(os.environ.get("PSEUDOCLAUDE_REWIND_KILLS", "15"))


@pytest.fixture(scope="module")
def rewind_lane(bench_module: Callable[[str], ModuleType]) -> ModuleType:
    return bench_module("crash_rewind")


def test_sigkill_mid_rewind_tears_no_file_and_the_next_start_finishes(
        tmp_path: Path, rewind_lane: Any) -> None:
    """A server killed during code rewinds of 66 files: no file torn or in a third state, every
    interrupted rewind finished by the next server, the session and checkpoints still work."""
    config = rewind_lane.RewindConfig(kills=REWIND_KILLS, files=60, seed=20261215,
                                      root=tmp_path, progress=None)
    report = asyncio.run(rewind_lane.run_rewind_lane(config))
    summary = report.as_json()
    assert report.kills == REWIND_KILLS, summary
    assert report.ok, (summary["counts"], summary["problems"])
    assert len(report.phases) > 1, summary["kills_by_phase"]  # not all in one phase
    finished = sum(n for k, n in summary["info"].items()
                   if k.startswith("interrupted rewinds finished"))
    assert finished > 0, summary  # some kills left a journal, and the next start finished it


def test_the_rewind_checks_catch_a_torn_file(tmp_path: Path, rewind_lane: Any) -> None:
    planted: dict[str, str] = {}

    def tear(lane: Any, when: str) -> None:
        """Once, right after a kill: cut a rewritten file in half, and replace another with a
        whole version the rewind never wrote."""
        if when != "right after the kill" or planted:
            return
        torn, other = lane.src_paths()[:2]
        data = (lane.folder / torn).read_bytes()
        (lane.folder / torn).write_bytes(data[: len(data) // 2])
        (lane.folder / other).write_bytes(lane.version_of(other, 9999))
        planted.update(torn=torn, other=other)

    config = rewind_lane.RewindConfig(kills=2, files=20, calibration=1, seed=7, root=tmp_path,
                                      progress=None, before_check=tear)
    report = asyncio.run(rewind_lane.run_rewind_lane(config))
    assert planted, "no kill happened"
    assert any(planted["torn"] in p for p in report.problems
               if p.startswith("torn files")), report.problems
    assert any(planted["other"] in p for p in report.problems
               if p.startswith("files in neither state")), report.problems
    # The checks are pure functions of the disk: a whole file of either state is fine.
    assert rewind_lane.whole_version(rewind_lane.content("a.txt", 3, 100, 200))
    assert not rewind_lane.whole_version(rewind_lane.content("a.txt", 3, 100, 200)[:-1])
