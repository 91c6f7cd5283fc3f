"""The permission files and the ``permissions`` setting, loaded into rule sets.

Sources: ``~/.PseudoClaude/permissions.yaml`` (``user``), ``<workspace>/.PseudoClaude/
permissions.yaml`` (``project``), ``<workspace>/.PseudoClaude/permissions.local.yaml``
(``local``) and the ``permissions`` setting (``settings``). A file::

    defaultMode: acceptEdits          # optional
    permissions:
      allow: [ "Bash(npm run test:*)" ]
      ask:   [ "Bash(git push:*)" ]
      deny:  [ "Read(.env)" ]

The setting has the same shape, or is the inner mapping alone (``{allow, ask, deny,
defaultMode?}``; ``allowBypass`` may sit beside them and is not read here).

A file that is not valid YAML is skipped and named in ``problems``; a rule that does not parse
is named (``rule "<text>" in <file>: <why>``) and the others still load. A repository cannot
grant itself permissions: the ``allow`` rules of the project file, and a ``defaultMode`` above
``default``, take effect only once the user approved that exact content (the ``approved``
callback, given the file's real path and the SHA-256 of its bytes); the same holds for the local
file unless its content is one this machine wrote (:func:`write_local_rule` returns the
fingerprint to record as approved). Until then they are listed in ``waiting``, and what narrows
(deny and ask rules, ``strict`` and ``plan``) applies at once.

The mode a session starts in: the first ``defaultMode`` in effect of local, project, user,
settings; else ``default``. Blocking (small file reads).
"""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pseudoclaude.durable import atomic_write, make_private_dir
from pseudoclaude.errors import one_line
from pseudoclaude.permissions.engine import (
    MODE_RANK,
    MODES,
    Approvals,
    Mode,
    PermissionEngine,
    RuleSet,
    RuleSource,
)
from pseudoclaude.permissions.rules import PermissionsError, Rule, parse_rule, parse_rules
from pseudoclaude.trust import fingerprint

FOLDER = ".PseudoClaude"
FILE = "permissions.yaml"
LOCAL_FILE = "permissions.local.yaml"
MAX_BYTES = 1 << 20
"""A permission file larger than this is not read (named in ``problems``)."""
_LISTS = ("allow", "ask", "deny")
_SETTING_EXTRA = frozenset({"allowBypass"})

Approved = Callable[[Path, str], bool]
"""``approved(real_path, sha256) -> bool``: whether the user approved this content of that
file."""


@dataclass(frozen=True, slots=True)
class WaitingFile:
    """What a workspace file asks for that waits for the user's approval: its ``allow`` rules
    and its ``defaultMode`` when above ``default``. ``path`` is the file's real path,
    ``fingerprint`` the SHA-256 of the content that would be approved."""

    path: Path
    source: Literal["project", "local"]
    fingerprint: str
    rules: tuple[str, ...]
    default_mode: Mode | None = None


@dataclass
class Loaded:
    """The rule sets in effect, the mode to start in, what waits, and the problems met."""

    rule_sets: list[RuleSet] = field(default_factory=list)
    start_mode: Mode = "default"
    waiting: list[WaitingFile] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    def engine(self, workspace: Path | str, *, approvals: Approvals | None = None,
               allow_bypass: bool = False, extra_read_roots: Sequence[Path | str] = ()
               ) -> PermissionEngine:
        """An engine with these rules, starting in :attr:`start_mode`."""
        return PermissionEngine(workspace, self.rule_sets, mode=self.start_mode,
                                approvals=approvals, allow_bypass=allow_bypass,
                                problems=self.problems, extra_read_roots=extra_read_roots)


def user_file(user_dir: Path) -> Path:
    """``~/.PseudoClaude/permissions.yaml`` (``user_dir`` is ``~/.PseudoClaude``)."""
    return user_dir / FILE


def project_file(workspace: Path | str) -> Path:
    return Path(workspace) / FOLDER / FILE


def local_file(workspace: Path | str) -> Path:
    return Path(workspace) / FOLDER / LOCAL_FILE


def _shown(path: Path, workspace: Path) -> str:
    """A file as problems name it: relative to the workspace, or with ``~`` for the home."""
    try:
        return path.relative_to(workspace).as_posix()
    except ValueError:
        pass
    home = Path.home()
    try:
        return "~/" + path.relative_to(home).as_posix()
    except ValueError:
        return str(path)


@dataclass
class _Content:
    """One source's content, checked: rule texts by list, a mode."""

    origin: str
    rules: dict[str, list[Rule]] = field(default_factory=dict)
    mode: Mode | None = None


def _yaml_error(exc: Exception) -> str:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or one_line(exc)
    where = f"line {mark.line + 1}: " if mark is not None else ""
    return f"{where}{problem}"


def _check(data: Any, origin: str, problems: list[str], setting: bool) -> _Content | None:
    """The rules and mode of one source's parsed YAML (``None``: unusable, named in
    ``problems``)."""
    content = _Content(origin)
    if data is None:
        return content
    if not isinstance(data, Mapping):
        problems.append(f"{origin}: expected a mapping with defaultMode and permissions; "
                        "ignored")
        return None
    if setting and "permissions" not in data:
        data = {"defaultMode": data.get("defaultMode"),
                "permissions": {k: v for k, v in data.items()
                                if k != "defaultMode" and k not in _SETTING_EXTRA}}
    for key in data:
        if key not in ("defaultMode", "permissions") and not (setting and key in _SETTING_EXTRA):
            problems.append(f'{origin}: unknown key "{key}" (ignored)')
    mode = data.get("defaultMode")
    if mode is not None:
        if mode in MODES:
            content.mode = mode
        else:
            problems.append(f'{origin}: defaultMode "{mode}" is not a mode '
                            f'({", ".join(MODES)}); ignored')
    lists = data.get("permissions")
    if lists is None:
        return content
    if not isinstance(lists, Mapping):
        problems.append(f"{origin}: permissions must be a mapping of allow, ask and deny "
                        "lists; ignored")
        return content
    for key, value in lists.items():
        if key not in _LISTS:
            if not (setting and key in _SETTING_EXTRA):
                problems.append(f'{origin}: unknown key "permissions.{key}" (ignored)')
            continue
        if value is None:
            continue
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            problems.append(f"{origin}: permissions.{key} must be a list of rules; ignored")
            continue
        rules, errors = parse_rules(value)
        content.rules[key] = rules
        problems.extend(f'rule "{e.text}" in {origin}: {e.why}' for e in errors)
    return content


def _read(path: Path, origin: str, problems: list[str]) -> tuple[bytes, Any] | None:
    """The bytes and parsed YAML of a file; ``None`` when missing or unusable."""
    import yaml  # type: ignore[import-untyped]  # light; imported only when a file exists

    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size > MAX_BYTES:
                problems.append(f"{origin}: larger than {MAX_BYTES // 1024} KiB; ignored")
                return None
            data = f.read(MAX_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as exc:
        problems.append(f"{origin}: cannot be read ({one_line(exc)}); ignored")
        return None
    try:
        return data, yaml.safe_load(data.decode("utf-8"))
    except UnicodeDecodeError:
        problems.append(f"{origin}: not UTF-8 text; ignored")
    except yaml.YAMLError as exc:
        problems.append(f"{origin}: not valid YAML ({_yaml_error(exc)}); ignored")
    return None


def load_permissions(workspace: Path | str, *, approved: Approved,
                     user_dir: Path | None = None, settings: Mapping[str, Any] | None = None,
                     allow_bypass: bool = False) -> Loaded:
    """Load the four sources (see the module docstring). ``user_dir``: ``~/.PseudoClaude``;
    ``settings``: the ``permissions`` setting; ``allow_bypass``: ``permissions.allowBypass``
    of the user settings (a start mode ``bypassPermissions`` needs it)."""
    root = Path(workspace)
    home_dir = user_dir if user_dir is not None else Path.home() / FOLDER
    out = Loaded()
    modes: dict[RuleSource, Mode] = {}
    contents: list[tuple[RuleSource, _Content]] = []

    user_path = user_file(home_dir)
    found = _read(user_path, _shown(user_path, root), out.problems)
    if found is not None:
        content = _check(found[1], _shown(user_path, root), out.problems, setting=False)
        if content is not None:
            contents.append(("user", content))

    user_real = os.path.realpath(user_path)
    workspace_files: list[tuple[Literal["project", "local"], Path]] = [
        ("project", project_file(root)), ("local", local_file(root))]
    for place, path in workspace_files:
        if os.path.realpath(path) == user_real:
            continue  # the workspace is the home folder: that file is the user's
        origin = _shown(path, root)
        found = _read(path, origin, out.problems)
        if found is None:
            continue
        data, parsed = found
        content = _check(parsed, origin, out.problems, setting=False)
        if content is None:
            continue
        grants = [rule.text for rule in content.rules.get("allow", [])]
        raises = content.mode if content.mode is not None \
            and MODE_RANK[content.mode] > MODE_RANK["default"] else None
        if grants or raises:
            real = Path(os.path.realpath(path))
            sha = fingerprint(data)
            if not approved(real, sha):
                out.waiting.append(WaitingFile(real, place, sha, tuple(grants), raises))
                content.rules.pop("allow", None)
                if raises:
                    content.mode = None
        contents.append((place, content))

    if settings is not None:
        content = _check(settings, "the permissions setting", out.problems, setting=True)
        if content is not None:
            contents.append(("settings", content))

    for source, content in contents:
        out.rule_sets.append(RuleSet(source, content.origin,
                                     *(tuple(content.rules.get(k, ())) for k in _LISTS)))
        if content.mode is not None:
            modes[source] = content.mode
    start_order: tuple[RuleSource, ...] = ("local", "project", "user", "settings")
    for source in start_order:
        mode = modes.get(source)
        if mode is None:
            continue
        if mode == "bypassPermissions" and not allow_bypass:
            origin = next(c.origin for s, c in contents if s == source)
            out.problems.append(f"{origin}: defaultMode bypassPermissions needs "
                                "permissions.allowBypass: true in the user settings; ignored")
            continue
        out.start_mode = mode
        break
    return out


# -- "allow always": the local file -----------------------------------------------------------

_WRITE_LOCK = threading.Lock()


def write_local_rule(workspace: Path | str, rule: str) -> str:
    """Add ``rule`` to the ``allow`` list of ``<workspace>/.PseudoClaude/permissions.local.yaml``
    (created when missing; its other content and comments kept: the rule is added as a line of
    the list when the file's layout allows, else the file is written anew) and return the
    fingerprint of the new content, for the caller to record as approved (this machine wrote
    it). Raises :class:`PermissionsError` for a rule that does not parse or a file that is not a
    valid permission file (left unchanged), ``OSError`` when it cannot be written."""
    parsed = parse_rule(rule)
    root = Path(workspace)
    path = local_file(root)
    folder = path.parent
    with _WRITE_LOCK:
        if not folder.exists():
            make_private_dir(folder)  # the folder of the sessions too: mode 0700
        real_folder = os.path.realpath(folder)
        real_root = os.path.realpath(root)
        if os.path.dirname(real_folder) != real_root:
            raise PermissionsError(f"{FOLDER} of this workspace leads elsewhere "
                                   f"({real_folder}); the rule was not written")
        try:
            info = os.stat(path)
            mode: int | None = stat.S_IMODE(info.st_mode)
            if info.st_size > MAX_BYTES:
                raise PermissionsError(f"{FOLDER}/{LOCAL_FILE} is too large to change")
            text = path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            text, mode = "", None
        except UnicodeDecodeError:
            raise PermissionsError(f"{FOLDER}/{LOCAL_FILE} is not UTF-8 text; the rule was "
                                   "not written") from None
        new = add_allow_rule(text, parsed.text)
        data = new.encode("utf-8")
        if new != text:
            atomic_write(path, data, mode=mode, folder_sync_optional=True)
        return fingerprint(data)


_HEADER = ("# Permission rules of this workspace on this machine (PseudoClaude).\n"
           "# \"Allow always\" adds its rules here.\n")


def add_allow_rule(text: str, rule: str) -> str:
    """``text`` (a permission file) with ``rule`` added to ``permissions.allow`` (unchanged when
    it is there already). Comments and layout are kept when the rule can be added as a line;
    else the file is written anew. Raises :class:`PermissionsError` when ``text`` is not a
    valid permission file."""
    import yaml

    name = f"{FOLDER}/{LOCAL_FILE}"
    try:
        data = yaml.safe_load(text) if text.strip() else None
    except yaml.YAMLError as exc:
        raise PermissionsError(f"{name} is not valid YAML ({_yaml_error(exc)}); the rule was "
                               "not written") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise PermissionsError(f"{name} is not a mapping; the rule was not written")
    lists = data.get("permissions")
    if lists is not None and not isinstance(lists, dict):
        raise PermissionsError(f"{name}: permissions is not a mapping; the rule was not written")
    allow = (lists or {}).get("allow")
    if isinstance(allow, str):
        allow = [allow]
    if allow is not None and not isinstance(allow, list):
        raise PermissionsError(f"{name}: permissions.allow is not a list; the rule was not "
                               "written")
    if rule in (allow or []):
        return text
    expected = dict(data)
    expected["permissions"] = {**(lists or {}), "allow": [*(allow or []), rule]}
    if not text.strip():
        return _HEADER + _block(rule, 0)
    edited = _edit(text, rule)
    if edited is not None:
        try:
            if yaml.safe_load(edited) == expected:
                return edited
        except yaml.YAMLError:
            pass
    dumped: str = yaml.safe_dump(expected, sort_keys=False, allow_unicode=True,
                                 default_flow_style=False, width=1000)
    return dumped


def _item(rule: str) -> str:
    """A rule as a block list item's scalar: plain when YAML reads it back as written."""
    import yaml

    try:
        if "#" not in rule and yaml.safe_load(f"k:\n  - {rule}\n") == {"k": [rule]}:
            return rule
    except yaml.YAMLError:
        pass
    return json.dumps(rule, ensure_ascii=False)


def _block(rule: str, indent: int) -> str:
    pad = " " * indent
    return f"{pad}permissions:\n{pad}  allow:\n{pad}    - {_item(rule)}\n"


def _line_after(lines: list[str], node: Any) -> int:
    """The index of the line after the one a node ends on (a block collection ends with its
    last entry: the parser's own end of it lies after the comments that follow)."""
    import yaml

    while isinstance(node, yaml.MappingNode | yaml.SequenceNode) and not node.flow_style \
            and node.value:
        node = node.value[-1][1] if isinstance(node, yaml.MappingNode) else node.value[-1]
    end = node.end_mark
    line: int = end.line if end.column > 0 else end.line - 1
    return min(line + 1, len(lines))


def _insert(lines: list[str], at: int, new: str) -> str:
    if at > 0 and not lines[at - 1].endswith(("\n", "\r")):
        lines[at - 1] += "\n"
    lines.insert(at, new)
    return "".join(lines)


def _edit(text: str, rule: str) -> str | None:
    """``text`` with the rule added in place, or ``None`` when its layout is not one handled
    here (the caller checks the result parses to what it should)."""
    import yaml

    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        return None
    lines = text.splitlines(keepends=True)
    if root is None:  # comments only
        return _insert(lines, len(lines), _block(rule, 0))
    if not isinstance(root, yaml.MappingNode) or root.flow_style:
        return None
    perms = next((v for k, v in root.value if k.value == "permissions"), None)
    if perms is None:
        column = root.value[0][0].start_mark.column if root.value else 0
        return _insert(lines, len(lines), _block(rule, column))
    key = next(k for k, _ in root.value if k.value == "permissions")
    if isinstance(perms, yaml.ScalarNode):  # ``permissions:`` with no value
        pad = " " * (key.start_mark.column + 2)
        return _insert(lines, key.start_mark.line + 1,
                       f"{pad}allow:\n{pad}  - {_item(rule)}\n")
    if not isinstance(perms, yaml.MappingNode) or perms.flow_style or not perms.value:
        return None
    allow = next((v for k, v in perms.value if k.value == "allow"), None)
    if allow is None:
        pad = " " * perms.value[0][0].start_mark.column
        return _insert(lines, _line_after(lines, perms.value[-1][1]),
                       f"{pad}allow:\n{pad}  - {_item(rule)}\n")
    allow_key = next(k for k, _ in perms.value if k.value == "allow")
    if isinstance(allow, yaml.ScalarNode):
        if allow.tag != "tag:yaml.org,2002:null" or allow.value not in ("", "~", "null"):
            return None  # a single rule as a string: written anew as a list
        pad = " " * (allow_key.start_mark.column + 2)
        return _insert(lines, allow_key.start_mark.line + 1, f"{pad}- {_item(rule)}\n")
    if not isinstance(allow, yaml.SequenceNode):
        return None
    if allow.flow_style:
        end = allow.end_mark.index - 1
        if text[end] != "]":
            return None
        item = json.dumps(rule, ensure_ascii=False)
        if text[allow.start_mark.index + 1:end].strip():
            return text[:end].rstrip() + ", " + item + text[end:]
        return text[:end] + item + text[end:]
    if not allow.value:
        return None
    pad = " " * allow.start_mark.column  # the column of the items' dashes
    return _insert(lines, _line_after(lines, allow.value[-1]), f"{pad}- {_item(rule)}\n")
