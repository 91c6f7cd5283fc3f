"""PseudoClaude LSP: a coding agent with visible, resumable sessions and memory."""

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "pseudoclaude-lsp"

try:
    # One source of the number, pyproject.toml's `version`, read from the installed metadata
    # (what `pseudoclaude --version` and the servers' serverInfo/agentInfo report).
    __version__ = version(DISTRIBUTION)
except PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"
