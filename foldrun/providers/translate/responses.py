"""Responses replies, whole JSON (responses_to_anthropic) or streamed events
(ResponsesStream), as one Anthropic message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foldrun.providers.supply import ProviderError, normalise_message

from .shared import parse_arguments, unique_ids


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
            blocks.append(
                {
                    "type": "tool_use",
                    "id": item.get("call_id") or item.get("id"),
                    "name": item.get("name"),
                    "input": parse_arguments(item.get("arguments") or ""),
                }
            )
        elif kind == "web_search_call":  # OpenAI's own search ran: kept as Anthropic's word for it, to be counted
            action = item.get("action") if isinstance(item.get("action"), dict) else {}
            blocks.append(
                {
                    "type": "server_tool_use",
                    "id": item.get("id"),
                    "name": "web_search",
                    "input": {"query": action.get("query")},
                }
            )
    unique_ids(blocks)
    has_calls = any(b["type"] == "tool_use" for b in blocks)
    usage = data.get("usage") or {}
    prompt = int(usage.get("input_tokens") or 0)
    # `cached_tokens` are part of `input_tokens`: in the loop's terms they are cache reads, the rest input.
    cached = min(int((usage.get("input_tokens_details") or {}).get("cached_tokens") or 0), prompt)
    out_usage = {"input_tokens": prompt - cached, "output_tokens": int(usage.get("output_tokens") or 0)}
    if cached:
        out_usage["cache_read_input_tokens"] = cached
    return normalise_message(
        {
            "id": data.get("id"),
            "model": data.get("model"),
            "content": blocks,
            "stop_reason": _responses_stop(data, has_calls, refused),
            "usage": out_usage,
        }
    )


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
            raise ProviderError(
                f"the provider's stream broke off with an error: {err.get('message') or 'the response failed'}"
            )
        elif kind == "error":
            raise ProviderError(
                f"the provider's stream broke off with an error: {data.get('message') or data.get('code')}"
            )

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
