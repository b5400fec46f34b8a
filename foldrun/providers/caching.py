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
5. the step's own last tool (not a provider's server tool), when a breakpoint is left (the first turns, where 1 or 2 is the step's task).

The task itself is a plain string a few dozen tokens long and is not marked (marking it would change its
shape on the wire for nothing): the system's breakpoints cover everything before it.

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
    """Put a breakpoint on the last block of messages[index]. A message whose content is a plain string (the
    step's task, a few dozen tokens) is left as it is: the system breakpoints cover the prefix before it."""
    message = messages[index]
    content = message.get("content")
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
    if messages and _mark_message(messages, len(messages) - 1):
        left -= 1
    previous = _last_user_before(messages, len(messages) - 1) if messages else None
    if previous is not None and _mark_message(messages, previous):
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
    # The last of the step's own tools: a provider's server tools come after them and change as their uses
    # are spent (max_uses), which would make every request's tool list a new prefix.
    own = [i for i, t in enumerate(tools or []) if isinstance(t, dict) and "input_schema" in t]
    if left and own:
        marked_tools = list(tools)
        marked_tools[own[-1]] = {**marked_tools[own[-1]], "cache_control": EPHEMERAL}
        out["tools"] = marked_tools
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
