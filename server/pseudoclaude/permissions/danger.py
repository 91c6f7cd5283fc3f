"""The dangerous-command list: commands refused in every mode, whatever the rules say. Pure.

Checked on every simple command of a line (wrappers and ``sh -c`` looked through, see
:mod:`pseudoclaude.permissions.shell`), on every output redirection, and on the whole line (the
fork bomb). A line that cannot be parsed is also searched roughly (:func:`rough_hits`).

* ``rm`` recursive (``-r``, ``-R``, ``--recursive``, in any spelling or order, with or without
  ``-f``) of ``/``, ``/*``, ``~``, ``$HOME`` (and ``~/*``, ``$HOME/*``), ``/home/<user>``,
  ``/Users/<user>``, or an absolute (or ``~``/``$HOME``-based) path whose last folder is one of
  ``bin boot dev etc home lib lib64 private root sbin usr var``;
* ``dd … of=/dev/{disk,rdisk,sd,hd,vd,xvd,nvme,mmcblk,mapper/}…``;
* ``mkfs``, ``mkfs.*``, ``mke2fs``, ``newfs*``, ``format`` with an argument ``/dev/…`` or
  ``X:``; ``diskutil eraseDisk|eraseVolume|zeroDisk|randomDisk|secureErase|partitionDisk``;
* the fork bomb ``:(){ :|:& };:`` (any function name);
* an output redirection to ``/dev/{disk,rdisk,sd,hd,vd,xvd,nvme,mmcblk,mapper/}…``;
* ``chmod -R``, ``chown -R``, ``chgrp -R`` of ``/``;
* ``find /`` with ``-delete`` or ``-exec rm``.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence

_DISK = r"/dev/(?:r?disk|sd|hd|vd|xvd|nvme|mmcblk|mapper/)"
_DISK_RE = re.compile(_DISK)
_FORK_BOMB = re.compile(r"([\w:.\-]+)\s*\(\s*\)\s*\{\s*\1\s*\|\s*\1\s*&")
_REDIRECT_RE = re.compile(r"(?:^|[^<>&\d])\d*(?:>>?|>\||&>>?)\s*['\"]?" + _DISK)
_SYSTEM_DIRS = frozenset({"bin", "boot", "dev", "etc", "home", "lib", "lib64", "private",
                          "root", "sbin", "usr", "var"})
_HOMES = ("~", "$HOME", "${HOME}")
_MKFS = re.compile(r"^(?:mkfs(?:\..+)?|mke2fs|newfs(?:_\w+)?|format)$")
_DISKUTIL_ERASE = frozenset({"erasedisk", "erasevolume", "zerodisk", "randomdisk",
                             "secureerase", "partitiondisk"})
_VOLUME = re.compile(r"^[A-Za-z]:")


def _base(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _critical_path(target: str) -> bool:
    """Whether removing ``target`` recursively would wreck the system or the user's home."""
    path = target
    while len(path) > 1 and path.endswith("/*"):
        path = path[:-2] or "/"
    path = path.rstrip("/") or ("/" if target.startswith("/") else path)
    for home in _HOMES:
        if path == home:
            return True
        if path.startswith(home + "/"):
            path = "/home/~" + path[len(home):]
            break
    else:
        if re.fullmatch(r"~[\w.-]+", path):
            return True  # ~user
        if not path.startswith("/"):
            return False
    path = posixpath.normpath("/" + path.lstrip("/"))
    if path == "/":
        return True
    if re.fullmatch(r"/(?:home|Users)/[^/]+", path):
        return True
    return path.rsplit("/", 1)[-1] in _SYSTEM_DIRS


def _short_flags(args: Sequence[str]) -> tuple[set[str], list[str]]:
    """The option letters and long options (``--x``) of ``args``, and the operands; options may
    come after operands (GNU), ``--`` ends them."""
    flags: set[str] = set()
    operands: list[str] = []
    done = False
    for arg in args:
        if done or arg == "-" or not arg.startswith("-"):
            operands.append(arg)
        elif arg == "--":
            done = True
        elif arg.startswith("--"):
            flags.add(arg.split("=", 1)[0])
        else:
            flags.update(arg[1:])
    return flags, operands


def _rm(args: Sequence[str]) -> bool:
    flags, operands = _short_flags(args)
    recursive = bool(flags & {"r", "R", "--recursive"})
    return recursive and any(_critical_path(op) for op in operands)


def _dd(args: Sequence[str]) -> bool:
    return any(arg.startswith("of=") and _DISK_RE.match(arg[3:]) for arg in args)


def _mkfs(args: Sequence[str]) -> bool:
    return any(arg.startswith("/dev/") or _VOLUME.match(arg) for arg in args)


def _recursive_root(args: Sequence[str]) -> bool:
    flags, operands = _short_flags(args)
    return bool(flags & {"R", "--recursive"}) and any(
        op.rstrip("/*") == "" and op.startswith("/") for op in operands)


def _find(args: Sequence[str]) -> bool:
    roots: list[str] = []
    for arg in args:
        if arg.startswith(("-", "(", "!", ")")):
            break
        roots.append(arg)
    if not any(root.rstrip("/*") == "" and root.startswith("/") for root in roots):
        return False
    for i, arg in enumerate(args):
        if arg == "-delete":
            return True
        if arg in ("-exec", "-execdir", "-ok", "-okdir") and i + 1 < len(args) \
                and _base(args[i + 1]) == "rm":
            return True
    return False


_BRACE = re.compile(r"\{([^{}]*,[^{}]*)\}")


def _braces(word: str, limit: int = 64) -> list[str]:
    """The words a brace expansion ``{a,b}`` makes of ``word`` (at most ``limit``)."""
    found = _BRACE.search(word)
    if found is None:
        return [word]
    out: list[str] = []
    for alternative in found.group(1).split(","):
        out.extend(_braces(word[:found.start()] + alternative + word[found.end():], limit))
        if len(out) >= limit:
            break
    return out[:limit]


def command_hit(words: Sequence[str]) -> bool:
    """Whether the simple command ``words`` (wrappers already looked through) is on the
    list; brace expansions of its arguments are expanded (``rm -rf {/,x}``)."""
    if not words:
        return False
    name = _base(words[0])
    args = [expanded for word in words[1:] for expanded in _braces(word)]
    if name == "rm":
        return _rm(args)
    if name == "dd":
        return _dd(args)
    if _MKFS.match(name):
        return _mkfs(args)
    if name == "diskutil":
        return bool(args) and args[0].lower() in _DISKUTIL_ERASE
    if name in ("chmod", "chown", "chgrp"):
        return _recursive_root(args)
    if name == "find":
        return _find(args)
    return False


def redirect_hit(target: str) -> bool:
    """Whether writing to ``target`` (an output redirection) overwrites a disk."""
    return _DISK_RE.match(target) is not None


def line_hit(line: str) -> bool:
    """What is checked on a whole line's text: the fork bomb."""
    return _FORK_BOMB.search(line) is not None


_PROGRAMS = re.compile(r"^(?:rm|dd|diskutil|chmod|chown|chgrp|find)$|" + _MKFS.pattern)


def rough_hits(line: str) -> bool:
    """A rough search of a line that cannot be parsed: its pieces between shell operators,
    split into words as well as can be, each command on the list wherever it starts."""
    if line_hit(line) or _REDIRECT_RE.search(line):
        return True
    for piece in re.split(r"[;&|()`\n{}]|\$\(", line):
        try:
            quoted = shlex.split(piece)
        except ValueError:
            quoted = []
        for words in (quoted, re.split(r"[\s'\"]+", piece.strip())):
            for i, word in enumerate(words):
                if _PROGRAMS.match(_base(word)) and command_hit(words[i:]):
                    return True
    return False
