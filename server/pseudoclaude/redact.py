"""The one table of what a secret looks like, and what is done with it.

:data:`SECRET_PATTERNS` is used three ways: memory refuses a note that matches
(:func:`find_secret`, SPEC §5), provider errors and logs have every match replaced by
``[redacted]`` (:func:`scrub`), and a bad setting is quoted in an error only when it does not
look like a secret (:func:`looks_secret`, deliberately over-cautious: it also hides anything
that merely names a credential, or a long run of letters and digits). Pure: no I/O, no imports
of the project.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from typing import Final
from urllib.parse import urlsplit, urlunsplit

REDACTED = "[redacted]"

SECRET_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("a private key", re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----")),
    ("an Anthropic API key", re.compile(r"\bsk-ant-[A-Za-z0-9_\-]{16,}")),
    ("an API key (sk-...)", re.compile(r"\bsk-(?:proj-|svcacct-|live-|test-)?[A-Za-z0-9_\-]{16,}")),
    ("an AWS access key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b")),
    ("a GitHub token", re.compile(
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})")),
    ("a GitLab token", re.compile(r"\bglpat-[A-Za-z0-9_\-]{20,}")),
    ("a Slack token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("a Google API key", re.compile(r"\bAIza[0-9A-Za-z_\-]{35}")),
    ("a Stripe key", re.compile(r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("a JSON Web Token", re.compile(
        r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]+")),
    ("a bearer token", re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/\-]{20,}=*")),
    ("a password", re.compile(
        r"(?i)\b(?:password|passwd|pwd|passphrase)\b[\"']?\s*[:=]\s*[\"']?[^\s\"'<>{}]{3,}")),
    ("a credential", re.compile(
        r"(?i)\b(?:api[_-]?key|secret[_-]?key|client[_-]?secret|access[_-]?token|auth[_-]?token"
        r"|private[_-]?token)\b[\"']?\s*[:=]\s*[\"']?[A-Za-z0-9_\-/+=.]{16,}")),
    ("a URL with a password", re.compile(r"\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:[^/\s:@]{3,}@")),
)
"""(what it is, for a message that never quotes the secret; its shape)."""

_HEADER_ECHO = re.compile(r"((?:x-api-key|authorization)[\"']?\s*[:=]\s*[\"']?(?:bearer\s+)?)"
                          r"[^\s\"',}]+", re.IGNORECASE)
"""An API key echoed in an ``x-api-key`` / ``Authorization`` header (any length)."""

_MARKERS = re.compile(
    r"\b(?:sk|rk|pk)[-_]"  # sk-..., sk-ant-..., rk_live_..., however short
    r"|(?i:bearer|secret|token|passw|private.?key|api.?key|credential)"
)
_TOKEN_RUNS = (re.compile(r"[A-Za-z0-9_+=]{20,}"),  # a token: no word separators
               re.compile(r"[A-Za-z0-9_+=.~-]{32,}"))  # a long one, such as a UUID


def find_secret(text: str) -> str | None:
    """The kind of secret ``text`` seems to contain ("an AWS access key", ...), or None."""
    for kind, pattern in SECRET_PATTERNS:
        if pattern.search(text):
            return kind
    return None


def scrub(text: str, secrets: Iterable[str | None] = ()) -> str:
    """``text`` with every occurrence of each secret, of anything in :data:`SECRET_PATTERNS`,
    and of an API key in an ``x-api-key`` / ``Authorization`` header echo replaced by
    ``[redacted]``."""
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, REDACTED)
    text = _HEADER_ECHO.sub(lambda m: m.group(1) + REDACTED, text)
    for _, pattern in SECRET_PATTERNS:
        text = pattern.sub(REDACTED, text)
    return text


def looks_secret(text: str) -> bool:
    """Whether ``text`` might be (or contain) a credential: a known shape, a token prefix or a
    word naming a credential, or a long run of token characters mixing letters and digits.
    Deliberately over-cautious (for quoting a bad value in an error)."""
    if find_secret(text) is not None or _MARKERS.search(text):
        return True
    return any(re.search(r"[A-Za-z]", run) and re.search(r"[0-9]", run)
               for pattern in _TOKEN_RUNS for run in pattern.findall(text))


CREDENTIAL_PREFIXES = ("ANTHROPIC_", "OPENAI_")
CREDENTIAL_SUFFIXES = ("_API_KEY", "_APIKEY", "_AUTH_TOKEN")


def without_credentials(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: ``os.environ``) without the variables that may hold a provider's
    credentials (``ANTHROPIC_*``, ``OPENAI_*``, ``*_API_KEY``, ``*_APIKEY``, ``*_AUTH_TOKEN``):
    what ``run_command`` gives the programs it starts, and what a test gives a server it
    drives against the scripted model."""
    source = os.environ if env is None else env
    return {key: value for key, value in source.items()
            if not key.upper().startswith(CREDENTIAL_PREFIXES)
            and not key.upper().endswith(CREDENTIAL_SUFFIXES)}


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
