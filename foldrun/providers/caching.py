"""Prompt-cache breakpoints on the Anthropic Messages wire.

Anthropic caches a request's prefix — tools, then system, then messages, in that order — up to each block
that carries `cache_control: {"type": "ephemeral"}`, and allows at most four such breakpoints a request. A
later request whose prefix matches one reads it back at a tenth of the input price; writing it costs a
quarter more than input (foldrun/providers/cost.py). A step's model loop sends the same tool list, system
prompt and knowledge preamble on every turn and a conversation that only grows, so the four go, in order:

1. the conversation's last message — written now, read by the next turn;
2. the previous turn's last message (the one before the assistant's reply), which the previous request
   wrote: this request reads the conversation up to there;
3. the system's last block, the knowledge preamble (with the tools before it in the prefix);
4. the system's first block, the agent's own prompt, so a preamble that changed (a new day) still finds it;
5. the tool list's last tool, when a breakpoint is left (the first turn, where 2 does not exist yet).

Nothing the caller passed is changed: the marked blocks are copies.
"""

from __future__ import annotations

import copy
from typing import Any

MAX_BREAKPOINTS = 4
EPHEMERAL = {"type": "ephemeral"}


def _markable(block: Any) -> bool:
    # An empty text block cannot carry cache_control (Anthropic refuses the request), nor can a thinking block.
    if not isinstance(block, dict) or block.get("type") in ("thinking", "redacted_thinking"):
        return False
    return not (block.get("type") == "text" and not block.get("text"))


def _mark_message(messages: list, index: int) -> bool:
    """Put a breakpoint on the last block of messages[index] (a string's content becomes one text block)."""
    message = messages[index]
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            return False
        messages[index] = {**message, "content": [{"type": "text", "text": content, "cache_control": EPHEMERAL}]}
        return True
    if not isinstance(content, list) or not content or not _markable(content[-1]):
        return False
    blocks = list(content)
    blocks[-1] = {**blocks[-1], "cache_control": EPHEMERAL}
    messages[index] = {**message, "content": blocks}
    return True


def _last_user_before(messages: list, end: int) -> int | None:
    for index in range(end - 1, -1, -1):
        if messages[index].get("role") == "user":
            return index
    return None


def mark(body: dict[str, Any]) -> dict[str, Any]:
    """The body with up to four cache breakpoints, chosen as the module says."""
    out = dict(body)
    left = MAX_BREAKPOINTS
    messages = list(out.get("messages") or [])
    if messages and left and _mark_message(messages, len(messages) - 1):
        left -= 1
        previous = _last_user_before(messages, len(messages) - 1)
        if previous is not None and left and _mark_message(messages, previous):
            left -= 1
    out["messages"] = messages
    system = out.get("system")
    if isinstance(system, str) and system:
        system = [{"type": "text", "text": system}]
    if isinstance(system, list) and system:
        blocks = list(system)
        for index in dict.fromkeys((len(blocks) - 1, 0)):
            if left and _markable(blocks[index]):
                blocks[index] = {**blocks[index], "cache_control": EPHEMERAL}
                left -= 1
        out["system"] = blocks
    tools = out.get("tools")
    if left and isinstance(tools, list) and tools and _markable(tools[-1]):
        out["tools"] = [*tools[:-1], {**tools[-1], "cache_control": EPHEMERAL}]
    return out


def unmark(body: dict[str, Any]) -> dict[str, Any]:
    """The body with every cache_control taken off, for a provider that refuses the field."""
    out = copy.deepcopy(body)

    def strip(blocks: Any) -> None:
        if isinstance(blocks, list):
            for block in blocks:
                if isinstance(block, dict):
                    block.pop("cache_control", None)
                    strip(block.get("content"))

    strip(out.get("tools"))
    strip(out.get("system"))
    for message in out.get("messages") or []:
        if isinstance(message, dict):
            strip(message.get("content"))
    return out


def refuses_cache_control(status: int | None, message: str) -> bool:
    """A 400 whose words name cache_control: the endpoint does not take the field."""
    return status == 400 and "cache_control" in (message or "").lower()


def has_cache_control(value: Any) -> bool:
    if isinstance(value, dict):
        return "cache_control" in value or any(has_cache_control(v) for v in value.values())
    if isinstance(value, list):
        return any(has_cache_control(v) for v in value)
    return False
