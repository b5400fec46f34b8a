"""Requests: an Anthropic request as a Chat Completions or a Responses body —
system and messages, tools and tool_choice, tool_use/tool_result, images,
documents (a PDF crosses only on Responses, as an `input_file`) — plus the
drop list of every field left off."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from foldrun.providers.supply import Supply

# Presets whose endpoints take `max_completion_tokens` (OpenAI and those the
# table notes as sending it); every other openai-format endpoint gets max_tokens.
MAX_COMPLETION_TOKENS = frozenset({"openai", "xai", "groq", "cerebras"})
# Endpoints that refuse a field they do not know (pydantic "extra inputs are
# not permitted"): no stream_options, no safety_identifier for them.
STRICT_FIELDS = frozenset({"mistral"})
_NON_REASONING = re.compile(r"^(gpt-4|gpt-3|chatgpt-|gpt-5-chat)")
_SAFETY_MAX = 64
_THINKING_EFFORT = ((2048, "low"), (8192, "medium"))


def is_non_reasoning(model: str | None) -> bool:
    """`gpt-4*`, `gpt-3*`, `chatgpt-*`, `gpt-5-chat-*` refuse a reasoning
    effort outright; a gateway prefix (`openai/…`) does not change the family."""
    return bool(_NON_REASONING.match((model or "").rsplit("/", 1)[-1].lower()))


def safety_identifier(value: str) -> str:
    """OpenAI caps it at 64 characters: a longer tenant id is sent hashed."""
    return value if len(value) <= _SAFETY_MAX else hashlib.sha256(value.encode()).hexdigest()


def _effort(options: Mapping[str, Any]) -> str | None:
    if options.get("reasoning_effort"):
        return str(options["reasoning_effort"])
    thinking = options.get("thinking")
    if isinstance(thinking, Mapping) and thinking.get("type") == "enabled":
        budget = int(thinking.get("budget_tokens") or 0)
        for limit, word in _THINKING_EFFORT:
            if budget <= limit:
                return word
        return "high"
    return None


def _system_text(system: Any) -> str:
    if not system:
        return ""
    if isinstance(system, str):
        return system
    return "\n\n".join(part.get("text", "") for part in system if isinstance(part, Mapping))


def _data_url(source: Mapping[str, Any]) -> str | None:
    if source.get("type") == "base64":
        return f"data:{source.get('media_type', 'application/octet-stream')};base64,{source.get('data', '')}"
    if source.get("type") == "url":
        return source.get("url")
    return None


def _tool_result_text(content: Any, drops: list[str]) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part in content:
        if part.get("type") == "text":
            texts.append(part.get("text", ""))
        else:
            drops.append(f"a {part.get('type')} inside a tool result (the wire carries text there)")
    return "\n".join(texts)


def _tools(tools: list | None, drops: list[str], responses: bool) -> list[dict]:
    out = []
    for tool in tools or []:
        native = tool.get("responses" if responses else "chat")
        if isinstance(native, dict):  # the provider's own tool, in that wire's words ({type: web_search}, $web_search)
            out.append(dict(native))
            continue
        if "input_schema" not in tool:  # Anthropic server-side tools: tools run on the box
            drops.append(f"server-side tool {tool.get('name') or tool.get('type')}")
            continue
        fn = {
            "name": tool["name"],
            "description": tool.get("description", ""),
            "parameters": tool.get("input_schema") or {"type": "object", "properties": {}},
        }
        out.append({"type": "function", **fn, "strict": False} if responses else {"type": "function", "function": fn})
    return out


def _tool_choice(choice: Mapping | None, responses: bool) -> Any:
    if not choice:
        return None
    kind = choice.get("type")
    if kind == "auto":
        return "auto"
    if kind == "any":
        return "required"
    if kind == "none":
        return "none"
    if kind == "tool":
        return (
            {"type": "function", "name": choice["name"]}
            if responses
            else {"type": "function", "function": {"name": choice["name"]}}
        )
    return None


def _common_options(supply: Supply, body: dict, options: Mapping[str, Any], drops: list[str], responses: bool) -> None:
    for key in ("temperature", "top_p"):
        if options.get(key) is not None:
            body[key] = options[key]
    if options.get("top_k") is not None:
        drops.append("top_k (sent only when params: asks for it)")
    effort = _effort(options)
    if effort:
        if is_non_reasoning(supply.model):
            drops.append(f"reasoning_effort ({supply.model} does not reason)")
        elif responses:
            body["reasoning"] = {"effort": effort}
        else:
            body["reasoning_effort"] = effort
    # OpenAI's own field: sent to OpenAI and on the Responses wire, where a
    # gateway ignores what it cannot use; never to a strict endpoint.
    if (
        options.get("safety_identifier")
        and supply.name not in STRICT_FIELDS
        and (responses or supply.name == "openai" or supply.host == "api.openai.com")
    ):
        body["safety_identifier"] = safety_identifier(str(options["safety_identifier"]))
    if options.get("metadata"):
        drops.append("metadata")
    if options.get("plugins") and supply.name == "openrouter":  # OpenRouter's own field (its web plugin)
        body["plugins"] = [dict(p) for p in options["plugins"]]


def _params(supply: Supply, body: dict, drops: list[str]) -> None:
    """`params:` goes onto the body as written — except a reasoning effort for a
    family that refuses it outright, which would turn every request into a 400."""
    params = dict(supply.params)
    if is_non_reasoning(supply.model):
        effort = params.pop("reasoning_effort", None)
        reasoning = params.get("reasoning")
        if isinstance(reasoning, Mapping) and "effort" in reasoning:
            rest = {k: v for k, v in reasoning.items() if k != "effort"}
            params["reasoning"] = rest
            if not rest:
                params.pop("reasoning")
            effort = effort or reasoning["effort"]
        if effort is not None:
            drops.append(f"reasoning_effort ({supply.model} does not reason)")
    body.update(params)


def _add_tools(body: dict[str, Any], tools: Any, tool_choice: Any, drops: list[str], *, responses: bool) -> None:
    """The request's tools, its tool choice and a turn-off of parallel calls, in either API's form."""
    converted = _tools(tools, drops, responses=responses)
    if converted:
        body["tools"] = converted
        choice = _tool_choice(tool_choice, responses=responses)
        if choice is not None:
            body["tool_choice"] = choice
        if tool_choice and tool_choice.get("disable_parallel_tool_use"):
            body["parallel_tool_calls"] = False


def chat_request(
    supply: Supply,
    system,
    messages: list,
    tools: list | None,
    max_tokens: int,
    tool_choice: Mapping | None,
    options: Mapping[str, Any],
) -> tuple[dict, list[str]]:
    """An Anthropic request as a Chat Completions body, plus what was dropped."""
    drops: list[str] = []
    out: list[dict] = []
    text = _system_text(system)
    if text:
        out.append({"role": "system", "content": text})
    for message in messages:
        content = message.get("content")
        role = message.get("role")
        if isinstance(content, str):
            out.append({"role": role, "content": content})
            continue
        if role == "assistant":
            texts, calls = [], []
            for part in content:
                if part.get("type") == "text":
                    texts.append(part.get("text", ""))
                elif part.get("type") == "tool_use":
                    calls.append(
                        {
                            "id": part["id"],
                            "type": "function",
                            "function": {"name": part["name"], "arguments": json.dumps(part.get("input") or {})},
                        }
                    )
            entry: dict[str, Any] = {"role": "assistant", "content": "".join(texts) or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
            continue
        parts: list[dict] = []
        for part in content:
            kind = part.get("type")
            if kind == "tool_result":
                body = _tool_result_text(part.get("content"), drops)
                if part.get("is_error"):
                    body = f"Error: {body}"
                out.append({"role": "tool", "tool_call_id": part["tool_use_id"], "content": body})
            elif kind == "text":
                parts.append({"type": "text", "text": part.get("text", "")})
            elif kind == "image":
                url = _data_url(part.get("source") or {})
                if url:
                    parts.append({"type": "image_url", "image_url": {"url": url}})
            elif kind == "document":
                source = part.get("source") or {}
                if source.get("type") == "text":
                    parts.append({"type": "text", "text": source.get("data", "")})
                else:
                    drops.append("a document (Chat Completions cannot carry it; format: responses can)")
        if parts:
            if all(p["type"] == "text" for p in parts):
                out.append({"role": role, "content": "\n".join(p["text"] for p in parts)})
            else:
                out.append({"role": role, "content": parts})
    body: dict[str, Any] = {"model": supply.model, "messages": out, "stream": True}
    if supply.name not in STRICT_FIELDS:  # usage after the finish reason, where the endpoint takes the ask
        body["stream_options"] = {"include_usage": True}
    body["max_completion_tokens" if supply.name in MAX_COMPLETION_TOKENS else "max_tokens"] = max_tokens
    _add_tools(body, tools, tool_choice, drops, responses=False)
    if options.get("stop_sequences"):
        body["stop"] = list(options["stop_sequences"])
    _common_options(supply, body, options, drops, responses=False)
    _params(supply, body, drops)
    return body, drops


def responses_request(
    supply: Supply,
    system,
    messages: list,
    tools: list | None,
    max_tokens: int,
    tool_choice: Mapping | None,
    options: Mapping[str, Any],
) -> tuple[dict, list[str]]:
    """An Anthropic request as a Responses body (`store: false`, no
    previous_response_id: every turn carries the whole conversation)."""
    drops: list[str] = []
    items: list[dict] = []
    for message in messages:
        role = message.get("role")
        content = message.get("content")
        if isinstance(content, str):
            kind = "output_text" if role == "assistant" else "input_text"
            items.append({"type": "message", "role": role, "content": [{"type": kind, "text": content}]})
            continue
        parts: list[dict] = []

        def flush() -> None:
            if parts:
                items.append({"type": "message", "role": role, "content": list(parts)})
                parts.clear()

        for part in content:
            kind = part.get("type")
            if kind == "text":
                parts.append(
                    {"type": "output_text" if role == "assistant" else "input_text", "text": part.get("text", "")}
                )
            elif kind == "tool_use":
                flush()
                items.append(
                    {
                        "type": "function_call",
                        "call_id": part["id"],
                        "name": part["name"],
                        "arguments": json.dumps(part.get("input") or {}),
                    }
                )
            elif kind == "tool_result":
                flush()
                text = _tool_result_text(part.get("content"), drops)
                items.append(
                    {
                        "type": "function_call_output",
                        "call_id": part["tool_use_id"],
                        "output": f"Error: {text}" if part.get("is_error") else text,
                    }
                )
            elif kind == "image":
                url = _data_url(part.get("source") or {})
                if url:
                    parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
            elif kind == "document":
                source = part.get("source") or {}
                if source.get("type") == "text":
                    parts.append({"type": "input_text", "text": source.get("data", "")})
                elif source.get("type") == "base64":
                    parts.append(
                        {
                            "type": "input_file",
                            "filename": part.get("title") or "document.pdf",
                            "file_data": _data_url(source),
                        }
                    )
                elif source.get("type") == "url":
                    parts.append({"type": "input_file", "file_url": source.get("url")})
        flush()
    body: dict[str, Any] = {
        "model": supply.model,
        "input": items,
        "max_output_tokens": max_tokens,
        "stream": True,
        "store": False,
    }
    text = _system_text(system)
    if text:
        body["instructions"] = text
    _add_tools(body, tools, tool_choice, drops, responses=True)
    if options.get("stop_sequences"):
        drops.append("stop_sequences (the Responses API has none)")
    _common_options(supply, body, options, drops, responses=True)
    _params(supply, body, drops)
    return body, drops
