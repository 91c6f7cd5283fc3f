"""PseudoClaude LSP: a coding agent with visible, resumable sessions and memory."""

__version__ = "0.1.0"
