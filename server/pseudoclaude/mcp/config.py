"""The MCP servers a workspace may use: four sources, one entry shape, merged by name.

Sources, lowest first (a later entry of the same name replaces the earlier one whole):

1. ``user``: the user settings' ``mcp.servers`` (:func:`from_settings`);
2. ``project``: the workspace's ``.mcp.json``, as Claude Code writes it
   (``{"mcpServers": {NAME: ENTRY}}``, :func:`read_project_file`);
3. ``workspace``: ``mcp.servers`` of the workspace's ``.PseudoClaude/config.yaml``
   (:func:`read_workspace_file`);
4. ``acp``: the ``mcpServers`` of an ACP ``session/new`` (:func:`from_acp`).

An entry of the first three sources is ``{"command", "args"?, "env"?}`` (``"type": "stdio"``
optional), ``{"type": "http", "url", "headers"?}`` or ``{"type": "sse", "url", "headers"?}``;
every entry may also set ``disabled: true`` (then nothing else is needed: an entry that only
disables hides a server of that name from a lower source) and ``approval: ask|allow|deny``.
``${VAR}`` and ``${VAR:-default}`` in the command, the arguments, the env values, the URL and
the header values are expanded from the environment; a variable that is not set and has no
default is a problem of that entry. ACP entries (a list of ``{name, command, args, env: [{name,
value}]}`` or ``{type: "http"|"sse", name, url, headers: [{name, value}]}``) are taken
literally.

Nothing here raises for bad input: a bad entry becomes a :class:`ServerConfig` whose
``problem`` says what is wrong (the manager lists it as ``failed``), and a file that cannot be
read or parsed becomes a pseudo-entry named after the file. Problems name keys and variables,
never values (an env value or a header may be a token). Reading the two files is blocking
(small files); everything else is pure.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, get_args

from pseudoclaude.mcp.secrets import safe_url, scrub_text

Source = Literal["user", "project", "workspace", "acp"]
Transport = Literal["stdio", "http", "sse"]
Approval = Literal["ask", "allow", "deny"]
SOURCES: tuple[Source, ...] = get_args(Source)
TRANSPORTS: tuple[Transport, ...] = get_args(Transport)
APPROVALS: tuple[Approval, ...] = get_args(Approval)
REPOSITORY_SOURCES: frozenset[Source] = frozenset({"project", "workspace"})
"""The sources a cloned repository controls: their servers wait for the user's approval."""

PROJECT_FILE = ".mcp.json"
"""The project's server file, in the workspace root (Claude Code's name)."""
WORKSPACE_FILE = Path(".PseudoClaude") / "config.yaml"
"""The workspace's own settings file, relative to the workspace root."""
SETTINGS_KEY = "mcp.servers"

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True, slots=True)
class ServerConfig:
    """One configured server, validated (or with its ``problem``), variables expanded.

    ``fingerprint`` identifies what would run, as it was written (before expansion): for a
    local server its command, arguments and environment, for a remote one its URL. An approval
    is recorded against it (:mod:`pseudoclaude.mcp.trust`), so a changed command asks again.
    ``secrets`` are the values that must never be logged: every env and header value and every
    expanded variable's value.
    """

    name: str
    source: Source
    transport: Transport = "stdio"
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    disabled: bool = False
    approval: Approval | None = None
    """The entry's own ``approval`` (``None``: the source's default)."""
    problem: str | None = None
    """Why this entry cannot be used; ``None`` when it can."""
    fingerprint: str = ""
    secrets: tuple[str, ...] = field(default=(), repr=False)

    @property
    def needs_approval(self) -> bool:
        """Whether the user must approve this server before it starts: a server the
        repository brings (``.mcp.json`` or the workspace's ``config.yaml``) unless its entry
        says ``deny``, and any server whose entry says ``ask``. Such an entry's own ``allow``
        is ignored: a repository cannot approve its own server."""
        if self.approval == "deny":
            return False
        return self.source in REPOSITORY_SOURCES or self.approval == "ask"

    @property
    def denied(self) -> bool:
        return self.approval == "deny"

    def summary(self) -> str:
        """What runs, for a person deciding to approve it: the command line (arguments quoted)
        or the URL without its query; secrets replaced by ``[redacted]``."""
        if self.transport == "stdio":
            return scrub_text(shlex.join([self.command, *self.args]), self.secrets)
        return scrub_text(safe_url(self.url), self.secrets)


# -- expansion ---------------------------------------------------------------------------


class _Expander:
    """``${VAR}`` / ``${VAR:-default}`` over one environment; collects the values it put in
    (secrets) and the variables that were missing."""

    def __init__(self, environ: Mapping[str, str]) -> None:
        self.environ = environ
        self.used: list[str] = []
        self.missing: list[str] = []

    def __call__(self, text: str) -> str:
        def replace(match: re.Match[str]) -> str:
            name, default = match.group(1), match.group(2)
            value = self.environ.get(name)
            if value is None or (value == "" and default is not None):
                if default is None:
                    if name not in self.missing:
                        self.missing.append(name)
                    return ""
                value = default
            if value:
                self.used.append(value)
            return value

        return _VARIABLE.sub(replace, text)


def expand(text: str, environ: Mapping[str, str] | None = None) -> str:
    """``text`` with ``${VAR}`` and ``${VAR:-default}`` replaced from ``environ`` (default:
    ``os.environ``); a variable that is not set and has no default becomes ``""``."""
    return _Expander(os.environ if environ is None else environ)(text)


# -- one entry ---------------------------------------------------------------------------


def _fingerprint(transport: str, raw: Mapping[str, Any]) -> str:
    if transport == "stdio":
        what: dict[str, Any] = {"command": raw.get("command"), "args": raw.get("args") or [],
                                "env": raw.get("env") or {}}
    else:
        what = {"url": raw.get("url")}
    text = json.dumps({"type": transport, **what}, sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _string_map(value: Any, key: str) -> tuple[dict[str, str], str | None]:
    if value is None:
        return {}, None
    if not isinstance(value, Mapping):
        return {}, f"`{key}` must be an object of strings"
    out: dict[str, str] = {}
    for name, item in value.items():
        if not isinstance(name, str) or not name:
            return {}, f"`{key}` has a key that is not a string"
        if isinstance(item, bool) or not isinstance(item, str | int | float):
            return {}, f"`{key}.{name}` must be a string"
        out[name] = str(item)
    return out, None


def parse_entry(name: str, raw: Any, source: Source,
                environ: Mapping[str, str] | None = None, *, expand_vars: bool = True
                ) -> ServerConfig:
    """One entry of a source's server table (the shape of ``.mcp.json``'s), validated.

    Never raises: what is wrong is the result's ``problem``.
    """
    def bad(problem: str, **known: Any) -> ServerConfig:
        return ServerConfig(name=name, source=source, problem=problem, **known)

    if not isinstance(name, str) or not name.strip():
        return bad("the server has no name")
    if not isinstance(raw, Mapping):
        return bad("the entry is not an object")
    disabled = raw.get("disabled", False)
    if not isinstance(disabled, bool):
        return bad("`disabled` must be true or false")
    approval = raw.get("approval")
    if approval is not None and approval not in APPROVALS:
        return bad("`approval` must be ask, allow or deny", disabled=disabled)
    kind = raw.get("type")
    if kind is None:
        kind = "stdio" if "command" in raw or "url" not in raw else "http"
    if kind not in TRANSPORTS:
        shown = f" `{kind}`" if isinstance(kind, str) and len(kind) <= 40 else ""
        return bad(f"unknown type{shown} (expected stdio, http or sse)", disabled=disabled,
                   approval=approval)
    transport: Transport = kind
    common: dict[str, Any] = {"transport": transport, "disabled": disabled, "approval": approval,
                              "fingerprint": _fingerprint(transport, raw)}
    if disabled and not (raw.get("command") or raw.get("url")):
        return ServerConfig(name=name, source=source, **common)
    expander = _Expander(os.environ if environ is None else environ)
    run = expander if expand_vars else (lambda text: text)

    if transport == "stdio":
        command = raw.get("command")
        if not isinstance(command, str) or not command.strip():
            return bad("no `command` (a local server needs one; a remote one needs `url`)",
                       **common)
        args = raw.get("args") or []
        if not isinstance(args, Sequence) or isinstance(args, str) or not all(
                isinstance(a, str | int | float) and not isinstance(a, bool) for a in args):
            return bad("`args` must be a list of strings", **common)
        env, problem = _string_map(raw.get("env"), "env")
        if problem:
            return bad(problem, **common)
        config = ServerConfig(
            name=name, source=source, command=run(command.strip()),
            args=tuple(run(str(a)) for a in args),
            env={k: run(v) for k, v in env.items()}, **common)
        secrets = list(config.env.values())
    else:
        url = raw.get("url")
        if not isinstance(url, str) or not url.strip():
            return bad(f"no `url` (a {transport} server needs one)", **common)
        headers, problem = _string_map(raw.get("headers"), "headers")
        if problem:
            return bad(problem, **common)
        config = ServerConfig(name=name, source=source, url=run(url.strip()),
                              headers={k: run(v) for k, v in headers.items()}, **common)
        secrets = list(config.headers.values())
    secrets += expander.used
    config = _with(config, secrets=tuple(dict.fromkeys(s for s in secrets if s)))
    if expander.missing:
        names = ", ".join(f"`{v}`" for v in expander.missing)
        plural = "s are" if len(expander.missing) > 1 else " is"
        return _with(config, problem=f"environment variable{plural} {names} not set "
                                     "(and no `${VAR:-default}`)")
    if transport != "stdio" and not re.match(r"(?i)https?://[^/\s]", config.url):
        return _with(config, problem="`url` must be an http:// or https:// URL")
    return config


def _with(config: ServerConfig, **changes: Any) -> ServerConfig:
    return replace(config, **changes)


def parse_servers(table: Any, source: Source, environ: Mapping[str, str] | None = None, *,
                  origin: str) -> list[ServerConfig]:
    """Every entry of a ``{NAME: ENTRY}`` table; a table that is not an object is one
    pseudo-entry named ``origin`` (the file or the setting it came from)."""
    if table is None:
        return []
    if not isinstance(table, Mapping):
        return [ServerConfig(name=origin, source=source,
                             problem=f"`{origin}`: the server table is not an object")]
    return [parse_entry(str(name), raw, source, environ) for name, raw in table.items()]


# -- the sources -------------------------------------------------------------------------


def _lookup(settings: Mapping[str, Any], dotted: str) -> Any:
    """``settings[a][b]`` or ``settings["a.b"]`` for ``dotted = "a.b"`` (a top-level
    ``pseudoclaude`` mapping unwrapped, as the settings are)."""
    wrapped = settings.get("pseudoclaude")
    if isinstance(wrapped, Mapping):
        settings = {**settings, **wrapped}
    if dotted in settings:
        return settings[dotted]
    node: Any = settings
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def from_settings(settings: Mapping[str, Any] | None, environ: Mapping[str, str] | None = None,
                  *, source: Source = "user") -> list[ServerConfig]:
    """The servers of a settings object's ``mcp.servers`` (nested ``{mcp: {servers}}`` or the
    dotted key)."""
    if not settings:
        return []
    return parse_servers(_lookup(settings, SETTINGS_KEY), source, environ, origin=SETTINGS_KEY)


def _file_problem(path: Path, source: Source, problem: str) -> list[ServerConfig]:
    return [ServerConfig(name=path.name, source=source, problem=f"{path.name}: {problem}")]


def read_project_file(workspace: Path, environ: Mapping[str, str] | None = None
                      ) -> list[ServerConfig]:
    """The servers of ``<workspace>/.mcp.json`` (none when there is no such file)."""
    path = workspace / PROJECT_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        return _file_problem(path, "project", f"cannot be read ({_os_reason(exc)})")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return _file_problem(path, "project", f"not valid JSON (line {exc.lineno}, column "
                                              f"{exc.colno}: {exc.msg})")
    if not isinstance(data, Mapping):
        return _file_problem(path, "project", "not a JSON object")
    servers = data.get("mcpServers")
    if servers is not None and not isinstance(servers, Mapping):
        return _file_problem(path, "project", "`mcpServers` is not an object")
    return parse_servers(servers, "project", environ, origin=path.name)


def read_workspace_file(workspace: Path, environ: Mapping[str, str] | None = None
                        ) -> list[ServerConfig]:
    """The servers of ``mcp.servers`` in ``<workspace>/.PseudoClaude/config.yaml``."""
    path = workspace / WORKSPACE_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except (OSError, UnicodeDecodeError) as exc:
        return _file_problem(path, "workspace", f"cannot be read ({_os_reason(exc)})")
    import yaml  # type: ignore[import-untyped]  # imported only when the file exists

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        return _file_problem(path, "workspace", f"not valid YAML{where}")
    if data is None:
        return []
    if not isinstance(data, Mapping):
        return _file_problem(path, "workspace", "not a mapping")
    table = _lookup(data, SETTINGS_KEY)
    if table is not None and not isinstance(table, Mapping):
        return _file_problem(path, "workspace", "`mcp.servers` is not a mapping")
    return parse_servers(table, "workspace", environ, origin=path.name)


def _pairs(value: Any, key: str) -> tuple[dict[str, str], str | None]:
    """ACP's ``[{name, value}]`` lists as a mapping."""
    if value is None:
        return {}, None
    if isinstance(value, Mapping):
        return _string_map(value, key)
    if isinstance(value, str) or not isinstance(value, Sequence):
        return {}, f"`{key}` must be a list of {{name, value}}"
    out: dict[str, str] = {}
    for item in value:
        item = _plain(item)
        if not isinstance(item, Mapping) or not isinstance(item.get("name"), str) \
                or not isinstance(item.get("value"), str):
            return {}, f"`{key}` must be a list of {{name, value}}"
        out[item["name"]] = item["value"]
    return out, None


def _plain(item: Any) -> Any:
    """A mapping for an ACP schema object (a pydantic model) or a mapping."""
    dump = getattr(item, "model_dump", None)
    if callable(dump) and not isinstance(item, Mapping):
        return dump(by_alias=True, exclude_none=True)
    return item


def from_acp(servers: Iterable[Any] | None) -> list[ServerConfig]:
    """The servers of an ACP ``session/new``'s ``mcpServers`` (mappings, or the ACP schema's
    objects): no variable expansion, no approval needed (the client chose them)."""
    out: list[ServerConfig] = []
    for index, item in enumerate(servers or ()):
        item = _plain(item)
        name = item.get("name") if isinstance(item, Mapping) else None
        if not isinstance(name, str) or not name.strip():
            out.append(ServerConfig(name=f"acp[{index}]", source="acp",
                                    problem="the server has no name"))
            continue
        assert isinstance(item, Mapping)
        raw = {k: v for k, v in item.items() if k not in ("name", "env", "headers")}
        env, problem = _pairs(item.get("env"), "env")
        headers, header_problem = _pairs(item.get("headers"), "headers")
        problem = problem or header_problem
        if problem:
            out.append(ServerConfig(name=name, source="acp", problem=problem))
            continue
        if env:
            raw["env"] = env
        if headers:
            raw["headers"] = headers
        out.append(parse_entry(name, raw, "acp", expand_vars=False))
    return out


def merge(*sources: Iterable[ServerConfig]) -> list[ServerConfig]:
    """The entries of all ``sources`` by name, later wins (in the place of the first)."""
    table: dict[str, ServerConfig] = {}
    for entries in sources:
        for entry in entries:
            table[entry.name] = entry
    return list(table.values())


def collect(workspace: Path, *, settings: Mapping[str, Any] | None = None,
            acp: Iterable[Any] | None = None, environ: Mapping[str, str] | None = None
            ) -> list[ServerConfig]:
    """Every server of the four sources of ``workspace``, merged (reads two small files)."""
    environ = os.environ if environ is None else environ
    return merge(from_settings(settings, environ), read_project_file(workspace, environ),
                 read_workspace_file(workspace, environ), from_acp(acp))


def _os_reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return type(exc).__name__
