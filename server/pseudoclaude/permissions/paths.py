"""The path a file tool's call is about, as rules see it, and whether it stays in the workspace.

A path is relative to the workspace root or absolute. Rules see it cleaned, relative to the
root, ``/``-separated; when symbolic links make its real place differ from how it is written,
rules see both forms (deny and ask rules match either, allow rules must match both). Whether it
is inside the workspace is decided on real paths, as the file tools decide it: symbolic links
resolved on both sides, and for a path that does not exist yet, its nearest existing folder
resolved and the rest appended. Reads the file system (``realpath``), nothing else.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_GLOB_META = re.compile(r"[*?\[{]")


@dataclass(frozen=True, slots=True)
class Target:
    """``forms``: the workspace-relative forms of the path (written, then real; one when they
    agree); empty when the path leaves the workspace. ``absolute``: where it really is."""

    forms: tuple[str, ...]
    absolute: str

    @property
    def inside(self) -> bool:
        return bool(self.forms)


def _relative(path: str, root: str) -> str | None:
    if path == root:
        return "."
    prefix = root if root.endswith(os.sep) else root + os.sep
    if not path.startswith(prefix):
        return None
    return path[len(prefix):].replace(os.sep, "/")


def resolve(root: Path | str, path: str, extra_roots: Sequence[Path | str] = ()) -> Target:
    """Where ``path`` (as a tool's argument gives it: relative to the workspace ``root``, or
    absolute) is. A path under one of ``extra_roots`` (folders reads may reach outside the
    workspace) has its absolute real path as its one form."""
    root_abs = os.path.abspath(os.fspath(root))
    root_real = os.path.realpath(root_abs)
    joined = os.path.join(root_abs, path)
    lexical = os.path.normpath(joined)
    real = os.path.realpath(joined)  # the existing part resolved, the rest appended
    real_rel = _relative(real, root_real)
    if real_rel is None:
        for extra in extra_roots:
            if _relative(real, os.path.realpath(os.fspath(extra))) is not None:
                return Target((real,), real)
        return Target((), real)
    written = _relative(lexical, root_abs) or _relative(lexical, root_real)
    forms = tuple(dict.fromkeys(f for f in (written, real_rel) if f is not None))
    return Target(forms, real)


def static_prefix(pattern: str) -> str:
    """The folder part of a glob pattern before its first wildcard (``src/**/*.py`` →
    ``src``; ``*.md`` → ``.``)."""
    absolute = pattern.startswith("/")
    static: list[str] = []
    for segment in pattern.split("/"):
        if _GLOB_META.search(segment):
            break
        static.append(segment)
    else:  # no wildcard: the pattern names one path
        return pattern or "."
    joined = "/".join(static)
    if absolute:
        return joined or "/"
    return joined or "."


def clean_pattern(root: Path | str, pattern: str) -> str:
    """A ``find_files`` pattern as rules see it: ``./`` dropped, an absolute one inside the
    workspace made relative."""
    if pattern.startswith("/"):
        root_abs = os.path.abspath(os.fspath(root))
        for base in (root_abs, os.path.realpath(root_abs)):
            rel = _relative(pattern, base)
            if rel is not None:
                return rel
        return pattern
    while pattern.startswith("./"):
        pattern = pattern[2:]
    return posixpath.normpath(pattern) if pattern else "."
