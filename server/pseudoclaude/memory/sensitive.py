"""Memory must never store credentials (SPEC §5): what looks like a secret is refused.

:func:`find_secret` names the kind of secret found (never the secret itself, so the reason can
be logged and shown to the user). The table of shapes is :data:`pseudoclaude.redact.SECRET_PATTERNS`
(shared with the scrubbing of provider errors and the quoting of bad settings).
"""

from __future__ import annotations

from pseudoclaude.redact import SECRET_PATTERNS, find_secret

__all__ = ["SECRET_PATTERNS", "find_secret"]
