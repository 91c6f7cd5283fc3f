"""Expiry of old sessions (SPEC §3): delete sessions not updated for ``retention_days``.

"Updated" is the modification time of the log (of the folder when there is no log yet).
Folders whose names are not session ids are never touched, nor is the active session.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Collection
from dataclasses import dataclass, field

from pseudoclaude.session.store import SessionStore

DEFAULT_RETENTION_DAYS = 30


@dataclass
class CleanupReport:
    deleted: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def cleanup_expired(
    store: SessionStore,
    retention_days: float = DEFAULT_RETENTION_DAYS,
    *,
    keep: Collection[str] = (),
    now: float | None = None,
) -> CleanupReport:
    report = CleanupReport()
    if retention_days <= 0:
        return report
    cutoff = (time.time() if now is None else now) - retention_days * 86400
    for session_id in store.session_ids():
        if session_id in keep:
            continue
        folder = store.session_dir(session_id)
        try:
            log = store.log_path(session_id)
            updated = os.stat(log if log.exists() else folder).st_mtime
            if updated >= cutoff:
                continue
            shutil.rmtree(folder)
            report.deleted.append(session_id)
        except FileNotFoundError:
            continue
        except OSError as exc:
            report.errors.append(f"{session_id}: {exc.strerror or exc}")
    return report
