"""The model client: one call to whatever endpoint a provider block resolves to,
answered in the Anthropic Messages shape the model loop understands.

Anthropic-shaped endpoints are spoken to directly over httpx with streaming
SSE; `openai` (Chat Completions) and `responses` endpoints go through the
translator in `foldrun.providers.translate`. A refusal (401, 402, 403, 429)
becomes `ProviderRefusal` carrying the spec's one-line explanation; any other
failure is `ProviderError` with a sentence and a probe verdict.

Nothing here logs or returns a key: the key lives on the `Supply` (whose repr
hides it) and goes out only in the one request header.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlparse

import httpx

from foldrun import net
from foldrun.providers import caching, translate
from foldrun.providers import refusal as refusal_lines
from foldrun.providers.sse import iter_byte_events
from foldrun.providers.supply import (
    FORMATS,
    MissingSecret,
    ProviderConfigError,
    ProviderError,
    ProviderRefusal,
    Supply,
    default_key_name,
    normalise_message,
    supply_from_block,
)

__all__ = [
    "ANTHROPIC_VERSION",
    "FORMATS",
    "AnthropicStream",
    "MissingSecret",
    "ModelClient",
    "ProviderConfigError",
    "ProviderError",
    "ProviderRefusal",
    "Supply",
    "anthropic_request",
    "default_key_name",
    "normalise_message",
    "supply_from_block",
]

ANTHROPIC_VERSION = "2023-06-01"


def _error_message(body: bytes) -> str:
    """The provider's own words from an error body, whichever shape it used."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return body[:300].decode("utf-8", "replace").strip()
    if isinstance(data, Mapping):
        err = data.get("error", data)
        if isinstance(err, Mapping):
            return str(err.get("message") or err.get("type") or "")[:300]
        if isinstance(err, str):
            return err[:300]
        return str(data.get("message") or data.get("detail") or "")[:300]
    return ""


def _status_verdict(status: int, message: str) -> str:
    lowered = message.lower()
    if status == 404 or (
        "model" in lowered
        and ("not found" in lowered or "does not exist" in lowered or "not exist" in lowered or "unknown" in lowered)
    ):
        return "not-found"
    return "provider-error"


class AnthropicStream:
    """Assembles an Anthropic Messages stream into the final message."""

    def __init__(self) -> None:
        self.message: dict[str, Any] = {}
        self.blocks: dict[int, dict[str, Any]] = {}
        self.partial: dict[int, str] = {}
        self.stopped = False

    def feed(self, data: Mapping[str, Any]) -> None:
        kind = data.get("type")
        if kind == "message_start":
            self.message = dict(data.get("message") or {})
            self.message.setdefault("usage", {})
        elif kind == "content_block_start":
            self.blocks[data["index"]] = dict(data.get("content_block") or {})
        elif kind == "content_block_delta":
            block = self.blocks.setdefault(data["index"], {"type": "text", "text": ""})
            delta = data.get("delta") or {}
            dtype = delta.get("type")
            if dtype == "text_delta":
                block["text"] = block.get("text", "") + delta.get("text", "")
            elif dtype == "input_json_delta":
                self.partial[data["index"]] = self.partial.get(data["index"], "") + delta.get("partial_json", "")
            elif dtype == "thinking_delta":
                block["thinking"] = block.get("thinking", "") + delta.get("thinking", "")
            elif dtype == "signature_delta":
                block["signature"] = block.get("signature", "") + delta.get("signature", "")
            elif dtype == "citations_delta":
                block.setdefault("citations", []).append(delta.get("citation"))
        elif kind == "content_block_stop":
            index = data["index"]
            if index in self.partial:
                raw = self.partial.pop(index)
                try:
                    self.blocks[index]["input"] = json.loads(raw) if raw.strip() else {}
                except ValueError:
                    self.blocks[index]["input"] = {"_unparsed_arguments": raw}
        elif kind == "message_delta":
            self.message.update({k: v for k, v in (data.get("delta") or {}).items()})
            usage = data.get("usage") or {}
            self.message.setdefault("usage", {}).update({k: v for k, v in usage.items() if v is not None})
        elif kind == "message_stop":
            self.stopped = True
        elif kind == "error":
            err = data.get("error") or {}
            raise ProviderError(
                f"the provider's stream broke off with an error: {err.get('message') or err.get('type') or 'unknown'}",
                verdict="provider-error",
            )

    def result(self) -> dict[str, Any]:
        if not self.stopped:
            raise ProviderError("the provider's stream ended before the reply was complete")
        for index, raw in self.partial.items():  # a block left open: keep what arrived
            try:
                self.blocks[index]["input"] = json.loads(raw) if raw.strip() else {}
            except ValueError:
                self.blocks[index]["input"] = {"_unparsed_arguments": raw}
        message = dict(self.message)
        message["content"] = [self.blocks[i] for i in sorted(self.blocks)]
        return normalise_message(message)


class ModelClient:
    """Calls one supply (and its second supply on a refusal).

    `timezone` is the step's zone for reset times in refusal lines;
    `on_line(text)` receives the lines a trace should show (refusals that move
    to the second supply, the translator's drop lines)."""

    def __init__(
        self,
        supply: Supply,
        http: httpx.Client | None = None,
        *,
        timezone: str | None = None,
        on_line: Callable[[str], None] | None = None,
        timeout: float = 300.0,
        allow_private: bool | None = None,
    ) -> None:
        self.supply = supply
        # The shared "model" client of foldrun.net: every connect checked on the address it goes to
        # (None: the install's policy, which the host passed in).
        self.http = http or net.client("model", allow_private=allow_private)
        # The shared client's 300 s is the longest a turn may take; a shorter `timeout` (the key probe's) goes
        # with each request. A caller's own client keeps its own.
        self._per_request = {} if http is not None else {"timeout": httpx.Timeout(timeout, connect=min(15.0, timeout))}
        # A shared client of foldrun.net: its own guarded pool, spoken to without httpx's client layer and
        # its stream decoders (GuardedTransport.plain), which cost a streamed answer more CPU than reading it.
        # Any other client (a caller's own, a test's mock) is used as it is.
        self._transport = net.transport_of(self.http)
        if self._transport is not None:
            spent = self._per_request.get("timeout") or self.http.timeout
            self._timeouts = (spent.read, spent.connect)
        # The step's zone (agent → flow → workspace → account); without one,
        # FOLDRUN_TIMEZONE, then UTC — see refusal.step_timezone.
        self.timezone = refusal_lines.step_timezone(timezone)
        self.on_line = on_line or (lambda line: None)
        self.timeout = timeout
        self.requests = 0
        self.last_supply: Supply | None = None
        self._uncached: set[int] = set()  # the supplies (by id) that refused cache_control once

    def close(self) -> None:
        """Nothing to close: the client is shared by the process (foldrun.net) or the caller's."""

    def __enter__(self) -> "ModelClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create(
        self,
        system: str | list | None,
        messages: list,
        tools: list | None,
        max_tokens: int,
        tool_choice: Mapping | None = None,
        **options: Any,
    ) -> dict[str, Any]:
        """One model turn. Returns an Anthropic Messages-shaped dict."""
        # The provider's own words go onto failure lines, traces and the key check's record; a
        # provider that echoes the key it was sent must not carry it there.
        try:
            return self._create(system, messages, tools, max_tokens, tool_choice, options)
        except ProviderRefusal as refused:
            raise ProviderRefusal(
                self._scrub(refused.line),
                status=refused.status,
                headers=refused.headers,
                provider_message=self._scrub(refused.provider_message),
            ) from None
        except ProviderError as failed:
            raise ProviderError(self._scrub(failed.message), status=failed.status, verdict=failed.verdict) from None

    def _scrub(self, text: str) -> str:
        supply: Supply | None = self.supply
        while supply is not None:
            if supply.key and len(supply.key) >= 4:
                text = text.replace(supply.key, f"[{supply.key_name or 'key'}]")
            supply = supply.fallback
        return text

    def _emit(self, line: str) -> None:
        self.on_line(self._scrub(line))

    def _create(self, system, messages, tools, max_tokens, tool_choice, options) -> dict[str, Any]:
        supply = self.supply
        try:
            return self._call(supply, system, messages, tools, max_tokens, tool_choice, options)
        except ProviderRefusal as first:
            if supply.fallback is None:
                raise ProviderRefusal(
                    self._line(first, refusal_lines.NO_SECOND),
                    status=first.status,
                    headers=first.headers,
                    provider_message=first.provider_message,
                ) from None
            self._emit(self._line(first, refusal_lines.TRYING_SECOND))
            try:
                return self._call(supply.fallback, system, messages, tools, max_tokens, tool_choice, options)
            except (ProviderRefusal, ProviderError):
                raise ProviderRefusal(
                    self._line(first, refusal_lines.SECOND_REFUSED),
                    status=first.status,
                    headers=first.headers,
                    provider_message=first.provider_message,
                ) from None
        except ProviderError as failed:
            # Failing at their end (a 5xx, no answer): the second supply is
            # worth the same try a refusal gets; a 4xx request error is not.
            if (
                supply.fallback is None
                or failed.verdict not in ("unreachable", "provider-error")
                or (failed.status is not None and failed.status < 500)
            ):
                raise
            self._emit(f"{failed.message} — trying the second supply")
            try:
                return self._call(supply.fallback, system, messages, tools, max_tokens, tool_choice, options)
            except (ProviderRefusal, ProviderError):
                raise ProviderError(
                    f"{failed.message} — the second supply failed too", status=failed.status, verdict=failed.verdict
                ) from None

    def _line(self, refused: ProviderRefusal, ending: str) -> str:
        return refusal_lines.refusal_line(refused.status, refused.headers, timezone=self.timezone, ending=ending)

    def _call(self, supply: Supply, system, messages, tools, max_tokens, tool_choice, options) -> dict[str, Any]:
        self.last_supply = supply
        stop_sequences = list(options.get("stop_sequences") or [])
        if supply.format == "anthropic":
            body = anthropic_request(supply, system, messages, tools, max_tokens, tool_choice, options)
            drops: list[str] = []
        elif supply.format == "responses":
            body, drops = translate.responses_request(supply, system, messages, tools, max_tokens, tool_choice, options)
        else:
            body, drops = translate.chat_request(supply, system, messages, tools, max_tokens, tool_choice, options)
        if drops:
            self._emit("translator dropped: " + "; ".join(drops))
        if supply.format == "anthropic" and id(supply) not in self._uncached:
            try:
                return self._send(supply, caching.mark(body), stop_sequences)
            except ProviderError as failed:
                if not caching.refuses_cache_control(failed.status, failed.message):
                    raise
                words = failed.message
            # Sent again without the field, once; the step's later requests to this supply carry none.
            self._uncached.add(id(supply))
            self._emit(
                f"the provider at {supply.host or supply.base_url} refused cache_control ({words}); "
                "the request was sent again without it, and this step's later requests carry none"
            )
            body = caching.unmark(body)
        return self._send(supply, body, stop_sequences)

    def _send(self, supply: Supply, body: dict[str, Any], stop_sequences: list[str]) -> dict[str, Any]:
        headers = {"content-type": "application/json", "accept": "text/event-stream", **supply.auth_headers()}
        if supply.format == "anthropic":
            headers["anthropic-version"] = ANTHROPIC_VERSION
        url = supply.endpoint()
        try:
            parsed = urlparse(url)
        except ValueError:  # `[zz]`, `[::1`: said as the guard says a host it cannot read
            raise ProviderError(f"base_url: {net.refusal(url)}", verdict="unreachable") from None
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ProviderError(f"base_url {supply.base_url!r} is not a URL", verdict="unreachable")
        self.requests += 1
        content = json.dumps(body).encode()
        try:
            transport = self._transport
            if transport is not None and not self.http.is_closed:
                read, connect = self._timeouts
                headers["user-agent"] = self.http.headers.get("user-agent", "")
                with transport.plain("POST", url, headers, content=content, timeout=read, connect=connect) as answer:
                    return self._answer(supply, answer, answer.headers, answer.raw_headers, stop_sequences)
            with self.http.stream("POST", url, headers=headers, content=content, **self._per_request) as response:
                return self._answer(supply, response, response.headers, response.headers.raw, stop_sequences)
        except (net.PrivateAddress, net.NoSuchHost, net.MalformedURL) as exc:
            raise ProviderError(f"base_url: {exc}", verdict="unreachable") from None
        except httpx.TimeoutException:
            raise ProviderError(
                f"the provider at {supply.host} did not answer in time", verdict="unreachable"
            ) from None
        except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ProviderError(
                f"the provider at {supply.host or supply.base_url} could not be reached: {net.describe(exc)}",
                verdict="unreachable",
            ) from None
        except httpx.HTTPError as exc:
            raise ProviderError(
                f"the connection to {supply.host} failed mid-answer: {net.describe(exc)}", verdict="provider-error"
            ) from None

    def _answer(
        self,
        supply: Supply,
        response: Any,
        headers: Mapping[str, str],
        raw_headers: list[tuple[bytes, bytes]],
        stop_sequences: list[str],
    ) -> dict[str, Any]:
        """An answer read, whichever path it came by: an httpx.Response or a GuardedTransport.plain answer
        (both have status_code, read() and iter_bytes(), decoded as content-encoding says)."""
        if response.status_code >= 400:
            raw = response.read()
            message = _error_message(raw)
            if response.status_code in refusal_lines.REFUSAL_STATUSES:
                raise ProviderRefusal(
                    "",
                    status=response.status_code,
                    headers=refusal_lines.keep_rate_limit_headers(httpx.Headers(raw_headers)),
                    provider_message=message,
                )
            raise ProviderError(
                f"the provider answered HTTP {response.status_code}: {message or 'no explanation given'}",
                status=response.status_code,
                verdict=_status_verdict(response.status_code, message),
            )
        if "text/event-stream" not in headers.get("content-type", ""):
            raw = response.read()
            try:
                data = json.loads(raw)
            except ValueError:
                raise ProviderError("the provider's answer was neither a stream nor JSON") from None
            return self._whole(supply, data, stop_sequences)
        return self._stream(supply, response, stop_sequences)

    def _whole(self, supply: Supply, data: Any, stop_sequences: list[str]) -> dict[str, Any]:
        try:
            return self._read_whole(supply, data, stop_sequences)
        except _SHAPE_ERRORS:
            raise ProviderError(_shape_sentence(supply)) from None

    def _read_whole(self, supply: Supply, data: Any, stop_sequences: list[str]) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            raise ProviderError("the provider's answer was not a JSON object")
        if data.get("error") and not data.get("choices") and not data.get("content") and not data.get("output"):
            err = data["error"]
            text = err.get("message") if isinstance(err, Mapping) else str(err)
            raise ProviderError(f"the provider answered with an error: {text}")
        if supply.format == "anthropic":
            return normalise_message(data)
        if supply.format == "responses":
            return translate.responses_to_anthropic(data)
        return translate.chat_to_anthropic(data, stop_sequences)

    def _stream(self, supply: Supply, response: Any, stop_sequences: list[str]) -> dict[str, Any]:
        try:
            return self._read_stream(supply, response, stop_sequences)
        except _SHAPE_ERRORS:
            raise ProviderError(_shape_sentence(supply)) from None

    def _read_stream(self, supply: Supply, response: Any, stop_sequences: list[str]) -> dict[str, Any]:
        chunks = iter(response.iter_bytes())  # decoded as content-encoding says; SSE is cut on these bytes
        if supply.format == "anthropic":
            acc: Any = AnthropicStream()
        elif supply.format == "responses":
            acc = translate.ResponsesStream()
        else:
            acc = translate.ChatStream(stop_sequences)
        feed, loads = acc.feed, json.loads
        for name, text in iter_byte_events(chunks):
            try:
                data = loads(text)
            except ValueError:
                if text.strip() == "[DONE]":
                    self._finish(response, chunks)
                    break
                raise ProviderError("the provider's stream could not be read (an event was not JSON)") from None
            if type(data) is not dict and not isinstance(data, Mapping):
                raise ProviderError("the provider's stream could not be read (an event was not an object)")
            if name and "type" not in data:
                data = {**data, "type": name}
            feed(data)
        return acc.result()

    @staticmethod
    def _finish(response: Any, chunks: Iterator[bytes]) -> None:
        """After Chat Completions' last event ([DONE]) the body's end follows at once: read it, as OpenAI's own
        SDK does, so the kept-alive connection goes back to the pool for the next call instead of being closed
        with the body unread (a new TCP connection a call). Within _DRAIN_SECONDS, though: a server that holds
        the stream open after [DONE] costs that long, not a read timeout's 300 s. Only on the pool's own
        path (GuardedTransport.plain), which can bound it; a caller's own client closes as it did."""
        shorten = getattr(response, "shorten", None)
        if shorten is None:
            return
        shorten(_DRAIN_SECONDS)
        try:
            for _ in chunks:
                pass
        except httpx.HTTPError:  # the reply is whole: a body that breaks or lingers after it does not unmake it
            pass


_DRAIN_SECONDS = 0.5


# What an event of valid JSON but the wrong shape raises while it is read (a
# field missing, a string where an object belongs). The provider's answer is
# outside input: it becomes a ProviderError sentence, never a crash that
# fails a run with a Python error name or stops an account's key check.
_SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError)


def _shape_sentence(supply: Supply) -> str:
    wire = {"anthropic": "Anthropic Messages", "openai": "Chat Completions", "responses": "Responses"}[supply.format]
    return f"the provider's answer could not be read (it is not shaped as the {wire} wire documents)"


def anthropic_request(
    supply: Supply, system, messages, tools, max_tokens, tool_choice, options: Mapping[str, Any]
) -> dict[str, Any]:
    """The body for an Anthropic-shaped endpoint. `params:` never reach it
    (the file warns); `top_k` is never sent, since newer models refuse it."""
    body: dict[str, Any] = {"model": supply.model, "max_tokens": max_tokens, "messages": messages, "stream": True}
    if system:
        body["system"] = system
    if tools:
        body["tools"] = tools
        if tool_choice:
            body["tool_choice"] = tool_choice
    for key in ("temperature", "top_p", "stop_sequences", "thinking", "metadata"):
        if options.get(key) is not None:
            body[key] = options[key]
    if options.get("plugins") and supply.name == "openrouter":  # OpenRouter's own field (its web plugin)
        body["plugins"] = [dict(p) for p in options["plugins"]]
    return body
