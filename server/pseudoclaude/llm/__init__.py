"""Provider-neutral message types and (later) the provider adapters."""

from pseudoclaude.llm.types import (
    Message,
    ThinkingBlock,
    ToolCall,
    ToolResult,
    Usage,
    copy_message,
    copy_messages,
    parse_arguments,
)

__all__ = [
    "Message",
    "ThinkingBlock",
    "ToolCall",
    "ToolResult",
    "Usage",
    "copy_message",
    "copy_messages",
    "parse_arguments",
]
