"""yagent.llm: model engines — OpenAI-compatible, Anthropic, scripted (tests), replay (recorded).

Every engine speaks the provider-neutral types in `yagent.llm.types`.
"""

from yagent.llm.types import (
    AssistantTurn,
    Engine,
    EngineError,
    Image,
    Message,
    Request,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCallStarted,
    TurnDone,
    Usage,
    complete,
)

__all__ = [
    "AssistantTurn",
    "Engine",
    "EngineError",
    "Image",
    "Message",
    "Request",
    "StreamEvent",
    "TextDelta",
    "ToolCall",
    "ToolCallStarted",
    "TurnDone",
    "Usage",
    "complete",
]
