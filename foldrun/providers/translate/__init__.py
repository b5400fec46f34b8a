"""The translator: Anthropic Messages in, Chat Completions or Responses on the
wire, Anthropic Messages out.

Requests: system and messages, tools and tool_choice, tool_use/tool_result,
images, documents (a PDF crosses only on Responses, as an `input_file`).
Replies: whole JSON or streamed deltas — tool-call arguments in pieces, in
the same chunk as the name, or only at the end; usage after the finish
reason. Stop reasons follow the spec's table; a cut-off beats a tool call
and a refusal beats everything.

Every field left off is named in the drop list the client writes as a line.

A module per concern, and every public name importable from here as before:
`bodies` (Anthropic → Chat Completions and Responses bodies, the drop list,
the presets' field rules), `chat` (Chat Completions replies and streams),
`responses` (Responses replies and streams), and `shared` (what the two reply
sides share: tool-call arguments parsed, tool-call ids made distinct).
"""

from __future__ import annotations

from .chat import ChatStream, chat_to_anthropic
from .bodies import (
    MAX_COMPLETION_TOKENS,
    STRICT_FIELDS,
    chat_request,
    is_non_reasoning,
    responses_request,
    safety_identifier,
)
from .responses import ResponsesStream, responses_to_anthropic

__all__ = [
    "MAX_COMPLETION_TOKENS",
    "STRICT_FIELDS",
    "is_non_reasoning",
    "safety_identifier",
    "chat_request",
    "responses_request",
    "chat_to_anthropic",
    "ChatStream",
    "responses_to_anthropic",
    "ResponsesStream",
]
