"""SIGKILL a real writer process at random moments; nothing acknowledged may be lost.

Each round starts ``python -m pseudoclaude.session.simulate`` (a scripted agent session: user
and assistant messages, tool rounds with results up to 200 KB, offloads, replaces), lets it run
for a random time and kills it with SIGKILL. The log must then load, repair to a protocol-valid
history, and equal the conversation as of the last acknowledged operation (or the one in flight,
if its line reached the disk before the kill).

``PSEUDOCLAUDE_CRASH_KILLS`` sets the number of kills (default 200).
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from pseudoclaude.session import SessionStore, load_session, repair, replay_file, resume_session
from pseudoclaude.session.repair import is_valid
from pseudoclaude.session.simulate import expected_states

KILLS = int(os.environ.get("PSEUDOCLAUDE_CRASH_KILLS", "200"))


def kill_once(data_dir: Path, seed: int, rng: random.Random) -> tuple[str, int]:
    child = subprocess.Popen(
        [sys.executable, "-m", "pseudoclaude.session.simulate", "--data-dir", str(data_dir),
         "--seed", str(seed), "--ops", "100000", "--big", "300000"],
        stdout=subprocess.PIPE, text=True,
    )
    assert child.stdout is not None
    first = child.stdout.readline()
    assert first.startswith("session "), first
    time.sleep(rng.uniform(0.0, 0.12))
    child.send_signal(signal.SIGKILL)
    rest = child.stdout.read()
    child.wait()
    acks = [int(line.split()[1]) for line in rest.splitlines() if line.startswith("ack ")]
    return first.split()[1], max(acks, default=0)


def test_sigkill_at_random_moments_loses_nothing_acknowledged(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    torn_tails = 0
    in_flight_landed = 0
    for round_no in range(KILLS):
        seed = rng.randrange(1 << 30)
        store = SessionStore(tmp_path / f"r{round_no}" / ".PseudoClaude")
        session_id, acked = kill_once(store.data_dir, seed, rng)
        log = store.log_path(session_id)
        if not log.exists():
            assert acked == 0
            continue
        full = replay_file(log, fast=False)
        assert full.bad_lines <= 1, (seed, "only the last line can be torn")
        torn_tails += full.bad_lines
        loaded = load_session(store, session_id)
        assert is_valid(loaded.messages), seed
        states = expected_states(seed, acked + 1, big=300000)
        candidates = [repair(states[k])[0] for k in (acked, acked + 1) if k < len(states)]
        assert loaded.messages in candidates, (seed, acked)
        in_flight_landed += loaded.messages != candidates[0]
        if round_no % 10 == 0:  # resume for writing: the repaired log takes new lines cleanly
            opened = resume_session(store, session_id, model="after-crash")
            opened.conversation.add_user("after the crash")
            opened.writer.close()
            again = load_session(store, session_id)
            assert again.repaired == 0
            # a torn tail stays one bad line until a replace (here: a repair) supersedes it
            assert again.bad_lines == (0 if loaded.repaired else full.bad_lines)
            assert again.messages == [*loaded.messages, again.messages[-1]]
            assert again.messages[-1].content == "after the crash"
    print(f"\n{KILLS} kills: {torn_tails} torn tails, {in_flight_landed} in-flight ops landed")
