"""Hand edits of the memory stores, seen through real watchdog events on real files
(SPEC §5). No mocks: each test writes files the way an editor or a user would and waits
(polling, generously) for the watcher to report.

That something was *not* reported is never concluded from a pause: :meth:`Probe.fence` makes
a harmless event after it and waits until the watcher has reported everything it was told
before that event (a slow machine makes the test slower, never vacuous)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from pseudoclaude.config import Secret
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.provider import Provider, ProviderOptions, create_provider
from pseudoclaude.llm.types import Message
from pseudoclaude.memory import MemoryManager, MemoryWatcher

WAIT = 5.0


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, level: str, source: str) -> None:
        with self.lock:
            self.calls.append((level, source))

    def snapshot(self) -> list[tuple[str, str]]:
        with self.lock:
            return list(self.calls)

    def hand_edits(self, level: str | None = None) -> int:
        return sum(1 for lv, src in self.snapshot()
                   if src == "hand-edit" and (level is None or lv == level))


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


class Probe:
    """What the watcher is told and what it reports: the name of every path ``touch``-ed (the
    observer's events, in order) and every settled burst ``(level, hand_edit, touches)``, where
    ``touches`` is how many touches had been seen when it was reported."""

    def __init__(self, watcher: MemoryWatcher, monkeypatch: pytest.MonkeyPatch) -> None:
        self.lock = threading.Lock()
        self.touched: list[str] = []
        self.settled: list[tuple[str, bool, int]] = []
        touch, on_settled = watcher.touch, watcher.on_settled

        def touched(path: str, is_directory: bool = False) -> None:
            touch(path, is_directory)
            with self.lock:
                self.touched.append(os.path.basename(path))

        def settled(level: str, hand_edit: bool) -> None:
            on_settled(level, hand_edit)
            with self.lock:
                self.settled.append((level, hand_edit, len(self.touched)))

        monkeypatch.setattr(watcher, "touch", touched)
        monkeypatch.setattr(watcher, "on_settled", settled)

    def reports(self, level: str) -> list[bool]:
        """``hand_edit`` of each burst of ``level`` reported so far."""
        with self.lock:
            return [hand for lv, hand, _ in self.settled if lv == level]

    def _touch_seen(self, path: Path) -> int:
        """Open ``path`` for writing and close it, writing nothing (a ``closed`` event; the
        content stays), until the watcher is told of it; the number of touches seen by then."""
        with self.lock:
            seen = len(self.touched)
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            open(path, "ab").close()  # opened for writing and closed: unchanged
            if wait_until(lambda: path.name in self.touched[seen:], timeout=0.5):
                with self.lock:
                    return seen + self.touched[seen:].index(path.name) + 1
        raise AssertionError(f"the watcher was never told of {path}")

    def _reported_after(self, level: str, touches: int) -> None:
        assert wait_until(lambda: any(lv == level and n >= touches
                                      for lv, _, n in list(self.settled))), \
            f"no {level} burst was reported after touch {touches}"

    def fence(self, level: str, path: Path) -> None:
        """Return once every event of ``level``'s folder the watcher was told of before this
        call has been reported. ``path``: a note of that folder that nothing else touches,
        known to this process as it is (its bursts are not hand edits).

        The burst holding the fence's touch is reported either as the first burst of the level
        reported after that touch, or as the next one (the watcher takes a level's bursts one
        at a time and reports each before taking the next): so one more touch, and a burst
        reported after it, is after it for sure."""
        for _ in range(2):
            self._reported_after(level, self._touch_seen(path))


class Setup:
    def __init__(self, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.project_dir = tmp / "ws" / ".PseudoClaude" / "memory"
        self.user_dir = tmp / "home" / ".PseudoClaude" / "memory"
        self.recorder = Recorder()
        self.manager = MemoryManager(self.project_dir, self.user_dir,
                                     on_change=self.recorder)
        self.watcher: MemoryWatcher | None = None
        self.monkeypatch = monkeypatch
        self.probe: Probe | None = None

    def start(self, **timing: float) -> MemoryWatcher:
        self.watcher = self.manager.start_watching(**timing)
        self.probe = Probe(self.watcher, self.monkeypatch)
        return self.watcher

    def fence_note(self, level: str) -> Path:
        """The note of ``level`` only :meth:`fence` touches."""
        if level == "project":
            return self.project_dir / "project_knowledge_fence.md"
        return self.user_dir / "user_preference_fence.md"

    def place_fence(self, level: str) -> None:
        note = self.fence_note(level)
        note.parent.mkdir(parents=True, exist_ok=True)
        kind = note.name.removesuffix("_fence.md")
        note.write_text(f"---\ntype: {kind}\ntitle: Fence\n---\nOnly the tests touch it.\n")

    def place_fences(self) -> None:
        """Before :meth:`start`: both levels' fence notes (known from the start)."""
        self.place_fence("project")
        self.place_fence("user")

    def fence(self, level: str) -> Probe:
        """:meth:`Probe.fence` with ``level``'s fence note."""
        assert self.probe is not None
        self.probe.fence(level, self.fence_note(level))
        return self.probe

    @property
    def project_index(self) -> Path:
        return self.project_dir / "MEMORY.md"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Setup]:
    s = Setup(tmp_path, monkeypatch)
    try:
        yield s
    finally:
        s.manager.stop_watching()


LINE = "- [project_knowledge] Build — run make build (project_knowledge_build.md)\n"


def test_start_creates_missing_folders_and_is_idempotent(setup: Setup) -> None:
    assert not setup.project_dir.exists() and not setup.user_dir.exists()
    watcher = setup.start()
    assert setup.project_dir.is_dir() and setup.user_dir.is_dir()
    assert setup.manager.start_watching() is watcher and watcher.running
    watcher.stop()
    watcher.stop()
    assert not watcher.running
    watcher.start()
    assert watcher.running
    MemoryWatcher([], lambda level, hand: None).stop()  # stop before start is fine


def test_in_place_edit_refreshes_and_is_announced(setup: Setup) -> None:
    setup.start()
    with open(setup.project_index, "w", encoding="utf-8") as f:  # modified + closed
        f.write(LINE)
    assert wait_until(lambda: setup.recorder.hand_edits("project") == 1)
    assert "run make build" in setup.manager.index_text()
    assert setup.recorder.snapshot() == [("project", "hand-edit")]


def test_atomic_save_is_seen(setup: Setup) -> None:
    setup.place_fences()
    setup.start()
    fd, temp = tempfile.mkstemp(dir=setup.user_dir, prefix=".MEMORY.md.", suffix=".swp")
    with os.fdopen(fd, "w") as f:
        f.write("- [user_preference] Tabs — prefers tabs (user_preference_tabs.md)\n")
    os.replace(temp, setup.user_dir / "MEMORY.md")  # moved(dest=MEMORY.md) only
    assert wait_until(lambda: setup.recorder.hand_edits("user") == 1)
    assert "## User Memory\n- [user_preference] Tabs" in setup.manager.index_text()
    probe = setup.fence("project")
    assert True not in probe.reports("project") and setup.recorder.hand_edits("project") == 0


def test_delete_and_recreate(setup: Setup) -> None:
    setup.project_dir.mkdir(parents=True)
    setup.project_index.write_text(LINE)
    setup.manager.refresh()
    setup.start()
    assert "Build" in setup.manager.index_text()
    setup.project_index.unlink()
    assert wait_until(lambda: setup.recorder.hand_edits() == 1)
    assert setup.manager.index_text() == ""
    setup.project_index.write_text(LINE.replace("Build", "Rebuilt"))
    assert wait_until(lambda: setup.recorder.hand_edits() == 2)
    assert "Rebuilt" in setup.manager.index_text()


def test_store_folder_deleted_and_recreated(setup: Setup) -> None:
    setup.project_dir.mkdir(parents=True)
    setup.project_index.write_text(LINE)
    setup.manager.refresh()
    setup.start()
    shutil.rmtree(setup.project_dir)
    assert wait_until(lambda: setup.recorder.hand_edits("project") >= 1)
    assert wait_until(lambda: setup.manager.index_text() == "")
    seen = setup.recorder.hand_edits("project")
    setup.project_dir.mkdir()
    setup.place_fence("project")
    setup.project_index.write_text(LINE.replace("Build", "Back again"))
    assert wait_until(lambda: "Back again" in setup.manager.index_text())
    assert wait_until(lambda: setup.recorder.hand_edits("project") > seen)
    # and the folder is watched again (the fence's touches are the new watch's events), and
    # once everything before is reported, a later edit is seen too
    setup.fence("project")
    seen = setup.recorder.hand_edits("project")
    setup.project_index.write_text(LINE.replace("Build", "Later edit"))
    assert wait_until(lambda: setup.recorder.hand_edits("project") > seen)
    assert "Later edit" in setup.manager.index_text()


def test_burst_of_50_writes_is_one_refresh(setup: Setup) -> None:
    setup.place_fences()
    # a wider window than the default, so that a loaded machine cannot split the burst
    setup.start(debounce=3.0, quiet=0.5)
    for i in range(50):
        with open(setup.project_index, "w", encoding="utf-8") as f:
            f.write(f"- [project_knowledge] Version {i} — v (project_knowledge_v.md)\n")
    assert wait_until(lambda: setup.recorder.hand_edits() >= 1)
    reports = setup.fence("project").reports("project")
    assert reports[0] is True and True not in reports[1:]  # after it: the fence's bursts
    assert setup.recorder.hand_edits() == 1
    assert "Version 49" in setup.manager.index_text()


def test_hand_made_note_and_ignored_files(setup: Setup) -> None:
    setup.place_fences()
    setup.start()
    (setup.user_dir / ".MEMORY.md.swp").write_text("editor swap file")
    (setup.user_dir / "MEMORY.md~").write_text("backup")
    (setup.user_dir / "notes.txt").write_text("not a note")
    probe = setup.fence("user")
    # the files are written before the fence: a burst with any of them would be a hand edit
    assert probe.reports("user") and True not in probe.reports("user")
    assert setup.recorder.snapshot() == []
    (setup.user_dir / "user_preference_editor.md").write_text("---\ntype: user_preference\n"
                                                              "title: Editor\n---\nVim.\n")
    assert wait_until(lambda: setup.recorder.hand_edits("user") == 1)


def test_own_writes_are_not_echoed(setup: Setup) -> None:
    setup.place_fences()
    setup.start()

    async def edits() -> None:
        saved, _ = await setup.manager.remember("Run make build.", "project", title="Build")
        await setup.manager.remember("Prefers tabs.", "user")
        await setup.manager.forget("project", saved)

    asyncio.run(edits())
    probe = setup.fence("project")
    setup.fence("user")
    assert {"project_knowledge_build.md", "MEMORY.md"} <= set(probe.touched)  # seen, and:
    assert True not in probe.reports("project") + probe.reports("user")
    assert setup.recorder.snapshot() == [
        ("project", "remember"), ("user", "remember"), ("project", "forget")]
    # and a hand edit after our own writes is still noticed
    with open(setup.user_dir / "MEMORY.md", "a", encoding="utf-8") as f:
        f.write("- [user_preference] Hand — typed (user_preference_hand.md)\n")
    assert wait_until(lambda: setup.recorder.hand_edits("user") == 1)
    assert "typed" in setup.manager.index_text()


def _provider(fake: FakeModelServer) -> Callable[[], Awaitable[Provider]]:
    async def source() -> Provider:
        return await create_provider(ProviderOptions(
            provider="anthropic", model="m", api_key=Secret("sk-test"), base_url=fake.base_url,
            max_retries=0, read_timeout=10.0))
    return source


def test_hand_edit_racing_an_update_survives(setup: Setup) -> None:
    ops = [{"action": "create", "level": "project", "type": "project_knowledge",
            "title": "From the model", "content": "model body", "summary": "model"}]
    script = {"rules": [{"when": {"has_tools": False},
                         "reply": {"text": json.dumps(ops), "stall": 1.5}}]}
    hand_line = "- [project_knowledge] Hand — typed during the update (hand.md)"
    setup.place_fences()
    with FakeModelServer(script) as fake:
        setup.manager.provider = _provider(fake)

        async def scenario() -> None:
            await setup.manager.remember("Run make build.", "project", title="Build")
            setup.start()
            setup.manager.schedule_update([Message(role="user", content="hi")], "s", 1)
            while not fake.requests:  # the model call is in flight
                await asyncio.sleep(0.02)
            with open(setup.project_index, "a", encoding="utf-8") as f:
                f.write(hand_line + "\n")
            assert await setup.manager.drain(20)

        asyncio.run(scenario())
    text = setup.project_index.read_text()
    assert hand_line in text
    assert "(project_knowledge_build.md)" in text
    assert "From the model — model (project_knowledge_from-the-model.md)" in text
    setup.fence("project")  # the update's own writes are all reported by now
    assert setup.recorder.snapshot() == [
        ("project", "remember"), ("project", "hand-edit"), ("project", "update")]
    index = setup.manager.index_text()
    assert "typed during the update" in index and "From the model" in index
