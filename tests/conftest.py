"""Shared fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

from pseudoclaude.session import SessionStore


@pytest.fixture
def store(tmp_path: Path) -> SessionStore:
    return SessionStore(tmp_path / "ws" / ".PseudoClaude")
