"""Chat Completions replies, whole JSON (chat_to_anthropic) or streamed chunks
(ChatStream), as one Anthropic message."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from foldrun.providers.supply import ProviderError, normalise_message

from .shared import parse_arguments, unique_ids


def _chat_stop(
    finish: str | None, has_tools: bool, refused: bool, matched: Any, stop_sequences: list[str]
) -> tuple[str, str | None]:
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
    prompt = int(usage.get("prompt_tokens") or 0)
    # The provider's automatic cache: `cached_tokens` are part of `prompt_tokens`; in the loop's (Anthropic's)
    # terms they are cache reads and `input_tokens` is the rest, so no token is priced twice.
    cached = min(int((usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0), prompt)
    out = {"input_tokens": prompt - cached, "output_tokens": int(usage.get("completion_tokens") or 0)}
    if cached:
        out["cache_read_input_tokens"] = cached
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
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id"),
                "name": fn.get("name"),
                "input": parse_arguments(fn.get("arguments") or ""),
            }
        )
    if message.get("function_call"):  # the legacy single-call shape some servers still send
        fn = message["function_call"]
        blocks.append(
            {
                "type": "tool_use",
                "id": None,
                "name": fn.get("name"),
                "input": parse_arguments(fn.get("arguments") or ""),
            }
        )
    unique_ids(blocks)
    matched = choice.get("stop_reason", choice.get("matched_stop"))
    stop, seq = _chat_stop(
        choice.get("finish_reason"),
        any(b["type"] == "tool_use" for b in blocks),
        bool(message.get("refusal")),
        matched,
        stop_sequences or [],
    )
    return normalise_message(
        {
            "id": data.get("id"),
            "model": data.get("model"),
            "content": blocks,
            "stop_reason": stop,
            "stop_sequence": seq,
            "usage": _chat_usage(data.get("usage")),
        }
    )


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
        elif (
            index in self.calls
            and delta.get("id")
            and self.calls[index].get("id") not in (None, delta["id"])
            and self.calls[index]["args"]
        ):
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
            blocks.append(
                {"type": "tool_use", "id": call["id"], "name": call["name"], "input": parse_arguments(call["args"])}
            )
        unique_ids(blocks)
        stop, seq = _chat_stop(self.finish, bool(self.order), bool(self.refusal), self.matched, self.stop_sequences)
        return normalise_message(
            {
                "id": self.id,
                "model": self.model,
                "content": blocks,
                "stop_reason": stop,
                "stop_sequence": seq,
                "usage": _chat_usage(self.usage),
            }
        )
