"""The Conversation: the ordered messages the model sees next (SPEC §2)."""

from pseudoclaude.conversation.conversation import Conversation, Hooks, Offload
from pseudoclaude.conversation.history import PastReplace

__all__ = ["Conversation", "Hooks", "Offload", "PastReplace"]
