"""Settings: one typed object built from defaults, config files, the environment and overrides.

Precedence, lowest first (SPEC §7):

1. the defaults below;
2. ``~/.PseudoClaude/config.yaml`` (``home`` is a parameter, for tests);
3. ``<workspace>/.PseudoClaude/config.yaml``;
4. the environment's API keys (``ANTHROPIC_API_KEY``, ``OPENAI_API_KEY``);
5. ``overrides``: the LSP settings object (``initializationOptions`` or the answer of
   ``workspace/configuration``) or the CLI flags.

Keys are the LSP settings' names (``provider``, ``baseUrl``, ``approvals.runCommand``, ...). In
files and overrides they may be nested mappings (``approvals: {runCommand: ask}``) or dotted
flat keys (``approvals.runCommand: ask``); ``snake_case`` spellings (``base_url``) are accepted,
and a top-level ``pseudoclaude`` mapping is unwrapped. ``null`` or an empty string means "not
set". Unknown keys are ignored and listed in :attr:`Settings.unknown_keys` (editors send their
own keys, such as ``server.command``, in the same section). The Go PseudoClaude's form
``providers: [{name, protocol, model, base_url, api_key, context_window}]`` is read too: its
first entry counts as that file's ``provider``/``model``/``baseUrl``/``apiKey``/
``contextWindow`` unless the file also sets them directly.

Provider resolution: ``provider`` if set; else ``anthropic`` when ``ANTHROPIC_API_KEY`` is set;
else ``openai`` when ``OPENAI_API_KEY`` is set; else none, and :meth:`Settings.require_provider`
(called when a run needs a model) raises :class:`NoProviderConfigured` with one line naming what
to set. The API key comes from ``apiKey`` in overrides, else the provider's environment
variable, else ``apiKey`` in a config file. It is held in a :class:`Secret`, whose ``repr`` and
``str`` are redacted; no message built here ever contains it.

Extra keys beyond SPEC §7, for the providers: ``maxTokens`` (8192), ``thinking`` (``false``;
``true``, a budget in tokens, or ``"adaptive"``), ``thinkingBudget`` (4096),
``maxRetries`` (2), ``requestTimeout`` (seconds without a byte from the server, 300),
``connectTimeout`` (10).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pseudoclaude.llm.errors import NoProviderConfigured

ProviderName = Literal["anthropic", "openai"]
Approval = Literal["allow", "ask", "deny"]

PROVIDERS: tuple[ProviderName, ...] = ("anthropic", "openai")
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"
DEFAULT_OPENAI_MODEL = "gpt-4.1"
DEFAULT_MODELS: dict[str, str] = {"anthropic": DEFAULT_ANTHROPIC_MODEL,
                                  "openai": DEFAULT_OPENAI_MODEL}
DEFAULT_CONTEXT_WINDOWS: dict[str, int] = {"anthropic": 200_000, "openai": 128_000}
FALLBACK_CONTEXT_WINDOW = 128_000
API_KEY_ENV: dict[str, str] = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
CONFIG_DIR = ".PseudoClaude"
CONFIG_FILE = "config.yaml"
PREFIX = "pseudoclaude settings: "


class ConfigError(ValueError):
    """An invalid setting or config file; the message names the key (never a key's value)."""


class Secret:
    """A string (an API key) whose ``repr``/``str``/format are redacted. ``reveal()`` gives it."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')"

    def __str__(self) -> str:
        return "**********"

    def __format__(self, spec: str) -> str:
        return str(self)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __copy__(self) -> Secret:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> Secret:
        return self

    def __reduce__(self) -> Any:
        raise TypeError("a Secret is not picklable")


@dataclass(frozen=True)
class ApprovalSettings:
    run_command: Approval = "ask"
    write: Approval = "allow"


@dataclass(frozen=True)
class MemorySettings:
    enabled: bool = True
    user_dir: Path | None = None
    """Resolved by :func:`load_settings` to ``~/.PseudoClaude/memory`` when not set."""


@dataclass(frozen=True)
class SessionSettings:
    retention_days: int = 30
    """Sessions not updated for this many days are deleted at start-up; 0 keeps them all."""


@dataclass(frozen=True)
class CompactSettings:
    single_result_bytes: int = 50_000
    round_bytes: int = 200_000
    safety_margin_tokens: int = 13_000
    auto: bool = True


@dataclass(frozen=True)
class Settings:
    """Every setting, resolved. Build it with :func:`load_settings` (or ``Settings()`` for the
    pure defaults, which has no provider)."""

    provider: ProviderName | None = None
    model: str = ""
    base_url: str | None = None
    api_key: Secret | None = None
    context_window: int = FALLBACK_CONTEXT_WINDOW
    max_iterations: int = 15
    thinking: bool = False
    thinking_mode: Literal["enabled", "adaptive"] = "enabled"
    thinking_budget: int = 4096
    max_tokens: int = 8192
    max_retries: int = 2
    request_timeout: float = 300.0
    connect_timeout: float = 10.0
    approvals: ApprovalSettings = field(default_factory=ApprovalSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    data_dir: Path | None = None
    """``<workspace>/.PseudoClaude`` unless set; ``None`` only without a workspace."""
    session: SessionSettings = field(default_factory=SessionSettings)
    compact: CompactSettings = field(default_factory=CompactSettings)
    workspace: Path | None = None
    sources: tuple[str, ...] = ()
    """The config files that were read, lowest precedence first."""
    unknown_keys: tuple[str, ...] = ()

    def require_provider(self) -> ProviderName:
        """The provider, or :class:`NoProviderConfigured` with one line naming what to set."""
        if self.provider is None:
            raise NoProviderConfigured(
                "no model provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY, "
                "or the `provider` setting (with `apiKey`, or `baseUrl` for a local server)"
            )
        if not self.api_key and not self.base_url:
            env = API_KEY_ENV[self.provider]
            raise NoProviderConfigured(
                f"provider {self.provider} has no API key: set {env} or the `apiKey` setting"
            )
        return self.provider

    @property
    def auto_compact_threshold(self) -> int:
        """window − summary reserve (20,000) − safety margin (SPEC §4)."""
        return self.context_window - 20_000 - self.compact.safety_margin_tokens

    def redacted(self) -> dict[str, Any]:
        """The settings as a JSON-able dict with SPEC key names; the key shows as set or not."""
        return {
            "provider": self.provider, "model": self.model, "baseUrl": self.base_url,
            "apiKey": "(set)" if self.api_key else None,
            "contextWindow": self.context_window, "maxIterations": self.max_iterations,
            "thinking": self.thinking and (
                "adaptive" if self.thinking_mode == "adaptive" else self.thinking_budget),
            "maxTokens": self.max_tokens, "maxRetries": self.max_retries,
            "requestTimeout": self.request_timeout, "connectTimeout": self.connect_timeout,
            "approvals": {"runCommand": self.approvals.run_command,
                          "write": self.approvals.write},
            "memory": {"enabled": self.memory.enabled,
                       "userDir": _str_or_none(self.memory.user_dir)},
            "dataDir": _str_or_none(self.data_dir),
            "session": {"retentionDays": self.session.retention_days},
            "compact": {"singleResultBytes": self.compact.single_result_bytes,
                        "roundBytes": self.compact.round_bytes,
                        "safetyMarginTokens": self.compact.safety_margin_tokens,
                        "auto": self.compact.auto},
        }


def _str_or_none(path: Path | None) -> str | None:
    return None if path is None else str(path)


# --------------------------------------------------------------------------------------------
# Value checkers: each returns the typed value or raises _Invalid(what is expected).


class _Invalid(Exception):
    pass


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise _Invalid("a string")
    return value.strip()


def _choice(*choices: str) -> Callable[[Any], str]:
    def check(value: Any) -> str:
        text = value.strip().lower() if isinstance(value, str) else value
        if text not in choices:
            raise _Invalid("one of " + ", ".join(choices))
        return str(text)
    return check


def _integer(minimum: int) -> Callable[[Any], int]:
    what = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"

    def check(value: Any) -> int:
        if isinstance(value, str) and re.fullmatch(r"\s*-?\d+\s*", value):
            value = int(value)
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise _Invalid(what)
        return value
    return check


def _seconds(value: Any) -> float:
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise _Invalid("a positive number of seconds") from None
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise _Invalid("a positive number of seconds")
    return float(value)


def _boolean(value: Any) -> bool:
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no",
                                                            "on", "off", "1", "0"):
        return value.strip().lower() in ("true", "yes", "on", "1")
    if not isinstance(value, bool):
        raise _Invalid("true or false")
    return value


def _thinking(value: Any) -> bool | int | str:
    """``thinking``: a boolean, a budget in tokens (>= 1024), or ``"adaptive"``."""
    if isinstance(value, str) and value.strip().lower() == "adaptive":
        return "adaptive"
    if isinstance(value, bool) or (isinstance(value, str) and not value.strip().isdigit()):
        try:
            return _boolean(value)
        except _Invalid:
            raise _Invalid('true, false, a token budget >= 1024, or "adaptive"') from None
    try:
        return _integer(1024)(value)
    except _Invalid:
        raise _Invalid('true, false, a token budget >= 1024, or "adaptive"') from None


def _url(value: Any) -> str:
    text = _string(value).rstrip("/")
    if not re.match(r"^https?://[^/\s]+", text):
        raise _Invalid("an http:// or https:// URL")
    return text


def _path(value: Any) -> str:
    return _string(value)


def _secret(value: Any) -> Secret:
    if not isinstance(value, str):
        raise _Invalid("a string")
    return Secret(value.strip())


_KEYS: dict[str, Callable[[Any], Any]] = {
    "provider": _choice(*PROVIDERS),
    "model": _string,
    "baseUrl": _url,
    "apiKey": _secret,
    "contextWindow": _integer(1),
    "maxIterations": _integer(1),
    "thinking": _thinking,
    "thinkingBudget": _integer(1024),
    "maxTokens": _integer(1),
    "maxRetries": _integer(0),
    "requestTimeout": _seconds,
    "connectTimeout": _seconds,
    "approvals.runCommand": _choice("allow", "ask", "deny"),
    "approvals.write": _choice("allow", "ask", "deny"),
    "memory.enabled": _boolean,
    "memory.userDir": _path,
    "dataDir": _path,
    "session.retentionDays": _integer(0),
    "compact.singleResultBytes": _integer(1),
    "compact.roundBytes": _integer(1),
    "compact.safetyMarginTokens": _integer(0),
    "compact.auto": _boolean,
}
_CANONICAL = {key.lower(): key for key in _KEYS}


def _camel(segment: str) -> str:
    head, *rest = segment.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _canonical(dotted: str) -> str | None:
    return _CANONICAL.get(".".join(_camel(s) for s in dotted.split(".")).lower())


def _flatten(data: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and _canonical(name) is None:
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def _go_provider(entry: Any, source: str) -> dict[str, Any]:
    """The first entry of the Go original's ``providers[]`` as flat keys."""
    if not isinstance(entry, Mapping):
        raise ConfigError(f"{PREFIX}providers[0] must be a mapping ({source})")
    out: dict[str, Any] = {}
    kind = str(entry.get("protocol") or entry.get("name") or "").strip().lower()
    if kind:
        if "anthropic" in kind or "claude" in kind:
            out["provider"] = "anthropic"
        elif "openai" in kind:
            out["provider"] = "openai"
        else:
            raise ConfigError(f"{PREFIX}providers[0].protocol must be anthropic or openai, "
                              f"got {kind!r} ({source})")
    for key in ("model", "base_url", "api_key", "context_window"):
        if entry.get(key) not in (None, ""):
            out[key] = entry[key]
    return out


class _Layer:
    """One source of settings: canonical key → raw value, plus the unknown keys it had."""

    def __init__(self, name: str, data: Mapping[str, Any] | None) -> None:
        self.name = name
        self.values: dict[str, Any] = {}
        self.unknown: list[str] = []
        if not data:
            return
        data = dict(data)
        wrapped = data.pop("pseudoclaude", None)
        if isinstance(wrapped, Mapping):
            data = {**wrapped, **data}
        providers = data.pop("providers", None)
        flat: dict[str, Any] = {}
        if isinstance(providers, list) and providers:
            flat.update(_go_provider(providers[0], name))
        elif providers not in (None, []):
            raise ConfigError(f"{PREFIX}providers must be a list ({name})")
        flat.update(_flatten(data))
        for raw_key, value in flat.items():
            key = _canonical(raw_key)
            if key is None:
                self.unknown.append(raw_key)
            elif value is not None and value != "":
                self.values[key] = value


def _read_yaml(path: Path) -> dict[str, Any] | None:
    """A config file's mapping, ``None`` when absent. YAML errors name line and column only
    (the offending line could hold an API key)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{PREFIX}cannot read {path}: {type(exc).__name__}") from None
    import yaml  # type: ignore[import-untyped]  # PyYAML is light (~20 ms); imported only when a file exists.

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{PREFIX}{path}: {problem}{where}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"{PREFIX}{path} must hold a mapping of settings")
    return data


def load_settings(
    workspace: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    home: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Build the settings for ``workspace`` (see the module docstring for the precedence).

    ``home`` defaults to the user's home directory, ``env`` to ``os.environ``. Raises
    :class:`ConfigError` naming the key (and the file it came from) on an invalid value.
    """
    env = os.environ if env is None else env
    home_dir = Path(home).expanduser() if home is not None else Path.home()
    ws = Path(workspace).expanduser().resolve() if workspace is not None else None

    layers: list[_Layer] = []
    sources: list[str] = []
    candidates = [home_dir / CONFIG_DIR / CONFIG_FILE]
    if ws is not None:
        candidates.append(ws / CONFIG_DIR / CONFIG_FILE)
    for path in candidates:
        data = _read_yaml(path)
        if data is not None:
            sources.append(str(path))
            layers.append(_Layer(str(path), data))
    override_layer = _Layer("settings", overrides)
    layers.append(override_layer)

    merged: dict[str, tuple[Any, str]] = {}
    for layer in layers:
        for key, raw in layer.values.items():
            try:
                merged[key] = (_KEYS[key](raw), layer.name)
            except _Invalid as what:
                shown = "(hidden)" if key == "apiKey" else repr(raw)
                raise ConfigError(f"{PREFIX}{key} must be {what}, got {shown} "
                                  f"(from {layer.name})") from None
    values = {key: value for key, (value, _) in merged.items()}
    unknown = tuple(k for layer in layers for k in layer.unknown)
    return _resolve(values, merged, override_layer, env, home_dir, ws, tuple(sources), unknown)


def _env_key(env: Mapping[str, str], provider: str) -> Secret | None:
    value = env.get(API_KEY_ENV[provider], "").strip()
    return Secret(value) if value else None


def _resolve(
    values: dict[str, Any],
    merged: dict[str, tuple[Any, str]],
    override_layer: _Layer,
    env: Mapping[str, str],
    home: Path,
    ws: Path | None,
    sources: tuple[str, ...],
    unknown: tuple[str, ...],
) -> Settings:
    provider: ProviderName | None = values.get("provider")
    if provider is None:
        if _env_key(env, "anthropic"):
            provider = "anthropic"
        elif _env_key(env, "openai"):
            provider = "openai"

    api_key: Secret | None = None
    if "apiKey" in override_layer.values:
        api_key = values["apiKey"]
    elif provider is not None and _env_key(env, provider):
        api_key = _env_key(env, provider)
    elif "apiKey" in values:
        api_key = values["apiKey"]

    thinking_raw = values.get("thinking", False)
    thinking_budget = values.get("thinkingBudget", 4096)
    mode: Literal["enabled", "adaptive"] = "enabled"
    if thinking_raw == "adaptive":
        mode = "adaptive"
    elif isinstance(thinking_raw, int) and not isinstance(thinking_raw, bool):
        thinking_budget = thinking_raw
    thinking = thinking_raw is not False
    max_tokens = values.get("maxTokens", 8192)
    if thinking and mode == "enabled" and thinking_budget >= max_tokens:
        source = merged.get("thinkingBudget", merged.get("thinking", (None, "defaults")))[1]
        raise ConfigError(f"{PREFIX}thinkingBudget must be less than maxTokens ({max_tokens}), "
                          f"got {thinking_budget} (from {source})")

    def directory(key: str, default: Path | None) -> Path | None:
        if key not in values:
            return default
        text = values[key]
        # ``~`` is the same home the config file came from (the ``home`` parameter).
        path = home / text[2:] if text == "~" or text.startswith("~/") else (
            Path(text).expanduser())
        if not path.is_absolute():
            path = (ws or Path.cwd()) / path
        return path

    return Settings(
        provider=provider,
        model=values.get("model") or (DEFAULT_MODELS[provider] if provider else ""),
        base_url=values.get("baseUrl"),
        api_key=api_key,
        context_window=values.get(
            "contextWindow",
            DEFAULT_CONTEXT_WINDOWS.get(provider or "", FALLBACK_CONTEXT_WINDOW)),
        max_iterations=values.get("maxIterations", 15),
        thinking=thinking,
        thinking_mode=mode,
        thinking_budget=thinking_budget,
        max_tokens=max_tokens,
        max_retries=values.get("maxRetries", 2),
        request_timeout=values.get("requestTimeout", 300.0),
        connect_timeout=values.get("connectTimeout", 10.0),
        approvals=ApprovalSettings(
            run_command=values.get("approvals.runCommand", "ask"),
            write=values.get("approvals.write", "allow"),
        ),
        memory=MemorySettings(
            enabled=values.get("memory.enabled", True),
            user_dir=directory("memory.userDir", home / CONFIG_DIR / "memory"),
        ),
        data_dir=directory("dataDir", ws / CONFIG_DIR if ws is not None else None),
        session=SessionSettings(retention_days=values.get("session.retentionDays", 30)),
        compact=CompactSettings(
            single_result_bytes=values.get("compact.singleResultBytes", 50_000),
            round_bytes=values.get("compact.roundBytes", 200_000),
            safety_margin_tokens=values.get("compact.safetyMarginTokens", 13_000),
            auto=values.get("compact.auto", True),
        ),
        workspace=ws,
        sources=sources,
        unknown_keys=unknown,
    )


def replace(settings: Settings, **changes: Any) -> Settings:
    """A copy of ``settings`` with some fields changed (``dataclasses.replace``)."""
    return dataclasses.replace(settings, **changes)
