"""Creating a session's worktree, telling its changes, applying them to the main tree and
removing it.

Nothing here checks out, resets, stages or stashes anything in the main tree: ``git worktree
add`` makes the worktree and its branch, and :func:`apply` writes the main tree's files (never
its index). Blocking: every call runs ``git``; run them off the event loop.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import stat
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pseudoclaude.durable import PRIVATE, atomic_write, make_private_dir
from pseudoclaude.worktrees.base import (
    DIR,
    MISSING,
    Action,
    ApplyResult,
    FileChange,
    Worktree,
    WorktreeError,
    WorktreeStatus,
    content,
    name_some,
    plural,
    present,
    record_path,
)
from pseudoclaude.worktrees.git import git, mode_state, split_nul, states
from pseudoclaude.worktrees.setup import ignore_worktrees, prepare

BRANCH_PREFIX = "pseudoclaude/"
_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
NEW_FILE_MODE = 0o644


# -- the main tree ---------------------------------------------------------------------------
def _toplevel(repo: Path) -> tuple[Path, str]:
    """The root of the repository ``repo`` is in, and where ``repo`` is inside it."""
    if not repo.is_dir():
        raise WorktreeError(f"{repo} is not a folder: worktree sessions need a git repository")
    done = git(repo, "rev-parse", "--show-toplevel", "--show-prefix", check=False)
    if done.returncode != 0:
        error = done.stderr.decode("utf-8", "replace")
        if "not a git repository" in error:
            raise WorktreeError(f"{repo} is not a git repository: worktree sessions need git")
        lines = error.strip().splitlines()
        raise WorktreeError(f"git rev-parse failed in {repo}: "
                            f"{lines[-1] if lines else 'no work tree'}")
    lines = os.fsdecode(done.stdout).split("\n")
    return Path(lines[0]).resolve(), lines[1].strip("/") if len(lines) > 1 else ""


def _head(root: Path) -> str:
    done = git(root, "rev-parse", "--verify", "--quiet", "HEAD^{commit}", check=False)
    if done.returncode != 0:
        raise WorktreeError(f"{root} has no commit yet: a worktree session starts from the "
                            "last commit, so commit once first")
    return done.stdout.decode().strip()


def _branch_exists(root: Path, branch: str) -> bool:
    return git(root, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}",
               check=False).returncode == 0


def _valid_id(session_id: str) -> bool:
    """Whether ``session_id`` can name a folder and a branch."""
    return bool(_SESSION_ID.fullmatch(session_id)) and ".." not in session_id \
        and not session_id.endswith((".lock", "."))


def _main_root(repo: Path, worktree: Worktree) -> Path:
    root, _ = _toplevel(Path(repo).absolute())
    if root != worktree.repo.resolve():
        raise WorktreeError(f"the worktree of session {worktree.session_id} belongs to "
                            f"{worktree.repo}, not {root}")
    return root


# -- the record ------------------------------------------------------------------------------
def _save(worktree: Worktree) -> None:
    data = json.dumps(worktree.as_json(), indent=2, ensure_ascii=True) + "\n"
    atomic_write(worktree.record, data.encode(), mode=PRIVATE)


def _strings(value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str) and isinstance(v, str)}


def load(data_dir: Path, session_id: str) -> Worktree | None:
    """The worktree of ``session_id`` as its record says, or None when it has none."""
    if not _valid_id(session_id):
        return None
    path = record_path(Path(data_dir), session_id)
    try:
        raw = json.loads(path.read_bytes())
        return Worktree(
            session_id=str(raw["sessionId"]), path=Path(raw["path"]),
            branch=str(raw["branch"]), base=str(raw["base"]), created=str(raw["created"]),
            repo=Path(raw["repo"]), data_dir=Path(data_dir), prefix=str(raw.get("prefix", "")),
            setup=_strings(raw.get("setup")), applied=_strings(raw.get("applied")),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise WorktreeError(f"the record of the worktree of session {session_id} cannot be "
                            f"read ({path}): {exc}") from None


# -- create ----------------------------------------------------------------------------------
def _discard(root: Path, path: Path, branch: str) -> None:
    """Undo a half-made worktree (best effort)."""
    git(root, "worktree", "remove", "--force", str(path), check=False)
    if path.exists():
        shutil.rmtree(path, ignore_errors=True)
        git(root, "worktree", "prune", check=False)
    git(root, "branch", "-D", branch, check=False)


def create(repo: Path, data_dir: Path, session_id: str) -> Worktree:
    """Make the worktree of ``session_id``: ``<dataDir>/worktrees/<session id>`` on a new
    branch ``pseudoclaude/<session id>`` from the main tree's ``HEAD``, set up (settings
    copied, dependency folders linked) and recorded."""
    if not _valid_id(session_id):
        raise WorktreeError(f"{session_id!r} cannot name a worktree: use letters, digits, "
                            "'.', '_' and '-'")
    repo = Path(repo).absolute()
    root, prefix = _toplevel(repo)
    base = _head(root)
    data_dir = Path(data_dir).absolute()
    folder = data_dir / "worktrees"
    path = (folder / session_id).resolve()
    branch = BRANCH_PREFIX + session_id
    if record_path(data_dir, session_id).exists() or os.path.lexists(path):
        raise WorktreeError(f"the worktree of session {session_id} already exists: {path}")
    if _branch_exists(root, branch):
        raise WorktreeError(f"the branch {branch} already exists: remove it or the worktree "
                            f"of session {session_id} first")
    make_private_dir(data_dir)
    ignore_worktrees(data_dir)
    make_private_dir(folder)
    git(root, "worktree", "add", "--quiet", "-b", branch, str(path), base)
    try:
        written = prepare(repo, path / prefix if prefix else path, path)
        worktree = Worktree(
            session_id=session_id, path=path, branch=branch, base=base,
            created=datetime.now(UTC).isoformat(timespec="seconds"), repo=root,
            data_dir=data_dir, prefix=prefix, setup=states(path, written),
        )
        _save(worktree)
    except BaseException:
        _discard(root, path, branch)
        raise
    return worktree


# -- status ----------------------------------------------------------------------------------
def _changes(worktree: Worktree) -> list[FileChange]:
    """What differs between ``base`` and the worktree's files now: committed on its branch,
    staged, modified or new (ignored files left out), setup's files while they are as setup
    left them left out too."""
    path = worktree.path
    if not path.is_dir():
        raise WorktreeError(f"the worktree of session {worktree.session_id} is missing: {path}")
    raw = git(path, "diff", "--raw", "-z", "--no-abbrev", "--no-renames", "--no-ext-diff",
              "--no-color", "--ignore-submodules=all", worktree.base, "--").stdout
    based: dict[str, str] = {}
    parts = raw.split(b"\0")
    for header, entry in zip(parts[0::2], parts[1::2], strict=False):
        fields = header.decode("ascii", "replace").lstrip(":").split()
        if len(fields) < 5 or "160000" in fields[:2]:  # a submodule: not a file of ours
            continue
        based[os.fsdecode(entry)] = mode_state(fields[0], fields[2])
    untracked = [p for p in split_nul(git(path, "ls-files", "-z", "--others",
                                          "--exclude-standard").stdout)
                 if not p.endswith("/")]  # a nested repository
    candidates = sorted(set(based) | set(untracked))
    now = states(path, candidates)
    changes: list[FileChange] = []
    for name in candidates:
        state = now[name] if present(now[name]) else MISSING
        before = based.get(name, MISSING)
        if state == before or worktree.setup.get(name) == now[name]:
            continue
        action: Action = "create" if before == MISSING else \
            "delete" if state == MISSING else "modify"
        changes.append(FileChange(name, action, state, before))
    return changes


def _pending(worktree: Worktree) -> list[FileChange]:
    """What the main tree needs to hold the session's files: its changes, and the files an
    earlier apply wrote that the session has since put back as ``base`` had them (their
    ``action`` is then what the main tree needs: ``create``, ``modify`` or ``delete``)."""
    changes = _changes(worktree)
    changed = {c.path for c in changes}
    back = sorted(p for p in worktree.applied if p not in changed)
    now = states(worktree.path, back)
    for name in back:
        state = now[name] if present(now[name]) else MISSING
        if worktree.applied[name] == state:
            continue
        action: Action = "create" if worktree.applied[name] == MISSING else \
            "delete" if state == MISSING else "modify"
        changes.append(FileChange(name, action, state, state))
    return sorted(changes, key=lambda c: c.path)


def status(worktree: Worktree) -> WorktreeStatus:
    """The session's changes: every file that differs between ``base`` and the worktree."""
    files = _changes(worktree)
    message = (f"{plural(len(files), 'file')} changed in the worktree on branch "
               f"{worktree.branch}") if files else "no changes yet"
    return WorktreeStatus(path=worktree.path, branch=worktree.branch, base=worktree.base,
                          files=files, message=message)


# -- apply -----------------------------------------------------------------------------------
def _inside(root: Path, name: str) -> bool:
    """Whether ``name``'s folder is inside ``root`` (no link leads out of it)."""
    return (root / name).parent.resolve().is_relative_to(root)


def _blocked(root: Path, name: str, deleted: set[str]) -> bool:
    """Whether a folder ``name`` needs is something else in the main tree (that this apply
    does not delete)."""
    parts = name.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        folder = "/".join(parts[:i])
        full = root / folder
        if os.path.lexists(full) and not full.is_dir() and folder not in deleted:
            return True
        if not os.path.lexists(full):
            return False
    return False


def _emptied(root: Path, name: str, deleted: set[str]) -> bool:
    """Whether every file in the main tree's folder ``name`` is one this apply deletes (so the
    folder goes, and a file can take its place)."""
    for parent, dirs, files in os.walk(root / name):
        here = Path(parent)
        for entry in [*files, *(d for d in dirs if (here / d).is_symlink())]:
            if (here / entry).relative_to(root).as_posix() not in deleted:
                return False
    return True


def _prune(root: Path, folder: Path) -> None:
    """Remove the folders a deletion left empty, up to ``root``."""
    while folder != root and folder.is_relative_to(root):
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def _write(source: Path, target: Path, state: str) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    if state.startswith("link "):
        temp = target.with_name(f".{target.name[:200]}.{secrets.token_hex(6)}.tmp")
        os.symlink(os.readlink(source), temp)
        try:
            os.replace(temp, target)
        except BaseException:
            with contextlib.suppress(OSError):
                temp.unlink()
            raise
        return
    try:
        info = os.lstat(target)
        mode = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else NEW_FILE_MODE
    except FileNotFoundError:
        mode = stat.S_IMODE(os.stat(source).st_mode)
    mode = mode | (mode & 0o444) >> 2 if state.startswith("exec ") else mode & ~0o111
    atomic_write(target, source.read_bytes(), mode=mode)


def apply(repo: Path, worktree: Worktree) -> ApplyResult:
    """Write the session's changes into the main tree's files (not its index, no commit).

    A file the main tree changed too since ``base`` (its content is neither ``base``'s, nor
    the session's, nor what an earlier apply wrote) is a conflict: then nothing is written and
    the conflicts are listed. Otherwise every change is applied, file modes kept, and the
    record says so (:func:`remove` then needs no ``force``). A file an earlier apply wrote
    and the session has since put back as ``base`` had it is put back in the main tree too."""
    root = _main_root(repo, worktree)
    current = load(worktree.data_dir, worktree.session_id) or worktree
    changes = _pending(current)
    if not changes:
        return ApplyResult([], [], "nothing to apply: the main tree has every change of the "
                           "session" if current.applied else "nothing to apply: no changes yet")
    main = states(root, [c.path for c in changes])
    deleted = {c.path for c in changes if c.action == "delete"}
    for name, state in main.items():
        if state == DIR and _emptied(root, name, deleted):
            main[name] = MISSING
    conflicts: list[str] = []
    for change in changes:
        known = {content(change.base_state), content(change.state)}
        if change.path in current.applied:
            known.add(content(current.applied[change.path]))
        if content(main[change.path]) not in known or not _inside(root, change.path) \
                or (change.action != "delete" and _blocked(root, change.path, deleted)):
            conflicts.append(change.path)
    if conflicts:
        return ApplyResult([], conflicts, (
            f"nothing applied: {plural(len(conflicts), 'file')} changed in the main tree too "
            f"since the worktree was made: {name_some(conflicts)}"))
    for change in sorted(changes, key=lambda c: (c.action != "delete", c.path)):
        target = root / change.path
        if main[change.path] == change.state:
            continue
        if change.action == "delete":
            if os.path.lexists(target) and not target.is_dir():
                target.unlink()
                _prune(root, target.parent)
        else:
            _write(current.path / change.path, target, change.state)
    applied = [c.path for c in changes]
    record = load(current.data_dir, current.session_id)
    if record is not None:
        merged = {**record.applied, **{c.path: c.state for c in changes}}
        _save(replace(record, applied=merged))
    return ApplyResult(applied, [], f"applied {plural(len(applied), 'file')} to the main tree")


# -- remove ----------------------------------------------------------------------------------
def unapplied(worktree: Worktree) -> list[str]:
    """The session's changes that the main tree has not had from :func:`apply` (as they are
    now), and the files an earlier apply wrote that the session has put back since."""
    current = load(worktree.data_dir, worktree.session_id) or worktree
    if not current.path.is_dir():
        return []
    applied: Mapping[str, str] = current.applied
    return [c.path for c in _pending(current) if applied.get(c.path) != c.state]


def remove(repo: Path, worktree: Worktree, force: bool = False) -> None:
    """Remove the worktree, its branch and its record. Refused while it has changes not
    applied to the main tree, unless ``force``."""
    root = _main_root(repo, worktree)
    if not force:
        left = unapplied(worktree)
        if left:
            raise WorktreeError(
                f"the worktree of session {worktree.session_id} has "
                f"{plural(len(left), 'change')} not applied to the main tree "
                f"({name_some(left)}): apply them or remove with force")
    path = worktree.path
    # the links setup made are removed first: nothing removes what they point to
    for name in worktree.setup:
        link = path / name
        if link.is_symlink():
            with contextlib.suppress(OSError):
                link.unlink()
    stale = not path.is_dir()  # its folder removed by hand
    if not stale:
        git(root, "worktree", "remove", "--force", str(path), check=False)
    if os.path.lexists(path):  # not a worktree git knows (any more): its files only
        shutil.rmtree(path)
        stale = True
    if stale:  # git's entry of a worktree whose folder is gone (else the branch stays in use)
        git(root, "worktree", "prune")
    if _branch_exists(root, worktree.branch):
        git(root, "branch", "-D", worktree.branch)
    with contextlib.suppress(FileNotFoundError):
        worktree.record.unlink()
