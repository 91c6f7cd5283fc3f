"""Merging the editor's settings (SPEC §7): ``initializationOptions`` first, then the answer of
``workspace/configuration`` (which wins key by key). Pure: no pygls."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def merge_settings(base: Mapping[str, Any] | None,
                   override: Mapping[str, Any] | None) -> dict[str, Any]:
    """A deep merge; ``None`` values in ``override`` do not erase ``base``."""
    merged: dict[str, Any] = dict(base or {})
    for key, value in (override or {}).items():
        if value is None:
            continue
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = merge_settings(current, value)
        else:
            merged[key] = value
    return merged
