"""Session ids: ``YYYYMMDD-HHMMSS-xxxx`` (local creation time, 4 random lowercase hex)."""

from __future__ import annotations

import re
import secrets
from datetime import datetime

_ID = re.compile(r"^[0-9]{8}-[0-9]{6}-[0-9a-f]{4}$")


def new_session_id(now: datetime | None = None) -> str:
    now = now or datetime.now()
    return f"{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"


def is_session_id(value: str) -> bool:
    if not _ID.match(value):
        return False
    return session_id_time(value) is not None


def session_id_time(value: str) -> datetime | None:
    """The local creation time encoded in an id, or None when it is not a valid id."""
    if not _ID.match(value):
        return None
    try:
        return datetime.strptime(value[:15], "%Y%m%d-%H%M%S")
    except ValueError:
        return None
