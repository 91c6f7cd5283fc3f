"""Installing a skill package: a zip file or a folder, checked whole before anything is
written, then written into ``<skills folder>/<name>`` and nowhere else.

A package holds one skill: its files under one top-level folder (``review/SKILL.md``,
``review/tools.json``, ``review/scripts/...``), or ``SKILL.md`` at its top (then the skill's
``name`` names the folder). It is refused, with nothing written, when a member's path is
absolute, holds ``..`` or a backslash, or is a symbolic link (or any other special file), when
its ``SKILL.md`` or ``tools.json`` cannot be read (the problems are named), when it is larger
than :data:`MAX_TOTAL_BYTES` or has more than :data:`MAX_FILES` files, or when the skill is
installed already. Network URLs are not taken.

:func:`inspect` reads and checks the package (its files kept in memory: what is shown for
approval is exactly what :func:`install` writes); :func:`install` writes it into a temporary
folder inside the skills folder, then renames it into place. Blocking.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from pseudoclaude.names import plural
from pseudoclaude.skills.discover import SKILL_FILE, TOOLS_FILE
from pseudoclaude.skills.model import MAX_SKILL_BYTES, MAX_TOOLS_BYTES
from pseudoclaude.skills.parse import parse_skill, parse_tools

MAX_TOTAL_BYTES = 10 * 1024 * 1024
MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_FILES = 1000
_EXECUTABLE = 0o111


class InstallError(Exception):
    """The package is refused (nothing was written); the message says why."""


@dataclass(frozen=True, slots=True)
class PackageFile:
    path: str
    """Relative to the skill's folder (``/``-separated)."""
    data: bytes
    executable: bool = False


@dataclass(frozen=True, slots=True)
class Package:
    """A checked package, its files in memory."""

    name: str
    description: str
    source: Path
    files: tuple[PackageFile, ...]

    @property
    def size(self) -> int:
        return sum(len(f.data) for f in self.files)

    def file(self, path: str) -> PackageFile | None:
        return next((f for f in self.files if f.path == path), None)

    def manifest(self, target: str) -> str:
        """What the user approves: where it goes, its files, its ``SKILL.md`` and
        ``tools.json`` as they are."""
        lines = [f"Skill {self.name!r} from {self.source}", f"Installed into {target}", "",
                 f"{plural(len(self.files), 'file')}, {plural(self.size, 'byte')}:"]
        lines += [f"  {f.path} ({plural(len(f.data), 'byte')})"
                  + (" executable" if f.executable else "") for f in self.files]
        for name in (SKILL_FILE, TOOLS_FILE):
            shown = self.file(name)
            if shown is not None:
                lines += ["", f"--- {name} ---", shown.data.decode("utf-8", "replace").rstrip()]
        return "\n".join(lines) + "\n"


def _member_path(name: str) -> PurePosixPath:
    """A member's path, checked: relative, no ``..``, no backslash, no drive."""
    if "\\" in name:
        raise InstallError(f"{name!r}: a path with a backslash")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise InstallError(f"{name!r}: an absolute path")
    path = PurePosixPath(name)
    if ".." in path.parts:
        raise InstallError(f"{name!r}: a path with '..'")
    if "\x00" in name or not path.parts:
        raise InstallError(f"{name!r}: not a file name")
    return path


def _zip_files(source: Path) -> list[tuple[PurePosixPath, bytes, bool]]:
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise InstallError(f"{source} is not a zip file ({exc})") from None
    files: list[tuple[PurePosixPath, bytes, bool]] = []
    total = 0
    with archive:
        infos = archive.infolist()
        if len(infos) > MAX_FILES:
            raise InstallError(f"more than {MAX_FILES} files")
        seen: set[PurePosixPath] = set()
        for info in infos:
            path = _member_path(info.filename)  # every member, folders included
            mode = info.external_attr >> 16
            if stat.S_ISLNK(mode):
                raise InstallError(f"{info.filename!r}: a symbolic link")
            if info.is_dir():
                continue
            if stat.S_IFMT(mode) not in (0, stat.S_IFREG):  # 0: no type said (a plain file)
                raise InstallError(f"{info.filename!r}: not a regular file")
            if path in seen:
                raise InstallError(f"{info.filename!r}: twice in the archive")
            seen.add(path)
            if info.file_size > MAX_FILE_BYTES or total + info.file_size > MAX_TOTAL_BYTES:
                raise InstallError(f"larger than {MAX_TOTAL_BYTES // (1024 * 1024)} MiB "
                                   f"(or a file over {MAX_FILE_BYTES // (1024 * 1024)} MiB)")
            try:
                with archive.open(info) as member:
                    data = member.read(MAX_FILE_BYTES + 1)
            except (zipfile.BadZipFile, RuntimeError, OSError, NotImplementedError) as exc:
                raise InstallError(f"{info.filename!r} cannot be read: {exc}") from None
            if len(data) > MAX_FILE_BYTES:
                raise InstallError(f"{info.filename!r} is larger than it says")
            total += len(data)
            files.append((path, data, bool(mode & _EXECUTABLE)))
    return files


def _folder_files(source: Path) -> list[tuple[PurePosixPath, bytes, bool]]:
    files: list[tuple[PurePosixPath, bytes, bool]] = []
    total = 0
    base = PurePosixPath(source.name)
    for folder, dirs, names in os.walk(source, followlinks=False):
        here = Path(folder)
        for name in sorted(dirs + names):
            path = here / name
            rel = base / path.relative_to(source).as_posix()
            info = path.lstat()
            if stat.S_ISLNK(info.st_mode):
                raise InstallError(f"{rel}: a symbolic link")
            if stat.S_ISDIR(info.st_mode):
                continue
            if not stat.S_ISREG(info.st_mode):
                raise InstallError(f"{rel}: not a regular file")
            if len(files) >= MAX_FILES:
                raise InstallError(f"more than {MAX_FILES} files")
            if info.st_size > MAX_FILE_BYTES or total + info.st_size > MAX_TOTAL_BYTES:
                raise InstallError(f"larger than {MAX_TOTAL_BYTES // (1024 * 1024)} MiB "
                                   f"(or a file over {MAX_FILE_BYTES // (1024 * 1024)} MiB)")
            with path.open("rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
            total += len(data)
            files.append((rel, data, bool(info.st_mode & _EXECUTABLE)))
    return files


def _strip_top(files: list[tuple[PurePosixPath, bytes, bool]]
               ) -> tuple[str | None, list[tuple[str, bytes, bool]]]:
    """``(top folder, files relative to it)``; ``None`` when ``SKILL.md`` is at the top."""
    if any(path.as_posix() == SKILL_FILE for path, _, _ in files):
        return None, [(path.as_posix(), data, x) for path, data, x in files]
    tops = {path.parts[0] for path, _, _ in files}
    if len(tops) != 1 or any(len(path.parts) < 2 for path, _, _ in files):
        raise InstallError("a skill package holds one folder (with its SKILL.md) or a SKILL.md "
                           "at its top")
    [top] = tops
    return top, [(PurePosixPath(*path.parts[1:]).as_posix(), data, x) for path, data, x in files]


def inspect(source: Path | str) -> Package:
    """Read and check the package at ``source`` (a ``.zip`` file or a folder);
    :class:`InstallError` when it is refused."""
    if "://" in str(source):
        raise InstallError("skills are installed from a zip file or a folder on this machine, "
                           "not from a URL: download it first")
    source = Path(source)
    try:
        if source.is_symlink():
            source = source.resolve(strict=True)
        if source.is_dir():
            found = _folder_files(source)
        elif source.is_file():
            found = _zip_files(source)
        else:
            raise InstallError(f"{source} does not exist")
    except OSError as exc:
        raise InstallError(f"{source} cannot be read: {exc.strerror or exc}") from None
    if not found:
        raise InstallError(f"{source} holds no files")
    top, files = _strip_top(found)
    by_path = {path: data for path, data, _ in files}
    skill_data = by_path.get(SKILL_FILE)
    if skill_data is None:
        raise InstallError(f"no {SKILL_FILE} in the package's folder")
    if len(skill_data) > MAX_SKILL_BYTES:
        raise InstallError(f"{SKILL_FILE} is larger than {MAX_SKILL_BYTES // 1024} KiB")
    try:
        text = skill_data.decode("utf-8")
    except UnicodeDecodeError:
        raise InstallError(f"{SKILL_FILE} is not UTF-8 text") from None
    default = top or source.stem
    placeholder = Path("/nonexistent") / (default or "skill")
    skill, problems = parse_skill(text, placeholder / SKILL_FILE, "user",
                                  default_name=default, folder=placeholder, shown=SKILL_FILE)
    if skill is None:
        raise InstallError("; ".join(p.text() for p in problems))
    tools_data = by_path.get(TOOLS_FILE)
    if tools_data is not None:
        with tempfile.TemporaryDirectory(prefix="pseudoclaude-skill-check-") as tmp:
            folder = Path(tmp)  # the programs named must be files of the package
            for path, _, _ in files:
                target = folder / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.touch()
            try:
                tools_text = tools_data[:MAX_TOOLS_BYTES + 1].decode("utf-8")
            except UnicodeDecodeError:
                raise InstallError(f"{TOOLS_FILE} is not UTF-8 text") from None
            _, bad = parse_tools(tools_text, folder, skill.name, shown=TOOLS_FILE,
                                 source="user")
        if bad:
            raise InstallError("; ".join(p.text() for p in bad))
    return Package(skill.name, skill.description, source,
                   tuple(PackageFile(path, data, x) for path, data, x in sorted(files)))


def install(package: Package, skills_dir: Path) -> Path:
    """Write ``package`` into ``skills_dir/<name>`` (created with its parents); refused when
    that exists. Nothing is written outside ``skills_dir``."""
    target = skills_dir / package.name
    skills_dir.mkdir(parents=True, exist_ok=True)
    if os.path.lexists(target):
        raise InstallError(f"a skill named {package.name!r} is installed already ({target}): "
                           "remove it first to install this one")
    temp = Path(tempfile.mkdtemp(prefix=f".install-{package.name}-", dir=skills_dir))
    root = temp.resolve()
    try:
        for file in package.files:
            path = (temp / file.path).resolve()
            if not path.is_relative_to(root) or path == root:  # checked already: never
                raise InstallError(f"{file.path!r}: outside the skill's folder")
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "xb") as f:  # never through a link: the folder is new
                f.write(file.data)
            os.chmod(path, 0o755 if file.executable else 0o644)
        os.chmod(temp, 0o755)
        if os.path.lexists(target):
            raise InstallError(f"a skill named {package.name!r} is installed already")
        os.rename(temp, target)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    return target
