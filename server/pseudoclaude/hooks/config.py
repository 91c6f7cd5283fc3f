"""Reading hooks: a ``hooks.yaml`` file or the ``hooks`` setting, entry by entry (docs/hooks.md).

::

    hooks:
      - name: block-json-write        # required, unique
        event: PreToolUse             # one of EVENTS
        if: {all_of: [...]}           # optional (pseudoclaude.hooks.conditions)
        action: {type: shell, command: 'echo "no" >&2; exit 2'}
        # or {type: http, url, method?, headers?, body?}, {type: prompt, text}
        only_once: false              # once per session
        async: false                  # not on PreToolUse or UserPromptSubmit
        timeout: 30s                  # a duration (500ms, 30s, 1m30s) or seconds; default 30s

An entry that cannot be read is a :class:`~pseudoclaude.hooks.model.Problem` naming the file,
the line and why (``unknown event "PreTool"``, ``invalid timeout "soon"``, ...); the others
still load. A file that is not YAML is one problem. A repeated name is a problem too: the first
definition stands.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from pseudoclaude.hooks.conditions import ConditionError, parse_condition
from pseudoclaude.hooks.model import (
    ACTION_TYPES,
    BLOCKING,
    DEFAULT_TIMEOUT,
    EVENTS,
    MAX_TIMEOUT,
    Action,
    Hook,
    HookEvent,
    HttpAction,
    Loaded,
    Problem,
    PromptAction,
    ShellAction,
    Source,
)

FILE_NAME = "hooks.yaml"
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


class EntryError(ValueError):
    """Why one entry cannot be read, and the field it is about (for its line)."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


LineOf = Callable[[str | None], int | None]
"""The line of an entry's field (``None``: the entry's own line)."""


def load_file(path: Path, source: Source) -> Loaded:
    """The hooks of a file (none when it does not exist). Blocking."""
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return Loaded()
    except (OSError, UnicodeDecodeError) as exc:
        why = "not UTF-8 text" if isinstance(exc, UnicodeDecodeError) else (
            exc.strerror or type(exc).__name__).lower()
        return Loaded(problems=(Problem(str(path), None, f"cannot be read: {why}",
                                        name=path.name, source=source),))
    return parse_text(text, str(path), source)


def parse_text(text: str, origin: str, source: Source) -> Loaded:
    """The hooks of a file's text (``origin`` names it in problems)."""
    import yaml  # type: ignore[import-untyped]

    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        why = getattr(exc, "problem", None) or "not valid YAML"
        return Loaded(problems=(Problem(origin, mark.line + 1 if mark else None,
                                        f"not valid YAML: {why}", name=Path(origin).name,
                                        source=source),))
    finally:
        loader.dispose()
    if data is None:
        return Loaded()
    items: Any = None
    item_nodes: list[Any] = []
    if isinstance(data, Mapping) and "hooks" in data:
        items = data["hooks"]
        item_nodes = _child(node, "hooks")
    elif isinstance(data, list):
        items, item_nodes = data, list(getattr(node, "value", []))
    if items is None:
        return Loaded(problems=(Problem(origin, 1, "expected a list of hooks under 'hooks:'",
                                        name=Path(origin).name, source=source),))
    if not isinstance(items, list):
        return Loaded(problems=(Problem(origin, _line(getattr(node, "start_mark", None)),
                                        "'hooks' must be a list of hooks",
                                        name=Path(origin).name, source=source),))
    lines = [_line_finder(item_nodes[i] if i < len(item_nodes) else None)
             for i in range(len(items))]
    return parse_entries(items, origin, source, lines)


def parse_entries(items: list[Any], origin: str, source: Source,
                  lines: list[LineOf] | None = None) -> Loaded:
    """Hooks from a list of entries (the ``hooks`` setting, or a file's list)."""
    hooks: list[Hook] = []
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, item in enumerate(items):
        line_of: LineOf = lines[index] if lines is not None else (lambda field: None)
        name = item.get("name") if isinstance(item, Mapping) else None
        shown = name.strip() if isinstance(name, str) and name.strip() else \
            f"hook {index + 1}"
        event = item.get("event") if isinstance(item, Mapping) else None
        where = origin if lines is not None else f"{origin} hooks[{index}]"
        try:
            hook = parse_entry(item, source, where, line_of(None))
        except EntryError as exc:
            problems.append(Problem(where, line_of(exc.field) or line_of(None), str(exc),
                                    name=shown, event=event if isinstance(event, str) else "",
                                    source=source))
            continue
        if hook.name in seen:
            problems.append(Problem(where, line_of("name"),
                                    f'a hook named "{hook.name}" is defined above already',
                                    name=hook.name, event=hook.event, source=source))
            continue
        seen.add(hook.name)
        hooks.append(hook)
    return Loaded(tuple(hooks), tuple(problems))


def parse_entry(item: Any, source: Source, origin: str, line: int | None = None) -> Hook:
    """One entry; :class:`EntryError` naming what is wrong."""
    if not isinstance(item, Mapping):
        raise EntryError("a hook must be a mapping (name, event, action, ...)")
    name = item.get("name")
    if not isinstance(name, str) or not name.strip():
        raise EntryError("the hook has no name", "name")
    event = item.get("event")
    if event not in EVENTS:
        shown = event if isinstance(event, str) else repr(event)
        raise EntryError(f'unknown event "{shown}" (one of {", ".join(EVENTS)})', "event")
    run_async = _flag(item, "async")
    if run_async and event in BLOCKING:
        raise EntryError(f"event {event} does not allow async: its hooks decide before it "
                         "goes on", "async")
    condition = None
    if item.get("if") is not None:
        try:
            condition = parse_condition(item["if"])
        except ConditionError as exc:
            raise EntryError(str(exc), "if") from None
    return Hook(name=name.strip(), event=cast(HookEvent, event),
                action=_action(item.get("action")), source=source, origin=origin, line=line,
                condition=condition, only_once=_flag(item, "only_once"), run_async=run_async,
                timeout=_timeout(item.get("timeout")))


def _flag(item: Mapping[str, Any], key: str) -> bool:
    value = item.get(key, False)
    if value is None:
        return False
    if not isinstance(value, bool):
        raise EntryError(f"{key} must be true or false", key)
    return value


def _action(value: Any) -> Action:
    if not isinstance(value, Mapping):
        raise EntryError("the hook has no action ({type: shell, command} or http or prompt)",
                         "action")
    kind = value.get("type")
    if kind == "shell":
        command = value.get("command")
        if not isinstance(command, str) or not command.strip():
            raise EntryError("a shell action needs a command", "action")
        return ShellAction(command)
    if kind == "http":
        return _http(value)
    if kind == "prompt":
        text = value.get("text")
        if not isinstance(text, str) or not text.strip():
            raise EntryError("a prompt action needs a text", "action")
        return PromptAction(text.strip())
    if kind == "subagent":
        raise EntryError("the subagent action is not supported yet", "action")
    shown = kind if isinstance(kind, str) else repr(kind)
    raise EntryError(f'unknown action "{shown}" (one of {", ".join(ACTION_TYPES)})', "action")


def _http(value: Mapping[str, Any]) -> HttpAction:
    url = value.get("url")
    if not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url):
        raise EntryError("an http action needs a url (http:// or https://)", "action")
    method = value.get("method", "POST")
    if not isinstance(method, str) or method.upper() not in _METHODS:
        raise EntryError(f"unknown http method {method!r} (one of {', '.join(_METHODS)})",
                         "action")
    headers = value.get("headers") or {}
    if not isinstance(headers, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str | int | float) for k, v in headers.items()):
        raise EntryError("http headers must be a mapping of names to texts", "action")
    body = value.get("body")
    if body is not None and not isinstance(body, str):
        raise EntryError("an http body must be a text (a template over the payload)", "action")
    return HttpAction(url, method.upper(), {k: str(v) for k, v in headers.items()}, body)


def _timeout(value: Any) -> float:
    if value is None:
        return DEFAULT_TIMEOUT
    seconds = parse_duration(value)
    if seconds is None or seconds <= 0 or seconds > MAX_TIMEOUT:
        raise EntryError(f'invalid timeout "{value}" (a duration such as 500ms, 30s or 2m, '
                         f"at most {MAX_TIMEOUT:g}s)", "timeout")
    return seconds


def parse_duration(value: Any) -> float | None:
    """Seconds of a Go duration (``1m30s``, ``500ms``) or a number of seconds; ``None`` when
    it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value)
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        return float(text)
    except ValueError:
        pass
    total, at = 0.0, 0
    for found in _DURATION.finditer(text):
        if found.start() != at:
            return None
        total += float(found.group(1)) * _UNITS[found.group(2)]
        at = found.end()
    return total if at == len(text) and at > 0 else None


# -- line numbers ------------------------------------------------------------------------------

def _line(mark: Any) -> int | None:
    return mark.line + 1 if mark is not None else None


def _child(node: Any, key: str) -> list[Any]:
    """The item nodes of the sequence under ``key`` of a mapping node."""
    for key_node, value_node in getattr(node, "value", []):
        if getattr(key_node, "value", None) == key:
            value = getattr(value_node, "value", [])
            return list(value) if isinstance(value, list) else []
    return []


def _line_finder(node: Any) -> LineOf:
    """The line of an entry (``None``) or of one of its keys."""
    entry_line = _line(getattr(node, "start_mark", None))
    keys: dict[str, int | None] = {}
    value = getattr(node, "value", None)
    if isinstance(value, list):
        for pair in value:
            if isinstance(pair, tuple) and len(pair) == 2:
                key_node = pair[0]
                if isinstance(getattr(key_node, "value", None), str):
                    keys[key_node.value] = _line(key_node.start_mark)

    def line_of(field: str | None) -> int | None:
        return keys.get(field, entry_line) if field is not None else entry_line

    return line_of
