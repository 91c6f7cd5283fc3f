"""Memory must never store credentials (SPEC §5): what looks like a secret is refused.

:func:`find_secret` names the kind of secret found (never the secret itself, so the reason can
be logged and shown to the user).
"""

from __future__ import annotations

import re
from typing import Final

_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
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


def find_secret(text: str) -> str | None:
    """The kind of secret ``text`` seems to contain ("an AWS access key", ...), or None."""
    for kind, pattern in _PATTERNS:
        if pattern.search(text):
            return kind
    return None
