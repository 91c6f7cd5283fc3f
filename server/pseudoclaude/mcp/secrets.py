"""Keeping a server's tokens out of logs and messages: its env values, header values and
expanded variables (:attr:`~pseudoclaude.mcp.config.ServerConfig.secrets`) are replaced by
``[redacted]``, and so is anything shaped like a credential (:func:`pseudoclaude.redact.scrub`).
Pure."""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit, urlunsplit

from pseudoclaude.redact import scrub


def scrub_text(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every secret and every credential-shaped run replaced."""
    return scrub(text, secrets)


def safe_url(url: str) -> str:
    """``url`` without its user information, query and fragment (where tokens hide)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        if parts.port is not None:
            host = f"{host}:{parts.port}"
        if ":" in (parts.hostname or "") and not host.startswith("["):
            host = f"[{parts.hostname}]" + (f":{parts.port}" if parts.port is not None else "")
        return urlunsplit((parts.scheme, host, parts.path, "", ""))
    except ValueError:
        return "(a URL that cannot be parsed)"
