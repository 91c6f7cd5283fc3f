"""Settings: one typed object built from defaults, config files, the environment and overrides.

Every setting key is described once, in :data:`KEYS` (a :class:`Key` each: its name, its
checker, its default, one line of documentation and where it may come from). The defaults of
:class:`Settings`, the checking and the resolution in :func:`load_settings` all derive from that
table, and so do the defaults of :class:`~pseudoclaude.llm.provider.ProviderOptions`,
:class:`~pseudoclaude.compact.runtime.CompactConfig` and Layer 1.

Precedence, lowest first (SPEC §7):

1. the defaults in :data:`KEYS`;
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
else ``openai`` when ``OPENAI_API_KEY`` is set; else none, and :meth:`Settings.missing_provider`
is the one line naming what to set (:func:`pseudoclaude.llm.provider.require_provider`, called
when a run needs a model, raises it as ``NoProviderConfigured``). The API key comes from
``apiKey`` in overrides, else the provider's environment variable, else ``apiKey`` in a config
file. It is held in a :class:`Secret`, whose ``repr`` and ``str`` are redacted; no message
built here ever contains it.

Errors name the key (or the caller's label for it, such as a CLI flag: see ``override_labels``)
and the source it came from. They quote a bad value only when it is short and does not look
like a secret: ``apiKey`` and anything token-like (``sk-...``, long letter-and-digit runs,
``Bearer ...``, a URL with a password) show as ``(hidden)``, other values are cut at 40
characters.

Extra keys beyond SPEC §4 and §7, for the providers (defaults in :data:`KEYS`): ``maxTokens``,
``thinkingBudget`` (used when ``thinking`` is ``true``; ``thinking`` may also be a budget in
tokens, or ``"adaptive"``), ``maxRetries``, ``requestTimeout`` (seconds without a byte from the
server) and ``connectTimeout`` (seconds). From SPEC §11: ``memory.mode`` (``auto``,
``confirm``: background updates queue proposals for review, ``off``). From SPEC §12:
``compact.model`` and ``memory.model`` (another model of the same provider for summaries and
memory updates; ``""``: the session's); ``mcp.servers`` (MCP servers by name, merged by name
across the layers), ``mcp.startTimeout``, ``mcp.toolTimeout`` (seconds) and ``approvals.mcp``
(``ask`` by default). From SPEC §13: ``sessions.maxParallel`` (sessions of one folder running
at once in one server), the permission engine's ``permissions.allow``,
``permissions.ask`` and ``permissions.deny`` (rule lists, added up across the layers:
:data:`ADDED_UP_KEYS`), ``permissions.defaultMode`` and ``permissions.allowBypass`` (read from
the user's settings only: :data:`USER_ONLY_KEYS`), and the sandbox's ``sandbox.enabled``
(``auto``, ``true`` or ``false``), ``sandbox.network``, ``sandbox.hide`` (paths, added up too)
and ``sandbox.autoAllow``, ``hooks`` (entries as in ``hooks.yaml``, user settings only), and the
sub-agents' ``agents.maxParallel`` (``agent`` calls of one turn at once, default 3) and
``agents.exploreModel`` (the ``explore`` type's model; ``""``: ``compact.model``). What a
workspace's own ``config.yaml`` may set only once the user approved it is :data:`WAITING_KEYS`
(:class:`PendingSettings`).
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, get_args

from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.names import camel, snake
from pseudoclaude.redact import looks_secret, safe_url
from pseudoclaude.trust import PERMISSIONS_FILE, TrustStore, fingerprint, trust_store

ProviderName = Literal["anthropic", "openai"]
Approval = Literal["allow", "ask", "deny"]
MemoryMode = Literal["auto", "confirm", "off"]
PermissionMode = Literal["strict", "default", "acceptEdits", "plan", "bypassPermissions"]
"""The permission engine's modes (``pseudoclaude.permissions.engine.Mode``, which config, a
layer above it, does not import: the engine pulls in the shell parser)."""
SandboxEnabled = bool | Literal["auto"]
Source = Literal["file", "lsp", "cli", "env"]
"""Where a key may come from: config files, LSP settings, CLI flags, the environment."""

PROVIDERS: tuple[ProviderName, ...] = ("anthropic", "openai")
DEFAULT_ANTHROPIC_MODEL = "claude-sonnet-4-6"
DEFAULT_OPENAI_MODEL = "gpt-4.1"
DEFAULT_MODELS: dict[str, str] = {"anthropic": DEFAULT_ANTHROPIC_MODEL,
                                  "openai": DEFAULT_OPENAI_MODEL}
DEFAULT_CONTEXT_WINDOWS: dict[str, int] = {"anthropic": 200_000, "openai": 128_000}
FALLBACK_CONTEXT_WINDOW = min(DEFAULT_CONTEXT_WINDOWS.values())
"""The window without a provider: the smallest of the providers' defaults."""
API_KEY_ENV: dict[str, str] = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY"}
CONFIG_DIR = ".PseudoClaude"
CONFIG_FILE = "config.yaml"
PREFIX = "pseudoclaude settings: "
SHOWN_CHARS = 40
"""A bad value is quoted in an error up to this many characters, then ``...``."""


class ConfigError(PseudoClaudeError, ValueError):
    """An invalid setting or config file; the message names the key (never a key's value).
    ``label`` is set when the value came from a labelled override (a CLI flag)."""

    def __init__(self, message: str, label: str | None = None) -> None:
        super().__init__(message)
        self.label = label


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


# --------------------------------------------------------------------------------------------
# Value checkers: each returns the typed value or raises _Invalid(what is expected).


class _Invalid(Exception):
    pass


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise _Invalid("a string")
    return value.strip()


def _choice(*choices: str) -> Callable[[Any], str]:
    """One of ``choices``, in any case; the choice as it is spelled here (``acceptEdits``)."""
    spelled = {choice.lower(): choice for choice in choices}

    def check(value: Any) -> str:
        text = value.strip().lower() if isinstance(value, str) else None
        if text is None or text not in spelled:
            raise _Invalid("one of " + ", ".join(choices))
        return spelled[text]
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


def _auto_or_boolean(value: Any) -> bool | str:
    """``"auto"``, or a boolean (YAML's, or ``"true"``/``"false"``)."""
    if isinstance(value, str) and value.strip().lower() == "auto":
        return "auto"
    try:
        return _boolean(value)
    except _Invalid:
        raise _Invalid("auto, true or false") from None


def _strings(value: Any) -> tuple[str, ...]:
    """A list of non-empty strings (rules, paths), each stripped."""
    if not isinstance(value, list | tuple):
        raise _Invalid("a list of non-empty strings")
    items = tuple(item.strip() if isinstance(item, str) else "" for item in value)
    if not all(items):
        raise _Invalid("a list of non-empty strings")
    return items


MIN_THINKING_BUDGET = 1024


def _thinking(value: Any) -> bool | int | str:
    """``thinking``: a boolean, a budget in tokens, or ``"adaptive"``."""
    what = f'true, false, a token budget >= {MIN_THINKING_BUDGET}, or "adaptive"'
    if isinstance(value, str) and value.strip().lower() == "adaptive":
        return "adaptive"
    if isinstance(value, bool) or (isinstance(value, str) and not value.strip().isdigit()):
        try:
            return _boolean(value)
        except _Invalid:
            raise _Invalid(what) from None
    try:
        return _integer(MIN_THINKING_BUDGET)(value)
    except _Invalid:
        raise _Invalid(what) from None


def _url(value: Any) -> str:
    text = _string(value).rstrip("/")
    if not re.match(r"^https?://[^/\s]+", text):
        raise _Invalid("an http:// or https:// URL")
    return text


def _path(value: Any) -> str:
    return _string(value)


def _mapping(value: Any) -> dict[str, Any]:
    """An object of named entries (``mcp.servers``): checked entry by entry where it is used,
    so one bad entry never hides the others."""
    if not isinstance(value, Mapping):
        raise _Invalid("an object of named entries")
    return {str(k): v for k, v in value.items()}


def _entries(value: Any) -> tuple[Any, ...]:
    """A list of objects (``hooks``): each entry is checked where it is used, so one bad entry
    never hides the others."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, Mapping) for v in value):
        raise _Invalid("a list of objects")
    return tuple(dict(v) for v in value)


def _secret(value: Any) -> Secret:
    if not isinstance(value, str):
        raise _Invalid("a string")
    return Secret(value.strip())


# --------------------------------------------------------------------------------------------
# The table: every key, once.

T = TypeVar("T")
_FILES_AND_LSP: frozenset[Source] = frozenset({"file", "lsp"})
_ALSO_CLI: frozenset[Source] = frozenset({"file", "lsp", "cli"})


@dataclass(frozen=True)
class Key(Generic[T]):
    """One setting key. ``default`` is the :class:`Settings` default (a key whose real default
    depends on other settings, such as ``model``, says so in ``doc``); ``check`` turns a raw
    value (from YAML, JSON or a flag) into the typed one or raises ``_Invalid``."""

    name: str
    """The LSP and config-file name: ``compact.roundBytes``."""
    check: Callable[[Any], Any]
    default: T
    doc: str
    sources: frozenset[Source] = _FILES_AND_LSP
    """Where it may come from; every key may be set in config files and LSP settings."""
    secret: bool = False
    """Never quoted in an error (the value is hidden whatever it looks like)."""

    @property
    def attr(self) -> str:
        """Where :class:`Settings` holds it: ``compact.round_bytes``."""
        return snake(self.name)


PROVIDER: Key[ProviderName | None] = Key(
    "provider", _choice(*PROVIDERS), None,
    "The model provider: anthropic or openai. Unset: anthropic when ANTHROPIC_API_KEY is set, "
    "else openai when OPENAI_API_KEY is set",
    frozenset({"file", "lsp", "cli", "env"}))
MODEL: Key[str] = Key(
    "model", _string, "",
    f"The model name. Unset: the provider's default ({DEFAULT_ANTHROPIC_MODEL} for anthropic, "
    f"{DEFAULT_OPENAI_MODEL} for openai)", _ALSO_CLI)
BASE_URL: Key[str | None] = Key(
    "baseUrl", _url, None,
    "Base URL of an OpenAI-compatible or proxy server, e.g. http://localhost:11434/v1 for "
    "Ollama", _ALSO_CLI)
API_KEY: Key[Secret | None] = Key(
    "apiKey", _secret, None,
    "API key; prefer the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY): settings files are "
    "plain text", frozenset({"file", "lsp", "env"}), secret=True)
CONTEXT_WINDOW: Key[int] = Key(
    "contextWindow", _integer(1), FALLBACK_CONTEXT_WINDOW,
    "Context window in tokens. Unset: the provider's default (200,000 for anthropic, 128,000 "
    "for openai)", _ALSO_CLI)
MAX_ITERATIONS: Key[int] = Key("maxIterations", _integer(1), 15,
                               "Model turns per run before it stops with max_iterations",
                               _ALSO_CLI)
THINKING: Key[bool] = Key(
    "thinking", _thinking, False,
    f'Anthropic extended thinking: false, true, a budget in tokens (>= {MIN_THINKING_BUDGET}), '
    'or "adaptive"')
THINKING_BUDGET: Key[int] = Key(
    "thinkingBudget", _integer(MIN_THINKING_BUDGET), 4096,
    "Thinking tokens per model turn when thinking is true (less than maxTokens)")
MAX_TOKENS: Key[int] = Key("maxTokens", _integer(1), 8192, "Output tokens per model turn")
MAX_RETRIES: Key[int] = Key("maxRetries", _integer(0), 2,
                            "Retries of a failed model request before any of its output")
REQUEST_TIMEOUT: Key[float] = Key(
    "requestTimeout", _seconds, 300.0,
    "Seconds without a byte from the model server before the request fails")
CONNECT_TIMEOUT: Key[float] = Key("connectTimeout", _seconds, 10.0,
                                  "Seconds to connect to the model server")
APPROVALS_RUN_COMMAND: Key[Approval] = Key(
    "approvals.runCommand", _choice(*get_args(Approval)), "ask",
    "Whether the agent may run commands: allow, ask each time, or deny")
APPROVALS_WRITE: Key[Approval] = Key(
    "approvals.write", _choice(*get_args(Approval)), "allow",
    "Whether the agent may write and edit files: allow, ask each time, or deny")
APPROVALS_MCP: Key[Approval] = Key(
    "approvals.mcp", _choice(*get_args(Approval)), "ask",
    "Whether the agent may call the tools of MCP servers: allow, ask each time, or deny (a "
    "server's own `approval` entry overrides it)")
MCP_SERVERS: Key[dict[str, Any]] = Key(
    "mcp.servers", _mapping, {},
    "MCP servers by name, as in Claude Code's .mcp.json: {command, args?, env?} or {type: "
    "http, url, headers?}; merged with the workspace's .mcp.json and config.yaml (by name)")
MCP_START_TIMEOUT: Key[float] = Key(
    "mcp.startTimeout", _seconds, 10.0,
    "Seconds an MCP server may take to start and list its tools")
MCP_TOOL_TIMEOUT: Key[float] = Key(
    "mcp.toolTimeout", _seconds, 60.0, "Seconds one MCP tool call may take")
MEMORY_ENABLED: Key[bool] = Key(
    "memory.enabled", _boolean, True,
    "Keep project and user memory notes and update them after each completed run")
MEMORY_MODE: Key[MemoryMode] = Key(
    "memory.mode", _choice(*get_args(MemoryMode)), "auto",
    "How memory is updated after a completed run: auto (written directly), confirm (queued as "
    "proposals to review) or off (remember and forget still work); memory.enabled false wins")
MEMORY_MODEL: Key[str] = Key(
    "memory.model", _string, "",
    "Model for the memory updates after a run (same provider), e.g. a cheaper one. Unset: the "
    "session's model")
MEMORY_USER_DIR: Key[Path | None] = Key("memory.userDir", _path, None,
                                        "Folder of the user memory. Unset: ~/.PseudoClaude/memory")
DATA_DIR: Key[Path | None] = Key(
    "dataDir", _path, None,
    "Folder for sessions and project memory. Unset: <workspace>/.PseudoClaude")
SESSION_RETENTION_DAYS: Key[int] = Key(
    "session.retentionDays", _integer(0), 30,
    "Sessions idle this many days are deleted at start-up; 0 keeps them all")
SESSIONS_MAX_PARALLEL: Key[int] = Key(
    "sessions.maxParallel", _integer(1), 4,
    "Sessions of one folder that may run at the same time in one server; one more is refused")
COMPACT_SINGLE_RESULT_BYTES: Key[int] = Key(
    "compact.singleResultBytes", _integer(1), 50_000,
    "A tool result larger than this many bytes is offloaded to a file")
COMPACT_ROUND_BYTES: Key[int] = Key(
    "compact.roundBytes", _integer(1), 200_000,
    "One round's tool results are offloaded, largest first, until their total is under this "
    "many bytes")
COMPACT_SAFETY_MARGIN_TOKENS: Key[int] = Key(
    "compact.safetyMarginTokens", _integer(0), 13_000,
    "Auto-compact threshold = context window - summary reserve - this margin, in tokens (both "
    "capped for small windows)")
COMPACT_AUTO: Key[bool] = Key(
    "compact.auto", _boolean, True,
    "Summarize the conversation automatically when it reaches the auto-compact threshold")
COMPACT_MODEL: Key[str] = Key(
    "compact.model", _string, "",
    "Model for summaries (same provider), e.g. a cheaper one. Unset: the session's model, "
    "whose prompt cache the summary then reads; another model has its own cache, so the "
    "summary's input is billed at the full rate of that model")
AGENTS_MAX_PARALLEL: Key[int] = Key(
    "agents.maxParallel", _integer(1), 3,
    "Sub-agents (the agent tool) of one model turn that run at the same time; the others wait")
AGENTS_EXPLORE_MODEL: Key[str] = Key(
    "agents.exploreModel", _string, "",
    "Model of the explore sub-agent (same provider), e.g. a cheaper one. Unset: compact.model, "
    "else the session's model")
PERMISSIONS_ALLOW: Key[tuple[str, ...]] = Key(
    "permissions.allow", _strings, (),
    "Permission rules whose calls run without asking, e.g. Bash(npm run test:*) or Edit(src/**)")
PERMISSIONS_ASK: Key[tuple[str, ...]] = Key(
    "permissions.ask", _strings, (),
    "Permission rules whose calls are asked about first, e.g. Bash(git push:*)")
PERMISSIONS_DENY: Key[tuple[str, ...]] = Key(
    "permissions.deny", _strings, (),
    "Permission rules whose calls are refused, e.g. Read(.env) or Bash(rm:*); a deny wins over "
    "every allow")
PERMISSIONS_DEFAULT_MODE: Key[PermissionMode | None] = Key(
    "permissions.defaultMode", _choice(*get_args(PermissionMode)), None,
    "The mode a session starts in: strict, default, acceptEdits, plan or bypassPermissions. "
    "Unset: the permission files', else default")
PERMISSIONS_ALLOW_BYPASS: Key[bool] = Key(
    "permissions.allowBypass", _boolean, False,
    "Offer the bypassPermissions mode (nothing asked; deny rules and the dangerous-command list "
    "still hold). Read from your own settings only, never from a project's")
SANDBOX_ENABLED: Key[SandboxEnabled] = Key(
    "sandbox.enabled", _auto_or_boolean, "auto",
    "Run commands in a sandbox (bubblewrap): auto (when one works), true (commands are refused "
    "without one) or false")
SANDBOX_NETWORK: Key[bool] = Key(
    "sandbox.network", _boolean, False, "Let sandboxed commands reach the network")
SANDBOX_HIDE: Key[tuple[str, ...]] = Key(
    "sandbox.hide", _strings, (),
    "More paths hidden from sandboxed commands (~/.ssh, ~/.aws, ~/.gnupg, ~/.config/gcloud and "
    "~/.PseudoClaude always are)")
SANDBOX_AUTO_ALLOW: Key[bool] = Key(
    "sandbox.autoAllow", _boolean, True,
    "Run a sandboxed command that no permission rule names without asking")

HOOKS: Key[tuple[Any, ...]] = Key(
    "hooks", _entries, (),
    "Hooks as in hooks.yaml: [{name, event, action: {type: shell, command}, if?, only_once?, "
    "async?, timeout?}], beside ~/.PseudoClaude/hooks.yaml (see docs/hooks.md). Read from your "
    "own settings only; a project's hooks go in its .PseudoClaude/hooks.yaml, asked first")

KEYS: dict[str, Key[Any]] = {key.name: key for key in (
    PROVIDER, MODEL, BASE_URL, API_KEY, CONTEXT_WINDOW, MAX_ITERATIONS, THINKING,
    THINKING_BUDGET, MAX_TOKENS, MAX_RETRIES, REQUEST_TIMEOUT, CONNECT_TIMEOUT,
    APPROVALS_RUN_COMMAND, APPROVALS_WRITE, MEMORY_ENABLED, MEMORY_MODE, MEMORY_MODEL,
    MEMORY_USER_DIR, DATA_DIR, SESSION_RETENTION_DAYS, COMPACT_SINGLE_RESULT_BYTES,
    COMPACT_ROUND_BYTES, COMPACT_SAFETY_MARGIN_TOKENS, COMPACT_AUTO, COMPACT_MODEL,
    AGENTS_MAX_PARALLEL, AGENTS_EXPLORE_MODEL, APPROVALS_MCP, MCP_SERVERS, MCP_START_TIMEOUT,
    MCP_TOOL_TIMEOUT, SESSIONS_MAX_PARALLEL,
    PERMISSIONS_ALLOW, PERMISSIONS_ASK, PERMISSIONS_DENY, PERMISSIONS_DEFAULT_MODE,
    PERMISSIONS_ALLOW_BYPASS, SANDBOX_ENABLED, SANDBOX_NETWORK, SANDBOX_HIDE, SANDBOX_AUTO_ALLOW,
    HOOKS,
)}
"""Every setting key by name, in documentation order."""

APPROVAL_KEYS: tuple[str, ...] = (APPROVALS_RUN_COMMAND.name, APPROVALS_WRITE.name,
                                  APPROVALS_MCP.name)
ADDED_UP_KEYS: tuple[str, ...] = (PERMISSIONS_ALLOW.name, PERMISSIONS_ASK.name,
                                  PERMISSIONS_DENY.name, SANDBOX_HIDE.name)
"""Lists whose layers add up (in order, each entry once) rather than the later one replacing
the others: a workspace's file or the editor's settings add rules and hidden paths to the
user's file, never remove them."""
USER_ONLY_KEYS: tuple[str, ...] = (PERMISSIONS_ALLOW_BYPASS.name, HOOKS.name)
"""Read from the user's settings only (``~/.PseudoClaude/config.yaml``, the editor's, the CLI):
a workspace's own ``config.yaml`` setting them is ignored (a project's hooks are its
``.PseudoClaude/hooks.yaml``, which waits for the user's approval)."""
WAITING_KEYS: tuple[str, ...] = (BASE_URL.name, PROVIDER.name, API_KEY.name,
                                 MEMORY_USER_DIR.name, *APPROVAL_KEYS, PERMISSIONS_ALLOW.name,
                                 PERMISSIONS_DEFAULT_MODE.name, SANDBOX_ENABLED.name,
                                 SANDBOX_NETWORK.name, SANDBOX_AUTO_ALLOW.name)
"""The keys a workspace's own ``config.yaml`` sets only once the user approved the file: where
the prompts and the API key go (``baseUrl`` first, as the approval shows them), where the
user's own memory is kept (and its approvals: the user-level data folder), an approval more
permissive than the user's (``allow``), allow rules the user's settings do not have, a start
mode above the user's (``acceptEdits``, ``bypassPermissions``), and a weaker sandbox (off, or
``auto`` over ``true``; the network; commands run unasked). What narrows (``deny``, ``ask``,
``strict``, more hidden paths) applies at once."""
APPROVAL_NAME = f"{CONFIG_DIR}/{CONFIG_FILE}"
"""The name a workspace's settings file is approved under (its path in the workspace)."""


# --------------------------------------------------------------------------------------------
# The settings object. Its defaults are the table's.


@dataclass(frozen=True)
class ApprovalSettings:
    run_command: Approval = APPROVALS_RUN_COMMAND.default
    write: Approval = APPROVALS_WRITE.default
    mcp: Approval = APPROVALS_MCP.default


@dataclass(frozen=True)
class McpSettings:
    servers: Mapping[str, Any] = field(default_factory=dict)
    """The servers of the user's settings (config files and the editor's, merged by name)."""
    start_timeout: float = MCP_START_TIMEOUT.default
    tool_timeout: float = MCP_TOOL_TIMEOUT.default


@dataclass(frozen=True)
class MemorySettings:
    enabled: bool = MEMORY_ENABLED.default
    mode: MemoryMode = MEMORY_MODE.default
    """``auto``: background updates write; ``confirm``: they queue proposals; ``off``: none
    (remember and forget still work, the index is still injected)."""
    model: str = MEMORY_MODEL.default
    """The memory updates' model; ``""``: the session's."""
    user_dir: Path | None = MEMORY_USER_DIR.default
    """Resolved by :func:`load_settings` to ``~/.PseudoClaude/memory`` when not set."""


@dataclass(frozen=True)
class SessionSettings:
    retention_days: int = SESSION_RETENTION_DAYS.default
    """Sessions not updated for this many days are deleted at start-up; 0 keeps them all."""


@dataclass(frozen=True)
class SessionsSettings:
    max_parallel: int = SESSIONS_MAX_PARALLEL.default
    """Runs of different sessions of one folder at once (one server)."""


@dataclass(frozen=True)
class CompactSettings:
    single_result_bytes: int = COMPACT_SINGLE_RESULT_BYTES.default
    round_bytes: int = COMPACT_ROUND_BYTES.default
    safety_margin_tokens: int = COMPACT_SAFETY_MARGIN_TOKENS.default
    auto: bool = COMPACT_AUTO.default
    model: str = COMPACT_MODEL.default
    """The summaries' model; ``""``: the session's."""


@dataclass(frozen=True)
class AgentsSettings:
    max_parallel: int = AGENTS_MAX_PARALLEL.default
    """Sub-agents of one model turn running at once."""
    explore_model: str = AGENTS_EXPLORE_MODEL.default
    """The explore sub-agent's model; ``""``: ``compact.model``, else the session's."""


@dataclass(frozen=True)
class PermissionSettings:
    allow: tuple[str, ...] = PERMISSIONS_ALLOW.default
    """Rule texts (checked by the permission engine, which names a bad one), every layer's."""
    ask: tuple[str, ...] = PERMISSIONS_ASK.default
    deny: tuple[str, ...] = PERMISSIONS_DENY.default
    default_mode: PermissionMode | None = PERMISSIONS_DEFAULT_MODE.default
    """``None``: the permission files' ``defaultMode``, else ``default``."""
    allow_bypass: bool = PERMISSIONS_ALLOW_BYPASS.default
    """From the user's settings only (:data:`USER_ONLY_KEYS`)."""


@dataclass(frozen=True)
class SandboxSettings:
    enabled: SandboxEnabled = SANDBOX_ENABLED.default
    """``"auto"``: sandboxed when a sandbox works, else not; ``True``: commands are refused
    without one; ``False``: never sandboxed."""
    network: bool = SANDBOX_NETWORK.default
    hide: tuple[str, ...] = SANDBOX_HIDE.default
    """Paths hidden besides the built-in ones, every layer's."""
    auto_allow: bool = SANDBOX_AUTO_ALLOW.default


_GROUPS: dict[str, type[Any]] = {"approvals": ApprovalSettings, "memory": MemorySettings,
                                 "session": SessionSettings, "sessions": SessionsSettings,
                                 "compact": CompactSettings, "agents": AgentsSettings,
                                 "mcp": McpSettings,
                                 "permissions": PermissionSettings, "sandbox": SandboxSettings}


@dataclass(frozen=True)
class AskedSetting:
    """One setting of a workspace's ``config.yaml`` that waits for the user's approval."""

    key: str
    value: str
    """As the user is shown it (a URL without its user information; never a key)."""

    def line(self) -> str:
        """``baseUrl: http://... (your prompts and API key would be sent there)``."""
        why = _WHY_ASKED.get(self.key, "").replace("{value}", self.value)
        return f"{self.key}: {self.value}" + (f" ({why})" if why else "")


_WHY_ASKED = {
    BASE_URL.name: "your prompts and API key would be sent there",
    PROVIDER.name: "your prompts and API key would go to this provider",
    API_KEY.name: "this key would be used instead of yours",
    MEMORY_USER_DIR.name: "your own memory notes would be read and written there",
    APPROVALS_RUN_COMMAND.name: "commands would run without asking",
    APPROVALS_WRITE.name: "files would be written without asking",
    APPROVALS_MCP.name: "MCP tools would be called without asking",
    PERMISSIONS_ALLOW.name: "calls matching these rules would run without asking",
    PERMISSIONS_DEFAULT_MODE.name: "sessions would start in {value} mode",
    SANDBOX_ENABLED.name: "commands could run outside the sandbox",
    SANDBOX_NETWORK.name: "sandboxed commands would reach the network",
    SANDBOX_AUTO_ALLOW.name: "sandboxed commands would run without asking",
}


@dataclass(frozen=True)
class PendingSettings:
    """What a workspace's own ``config.yaml`` sets that waits for the user's approval (see
    :data:`WAITING_KEYS`); until then the settings without it stand."""

    path: Path
    """The file (``<workspace>/.PseudoClaude/config.yaml``)."""
    fingerprint: str
    """A hash of its content: an approval is of this exact content."""
    asked: tuple[AskedSetting, ...]
    """What it sets that waits, ``baseUrl`` first."""
    approved: Settings
    """The settings once it is approved."""

    @property
    def name(self) -> str:
        return APPROVAL_NAME

    @property
    def url(self) -> str | None:
        """The ``baseUrl`` it asks for, if it does (as shown)."""
        return next((a.value for a in self.asked if a.key == BASE_URL.name), None)

    def lines(self) -> list[str]:
        return [asked.line() for asked in self.asked]


@dataclass(frozen=True)
class Settings:
    """Every setting, resolved. Build it with :func:`load_settings` (or ``Settings()`` for the
    pure defaults, which has no provider)."""

    provider: ProviderName | None = PROVIDER.default
    model: str = MODEL.default
    base_url: str | None = BASE_URL.default
    api_key: Secret | None = API_KEY.default
    context_window: int = CONTEXT_WINDOW.default
    context_window_set: bool = False
    """Whether ``contextWindow`` was set (else a local server is asked for its window:
    :mod:`pseudoclaude.llm.window`)."""
    max_iterations: int = MAX_ITERATIONS.default
    thinking: bool = THINKING.default
    thinking_mode: Literal["enabled", "adaptive"] = "enabled"
    thinking_budget: int = THINKING_BUDGET.default
    max_tokens: int = MAX_TOKENS.default
    max_retries: int = MAX_RETRIES.default
    request_timeout: float = REQUEST_TIMEOUT.default
    connect_timeout: float = CONNECT_TIMEOUT.default
    approvals: ApprovalSettings = field(default_factory=ApprovalSettings)
    memory: MemorySettings = field(default_factory=MemorySettings)
    data_dir: Path | None = DATA_DIR.default
    """``<workspace>/.PseudoClaude`` unless set; ``None`` only without a workspace."""
    session: SessionSettings = field(default_factory=SessionSettings)
    sessions: SessionsSettings = field(default_factory=SessionsSettings)
    compact: CompactSettings = field(default_factory=CompactSettings)
    agents: AgentsSettings = field(default_factory=AgentsSettings)
    mcp: McpSettings = field(default_factory=McpSettings)
    permissions: PermissionSettings = field(default_factory=PermissionSettings)
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    hooks: tuple[Any, ...] = HOOKS.default
    """The ``hooks`` setting's entries, as given (read by :mod:`pseudoclaude.hooks`)."""
    workspace: Path | None = None
    sources: tuple[str, ...] = ()
    """The config files that were read, lowest precedence first."""
    unknown_keys: tuple[str, ...] = ()
    pending: PendingSettings | None = None
    """What the workspace's own ``config.yaml`` sets that waits for the user's approval (not
    applied here); ``None`` when nothing waits."""
    trust_dir: Path | None = None
    """The user-level data folder where approvals are remembered (``~/.PseudoClaude/`` unless
    the user's own settings move the user memory); set by :func:`load_settings`."""

    def missing_provider(self) -> str | None:
        """``None`` when a provider is usable, else one line naming what to set."""
        waiting = ""
        if self.pending is not None and self.pending.approved.missing_provider() is None:
            waiting = (f" (this folder's {APPROVAL_NAME} sets one: approve it to use it)")
        if self.provider is None:
            return ("no model provider configured: set ANTHROPIC_API_KEY or OPENAI_API_KEY, "
                    "or the `provider` setting (with `apiKey`, or `baseUrl` for a local "
                    f"server){waiting}")
        if not self.api_key and not self.base_url:
            env = API_KEY_ENV[self.provider]
            return (f"provider {self.provider} has no API key: set {env} or the `apiKey` "
                    f"setting{waiting}")
        return None


# --------------------------------------------------------------------------------------------
# Quoting a bad value in an error.

def _quote(value: Any, *, secret: bool = False) -> str:
    """``value`` for an error message: ``(hidden)`` when it may be a secret, else at most
    :data:`SHOWN_CHARS` characters (strings quoted)."""
    text = value if isinstance(value, str) else repr(value)
    if secret or looks_secret(text):
        return "(hidden)"
    if len(text) > SHOWN_CHARS:
        text = text[:SHOWN_CHARS] + "..."
    return repr(text) if isinstance(value, str) else text


# --------------------------------------------------------------------------------------------
# Reading the sources.


_CANONICAL = {name.lower(): name for name in KEYS}


def _canonical(dotted: str) -> str | None:
    return _CANONICAL.get(".".join(camel(s) for s in dotted.split(".")).lower())


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
                              f"got {_quote(kind)} ({source})")
    for key in ("model", "base_url", "api_key", "context_window"):
        if entry.get(key) not in (None, ""):
            out[key] = entry[key]
    return out


class _Layer:
    """One source of settings: canonical key → raw value, plus the unknown keys it had.
    ``labels`` name some keys as the caller knows them (a CLI flag) in errors."""

    def __init__(self, name: str, data: Mapping[str, Any] | None,
                 labels: Mapping[str, str] | None = None) -> None:
        self.name = name
        self.labels: dict[str, str] = {}
        for raw_key, label in (labels or {}).items():
            key = _canonical(raw_key)
            if key is None:
                raise ValueError(f"override_labels: {raw_key!r} is not a setting key")
            self.labels[key] = label
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

    def error(self, key: str, what: str, shown: str) -> ConfigError:
        """``<key> must be <what>, got <shown> (from <layer>)``; a labelled key is named by its
        label alone (``--context-window must be ...``)."""
        label = self.labels.get(key)
        where = "" if label else f" (from {self.name})"
        return ConfigError(f"{PREFIX}{label or key} must be {what}, got {shown}{where}", label)


def _read_yaml(path: Path) -> tuple[dict[str, Any] | None, str]:
    """A config file's mapping (``None`` when absent) and the fingerprint of its bytes. YAML
    errors name line and column only (the offending line could hold an API key)."""
    try:
        raw = path.read_bytes()
        text = raw.decode("utf-8")
    except FileNotFoundError:
        return None, ""
    except NotADirectoryError:  # its folder is a file: nothing to read (see _check_folder)
        return None, ""
    except UnicodeDecodeError:
        raise ConfigError(f"{PREFIX}{path} is not a text file (UTF-8 YAML expected)") from None
    except IsADirectoryError:
        raise ConfigError(f"{PREFIX}{path} is a folder, not a file: move it away") from None
    except OSError as exc:
        why = (exc.strerror or type(exc).__name__).lower()
        raise ConfigError(f"{PREFIX}cannot read {path}: {why}") from None
    import yaml  # type: ignore[import-untyped]  # PyYAML is light (~20 ms); imported only when a file exists.

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"{PREFIX}{path}: {problem}{where}") from None
    if data is None:
        return {}, fingerprint(raw)
    if not isinstance(data, dict):
        raise ConfigError(f"{PREFIX}{path} must hold a mapping of settings")
    return data, fingerprint(raw)


def _check_folder(folder: Path, key: str) -> None:
    """A ``.PseudoClaude`` that is a file (not a folder) where the data would go: said in
    words, naming the setting that moves the data elsewhere."""
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{PREFIX}{folder} is a file, not a folder: move it away or set "
                          f"{key}")


def load_settings(
    workspace: str | Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    *,
    home: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    overrides_source: str = "settings",
    override_labels: Mapping[str, str] | None = None,
) -> Settings:
    """Build the settings for ``workspace`` (see the module docstring for the precedence).

    ``home`` defaults to the user's home directory, ``env`` to ``os.environ``. Raises
    :class:`ConfigError` naming the key (and the file it came from) on an invalid value.
    ``overrides_source`` names the overrides in errors (``(from command line)``);
    ``override_labels`` maps setting keys to what the user typed for them, e.g.
    ``{"contextWindow": "--context-window"}``, so that an error about a bad override says
    ``--context-window must be a positive integer, got -1``.
    """
    env = os.environ if env is None else env
    home_dir = Path(home).expanduser() if home is not None else Path.home()
    ws = Path(workspace).expanduser().resolve() if workspace is not None else None

    layers: list[_Layer] = []
    sources: list[str] = []
    user_file = home_dir / CONFIG_DIR / CONFIG_FILE
    data, _ = _read_yaml(user_file)
    if data is not None:
        sources.append(str(user_file))
        layers.append(_Layer(str(user_file), data))
    repository: tuple[_Layer, Path, str] | None = None
    if ws is not None:
        ws_file = ws / CONFIG_DIR / CONFIG_FILE
        data, digest = _read_yaml(ws_file)
        if data is not None:
            sources.append(str(ws_file))
            layer = _Layer(str(ws_file), data)
            # Its MCP servers are the MCP configuration's own source (``workspace``), which
            # waits for the user's approval of each server: never the user's settings.
            layer.values.pop(MCP_SERVERS.name, None)
            for name in USER_ONLY_KEYS:  # the user's to say, never a repository's
                layer.values.pop(name, None)
            layers.append(layer)
            repository = (layer, ws_file, digest)
    override_layer = _Layer(overrides_source, overrides, override_labels)
    layers.append(override_layer)
    unknown = tuple(k for layer in layers for k in layer.unknown)

    def settings() -> Settings:
        merged = _merge(layers)
        return _resolve(merged, override_layer, env, home_dir, ws, tuple(sources), unknown)

    if repository is None:
        return _with_trust_dir(settings())
    return _repository_settings(repository, settings)


def _with_trust_dir(settings: Settings, standing: Settings | None = None) -> Settings:
    """``settings`` knowing where approvals are remembered: the user-level data folder of
    the settings that stand without the workspace's own file (which cannot move it)."""
    user_dir = (standing or settings).memory.user_dir
    folder = user_dir.parent if user_dir is not None else Path.home() / CONFIG_DIR
    return dataclasses.replace(settings, trust_dir=folder)


def _merge(layers: list[_Layer]) -> dict[str, tuple[Any, _Layer]]:
    """Every key's checked value and the layer it came from (later layers win)."""
    merged: dict[str, tuple[Any, _Layer]] = {}
    for layer in layers:
        for name, raw in layer.values.items():
            key = KEYS[name]
            try:
                value = key.check(raw)
                if key is MCP_SERVERS and name in merged:  # merged by name, later wins
                    value = {**merged[name][0], **value}
                elif name in ADDED_UP_KEYS and name in merged:  # in order, each once
                    value = tuple(dict.fromkeys((*merged[name][0], *value)))
                merged[name] = (value, layer)
            except _Invalid as what:
                raise layer.error(name, str(what), _quote(raw, secret=key.secret)) from None
    return merged


def _repository_settings(repository: tuple[_Layer, Path, str],
                         settings: Callable[[], Settings]) -> Settings:
    """The settings when the workspace has its own ``config.yaml``: what it sets that would
    redirect the prompts and the key, or let more run unasked (:data:`WAITING_KEYS`), applies
    only once the user approved this exact file; what narrows applies at once."""
    layer, path, digest = repository
    held = {name: layer.values.pop(name) for name in WAITING_KEYS if name in layer.values}
    standing = _with_trust_dir(settings())
    if not held:
        return standing
    layer.values.update(held)
    approved = _with_trust_dir(settings(), standing)
    asked = [name for name in WAITING_KEYS
             if name in held and _widens(name, _value(standing, name), _value(approved, name))]
    if not asked:
        return approved  # everything it sets narrows (or changes nothing)
    for name in asked:
        layer.values.pop(name)
    standing = _with_trust_dir(settings())  # with what narrows
    ws = approved.workspace
    assert ws is not None
    if settings_trust(standing).is_approved(ws, APPROVAL_NAME, digest):
        return approved
    pending = PendingSettings(
        path=path, fingerprint=digest, approved=approved,
        asked=tuple(AskedSetting(name, _shown(name, _value(approved, name),
                                              _value(standing, name)))
                    for name in asked))
    return dataclasses.replace(standing, pending=pending)


def _value(settings: Settings, name: str) -> Any:
    value: Any = settings
    for part in KEYS[name].attr.split("."):
        value = getattr(value, part)
    return value


_PERMISSIVENESS = {"deny": 0, "ask": 1, "allow": 2}
_MODE_RANK: dict[str | None, int] = {"strict": 0, "plan": 0, "default": 1, "acceptEdits": 2,
                                     "bypassPermissions": 3, None: 1}
"""How much a start mode lets run unasked (unset counts as ``default``); the engine's
``MODE_RANK``."""
_SANDBOX_RANK: dict[bool | str, int] = {True: 0, "auto": 1, False: 2}
"""How much runs outside the sandbox: ``auto`` does where no sandbox works."""


def _widens(name: str, standing: Any, wanted: Any) -> bool:
    """Whether the workspace's value of ``name`` asks for more than what stands without it:
    an approval, a start mode or a sandbox more permissive, an allow rule more, a sandbox
    switch turned on, or any other connection."""
    if name in APPROVAL_KEYS:
        return bool(_PERMISSIVENESS[wanted] > _PERMISSIVENESS[standing])
    if name == PERMISSIONS_ALLOW.name:
        return not set(wanted) <= set(standing)
    if name == PERMISSIONS_DEFAULT_MODE.name:
        return _MODE_RANK[wanted] > _MODE_RANK[standing]
    if name == SANDBOX_ENABLED.name:
        return _SANDBOX_RANK[wanted] > _SANDBOX_RANK[standing]
    if name in (SANDBOX_NETWORK.name, SANDBOX_AUTO_ALLOW.name):
        return bool(wanted and not standing)
    return bool(wanted != standing)


def _shown(name: str, value: Any, standing: Any = None) -> str:
    """A waiting value as the user is shown it: a URL without its user information, query
    and fragment; never a key; of a list, what it adds to ``standing`` (comma-separated); a
    boolean as YAML writes it."""
    if value is None:
        return "(not set)"
    if KEYS[name].secret or isinstance(value, Secret):
        return "(a key, hidden)"
    if name == BASE_URL.name:
        return safe_url(str(value))
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ", ".join(item for item in value if item not in (standing or ()))
    return str(value)


def settings_trust(settings: Settings, filename: str = PERMISSIONS_FILE) -> TrustStore:
    """Where approvals of workspace settings files (or, with ``filename``, of another kind of
    file) are remembered: the user-level data folder (:attr:`Settings.trust_dir`)."""
    folder = settings.trust_dir or _with_trust_dir(settings).trust_dir
    assert folder is not None
    return trust_store(folder, filename)


def remember_approval(settings: Settings) -> PendingSettings | None:
    """Approve what the workspace's own settings file asks for, remembered (by the folder and
    the file's content) for this process and later ones; what was approved, ``None`` when the
    file asks for nothing that waits. Raises ``OSError`` when it cannot be recorded."""
    pending = settings.pending
    if pending is None or settings.workspace is None:
        return None
    settings_trust(settings).remember(settings.workspace, pending.name, pending.fingerprint)
    return pending


def forget_approval(settings: Settings) -> None:
    """Withdraw the approval of the workspace's own settings file (asked again next time)."""
    if settings.workspace is not None:
        settings_trust(settings).forget(settings.workspace, APPROVAL_NAME)


def _env_key(env: Mapping[str, str], provider: str) -> Secret | None:
    value = env.get(API_KEY_ENV[provider], "").strip()
    return Secret(value) if value else None


def _resolve(
    merged: dict[str, tuple[Any, _Layer]],
    override_layer: _Layer,
    env: Mapping[str, str],
    home: Path,
    ws: Path | None,
    sources: tuple[str, ...],
    unknown: tuple[str, ...],
) -> Settings:
    # Every key's value (or its default) at its Settings attribute; then what depends on more
    # than its own key.
    values = {name: value for name, (value, _) in merged.items()}
    fields: dict[str, Any] = {key.attr: values.get(key.name, key.default)
                              for key in KEYS.values()}

    provider: ProviderName | None = values.get(PROVIDER.name)
    if provider is None:
        provider = next((p for p in PROVIDERS if _env_key(env, p)), None)
    fields[PROVIDER.attr] = provider
    if provider is not None:
        if not values.get(MODEL.name):
            fields[MODEL.attr] = DEFAULT_MODELS[provider]
        if API_KEY.name not in override_layer.values and _env_key(env, provider):
            fields[API_KEY.attr] = _env_key(env, provider)
    fields["context_window_set"] = CONTEXT_WINDOW.name in values
    if CONTEXT_WINDOW.name not in values:
        fields[CONTEXT_WINDOW.attr] = DEFAULT_CONTEXT_WINDOWS.get(provider or "",
                                                                 FALLBACK_CONTEXT_WINDOW)

    thinking = fields[THINKING.attr]
    fields["thinking_mode"] = "adaptive" if thinking == "adaptive" else "enabled"
    if isinstance(thinking, int) and not isinstance(thinking, bool):
        fields[THINKING_BUDGET.attr] = thinking
    fields[THINKING.attr] = thinking is not False
    budget, max_tokens = fields[THINKING_BUDGET.attr], fields[MAX_TOKENS.attr]
    if fields[THINKING.attr] and fields["thinking_mode"] == "enabled" and budget >= max_tokens:
        name = THINKING_BUDGET.name if THINKING_BUDGET.name in merged else THINKING.name
        layer = merged[name][1]
        where = layer.labels.get(name) or layer.name
        raise ConfigError(f"{PREFIX}thinkingBudget must be less than maxTokens ({max_tokens}), "
                          f"got {budget} (from {where})")

    def directory(key: Key[Path | None], default: Path | None) -> Path | None:
        if key.name not in values:
            return default
        text = values[key.name]
        # ``~`` is the same home the config file came from (the ``home`` parameter).
        path = home / text[2:] if text == "~" or text.startswith("~/") else (
            Path(text).expanduser())
        if not path.is_absolute():
            path = (ws or Path.cwd()) / path
        return path

    fields[MEMORY_USER_DIR.attr] = directory(MEMORY_USER_DIR, home / CONFIG_DIR / "memory")
    fields[DATA_DIR.attr] = directory(DATA_DIR, ws / CONFIG_DIR if ws is not None else None)
    if MEMORY_USER_DIR.name not in values:
        _check_folder(home / CONFIG_DIR, MEMORY_USER_DIR.name)
    if ws is not None and DATA_DIR.name not in values:
        _check_folder(ws / CONFIG_DIR, DATA_DIR.name)

    top: dict[str, Any] = {"workspace": ws, "sources": sources, "unknown_keys": unknown}
    groups: dict[str, dict[str, Any]] = {name: {} for name in _GROUPS}
    for path, value in fields.items():
        group, _, attr = path.rpartition(".")
        (groups[group] if group else top)[attr] = value
    return Settings(**top, **{name: cls(**groups[name]) for name, cls in _GROUPS.items()})
