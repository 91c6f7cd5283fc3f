"""Failures of the CLI as a new user meets them: the exit code (README: 0 ok, 1 failure with
one line on stderr, 2 usage) and one ``pseudoclaude:`` line on stderr, in words."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.session import SessionStore
from pseudoclaude.session.codec import MessageEntry, encode
from support import server_env


def cli(tmp_path: Path, *args: str, env: dict[str, str] | None = None
        ) -> subprocess.CompletedProcess[str]:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    return subprocess.run([sys.executable, "-m", "pseudoclaude", *args, "--workspace", str(ws)],
                          capture_output=True, text=True, timeout=60,
                          env=(env or {}) | server_env(tmp_path / "home"))


def one_failure(done: subprocess.CompletedProcess[str], code: int,
                prefix: str = "pseudoclaude: ") -> str:
    """The one stderr line of a failure (nothing on stdout)."""
    assert done.returncode == code, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == "", done.stdout
    assert done.stderr.startswith(prefix) and done.stderr.count("\n") == 1, done.stderr
    assert "Traceback" not in done.stderr and "Error:" not in done.stderr
    return done.stderr


def test_a_session_id_that_is_not_one_is_usage(tmp_path: Path) -> None:
    line = one_failure(cli(tmp_path, "sessions", "show", "nope"), 2)
    assert "'nope'" in line and "latest" in line
    one_failure(cli(tmp_path, "sessions", "show", "20990101-000000-abcd"), 1)  # well-formed


def test_an_unknown_proposal_is_a_failure(tmp_path: Path) -> None:
    line = one_failure(cli(tmp_path, "memory", "review", "bogus", "reject"), 1)
    assert "no pending memory proposal 'bogus'" in line


def test_forgetting_no_note_is_a_failure_on_stderr(tmp_path: Path) -> None:
    line = one_failure(cli(tmp_path, "memory", "forget", "project", "nothere.md"), 1)
    assert "no note nothere.md in project memory" in line


def test_undo_without_a_session_says_so(tmp_path: Path) -> None:
    line = one_failure(cli(tmp_path, "compact", "--undo"), 1)
    assert "no session to undo" in line and "compact in" not in line


def test_an_unreachable_provider_names_the_url(tmp_path: Path) -> None:
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{s.getsockname()[1]}"
    (tmp_path / "ws" / ".PseudoClaude").mkdir(parents=True)
    (tmp_path / "ws" / ".PseudoClaude" / "config.yaml").write_text("maxRetries: 0\n")
    line = one_failure(cli(tmp_path, "run", "--base-url", base, "hi",
                           env={"ANTHROPIC_API_KEY": "sk-test"}), 1)
    assert f"connection failed to {base}/v1/messages" in line


def test_a_data_folder_that_is_a_file_is_said_in_words(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / ".PseudoClaude").write_text("not a folder")
    line = one_failure(cli(tmp_path, "sessions", "list"), 1, "pseudoclaude settings: ")
    assert f"{tmp_path / 'ws' / '.PseudoClaude'} is a file, not a folder" in line
    assert "set dataDir" in line and "NotADirectoryError" not in line
    elsewhere = tmp_path / "data"
    (tmp_path / "home" / ".PseudoClaude").mkdir(parents=True)
    (tmp_path / "home" / ".PseudoClaude" / "config.yaml").write_text(f"dataDir: {elsewhere}\n")
    moved = cli(tmp_path, "sessions", "list")  # the way out the message names works
    assert moved.returncode == 0 and moved.stderr == "", moved.stderr


def test_a_binary_config_is_said_in_words(tmp_path: Path) -> None:
    config = tmp_path / "ws" / ".PseudoClaude" / "config.yaml"
    config.parent.mkdir(parents=True)
    config.write_bytes(bytes(range(128, 256)))
    line = one_failure(cli(tmp_path, "memory", "show"), 1, "pseudoclaude settings: ")
    assert f"{config} is not a text file (UTF-8 YAML expected)" in line
    assert "UnicodeDecodeError" not in line


def test_every_count_reads_as_english(tmp_path: Path) -> None:
    from pseudoclaude.cli.run import TerminalPrinter
    from pseudoclaude.cli.state import session_line
    from pseudoclaude.events import CompactEvent, ToolResultEvent
    from pseudoclaude.session.format import describe_size
    from pseudoclaude.session.listing import session_info
    from pseudoclaude.words import previewed

    ws = tmp_path / "ws"
    store = SessionStore(ws / ".PseudoClaude")
    sid = "20260617-120000-abcd"
    store.session_dir(sid).mkdir(parents=True)
    store.log_path(sid).write_bytes(encode(MessageEntry(role="user", content="hi", ts=1.0))
                                    + b"garbage\n")
    assert " · 1 message · " in session_line(session_info(store, sid))  # sessions list
    shown = cli(tmp_path, "sessions", "show", sid)
    assert shown.stdout.startswith(f"session {sid}: 1 message, 1 bad line skipped, 0 repairs")
    assert describe_size(1) == "1 byte" and describe_size(12) == "12 bytes"
    done = TerminalPrinter.line(ToolResultEvent("c1", "read_file", False, 1, "x"))
    assert done == "  ok (1 byte)"
    spilled = TerminalPrinter.line(CompactEvent(1, 10_000, 2_000, offloaded=1))
    assert spilled is not None and "1 large tool result saved" in spilled
    assert "(1 byte)" in previewed(False, 10, 10, 0, 0, 1, 1)


def test_a_closed_stdout_ends_the_run_quietly(tmp_path: Path) -> None:
    """``run --json | head``: the reader goes away before the memory update's event."""
    memory = {"when": {"has_tools": False}, "reply": {"text": "[]", "delay": 1}}
    (tmp_path / "ws").mkdir()
    env = server_env(tmp_path / "home") | {"ANTHROPIC_API_KEY": "sk-test"}
    with FakeModelServer({"turns": [{"text": ["Hel", "lo"]}], "rules": [memory]}) as fake:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pseudoclaude", "run", "--json", "--workspace",
             str(tmp_path / "ws"), "--base-url", fake.base_url, "hi"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        assert proc.stdout is not None and proc.stderr is not None
        kinds = [json.loads(proc.stdout.readline())["kind"] for _ in range(4)]
        assert kinds == ["text", "text", "usage", "stop"]
        proc.stdout.close()  # before the memory update's event
        err = proc.stderr.read()
        assert proc.wait(60) == 0, err
    assert "Traceback" not in err and "BrokenPipe" not in err and "Broken pipe" not in err, err


def test_remember_does_not_repeat_the_title_as_the_summary(tmp_path: Path) -> None:
    done = cli(tmp_path, "memory", "remember", "X.")
    assert done.returncode == 0, done.stderr
    index = (tmp_path / "ws" / ".PseudoClaude" / "memory" / "MEMORY.md").read_text()
    assert "- [project_knowledge] X. (project_knowledge_x.md)" in index, index
    titled = cli(tmp_path, "memory", "remember", "Tests run with make test.", "--title", "Tests")
    assert titled.returncode == 0, titled.stderr
    index = (tmp_path / "ws" / ".PseudoClaude" / "memory" / "MEMORY.md").read_text()
    assert "- [project_knowledge] Tests — Tests run with make test. (" in index, index
    shown = cli(tmp_path, "memory", "show")
    assert "X. — X." not in shown.stdout and "  [project_knowledge] X. (" in shown.stdout


def test_bad_input_is_named(tmp_path: Path) -> None:
    """An unknown option, an argument that is not an id, a flag that needs another: each is a
    usage error (2) naming what is wrong."""
    for argv in (["--bogus"], ["--bogus", "sessions", "list"]):
        done = subprocess.run([sys.executable, "-m", "pseudoclaude", *argv],
                              capture_output=True, text=True, timeout=60,
                              env=server_env(tmp_path / "home"))
        line = one_failure(done, 2)
        assert "unknown option --bogus" in line and "COMMAND" not in line, line
    line = one_failure(cli(tmp_path, "sessions", "fork", "nope"), 2)
    assert line.startswith("pseudoclaude: ID: must be") and "--session" not in line, line
    line = one_failure(cli(tmp_path, "rewind", "--preview"), 2)
    assert "--preview" in line and "--turn" in line, line


def test_remember_never_rewrites_a_broken_index_with_its_nul(tmp_path: Path) -> None:
    """A hand-broken MEMORY.md (a NUL byte): ``memory remember`` saves the note, leaves the
    index alone rather than copying the NUL into a rewritten one, and says so."""
    memory = tmp_path / "ws" / ".PseudoClaude" / "memory"
    memory.mkdir(parents=True)
    broken = b"- [project_knowledge] Bad \x00 here (project_knowledge_bad.md)\n"
    (memory / "MEMORY.md").write_bytes(broken)
    done = cli(tmp_path, "memory", "remember", "Use tabs.")
    assert done.returncode == 0, done.stderr
    assert (memory / "MEMORY.md").read_bytes() == broken
    assert (memory / "project_knowledge_use-tabs.md").exists()
    assert "contains NUL bytes" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    shown = cli(tmp_path, "memory", "show")
    assert "\x00" not in shown.stdout and "Use tabs." in shown.stdout


def test_a_write_of_one_byte_is_said_in_words() -> None:
    from pseudoclaude.llm.types import ToolCall
    from pseudoclaude.workspace import summarize

    call = ToolCall("c1", "write_file", {"path": "a.txt", "content": "x"})
    assert summarize(call) == "write_file: a.txt (1 byte)"
