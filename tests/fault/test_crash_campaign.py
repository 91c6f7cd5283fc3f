"""Issue 9: a small run of the crash campaign (``bench/crash_campaign.py``) in ``make test``.

Real servers over stdio against the fake model, killed with SIGKILL at random moments during
runs with spills, compactions and memory updates; after each kill a new server resumes
``latest``. One of the two lanes runs with ``memory.mode: confirm`` and reviews the proposals
its updates queue, so kills also land among proposal writes and accepts: every proposal file
is whole or absent, and no accepted note is half-applied. Every count of the campaign must be
zero. A second test breaks the disk on purpose
between a kill and its check, to show that the checks do catch a lost acknowledged message and
a corrupt memory note.

``PSEUDOCLAUDE_CAMPAIGN_KILLS`` sets the number of kills of the first test (default 25).
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
