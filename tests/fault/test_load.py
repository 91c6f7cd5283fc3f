"""Issue 9, load: several workspace folders in one server running at once (``bench/load_bench.py``
with smaller numbers), while the same client polls ``pseudoclaude/context`` every 10 ms.

Asserts that no ``pseudoclaude/event`` notification is lost or duplicated (per folder, per
kind, against the counts the scripts imply; ``text`` by content, since the server merges
consecutive deltas: each folder's text exactly as scripted), that every run completed and
that every context request was answered. Latency is reported by the bench, not asserted here:
CI machines are noisy.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def bench(bench_module: Callable[[str], ModuleType]) -> ModuleType:
    return bench_module("load_bench")


def test_concurrent_folders_lose_no_event(tmp_path: Path, bench: Any) -> None:
    config = bench.Config(folders=4, rounds=4, delay=0.002, repeats=2, root=tmp_path)
    result = asyncio.run(bench.run_load(config))
    summary = result.as_json()
    assert result.completed, (result.stop_reasons, result.run_errors)
    assert not result.lost, summary["events_lost_or_extra"]
    expected = bench.expected_events(config)
    assert summary["events_received"] == sum(expected.values()) * config.folders * 2
    # the text, however the server merged its deltas: every character, in order (lost above)
    assert summary["text_characters_received"] == summary["text_characters_expected"] > 0
    assert len(result.rounds) == 2 and all(len(r) == config.folders for r in result.rounds)
    assert summary["context_requests"] > 0
    assert result.peak_rss_kib is not None and result.peak_rss_kib > 0
