"""Where sessions live on disk, and how a new one is allocated (SPEC §3).

``<dataDir>/sessions/<id>/conversation.jsonl`` and ``<dataDir>/sessions/<id>/tool-results/``.
Folders are created 0700 and files 0600; ``<dataDir>/.gitignore`` (ignoring ``sessions/``) is
written when this code creates ``<dataDir>``.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from pseudoclaude.durable import make_private_dir
from pseudoclaude.errors import PseudoClaudeError
from pseudoclaude.session.ids import is_session_id, new_session_id

LOG_NAME = "conversation.jsonl"
SPILL_DIR_NAME = "tool-results"
GITIGNORE = ("# Written by PseudoClaude: session logs and pending memory proposals stay on "
             "this machine.\nsessions/\nproposals/\n")
DIR_MODE = 0o700
FILE_MODE = 0o600


class SessionError(PseudoClaudeError):
    """A session operation failed; the message is meant for the user."""


class SessionNotFound(SessionError):
    pass


class SessionStore:
    """The sessions of one data directory."""

    def __init__(self, data_dir: Path | str) -> None:
        self.data_dir = Path(data_dir)
        self.sessions_dir = self.data_dir / "sessions"

    def ensure(self) -> None:
        """Create ``<dataDir>`` and ``sessions/`` (0700) before the first session is written.

        ``<dataDir>/.gitignore`` (ignoring ``sessions/``) is written when this creates the
        data folder or its ``sessions/`` (the memory stores may have created the data folder
        first), unless one is there; a user's own edits or deletion of it later are kept.
        Nothing is written before a session needs it (a run that fails for want of a
        provider leaves the workspace untouched).
        """
        created = make_private_dir(self.data_dir)
        if make_private_dir(self.sessions_dir) or created:
            gitignore = self.data_dir / ".gitignore"
            try:
                fd = os.open(gitignore, os.O_WRONLY | os.O_CREAT | os.O_EXCL, FILE_MODE)
            except FileExistsError:
                return
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(GITIGNORE)

    def session_dir(self, session_id: str) -> Path:
        return self.sessions_dir / session_id

    def log_path(self, session_id: str) -> Path:
        return self.session_dir(session_id) / LOG_NAME

    def spill_dir(self, session_id: str) -> Path:
        return self.session_dir(session_id) / SPILL_DIR_NAME

    def allocate(self, now: datetime | None = None) -> str:
        """Create the folder of a brand-new session and return its id."""
        self.ensure()
        for _ in range(10):
            session_id = new_session_id(now)
            try:
                os.mkdir(self.session_dir(session_id), DIR_MODE)
            except FileExistsError:
                continue
            os.chmod(self.session_dir(session_id), DIR_MODE)
            make_private_dir(self.spill_dir(session_id))
            return session_id
        raise SessionError("could not allocate a unique session id after 10 attempts")

    def check_id(self, session_id: str) -> str:
        """Validate a user-supplied id and make sure its log exists."""
        if not is_session_id(session_id):
            raise SessionNotFound(
                f"not a session id: {session_id!r} (expected YYYYMMDD-HHMMSS-xxxx or 'latest')"
            )
        if not self.log_path(session_id).is_file():
            raise SessionNotFound(f"no session {session_id} in {self.sessions_dir}")
        return session_id

    def session_ids(self) -> list[str]:
        """Ids of the folders that look like sessions (the log may still be missing)."""
        try:
            entries = list(os.scandir(self.sessions_dir))
        except FileNotFoundError:
            return []
        except NotADirectoryError:
            raise SessionError(f"not a folder: {self.sessions_dir}") from None
        except PermissionError:
            raise SessionError(f"cannot read {self.sessions_dir}: permission denied") from None
        return sorted(
            e.name for e in entries if is_session_id(e.name) and e.is_dir(follow_symlinks=False)
        )
