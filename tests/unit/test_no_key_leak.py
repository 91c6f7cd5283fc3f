"""No API key in any file written, any log line, any error, any event, any repr (SPEC §7).

One scenario exercises settings, both providers (success, every injected failure, a server
that echoes the key back, a cut stream, a timeout) with every logger at DEBUG, writes what a
caller would keep (events, errors with tracebacks, recorded requests) to files, and then greps
all of it for the key.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import traceback
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from pseudoclaude.config import ConfigError, load_settings
from pseudoclaude.fake_model import FakeModelServer
from pseudoclaude.llm.errors import ProviderError
from pseudoclaude.llm.provider import ProviderOptions, ToolSpec, create_provider
from pseudoclaude.llm.types import Message

KEY = "sk-leakcheck-7f3a9c2e5b1d4086aa"
LOGGERS = ("", "pseudoclaude", "anthropic", "openai", "httpx", "httpx2", "httpcore",
           "httpcore2")
TOOLS = [ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {}})]


def _files_under(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def _scenario_turns() -> list[dict[str, Any]]:
    echo = {"status": 401, "type": "authentication_error",
            "message": f"invalid x-api-key: {KEY} (Authorization: Bearer {KEY})"}
    return [
        {"text": "fine", "tool_calls": [{"name": "read_file", "arguments": {"p": 1}}]},
        {"error": "rate_limit"}, {"error": "overloaded"}, {"error": "server_error"},
        {"error": "prompt_too_long"}, {"error": "auth"}, {"error": echo},
        {"text": ["a", "b", "c"], "cut_after": 4},
        {"text": "slow", "stall": 2, "stall_after": 1},
    ]


async def _drive(kind: str, fake: FakeModelServer, sink: list[str], home: Path) -> None:
    log = logging.getLogger("pseudoclaude.test")
    key = load_settings(None, {"apiKey": KEY}, home=home, env={}).api_key
    provider = await create_provider(ProviderOptions(
        provider=kind, model="m", api_key=key, base_url=fake.base_url, max_retries=0,
        read_timeout=0.4))
    sink.append(repr(provider.__dict__))
    for _ in _scenario_turns():
        try:
            async for event in provider.stream("sys", [Message(role="user", content="q")], TOOLS):
                sink.append(repr(event))
        except ProviderError as exc:
            log.exception("provider failed: %s", exc)
            sink.append(f"{exc!s} | {exc!r}\n" + "".join(traceback.format_exception(exc)))
    await provider.aclose()


def test_api_key_never_leaks(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                             capfd: pytest.CaptureFixture[str]) -> None:
    inputs, out, home, ws = (tmp_path / n for n in ("input", "out", "home", "ws"))
    for d in (inputs, out, home, ws):
        d.mkdir()
    log_file = out / "debug.log"
    handler = logging.FileHandler(log_file, encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    root = logging.getLogger()
    root.addHandler(handler)
    previous = {name: logging.getLogger(name).level for name in LOGGERS}
    for name in LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG)
    caplog.set_level(logging.DEBUG)
    sink: list[str] = []
    try:
        # Settings: from the environment, from a config file, and a broken config file.
        settings = load_settings(ws, home=home, env={"ANTHROPIC_API_KEY": KEY})
        sink += [repr(settings), str(settings), f"{settings}", repr(dataclasses.asdict(settings)),
                 repr(settings.api_key)]
        # A key pasted into the wrong setting: the error names the setting, not the value.
        for wrong in ({"approvals.runCommand": KEY}, {"model": [KEY]}, {"maxTokens": KEY}):
            with pytest.raises(ConfigError) as misplaced:
                load_settings(ws, wrong, home=home, env={})
            sink.append(str(misplaced.value))
        config = ws / ".PseudoClaude" / "config.yaml"
        config.parent.mkdir()
        config.write_text(f"provider: openai\napiKey: {KEY}\n")
        sink.append(repr(load_settings(ws, home=home, env={})))
        config.write_text(f"apiKey: {KEY}: [broken\n")
        with pytest.raises(ConfigError) as bad:
            load_settings(ws, home=home, env={})
        sink.append(str(bad.value))
        config.replace(inputs / "config.yaml")  # an input, not something the code wrote

        for kind in ("anthropic", "openai"):
            with FakeModelServer(_scenario_turns()) as fake:
                asyncio.run(_drive(kind, fake, sink, home))
                (out / f"{kind}-requests.json").write_text(json.dumps(fake.requests))
                with urllib.request.urlopen(fake.base_url + "/_requests", timeout=5) as resp:
                    (out / f"{kind}-requests-http.json").write_bytes(resp.read())
        (out / "events-and-errors.txt").write_text("\n".join(sink), encoding="utf-8")
    finally:
        root.removeHandler(handler)
        handler.close()
        for name, level in previous.items():
            logging.getLogger(name).setLevel(level)

    captured = capfd.readouterr()
    written = _files_under(tmp_path)
    assert log_file in written and len(written) >= 5
    assert len(caplog.records) > 20, "debug logging was not captured"
    assert sum("provider failed" in r.getMessage() for r in caplog.records) >= 12
    leaks = [p for p in written if KEY.encode() in p.read_bytes()]
    assert leaks == [inputs / "config.yaml"]  # only the file the test itself wrote the key to
    assert KEY not in caplog.text
    assert KEY not in captured.out and KEY not in captured.err
    assert all(KEY not in s for s in sink)
    # The scrubbed echo still tells the user what happened.
    assert any("invalid x-api-key: [redacted]" in s for s in sink)
