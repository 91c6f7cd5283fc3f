"""Keeping a server's tokens out of logs and messages: its env values, header values and
expanded variables (:attr:`~pseudoclaude.mcp.config.ServerConfig.secrets`) are replaced by
``[redacted]``, and so is anything shaped like a credential (:func:`pseudoclaude.redact.scrub`).
Pure."""

from __future__ import annotations

from collections.abc import Iterable

from pseudoclaude.redact import safe_url, scrub

__all__ = ["safe_url", "scrub_text"]


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret and every credential-shaped run replaced."""
    return scrub(text, secrets)


