"""``pseudoclaude demo --crash``: the session log at work, offline and for real.

A child process writes a scripted agent conversation to a real session log (every line
fsynced), is killed with SIGKILL in the middle of a tool round, and the session is then
resumed the way the server will: replayed, repaired (the dangling tool call is dropped and the
repair committed as one ``replace`` line), continued, and listed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from pseudoclaude.llm.types import Message
from pseudoclaude.session import SessionStore, list_sessions, load_session, repair, resume_session
from pseudoclaude.session.format import describe_size, render_message
from pseudoclaude.session.simulate import expected_states
from pseudoclaude.words import plural

SEED = 7
OPS = 400


def _say(text: str = "") -> None:
    print(text, flush=True)


def _kill_point(states: list[list[Message]]) -> int:
    """The first operation after 20 that leaves a tool call without all its results."""
    for k in range(20, len(states)):
        if repair(states[k])[1]:
            return k
    return len(states) // 2


def run_demo(clean: bool = False) -> int:
    root = Path(tempfile.mkdtemp(prefix="pseudoclaude-demo-"))
    workspace = root / "workspace"
    workspace.mkdir()
    store = SessionStore(workspace / ".PseudoClaude")
    try:
        states = expected_states(SEED, OPS)
        kill_at = _kill_point(states)
        _say(f"== 1. A writer process logs a scripted agent session in {workspace}")
        child = subprocess.Popen(
            [sys.executable, "-m", "pseudoclaude.session.simulate", "--data-dir",
             str(store.data_dir), "--seed", str(SEED), "--ops", str(OPS), "--delay", "0.01"],
            stdout=subprocess.PIPE, text=True,
        )
        assert child.stdout is not None
        session_id = child.stdout.readline().split()[1]
        acked = 0
        for line in child.stdout:
            acked = int(line.split()[1])
            if acked == kill_at:
                child.send_signal(signal.SIGKILL)
                break
        child.wait()
        log = store.log_path(session_id)
        _say(f"   session {session_id}: {acked} operations acknowledged (each fsynced), "
             f"then SIGKILL mid tool round (exit {child.returncode})")
        _say(f"   log: {log} ({describe_size(log.stat().st_size)})")
        _say("   last lines of the log:")
        for raw in log.read_bytes().splitlines()[-3:]:
            entry = json.loads(raw)
            shown = {k: v for k, v in entry.items() if k in ("type", "role", "reason")}
            if entry.get("tool_calls"):
                shown["tool_calls"] = [c["id"] for c in entry["tool_calls"]]
            if entry.get("tool_result"):
                shown["tool_result"] = entry["tool_result"]["call_id"]
            _say(f"     {json.dumps(shown, ensure_ascii=False)}")

        _say("\n== 2. Replay (read-only, what `pseudoclaude sessions show` does)")
        loaded = load_session(store, "latest")
        # The child may have finished one more operation between its ack and the kill.
        candidates = [repair(states[k])[0] for k in (acked, acked + 1) if k < len(states)]
        _say(f"   {plural(len(loaded.messages), 'message')}, "
             f"{plural(loaded.bad_lines, 'bad line')}, {plural(loaded.repaired, 'repair')}")
        same = loaded.messages in candidates
        _say(f"   equals the acknowledged conversation (repaired): {same}")
        for m in loaded.messages[-3:]:
            _say("   " + render_message(m).splitlines()[0][:100])

        _say("\n== 3. Resume for writing: the repair is committed as one `replace` line")
        opened = resume_session(store, "latest", model="demo-model")
        opened.conversation.add_user("Carry on where you stopped, please.")
        opened.writer.close()
        last = json.loads(log.read_bytes().splitlines()[-2])
        _say(f"   committed: type={last['type']} reason={last.get('reason')} "
             f"messages={len(last.get('messages', []))}")
        again = load_session(store, "latest")
        _say(f"   a second resume needs {plural(again.repaired, 'repair')}; "
             f"{plural(len(again.messages), 'message')}")

        _say("\n== 4. Listing (what `pseudoclaude sessions list` prints)")
        for info in list_sessions(store):
            _say(f"   {info.id}  {info.title[:60]}")
            _say(f"     {info.message_count} live messages · {describe_size(info.bytes)}"
                 f" · model {info.model}")
        _say(f"\nSession files: {store.session_dir(session_id)} "
             f"(folder mode {oct(os.stat(store.session_dir(session_id)).st_mode & 0o777)}, "
             f"log mode {oct(log.stat().st_mode & 0o777)})")
        ok = same and again.repaired == 0
        _say("demo: OK" if ok else "demo: FAILED")
        return 0 if ok else 1
    finally:
        if clean:
            shutil.rmtree(root, ignore_errors=True)
            _say(f"(removed {root}; without --clean the demo keeps it)")
        else:
            _say(f"(kept in {root}; remove it with: rm -rf {root})")
