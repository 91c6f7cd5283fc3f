"""`pseudoclaude demo` (what `make demo` runs) works offline, end to end."""

from __future__ import annotations

import os
import subprocess
import sys


def test_demo_runs_offline() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("ANTHROPIC_API_KEY",
                                                            "OPENAI_API_KEY")}
    proc = subprocess.run([sys.executable, "-m", "pseudoclaude", "demo"], capture_output=True,
                          text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    out = proc.stdout
    assert "Offline: the scripted model" in out
    assert "[compact, layer 1] 1 large result(s) saved to files" in out
    assert "summarized=True" in out
    assert "[project_knowledge] Temperature range" in out
    assert "same session: True" in out and out.rstrip().endswith("demo: OK")
    assert "Traceback" not in proc.stderr
