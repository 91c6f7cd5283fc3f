"""`pseudoclaude demo` (what `make demo` runs) works offline, end to end, and says so only when
every step did what it shows."""

from __future__ import annotations

import itertools
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude import demo
from pseudoclaude.fake_model import reply as fake_model_reply
from support import server_env


def test_demo_runs_offline() -> None:
    """--offline: the scripted model even with a (bad) key in the environment."""
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY",
                                                            "OPENAI_API_KEY")}
    env["ANTHROPIC_API_KEY"] = "sk-ant-not-a-working-key"
    proc = subprocess.run([sys.executable, "-m", "pseudoclaude", "demo", "--clean", "--offline"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout
    assert "Offline: the scripted model" in out
    assert "[compact, layer 1] 1 large result saved to files" in out
    # read_file's 64 KiB cap on the 73 KB CSV is said, not hidden
    assert "read_file returns at most 64 KiB: this is the start of the 72,915-byte file" in out
    assert "summarized=True" in out
    # the second wave is in the main job too: the breakdown, the preview, the fact check
    assert "tools " in out and "; free " in out
    assert re.search(r"preview: would summarise [1-9]\d* messages? and keep", out), out
    assert "the summary was checked against" in out
    # the summary shown is the one the scripted model wrote for the summary request
    assert "     | 8. Current: south and west are out of range.\n" in out, out
    assert "[project_knowledge] Temperature range" in out
    # step 8 answers with its own scripted reply, not the one the summary request used up
    step8 = out[out.index("== 8."):]
    assert "".join(demo.RECAP) in step8, step8
    assert "no scripted reply left" not in out
    assert "same session: True" in out and "demo: OK" in out
    # counts read as English (issue 17: "13 message", "1 iterations")
    assert not re.search(r"\b1 (messages|iterations|bad lines|repairs)\b", out), out
    assert not re.search(r"\b([02-9]|\d\d+) (message|iteration|repair),", out), out
    # it says what happened to its folder, and --clean removed it
    removed = re.search(r"\(removed (\S+);", out)
    assert removed and not Path(removed.group(1)).exists(), out[-500:]
    assert proc.stderr == ""


@pytest.fixture(autouse=True)
def fresh_fake_model_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo in this process counts as in its own (``make demo``): the ids the fake model
    makes up start at 1 again. Their length is in the token estimates, and the demo's summary
    request is a few tokens under the limit of the cache-friendly form: ids grown longer by
    the tests run before would tip it into the transcript form."""
    monkeypatch.setattr(fake_model_reply, "_ids", itertools.count(1))


def _run(spec: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = demo.run_demo(clean=True, offline=True, spec=spec)
    out, err = capsys.readouterr()
    return code, out, err


def missing_the_summary() -> dict[str, Any]:
    """The script as it was before summaries repeated the conversation: its summary rule
    waits for the summary's own system prompt, so a cache-shaped summary request takes the
    next turn."""
    spec = demo.script()
    summary_rules = [r for r in spec["rules"] if r["when"] == {"summary": True}]
    assert summary_rules
    for rule in summary_rules:
        rule["when"] = {"system_contains": "working summary"}
    return spec


@pytest.mark.parametrize("window", [demo.WINDOW - 2_500, demo.WINDOW + 3_000])
def test_the_demos_window_has_room_on_both_sides(window: int, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A few thousand tokens more or less in the window (a longer system prompt, more tools,
    another path): steps 1-3 still pass without an automatic compaction, and step 4 still
    has an old part and summarises it in one cache-shaped request (which the old script
    misses)."""
    monkeypatch.setattr(demo, "WINDOW", window)
    code, _, err = _run(missing_the_summary(), capsys)
    assert code == 1
    assert err.startswith("pseudoclaude demo: step 4 failed: the stored summary is not the "
                          "scripted one"), err


def test_a_script_that_misses_the_summary_request_fails_at_step_4(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The old script (:func:`missing_the_summary`): the cache-shaped request takes step 8's
    turn. The demo says so at step 4 and stops."""
    spec = missing_the_summary()
    code, out, err = _run(spec, capsys)
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("pseudoclaude demo: step 4 failed: "), err
    last = len(spec["turns"]) - 1  # step 8's turn, counted from 0
    assert ("the stored summary is not the scripted one (the summary request got turn "
            f"{last} of the script)") in err
    assert "demo: FAILED" in out and "demo: OK" not in out
    assert "== 5." not in out  # stopped at the first failure
    assert re.search(r"\(removed (\S+);", out)


def test_a_reply_the_script_does_not_have_fails_the_step(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Without step 8's turn the fake model answers "no scripted reply left": a failure."""
    spec = demo.script()
    spec["turns"] = spec["turns"][:-1]
    code, out, err = _run(spec, capsys)
    assert code == 1
    assert err.count("\n") == 1, err
    assert err.startswith("pseudoclaude demo: step 8 failed: the scripted model had no reply "
                          "left for a request (a request with tools, last user message "
                          f"{demo.FOLLOW_UP!r})"), err
    assert "no scripted reply left" in out  # what the user saw, now called a failure
    assert "demo: OK" not in out


def test_an_answer_that_is_not_the_scripted_one_fails_the_step(
        capsys: pytest.CaptureFixture[str]) -> None:
    spec = demo.script()
    spec["turns"][-2] = {"text": "Everything is fine."}
    code, out, err = _run(spec, capsys)
    assert code == 1
    assert err == ("pseudoclaude demo: step 2 failed: the answer is not the scripted one: "
                   "'Everything is fine.'\n")
    assert "== 3." not in out


def test_with_a_key_and_no_network_it_stops_at_the_first_failure(tmp_path: Path) -> None:
    """ANTHROPIC_API_KEY set: the real provider, which cannot be reached (a loopback port that
    refuses connections, no retries). Step 2 fails, the demo stops there: one line on stderr,
    exit 1, no traceback, the later steps not run."""
    home = tmp_path / "home"
    (home / ".PseudoClaude").mkdir(parents=True)
    with socket.socket() as closed:  # bound, never listening: connections are refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        (home / ".PseudoClaude" / "config.yaml").write_text(
            f"baseUrl: http://127.0.0.1:{port}\nmaxRetries: 0\n", encoding="utf-8")
        env = server_env(home) | {"ANTHROPIC_API_KEY": "sk-ant-not-a-working-key"}
        proc = subprocess.run([sys.executable, "-m", "pseudoclaude", "demo", "--clean"],
                              capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "REAL provider" in proc.stdout
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("pseudoclaude demo: step 2 failed: the run failed: anthropic:"
                                  " connection failed"), proc.stderr
    assert "--offline" in proc.stderr
    assert "== 3." not in proc.stdout and "demo: OK" not in proc.stdout
    assert "demo: FAILED" in proc.stdout
