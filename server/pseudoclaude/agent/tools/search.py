"""``find_files`` and ``search_code`` (SPEC §6).

Both walk the workspace without following symlinked folders and skip the folders in
:data:`SKIP_DIRS` (``.git``, ``node_modules``, ``.venv``, ``__pycache__``, ``.PseudoClaude``)
wherever they occur below the starting folder; a starting folder named explicitly (the
``path`` of ``search_code``, the literal leading folders of a ``find_files`` pattern) is
searched even when it is one of them.

``find_files{pattern}``: a glob relative to the workspace root, matched against whole relative
paths: ``*`` and ``?`` match within one path segment (dot files included), ``[abc]``/``[!a]``
are character classes, ``**`` as a whole segment matches any number of folders (none
included), ``{a,b}`` alternatives are expanded. ``*.py`` therefore matches only in the root;
``**/*.py`` matches everywhere; ``src/`` means ``src/**``. Files only (symlinks to files
included, by name), sorted, at most :data:`MAX_FIND_RESULTS`; metadata ``count`` (total
matches), ``truncated``.

``search_code{pattern, regex?, path?}``: every line containing ``pattern`` (a literal string,
or a Python regular expression when ``regex`` is true; case-sensitive; per line, so a pattern
never spans lines), as ``path:line: text`` lines, sorted by path then line. Lines are cut at
:data:`MAX_LINE_CHARS` characters. Binary files (NUL in the first 8 KiB, or not UTF-8), files
over :data:`SEARCH_MAX_FILE_BYTES` and symlinks are skipped (and counted in the metadata). At
most :data:`MAX_SEARCH_MATCHES` lines; metadata ``matches``, ``files`` (with a match),
``files_searched``, ``skipped_binary``, ``skipped_large``, ``truncated``. A file open in the
user's editor with unsaved changes is searched as the editor has it: ``"unsaved": true`` and
``unsaved_files`` (every file searched that way, with a match or not).
"""

from __future__ import annotations

import asyncio
import os
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

from pseudoclaude.agent.tools.base import (
    BINARY_SNIFF_BYTES,
    MAX_CONTENT_BYTES,
    ApprovalClass,
    Param,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
)
from pseudoclaude.agent.tools.paths import Located, os_error

SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "__pycache__", ".PseudoClaude"})
MAX_FIND_RESULTS = 1000
MAX_WALK_ENTRIES = 200_000
"""A walk stops after this many files (the answer then says it is incomplete)."""
MAX_SEARCH_MATCHES = 500
MAX_LINE_CHARS = 300
SEARCH_MAX_FILE_BYTES = 4 * 1024 * 1024
_SEARCH_BUDGET = MAX_CONTENT_BYTES - 512
_GLOB_CHARS = frozenset("*?[{")


# -- globs ---------------------------------------------------------------------------------------

def expand_braces(pattern: str, limit: int = 256) -> list[str]:
    """``a{b,c}d`` → ``[abd, acd]`` (nested braces too); an unbalanced brace stays literal."""
    depth, start = 0, -1
    for index, char in enumerate(pattern):
        if char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                inner = pattern[start + 1:index]
                options, level, last = [], 0, 0
                for j, c in enumerate(inner):
                    if c == "{":
                        level += 1
                    elif c == "}":
                        level -= 1
                    elif c == "," and level == 0:
                        options.append(inner[last:j])
                        last = j + 1
                options.append(inner[last:])
                if len(options) < 2:
                    continue
                head, tail = pattern[:start], pattern[index + 1:]
                out: list[str] = []
                for option in options:
                    for expanded in expand_braces(head + option + tail, limit):
                        if expanded not in out:
                            out.append(expanded)
                        if len(out) >= limit:
                            raise ToolError("invalid_arguments",
                                            "find_files: `pattern` expands to too many "
                                            "alternatives")
                return out
    return [pattern]


def _segment_regex(segment: str) -> str:
    out: list[str] = []
    i, n = 0, len(segment)
    while i < n:
        char = segment[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            j = i + 1
            if j < n and segment[j] in "!^":
                j += 1
            if j < n and segment[j] == "]":
                j += 1
            while j < n and segment[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(char))
            else:
                body = segment[i + 1:j]
                negate = body[:1] in ("!", "^")
                if negate:
                    body = body[1:]
                escaped = "".join("\\" + c if c in "\\[]&~|^" else c for c in body)
                out.append(f"[^/{escaped}]" if negate else f"[{escaped}]")
                i = j
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def glob_regex(pattern: str) -> str:
    """The regular expression (anchored by the caller) of one brace-free glob pattern."""
    segments = pattern.split("/")
    out: list[str] = []
    last = len(segments) - 1
    for index, segment in enumerate(segments):
        if segment == "**":
            out.append(".+" if index == last else "(?:[^/]+/)*")
        else:
            out.append(_segment_regex(segment) + ("" if index == last else "/"))
    return "".join(out)


def normalize_pattern(raw: str, workspace: Path) -> str:
    """A pattern made relative to the workspace, or :class:`ToolError`."""
    pattern = raw.strip()
    if not pattern:
        raise ToolError("invalid_arguments", "find_files: `pattern` must not be empty")
    if pattern.startswith("/"):
        root = workspace.as_posix().rstrip("/") + "/"
        if not pattern.startswith(root):
            raise ToolError("outside_workspace",
                            f"find_files: {raw!r} is outside the workspace ({workspace}); "
                            "give a pattern relative to the workspace root")
        pattern = pattern[len(root):]
    while pattern.startswith("./"):
        pattern = pattern[2:]
    folder = pattern.endswith("/")
    pattern = re.sub(r"/{2,}", "/", pattern).rstrip("/")
    if pattern in ("", "."):
        pattern = "**"
    elif folder:  # `src/` lists the files below src
        pattern += "/**"
    if ".." in pattern.split("/"):
        raise ToolError("outside_workspace",
                        f"find_files: {raw!r} leaves the workspace; `..` is not allowed")
    return pattern


def _literal_base(patterns: list[str]) -> list[str]:
    """The leading folder segments without glob characters shared by every pattern."""
    common: list[str] | None = None
    for pattern in patterns:
        segments = pattern.split("/")[:-1]
        literal: list[str] = []
        for segment in segments:
            if _GLOB_CHARS & set(segment):
                break
            literal.append(segment)
        if common is None:
            common = literal
        else:
            keep = 0
            while keep < min(len(common), len(literal)) and common[keep] == literal[keep]:
                keep += 1
            common = common[:keep]
    return [s for s in (common or []) if s not in ("", ".")]


# -- walking -------------------------------------------------------------------------------------

class _Walk:
    """A sorted walk of files below a folder, pruning :data:`SKIP_DIRS`, symlinks not followed."""

    def __init__(self, start: Path, max_depth: int | None = None) -> None:
        self.start = start
        self.max_depth = max_depth
        self.visited = 0
        self.capped = False

    def files(self) -> Iterator[tuple[str, bool]]:
        """``(absolute path, is_symlink)`` of every file, sorted within each folder."""
        base_depth = len(self.start.parts)
        for dirpath, dirnames, filenames in os.walk(self.start, followlinks=False):
            depth = len(Path(dirpath).parts) - base_depth
            kept = sorted(d for d in dirnames if d not in SKIP_DIRS)
            if self.max_depth is not None and depth >= self.max_depth:
                kept = []
            dirnames[:] = kept
            entries: list[tuple[str, bool]] = []
            for name in filenames:
                entries.append((name, os.path.islink(os.path.join(dirpath, name))))
            for name, is_link in sorted(entries):
                self.visited += 1
                if self.visited > MAX_WALK_ENTRIES:
                    self.capped = True
                    return
                yield os.path.join(dirpath, name), is_link


def _relative(path: str, workspace: str) -> str:
    return path[len(workspace) + 1:] if path.startswith(workspace + os.sep) else path


# -- find_files ----------------------------------------------------------------------------------

def find(ctx: ToolContext, raw: str) -> ToolOutput:
    """The blocking body of ``find_files``."""
    workspace = ctx.paths.workspace
    pattern = normalize_pattern(raw, workspace)
    patterns = expand_braces(pattern)
    try:
        matcher = re.compile("|".join(f"(?:{glob_regex(p)})" for p in patterns))
    except re.error as exc:
        raise ToolError("invalid_arguments",
                        f"find_files: `pattern` is not a valid glob: {exc}") from exc
    base = _literal_base(patterns)
    # write=True: the workspace only (not the extra read roots)
    located = ctx.paths.locate("/".join(base) or ".", write=True, tool="find_files")
    if any("**" in p for p in patterns):
        depth: int | None = None
    else:
        depth = max(len(p.split("/")) for p in patterns) - len(base) - 1
    matches: list[str] = []
    count = 0
    walk = _Walk(located.path, depth)
    if located.path.is_dir():
        ws = str(workspace)
        for path, _link in walk.files():
            rel = _relative(path, ws)
            if matcher.fullmatch(rel):
                count += 1
                matches.append(rel)
    matches.sort()
    shown = matches[:MAX_FIND_RESULTS]
    truncated = count > len(shown) or walk.capped
    lines = list(shown)
    if count > len(shown):
        lines.append(f"[{len(shown)} of {count} matches shown; narrow the pattern]")
    if walk.capped:
        lines.append(f"[the search stopped after {MAX_WALK_ENTRIES} files; narrow the pattern]")
    content = "\n".join(lines) if lines else f"no files match {pattern!r}"
    return ToolOutput(content, {"pattern": pattern, "count": count, "truncated": truncated})


class FindFiles(Tool):
    name: ClassVar[str] = "find_files"
    description: ClassVar[str] = (
        "List files in the workspace whose path matches a glob pattern, relative to the "
        "workspace root: `*` and `?` match within one folder level, `**` matches any number "
        "of folders, `{a,b}` gives alternatives. Example: `**/*.py` (every Python file), "
        "`src/**/test_*.{ts,tsx}`. `*.md` matches only in the root. Sorted; skips .git, "
        "node_modules, .venv, __pycache__ and .PseudoClaude; at most 1000 results."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("pattern", "string", "Glob pattern relative to the workspace root.",
              required=True, non_empty=True),
    )
    read_only: ClassVar[bool] = True
    approval_class: ClassVar[ApprovalClass] = "none"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await asyncio.to_thread(find, ctx, args["pattern"])


# -- search_code ---------------------------------------------------------------------------------

def _read_searchable(path: str, size_limit: int) -> tuple[str | None, str]:
    """``(text, "")`` or ``(None, reason)`` with reason ``binary``, ``large`` or ``skip``."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None, "skip"
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None, "skip"
        if info.st_size > size_limit:
            return None, "large"
        data = f.read(size_limit + 1)
    if len(data) > size_limit:
        return None, "large"
    if b"\x00" in data[:BINARY_SNIFF_BYTES]:
        return None, "binary"
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, "binary"


def search(ctx: ToolContext, pattern: str, use_regex: bool, raw_path: str | None) -> ToolOutput:
    """The blocking body of ``search_code``."""
    if "\n" in pattern:
        raise ToolError("invalid_arguments",
                        "search_code: `pattern` must be one line (the search is per line)")
    regex: re.Pattern[str] | None = None
    if use_regex:
        try:
            regex = re.compile(pattern)
        except re.error as exc:
            raise ToolError("invalid_arguments",
                            f"search_code: `pattern` is not a valid regular expression: {exc}"
                            ) from exc
    located: Located = ctx.paths.locate(raw_path or ".", field="path", tool="search_code")
    walk: _Walk | None = None
    try:
        info = os.stat(located.path)
    except OSError as exc:
        raise os_error(exc, located.label) from exc
    if stat.S_ISDIR(info.st_mode):
        walk = _Walk(located.path)
        files_iter: Iterator[tuple[str, bool]] = walk.files()
    else:
        files_iter = iter([(str(located.path), False)])

    def label(path: str) -> str:
        if located.root == ctx.paths.workspace:
            return _relative(path, str(ctx.paths.workspace))
        return path

    editor = ctx.editor if located.root == ctx.paths.workspace else None
    if editor is not None and editor.every_file:
        editor = None  # each answer would be a request to the editor: the disk
    unsaved: list[str] = []
    lines: list[str] = []
    used = 0
    matches = 0
    with_match = 0
    searched = skipped_binary = skipped_large = 0
    truncated = False
    for path, is_link in files_iter:
        if is_link:
            continue
        text, reason = _read_searchable(path, SEARCH_MAX_FILE_BYTES)
        doc = editor.open_text(Path(path)) if editor is not None else None
        if doc is not None and doc.text != text:  # unsaved changes: the editor's text
            text, reason = doc.text, ""
            unsaved.append(label(path))
        if text is None:
            skipped_binary += reason == "binary"
            skipped_large += reason == "large"
            continue
        searched += 1
        if regex is None and pattern not in text:
            continue
        shown = label(path)
        hit = False
        for number, line in enumerate(text.split("\n"), 1):
            line = line.removesuffix("\r")
            if (regex.search(line) is None) if regex is not None else (pattern not in line):
                continue
            if len(line) > MAX_LINE_CHARS:
                line = line[:MAX_LINE_CHARS] + "..."
            entry = f"{shown}:{number}: {line}"
            cost = len(entry.encode("utf-8", "surrogatepass")) + 1
            if matches >= MAX_SEARCH_MATCHES or used + cost > _SEARCH_BUDGET:
                truncated = True
                break
            lines.append(entry)
            used += cost
            matches += 1
            hit = True
        with_match += hit
        if truncated:
            break
    capped = walk is not None and walk.capped
    if truncated:
        lines.append(f"[stopped after {matches} matching lines; narrow the search]")
    if capped:
        lines.append(f"[the search stopped after {MAX_WALK_ENTRIES} files; give a `path`]")
    content = "\n".join(lines) if lines else f"no matches for {pattern!r}"
    metadata: dict[str, Any] = {
        "matches": matches, "files": with_match, "files_searched": searched,
        "skipped_binary": skipped_binary, "skipped_large": skipped_large,
        "truncated": truncated or capped,
    }
    if unsaved:
        metadata["unsaved_files"] = unsaved
    return ToolOutput(content, metadata, unsaved=bool(unsaved))


class SearchCode(Tool):
    name: ClassVar[str] = "search_code"
    description: ClassVar[str] = (
        "Search the text files of the workspace for lines containing `pattern` (a literal, "
        "case-sensitive string; a Python regular expression when `regex` is true). Optional "
        "`path` limits the search to a file or folder. Returns `path:line: text` lines, "
        "sorted; skips binary files and .git, node_modules, .venv, __pycache__, "
        ".PseudoClaude; at most 500 matching lines."
    )
    params: ClassVar[tuple[Param, ...]] = (
        Param("pattern", "string", "The text to find (or a regular expression when `regex` "
              "is true). Matched within single lines.", required=True, non_empty=True),
        Param("regex", "boolean", "Treat `pattern` as a Python regular expression. "
              "Default false."),
        Param("path", "string", "File or folder to search, relative to the workspace root. "
              "Default: the whole workspace.", non_empty=True),
    )
    read_only: ClassVar[bool] = True
    approval_class: ClassVar[ApprovalClass] = "none"

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        return await asyncio.to_thread(search, ctx, args["pattern"], args.get("regex", False),
                                       args.get("path"))
