"""`pseudoclaude demo` (what `make demo` runs) works offline, end to end."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path


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
    assert "[project_knowledge] Temperature range" in out
    assert "same session: True" in out and "demo: OK" in out
    # counts read as English (issue 17: "13 message", "1 iterations")
    assert not re.search(r"\b1 (messages|iterations|bad lines|repairs)\b", out), out
    assert not re.search(r"\b([02-9]|\d\d+) (message|iteration|repair),", out), out
    # it says what happened to its folder, and --clean removed it
    removed = re.search(r"\(removed (\S+);", out)
    assert removed and not Path(removed.group(1)).exists(), out[-500:]
    assert "Traceback" not in proc.stderr
