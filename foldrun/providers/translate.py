"""The translator: Anthropic Messages in, Chat Completions or Responses on the
wire, Anthropic Messages out.

Requests: system and messages, tools and tool_choice, tool_use/tool_result,
images, documents (a PDF crosses only on Responses, as an `input_file`).
Replies: whole JSON or streamed deltas — tool-call arguments in pieces, in
the same chunk as the name, or only at the end; usage after the finish
reason. Stop reasons follow the spec's table; a cut-off beats a tool call
and a refusal beats everything.

Every field left off is named in the drop list the client writes as a line.
"""
from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Mapping
from typing import Any

from foldrun.providers.supply import ProviderError, Supply, normalise_message

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
        fn = {"name": tool["name"], "description": tool.get("description", ""),
              "parameters": tool.get("input_schema") or {"type": "object", "properties": {}}}
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
        return {"type": "function", "name": choice["name"]} if responses else {
            "type": "function", "function": {"name": choice["name"]}}
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
    if options.get("safety_identifier") and supply.name not in STRICT_FIELDS and (
            responses or supply.name == "openai" or supply.host == "api.openai.com"):
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


def chat_request(supply: Supply, system, messages: list, tools: list | None, max_tokens: int,
                 tool_choice: Mapping | None, options: Mapping[str, Any]) -> tuple[dict, list[str]]:
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
                    calls.append({"id": part["id"], "type": "function",
                                  "function": {"name": part["name"], "arguments": json.dumps(part.get("input") or {})}})
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
    converted = _tools(tools, drops, responses=False)
    if converted:
        body["tools"] = converted
        choice = _tool_choice(tool_choice, responses=False)
        if choice is not None:
            body["tool_choice"] = choice
        if tool_choice and tool_choice.get("disable_parallel_tool_use"):
            body["parallel_tool_calls"] = False
    if options.get("stop_sequences"):
        body["stop"] = list(options["stop_sequences"])
    _common_options(supply, body, options, drops, responses=False)
    _params(supply, body, drops)
    return body, drops


def responses_request(supply: Supply, system, messages: list, tools: list | None, max_tokens: int,
                      tool_choice: Mapping | None, options: Mapping[str, Any]) -> tuple[dict, list[str]]:
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
                parts.append({"type": "output_text" if role == "assistant" else "input_text", "text": part.get("text", "")})
            elif kind == "tool_use":
                flush()
                items.append({"type": "function_call", "call_id": part["id"], "name": part["name"],
                              "arguments": json.dumps(part.get("input") or {})})
            elif kind == "tool_result":
                flush()
                text = _tool_result_text(part.get("content"), drops)
                items.append({"type": "function_call_output", "call_id": part["tool_use_id"],
                              "output": f"Error: {text}" if part.get("is_error") else text})
            elif kind == "image":
                url = _data_url(part.get("source") or {})
                if url:
                    parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
            elif kind == "document":
                source = part.get("source") or {}
                if source.get("type") == "text":
                    parts.append({"type": "input_text", "text": source.get("data", "")})
                elif source.get("type") == "base64":
                    parts.append({"type": "input_file", "filename": part.get("title") or "document.pdf",
                                  "file_data": _data_url(source)})
                elif source.get("type") == "url":
                    parts.append({"type": "input_file", "file_url": source.get("url")})
        flush()
    body: dict[str, Any] = {"model": supply.model, "input": items, "max_output_tokens": max_tokens,
                            "stream": True, "store": False}
    text = _system_text(system)
    if text:
        body["instructions"] = text
    converted = _tools(tools, drops, responses=True)
    if converted:
        body["tools"] = converted
        choice = _tool_choice(tool_choice, responses=True)
        if choice is not None:
            body["tool_choice"] = choice
        if tool_choice and tool_choice.get("disable_parallel_tool_use"):
            body["parallel_tool_calls"] = False
    if options.get("stop_sequences"):
        drops.append("stop_sequences (the Responses API has none)")
    _common_options(supply, body, options, drops, responses=True)
    _params(supply, body, drops)
    return body, drops


# ---------------------------------------------------------------- replies


def _parse_arguments(raw: str) -> dict:
    if not raw or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"_unparsed_arguments": raw}
    return value if isinstance(value, dict) else {"_value": value}


def _unique_ids(blocks: list[dict]) -> None:
    """Some endpoints reuse one tool-call id across separate calls (Kimi K3);
    the loop needs them distinct to pair each result with its call."""
    seen: set[str] = set()
    for block in blocks:
        if block.get("type") != "tool_use":
            continue
        if not block.get("id"):
            block["id"] = f"toolu_{uuid.uuid4().hex[:24]}"
        while block["id"] in seen:
            block["id"] = f"{block['id']}_{len(seen)}"
        seen.add(block["id"])


def _chat_stop(finish: str | None, has_tools: bool, refused: bool, matched: Any,
               stop_sequences: list[str]) -> tuple[str, str | None]:
    if refused or finish == "content_filter":
        return "refusal", None
    if finish == "length":
        return "max_tokens", None
    if finish == "model_length":
        return "model_context_window_exceeded", None
    if finish in ("tool_calls", "function_call") or has_tools:
        return "tool_use", None
    if finish == "stop" and isinstance(matched, str) and matched in stop_sequences:
        return "stop_sequence", matched
    return "end_turn", None


def _chat_usage(usage: Mapping[str, Any] | None) -> dict[str, int]:
    usage = usage or {}
    out = {"input_tokens": int(usage.get("prompt_tokens") or 0),
           "output_tokens": int(usage.get("completion_tokens") or 0)}
    cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens")
    if cached:
        out["cache_read_input_tokens"] = int(cached)
    return out


def chat_to_anthropic(data: Mapping[str, Any], stop_sequences: list[str] | None = None) -> dict[str, Any]:
    choices = data.get("choices") or []
    if not choices:
        raise ProviderError("the provider's answer carried no choices")
    choice = choices[0]
    message = choice.get("message") or {}
    blocks: list[dict] = []
    if message.get("content"):
        blocks.append({"type": "text", "text": message["content"]})
    if message.get("refusal"):
        blocks.append({"type": "text", "text": message["refusal"]})
    for call in message.get("tool_calls") or []:
        fn = call.get("function") or {}
        blocks.append({"type": "tool_use", "id": call.get("id"), "name": fn.get("name"),
                       "input": _parse_arguments(fn.get("arguments") or "")})
    if message.get("function_call"):  # the legacy single-call shape some servers still send
        fn = message["function_call"]
        blocks.append({"type": "tool_use", "id": None, "name": fn.get("name"),
                       "input": _parse_arguments(fn.get("arguments") or "")})
    _unique_ids(blocks)
    matched = choice.get("stop_reason", choice.get("matched_stop"))
    stop, seq = _chat_stop(choice.get("finish_reason"), any(b["type"] == "tool_use" for b in blocks),
                           bool(message.get("refusal")), matched, stop_sequences or [])
    return normalise_message({"id": data.get("id"), "model": data.get("model"), "content": blocks,
                              "stop_reason": stop, "stop_sequence": seq, "usage": _chat_usage(data.get("usage"))})


class ChatStream:
    """Chat Completions chunks → one Anthropic message."""

    def __init__(self, stop_sequences: list[str] | None = None) -> None:
        self.stop_sequences = stop_sequences or []
        self.id: str | None = None
        self.model: str | None = None
        self.text: list[str] = []
        self.refusal: list[str] = []
        self.calls: dict[int, dict[str, Any]] = {}
        self.order: list[int] = []
        self.finish: str | None = None
        self.matched: Any = None
        self.usage: Mapping[str, Any] | None = None
        self.chunks = 0

    def _slot(self, delta: Mapping[str, Any], position: int) -> dict[str, Any]:
        index = delta.get("index")
        if index is None:
            # No index (some compatible servers): a new id opens a new call.
            if delta.get("id") and (not self.order or self.calls[self.order[-1]].get("id") not in (None, delta["id"])):
                index = len(self.order)
            else:
                index = self.order[-1] if self.order else position
        elif index in self.calls and delta.get("id") and self.calls[index].get("id") not in (None, delta["id"]) \
                and self.calls[index]["args"]:
            # The same index reused for a second complete call (seen on Gemini's route).
            index = max(self.calls) + 1000 + len(self.order)
        if index not in self.calls:
            self.calls[index] = {"id": None, "name": "", "args": ""}
            self.order.append(index)
        return self.calls[index]

    def feed(self, chunk: Mapping[str, Any]) -> None:
        self.chunks += 1
        if chunk.get("error"):
            err = chunk["error"]
            text = err.get("message") if isinstance(err, Mapping) else str(err)
            raise ProviderError(f"the provider's stream broke off with an error: {text}")
        self.id = self.id or chunk.get("id")
        self.model = self.model or chunk.get("model")
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if delta.get("content"):
                self.text.append(delta["content"])
            if delta.get("refusal"):
                self.refusal.append(delta["refusal"])
            legacy = delta.get("function_call")
            calls = list(delta.get("tool_calls") or [])
            if legacy:  # the legacy single-call shape: one call, always slot 0
                calls.append({"index": 0, "function": legacy})
            for position, call in enumerate(calls):
                slot = self._slot(call, position)
                if call.get("id"):
                    slot["id"] = call["id"]
                fn = call.get("function") or {}
                if fn.get("name"):
                    slot["name"] = fn["name"]
                if fn.get("arguments"):
                    slot["args"] += fn["arguments"]
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]
                self.matched = choice.get("stop_reason", choice.get("matched_stop"))

    def result(self) -> dict[str, Any]:
        if self.chunks == 0:
            raise ProviderError("the provider's stream ended before the reply was complete")
        if self.finish is None:
            raise ProviderError("the provider's stream ended before the reply was complete (no finish reason)")
        blocks: list[dict] = []
        if self.text:
            blocks.append({"type": "text", "text": "".join(self.text)})
        if self.refusal:
            blocks.append({"type": "text", "text": "".join(self.refusal)})
        for index in self.order:
            call = self.calls[index]
            blocks.append({"type": "tool_use", "id": call["id"], "name": call["name"],
                           "input": _parse_arguments(call["args"])})
        _unique_ids(blocks)
        stop, seq = _chat_stop(self.finish, bool(self.order), bool(self.refusal), self.matched, self.stop_sequences)
        return normalise_message({"id": self.id, "model": self.model, "content": blocks, "stop_reason": stop,
                                  "stop_sequence": seq, "usage": _chat_usage(self.usage)})


def _responses_stop(response: Mapping[str, Any], has_calls: bool, refused: bool) -> str:
    reason = (response.get("incomplete_details") or {}).get("reason")
    if refused or reason == "content_filter":
        return "refusal"
    if reason == "max_output_tokens":
        return "max_tokens"
    if has_calls:
        return "tool_use"
    return "end_turn"


def responses_to_anthropic(data: Mapping[str, Any]) -> dict[str, Any]:
    if data.get("status") == "failed":
        err = data.get("error") or {}
        raise ProviderError(f"the provider answered with an error: {err.get('message') or 'the response failed'}")
    blocks: list[dict] = []
    refused = False
    for item in data.get("output") or []:
        kind = item.get("type")
        if kind == "message":
            for part in item.get("content") or []:
                if part.get("type") == "output_text":
                    blocks.append({"type": "text", "text": part.get("text", "")})
                elif part.get("type") == "refusal":
                    refused = True
                    blocks.append({"type": "text", "text": part.get("refusal", "")})
        elif kind == "function_call":
            blocks.append({"type": "tool_use", "id": item.get("call_id") or item.get("id"), "name": item.get("name"),
                           "input": _parse_arguments(item.get("arguments") or "")})
        elif kind == "web_search_call":  # OpenAI's own search ran: kept as Anthropic's word for it, to be counted
            action = item.get("action") if isinstance(item.get("action"), dict) else {}
            blocks.append({"type": "server_tool_use", "id": item.get("id"), "name": "web_search",
                           "input": {"query": action.get("query")}})
    _unique_ids(blocks)
    has_calls = any(b["type"] == "tool_use" for b in blocks)
    usage = data.get("usage") or {}
    out_usage = {"input_tokens": int(usage.get("input_tokens") or 0),
                 "output_tokens": int(usage.get("output_tokens") or 0)}
    cached = (usage.get("input_tokens_details") or {}).get("cached_tokens")
    if cached:
        out_usage["cache_read_input_tokens"] = int(cached)
    return normalise_message({"id": data.get("id"), "model": data.get("model"), "content": blocks,
                              "stop_reason": _responses_stop(data, has_calls, refused), "usage": out_usage})


class ResponsesStream:
    """Responses streaming events → one Anthropic message. The terminal
    event (`response.completed` / `response.incomplete`) carries the whole
    response; the deltas are kept in case a server sends a thin one."""

    def __init__(self) -> None:
        self.final: Mapping[str, Any] | None = None
        self.items: dict[int, dict[str, Any]] = {}
        self.text: dict[int, list[str]] = {}
        self.args: dict[int, list[str]] = {}
        self.refusal: dict[int, list[str]] = {}
        self.meta: dict[str, Any] = {}

    def feed(self, data: Mapping[str, Any]) -> None:
        kind = data.get("type")
        index = data.get("output_index", 0)
        if kind in ("response.created", "response.in_progress"):
            self.meta = dict(data.get("response") or {})
        elif kind == "response.output_item.added":
            self.items[index] = dict(data.get("item") or {})
        elif kind == "response.output_item.done":
            self.items[index] = dict(data.get("item") or {})
            self.args.pop(index, None)
            self.text.pop(index, None)
            self.refusal.pop(index, None)
        elif kind == "response.output_text.delta":
            self.text.setdefault(index, []).append(data.get("delta", ""))
        elif kind == "response.refusal.delta":
            self.refusal.setdefault(index, []).append(data.get("delta", ""))
        elif kind == "response.function_call_arguments.delta":
            self.args.setdefault(index, []).append(data.get("delta", ""))
        elif kind == "response.function_call_arguments.done":
            self.items.setdefault(index, {"type": "function_call"})["arguments"] = data.get("arguments", "")
            self.args.pop(index, None)
        elif kind in ("response.completed", "response.incomplete"):
            self.final = dict(data.get("response") or {})
        elif kind == "response.failed":
            err = (data.get("response") or {}).get("error") or {}
            raise ProviderError(f"the provider's stream broke off with an error: {err.get('message') or 'the response failed'}")
        elif kind == "error":
            raise ProviderError(f"the provider's stream broke off with an error: {data.get('message') or data.get('code')}")

    def result(self) -> dict[str, Any]:
        if self.final is None:
            raise ProviderError("the provider's stream ended before the reply was complete")
        response = dict(self.final)
        if not response.get("output"):
            output = []
            for index in sorted(self.items):
                item = dict(self.items[index])
                if item.get("type") == "function_call" and index in self.args:
                    item["arguments"] = item.get("arguments", "") + "".join(self.args[index])
                if item.get("type") == "message" and not item.get("content"):
                    item["content"] = []
                    if index in self.text:
                        item["content"].append({"type": "output_text", "text": "".join(self.text[index])})
                    if index in self.refusal:
                        item["content"].append({"type": "refusal", "refusal": "".join(self.refusal[index])})
                output.append(item)
            response["output"] = output
        response.setdefault("id", self.meta.get("id"))
        response.setdefault("model", self.meta.get("model"))
        return responses_to_anthropic(response)
