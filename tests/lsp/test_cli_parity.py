"""SPEC §11 "CLI parity": ``pseudoclaude context|compact|memory ... --json`` print the LSP
result objects for the same workspace, and bad input is one line with the SPEC §9 exit code.

The LSP side is the real server over stdio (pytest-lsp); the CLI side is a real process on the
same folder, with the same settings (from the user's own ``config.yaml``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]
from pytest_lsp import LanguageClient

from pseudoclaude.api import protocol as p

pytestmark = pytest.mark.timeout(240)


def cli(env: Any, *args: str, workspace: Path | None = None
        ) -> subprocess.CompletedProcess[str]:
    """``pseudoclaude ARGS --workspace WS`` as a user runs it (no API key in the environment;
    the settings come from the user's config.yaml, written by :func:`share_settings`)."""
    clean = {k: v for k, v in os.environ.items()
             if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC", "OPENAI"))}
    clean["HOME"] = str(env.tmp / "cli-home")
    ws = workspace or env.folders[0]
    return subprocess.run([sys.executable, "-m", "pseudoclaude", *args, "--workspace", str(ws)],
                          capture_output=True, text=True, timeout=120, env=clean)


def share_settings(env: Any) -> None:
    """The server's initializationOptions as the CLI user's own config.yaml (a workspace's
    would wait for an approval of where it sends the prompts)."""
    config = env.tmp / "cli-home" / ".PseudoClaude" / "config.yaml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(yaml.safe_dump(env.options()))


def json_out(done: subprocess.CompletedProcess[str]) -> Any:
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 1, done.stdout  # one JSON object
    return json.loads(lines[0])


async def request(client: LanguageClient, method: str, params: dict[str, Any] | None = None
                  ) -> Any:
    return await client.protocol.send_request_async(method, params or {})


async def test_json_output_is_the_lsp_result(client: LanguageClient, env: Any) -> None:
    share_settings(env)
    ran = await request(client, p.RUN, {"prompt": "read the README"})
    assert ran["stopReason"] == "completed"
    await request(client, p.MEMORY_REMEMBER, {"text": "Tests run with make test.",
                                              "level": "project", "title": "Testing"})
    lsp_context = await request(client, p.CONTEXT)
    lsp_memory = await request(client, p.MEMORY_SHOW)
    lsp_sessions = await request(client, p.SESSIONS_LIST)

    context = json_out(cli(env, "context", "--json"))
    assert set(context) == set(lsp_context)
    for key in ("sessionId", "messageCount", "contextWindow", "autoCompactThreshold",
                "autoCompactFailures", "autoCompactTripped"):
        assert context[key] == lsp_context[key], key
    # the same numbers: the CLI restores the anchor from the usage stamped in the log
    assert context["estimatedTokens"] == lsp_context["estimatedTokens"] > 0
    assert context["breakdown"] == lsp_context["breakdown"]
    table = cli(env, "context")
    assert table.returncode == 0 and "tool results" in table.stdout
    assert f"{lsp_context['breakdown']['system']:,}" in table.stdout

    assert json_out(cli(env, "memory", "show", "--json")) == lsp_memory

    # sessions list --json is the same listing (camelCase); only the server has an active
    # session
    listed = json_out(cli(env, "sessions", "list", "--json"))
    assert listed == {"sessions": [dict(s, active=False) for s in lsp_sessions["sessions"]]}

    remembered = json_out(cli(env, "memory", "remember", "Prefer pytest fixtures.",
                              "--title", "Fixtures", "--json"))
    assert set(remembered) == {"filename", "uri"}
    assert remembered["filename"].startswith("project_knowledge_fixtures")
    shown = await request(client, p.MEMORY_SHOW)
    assert remembered["filename"] in [n["filename"] for n in shown["stores"][0]["notes"]]
    forgot = json_out(cli(env, "memory", "forget", "project", remembered["filename"], "--json"))
    assert forgot == {"removed": True}
    again = cli(env, "memory", "forget", "project", remembered["filename"], "--json")
    assert again.returncode == 1 and json.loads(again.stdout) == {"removed": False}


async def test_compact_json_is_the_compact_result(client: LanguageClient, env: Any) -> None:
    share_settings(env)
    await request(client, p.RUN, {"prompt": "hello"})
    compacted = json_out(cli(env, "compact", "--instructions", "keep the names", "--json"))
    assert set(compacted) == {"beforeTokens", "afterTokens", "offloaded", "summarized",
                              "factCheck", "reason", "message"}
    assert compacted["summarized"] is False  # everything is in the recent window
    assert compacted["reason"] == "nothing to summarize"


def test_cli_errors_are_one_line_with_exit_codes(tmp_path: Path) -> None:
    env = SimpleNamespace(tmp=tmp_path, folders=[tmp_path / "ws"])
    env.folders[0].mkdir()
    (env.tmp / "cli-home").mkdir()
    cases: list[tuple[tuple[str, ...], int, str]] = [
        (("compact",), 1, "no session to compact"),
        (("run", "   "), 2, "prompt"),
        (("run", "--context-window", "-1", "hi"), 2, "--context-window"),
        (("run", "--session", "bogus", "hi"), 2, "sessionId"),
        (("run", "--base-url", "nope", "hi"), 2, "--base-url must be an http"),
        (("memory", "remember", "  "), 2, "text"),
        (("memory", "remember", "x", "--type", "diary"), 2, "type"),
        (("memory", "forget", "project", "../escape.md"), 2, "filename"),
        (("memory", "forget", "galaxy", "a.md"), 2, "galaxy"),
        (("run", "hello"), 1, "no model provider configured"),
    ]
    for args, code, needle in cases:
        done = cli(env, *args)
        assert done.returncode == code, (args, done.returncode, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and needle in lines[0], (args, done.stderr)
        assert "Traceback" not in done.stderr
    # nothing was written by any of them (no provider, no session, refused input)
    assert not (env.folders[0] / ".PseudoClaude").exists()
    missing = cli(env, "context", workspace=tmp_path / "nope")
    assert missing.returncode == 1 and "not a folder" in missing.stderr

    empty = cli(env, "context", "--json")
    assert json.loads(empty.stdout)["sessionId"] is None
    tcp = subprocess.run([sys.executable, "-m", "pseudoclaude", "lsp", "--port", "9999"],
                         capture_output=True, text=True, timeout=60)
    assert tcp.returncode == 2 and "--tcp" in tcp.stderr
