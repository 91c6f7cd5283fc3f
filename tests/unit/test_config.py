"""Settings: defaults, files, environment and overrides, validation, provider resolution."""

from __future__ import annotations

import copy
import dataclasses
import inspect
from pathlib import Path
from typing import Any

import pytest
import yaml  # type: ignore[import-untyped]

from pseudoclaude import config
from pseudoclaude.compact.layer1 import plan
from pseudoclaude.compact.runtime import CompactConfig
from pseudoclaude.config import (
    DEFAULT_ANTHROPIC_MODEL,
    DEFAULT_OPENAI_MODEL,
    KEYS,
    ConfigError,
    Secret,
    Settings,
    load_settings,
)
from pseudoclaude.llm.errors import NoProviderConfigured
from pseudoclaude.llm.provider import require_provider


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    return home, ws


def write(root: Path, data: Any) -> Path:
    path = root / ".PseudoClaude" / "config.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data), encoding="utf-8")
    return path


def load(dirs: tuple[Path, Path], overrides: dict[str, Any] | None = None,
         env: dict[str, str] | None = None) -> Settings:
    home, ws = dirs
    return load_settings(ws, overrides, home=home, env=env or {})


def test_defaults(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    s = load(dirs)
    assert s.provider is None and s.model == "" and s.api_key is None and s.base_url is None
    assert s.max_iterations == 15 and s.context_window == 128_000 and s.thinking is False
    assert (s.approvals.run_command, s.approvals.write) == ("ask", "allow")
    assert s.memory.enabled is True and s.memory.user_dir == home / ".PseudoClaude" / "memory"
    assert s.data_dir == ws.resolve() / ".PseudoClaude" and s.session.retention_days == 30
    assert (s.compact.single_result_bytes, s.compact.round_bytes,
            s.compact.safety_margin_tokens, s.compact.auto) == (50_000, 200_000, 13_000, True)
    assert s.max_tokens == 8192 and s.max_retries == 2 and s.sources == ()


def test_no_provider_is_one_clear_line(dirs: tuple[Path, Path]) -> None:
    with pytest.raises(NoProviderConfigured) as info:
        require_provider(load(dirs))
    message = str(info.value)
    assert "\n" not in message
    assert "ANTHROPIC_API_KEY" in message and "OPENAI_API_KEY" in message


@pytest.mark.parametrize(("env", "provider", "model", "window"), [
    ({"ANTHROPIC_API_KEY": "a-key"}, "anthropic", DEFAULT_ANTHROPIC_MODEL, 200_000),
    ({"OPENAI_API_KEY": "o-key"}, "openai", DEFAULT_OPENAI_MODEL, 128_000),
    ({"ANTHROPIC_API_KEY": "a-key", "OPENAI_API_KEY": "o-key"}, "anthropic",
     DEFAULT_ANTHROPIC_MODEL, 200_000),
])
def test_provider_from_environment(dirs: tuple[Path, Path], env: dict[str, str], provider: str,
                                   model: str, window: int) -> None:
    s = load(dirs, env=env)
    assert (s.provider, s.model, s.context_window) == (provider, model, window)
    assert s.api_key is not None and s.api_key.reveal() == env[f"{provider.upper()}_API_KEY"]
    assert require_provider(s) == provider
    # SPEC §4: auto threshold = window − 20,000 − 13,000 (167,000 and 95,000)
    assert CompactConfig.from_settings(s).threshold == window - 33_000


def test_precedence_home_workspace_env_overrides(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    write(home, {"provider": "openai", "model": "home-model", "maxIterations": 5,
                 "apiKey": "home-key", "compact": {"auto": False}})
    write(ws, {"model": "ws-model", "approvals": {"runCommand": "deny"}})
    s = load(dirs)
    assert (s.provider, s.model, s.max_iterations) == ("openai", "ws-model", 5)
    assert s.api_key == Secret("home-key") and s.compact.auto is False
    assert s.approvals.run_command == "deny" and len(s.sources) == 2
    s = load(dirs, env={"OPENAI_API_KEY": "env-key"})
    assert s.api_key == Secret("env-key")  # the environment beats config files
    s = load(dirs, {"model": "flag-model", "apiKey": "flag-key"}, env={"OPENAI_API_KEY": "e"})
    assert s.model == "flag-model" and s.api_key == Secret("flag-key")


def test_explicit_provider_beats_the_environment(dirs: tuple[Path, Path]) -> None:
    s = load(dirs, {"provider": "openai", "baseUrl": "http://127.0.0.1:11434/v1/"},
             env={"ANTHROPIC_API_KEY": "a"})
    assert s.provider == "openai" and s.api_key is None
    assert s.base_url == "http://127.0.0.1:11434/v1"
    assert require_provider(s) == "openai"  # a keyless local server is fine


def test_provider_without_key_names_the_variable(dirs: tuple[Path, Path]) -> None:
    with pytest.raises(NoProviderConfigured, match="set ANTHROPIC_API_KEY or the `apiKey`"):
        require_provider(load(dirs, {"provider": "anthropic"}))


def test_key_spellings_nested_dotted_snake_and_wrapped(dirs: tuple[Path, Path]) -> None:
    s = load(dirs, {
        "pseudoclaude": {"approvals.run_command": "allow", "memory": {"user_dir": "~/notes"}},
        "session": {"retention_days": "7"}, "compact.singleResultBytes": 1000,
        "context_window": 32_000, "base_url": "https://example.test/", "model": None,
        "dataDir": "", "server": {"command": ["pseudoclaude", "lsp"]}, "trace.server": "off",
    })
    home, ws = dirs
    assert s.approvals.run_command == "allow" and s.memory.user_dir == home / "notes"
    assert s.session.retention_days == 7 and s.compact.single_result_bytes == 1000
    assert s.context_window == 32_000 and s.base_url == "https://example.test"
    assert s.data_dir == ws.resolve() / ".PseudoClaude"  # "" means unset
    assert set(s.unknown_keys) == {"server.command", "trace.server"}


def test_go_providers_form(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs  # the user's own file (a workspace's waits for an approval: see below)
    write(home, {"providers": [
        {"name": "deepseek", "protocol": "openai", "model": "deepseek-chat",
         "base_url": "https://api.deepseek.test/v1", "api_key": "go-key",
         "context_window": 64000},
        {"name": "second", "protocol": "anthropic", "model": "ignored"}]})
    s = load(dirs)
    assert (s.provider, s.model, s.base_url, s.context_window) == (
        "openai", "deepseek-chat", "https://api.deepseek.test/v1", 64_000)
    assert s.api_key == Secret("go-key")
    write(home, {"providers": [{"name": "claude", "model": "go-model"}], "model": "flat-model"})
    s = load(dirs)
    assert s.provider == "anthropic" and s.model == "flat-model"
    write(ws, {"providers": [{"protocol": "openai", "base_url": "https://elsewhere.test/v1"}]})
    s = load(dirs)  # the same form in the workspace's file: its connection waits
    assert (s.provider, s.base_url) == ("anthropic", None) and s.pending is not None
    assert [a.key for a in s.pending.asked] == ["baseUrl", "provider"]
    assert (s.pending.approved.provider, s.pending.approved.base_url) == (
        "openai", "https://elsewhere.test/v1")


@pytest.mark.parametrize(("overrides", "message"), [
    ({"contextWindow": -1},
     "pseudoclaude settings: contextWindow must be a positive integer, got -1"),
    ({"contextWindow": True}, "contextWindow must be a positive integer, got True"),
    ({"provider": "gemini"}, "provider must be one of anthropic, openai, got 'gemini'"),
    ({"approvals": {"runCommand": "maybe"}}, "approvals.runCommand must be one of allow, ask"),
    ({"baseUrl": "localhost:8080"}, "baseUrl must be an http:// or https:// URL"),
    ({"maxIterations": 0}, "maxIterations must be a positive integer, got 0"),
    ({"memory.enabled": "sometimes"}, "memory.enabled must be true or false"),
    ({"requestTimeout": -3}, "requestTimeout must be a positive number of seconds"),
    ({"thinking": 10_000}, "thinkingBudget must be less than maxTokens (8192), got 10000"),
    ({"thinking": "lots"}, "thinking must be true, false, a token budget"),
    ({"apiKey": 1234567}, "apiKey must be a string, got (hidden)"),
])
def test_validation_names_the_key(dirs: tuple[Path, Path], overrides: dict[str, Any],
                                  message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(dirs, overrides)
    assert message in str(info.value)
    assert str(info.value).startswith("pseudoclaude settings: ")


def test_validation_names_the_file(dirs: tuple[Path, Path]) -> None:
    _home, ws = dirs
    path = write(ws, {"session": {"retentionDays": -2}})
    with pytest.raises(ConfigError, match=r"session\.retentionDays must be an integer >= 0"
                                          rf".*{path.name}"):
        load(dirs)


def test_bad_yaml_names_file_and_line_but_not_content(dirs: tuple[Path, Path]) -> None:
    _home, ws = dirs
    write(ws, "model: fine\napiKey: sk-SECRET-in-yaml: [unclosed\n")
    with pytest.raises(ConfigError) as info:
        load(dirs)
    text = str(info.value)
    assert "config.yaml" in text and "line 2" in text and "SECRET" not in text
    write(ws, "- a list\n- not a mapping\n")
    with pytest.raises(ConfigError, match="must hold a mapping"):
        load(dirs)


def test_thinking_forms(dirs: tuple[Path, Path]) -> None:
    s = load(dirs, {"thinking": True})
    assert (s.thinking, s.thinking_mode, s.thinking_budget) == (True, "enabled", 4096)
    s = load(dirs, {"thinking": 2048})
    assert (s.thinking, s.thinking_budget) == (True, 2048)
    s = load(dirs, {"thinking": "adaptive"})
    assert (s.thinking, s.thinking_mode) == (True, "adaptive")
    s = load(dirs, {"thinking": "false", "thinkingBudget": 9000})
    assert s.thinking is False  # a budget without thinking is not an error


def test_relative_data_dir_and_no_workspace(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    home, ws = dirs
    assert load(dirs, {"dataDir": "state"}).data_dir == ws.resolve() / "state"
    assert load_settings(None, home=home, env={}).data_dir is None


def test_api_key_is_redacted_everywhere(dirs: tuple[Path, Path]) -> None:
    s = load(dirs, env={"ANTHROPIC_API_KEY": "sk-ant-very-secret-value"})
    assert s.api_key is not None
    for text in (repr(s), str(s), f"{s}", repr(s.api_key), str(s.api_key), f"{s.api_key}",
                 repr(dataclasses.asdict(s)), repr(copy.deepcopy(s))):
        assert "very-secret" not in text
    with pytest.raises(TypeError):
        import pickle

        pickle.dumps(s.api_key)


def test_create_provider_without_provider_fails_with_the_clear_line() -> None:
    import asyncio

    from pseudoclaude.llm.provider import create_provider

    with pytest.raises(NoProviderConfigured, match="no model provider configured"):
        asyncio.run(create_provider(Settings()))


# -- issue 12: each key described once ------------------------------------------------------


def _attr(settings: Settings, path: str) -> Any:
    value: Any = settings
    for part in path.split("."):
        value = getattr(value, part)
    return value


def test_every_key_has_its_default_in_settings() -> None:
    declared = [v for v in vars(config).values() if isinstance(v, config.Key)]
    assert sorted(k.name for k in declared) == sorted(KEYS)
    s = Settings()
    for key in KEYS.values():
        assert _attr(s, key.attr) == key.default, key.name
        assert key.doc and key.sources <= {"file", "lsp", "cli", "env"}


def test_defaults_of_the_provider_and_compaction_come_from_the_table() -> None:
    from pseudoclaude.llm.provider import ProviderOptions

    options = ProviderOptions(provider="anthropic", model="m")
    assert (options.max_tokens, options.thinking_budget, options.max_retries,
            options.read_timeout, options.connect_timeout) == (
        config.MAX_TOKENS.default, config.THINKING_BUDGET.default, config.MAX_RETRIES.default,
        config.REQUEST_TIMEOUT.default, config.CONNECT_TIMEOUT.default)
    compact = CompactConfig(window=200_000)
    assert (compact.single_result_bytes, compact.round_bytes, compact.safety_margin_tokens,
            compact.auto) == dataclasses.astuple(Settings().compact)[:4]
    assert Settings().compact.model == Settings().memory.model == ""  # the session's model
    limits = inspect.signature(plan).parameters
    assert (limits["single_limit"].default, limits["round_limit"].default) == (
        config.COMPACT_SINGLE_RESULT_BYTES.default, config.COMPACT_ROUND_BYTES.default)


def test_compact_config_from_settings(dirs: tuple[Path, Path]) -> None:
    s = load(dirs, {"compact": {"singleResultBytes": 10, "roundBytes": 20,
                                "safetyMarginTokens": 30, "auto": False},
                    "contextWindow": 64_000})
    c = CompactConfig.from_settings(s)
    assert (c.window, c.single_result_bytes, c.round_bytes, c.safety_margin_tokens,
            c.auto) == (64_000, 10, 20, 30, False)
    assert CompactConfig.from_settings(s, 20_000).window == 20_000


def test_removed_duplicates_are_gone() -> None:
    # The runtime's CompactConfig.threshold is the one threshold; replace() and redacted()
    # had no users.
    assert not hasattr(Settings, "auto_compact_threshold")
    assert not hasattr(Settings, "redacted") and not hasattr(config, "replace")


def test_docstring_names_every_key_beyond_the_spec() -> None:
    spec_keys = {"provider", "model", "baseUrl", "apiKey", "contextWindow", "maxIterations",
                 "thinking", "approvals.runCommand", "approvals.write", "memory.enabled",
                 "memory.userDir", "dataDir", "session.retentionDays",
                 "compact.singleResultBytes", "compact.roundBytes",
                 "compact.safetyMarginTokens", "compact.auto"}
    doc = config.__doc__ or ""
    extra = [name for name in KEYS if name not in spec_keys]
    assert extra and all(f"``{name}``" in doc for name in extra)


# -- issue 17: errors never echo a secret; the caller names the overrides ---------------------


@pytest.mark.parametrize(("overrides", "canary"), [
    ({"approvals": {"runCommand": "sk-SECRET-maybe"}}, "SECRET"),
    ({"provider": "ghp_" + "a1B2" * 10}, "a1B2"),
    ({"model": ["sk-ant-api03-0123456789abcdef"]}, "0123456789"),
    ({"baseUrl": "ftp://user:hunter2pw@proxy.test"}, "hunter2"),
    ({"memory.enabled": "Bearer abcdefghijklmnopqrstuvwxyz"}, "abcdefghij"),
    ({"approvals.write": "Zq8Hx7Lm2Pp9Rt4Vw6Yb3Nc5"}, "Zq8Hx7"),
    ({"session.retentionDays": "7f3a9c2e-1c2d-4086-aa11-5b1d4086aa99"}, "7f3a9c2e"),
    ({"contextWindow": "AKIAIOSFODNN7EXAMPLE"}, "IOSFODNN"),
])
def test_a_bad_value_that_looks_like_a_secret_is_never_echoed(
        dirs: tuple[Path, Path], overrides: dict[str, Any], canary: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(dirs, overrides)
    text = str(info.value)
    assert canary not in text and "(hidden)" in text
    assert text.startswith("pseudoclaude settings: ") and "must be" in text


def test_a_bad_value_is_quoted_short(dirs: tuple[Path, Path]) -> None:
    with pytest.raises(ConfigError) as info:
        load(dirs, {"provider": "x" * 100})
    text = str(info.value)
    assert "got '" + "x" * 40 + "...'" in text and "x" * 41 not in text
    with pytest.raises(ConfigError, match=r"got \['a', 'b'\]"):
        load(dirs, {"model": ["a", "b"]})


def test_overrides_are_named_by_the_caller(dirs: tuple[Path, Path]) -> None:
    home, ws = dirs
    labels = {"contextWindow": "--context-window", "max_iterations": "--max-iterations"}

    def fails(overrides: dict[str, Any]) -> str:
        with pytest.raises(ConfigError) as info:
            load_settings(ws, overrides, home=home, env={}, overrides_source="command line",
                          override_labels=labels)
        return str(info.value)

    text = fails({"contextWindow": -1})
    assert text == "pseudoclaude settings: --context-window must be a positive integer, got -1"
    assert fails({"maxIterations": 0}).endswith("--max-iterations must be a positive integer, "
                                                "got 0")
    assert fails({"provider": "gemini"}).endswith("got 'gemini' (from command line)")
    # A file's bad value still names the file, whatever the overrides are called.
    path = write(ws, {"contextWindow": -2})
    assert fails({}).endswith(f"contextWindow must be a positive integer, got -2 (from {path})")
    with pytest.raises(ValueError, match="not a setting key"):
        load_settings(ws, {}, home=home, env={}, override_labels={"--nope": "--nope"})
