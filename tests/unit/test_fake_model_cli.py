"""`pseudoclaude fake-model`'s command line: a bad port is a usage error, never a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pseudoclaude.fake_model import FakeModelServer, main


@pytest.mark.parametrize("port", ["-5", "99999", "65536", "abc"])
def test_a_port_out_of_range_is_one_usage_line(port: str) -> None:
    done = subprocess.run([sys.executable, "-m", "pseudoclaude", "fake-model", "--port", port],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("pseudoclaude fake-model: argument --port: "), done.stderr
    assert port in done.stderr and "0-65535" in done.stderr


@pytest.mark.parametrize("port", ["-1", "65536"])
def test_the_module_entry_point_says_the_same(port: str,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """``python -m pseudoclaude.fake_model`` (``main``) parses its own arguments."""
    with pytest.raises(SystemExit) as exited:
        main(["--port", port])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--port" in err and port in err, err


def test_port_zero_picks_a_free_port() -> None:
    with FakeModelServer(port=0) as fake:
        assert 0 < fake.port <= 65_535


@pytest.mark.parametrize("port", [-5, 99_999, True])
def test_the_server_refuses_a_port_that_is_not_one(port: int) -> None:
    with pytest.raises(ValueError, match="port must be 0-65535"):
        FakeModelServer(port=port)


def test_error_after_without_an_error_is_a_script_error(tmp_path: Path) -> None:
    """It used to be accepted, and a streamed request then broke the server's handler."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"turns": [{"text": "x", "error_after": 2}]}))
    done = subprocess.run([sys.executable, "-m", "pseudoclaude", "fake-model", "--script",
                           str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr == ("pseudoclaude fake-model script: turns[0].error_after needs an error "
                           "to send\n")
