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
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import httpx

from foldrun import net
from foldrun.providers import refusal as refusal_lines
from foldrun.providers.sse import iter_events

FORMATS = ("anthropic", "openai", "responses")
ANTHROPIC_VERSION = "2023-06-01"
_REFERENCE = re.compile(r"^\$\{([A-Z][A-Z0-9_]*)\}$")


class ProviderConfigError(ValueError):
    """A provider block that cannot be turned into a supply; the message is the sentence."""


class MissingSecret(ProviderConfigError):
    def __init__(self, name: str) -> None:
        super().__init__(f"the provider key {name} is not in the vault")
        self.name = name


class ProviderError(Exception):
    """A failed model call that is not a refusal. `verdict` is the daily key
    probe's word for it: not-found, unreachable or provider-error."""

    def __init__(self, message: str, *, status: int | None = None, verdict: str = "provider-error") -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.verdict = verdict


class ProviderRefusal(Exception):
    """401/402/403/429. `line` is the spec's sentence (with its ending),
    `status` the HTTP status, `headers` only the allow-listed rate-limit ones."""

    def __init__(self, line: str, *, status: int, headers: Mapping[str, str] | None = None,
                 provider_message: str = "") -> None:
        super().__init__(line)
        self.line = line
        self.status = status
        self.headers = dict(headers or {})
        self.provider_message = provider_message

    @property
    def verdict(self) -> str:
        return "busy" if self.status == 429 else "credential"


@dataclass
class Supply:
    """One endpoint, one key, one model. `key` is the value (never printed);
    `key_name` is the vault name it came from, for traces and grouping."""

    name: str | None
    format: str
    base_url: str
    model: str | None
    key: str | None = field(default=None, repr=False)
    key_header: str = "x-api-key"
    params: dict = field(default_factory=dict)
    fallback: "Supply | None" = None
    key_name: str | None = None
    models: list[str] = field(default_factory=list)

    @property
    def host(self) -> str:
        return urlparse(self.base_url).hostname or ""

    def endpoint(self) -> str:
        """The URL a call goes to. Anthropic bases are the host root (the
        preset table's convention); OpenAI-shaped bases already end in /v1."""
        base = self.base_url.rstrip("/")
        if self.format == "anthropic":
            # The table's bases are host roots; a base written with /v1 already means the same.
            return base + ("/messages" if base.endswith("/v1") else "/v1/messages")
        if self.format == "responses":
            return base + "/responses"
        return base + "/chat/completions"

    def auth_headers(self) -> dict[str, str]:
        if not self.key:
            return {}
        if self.key_header == "bearer":
            return {"Authorization": f"Bearer {self.key}"}
        return {self.key_header: self.key}


def _preset(name: str):
    """The preset row for `name`, or None. Imported late: the table is its own module."""
    from foldrun.providers import presets

    try:
        return presets.get_preset(name)
    except (KeyError, LookupError):
        return None


def _field(row: Any, name: str, default: Any = None) -> Any:
    if row is None:
        return default
    if isinstance(row, Mapping):
        return row.get(name, default)
    return getattr(row, name, default)


def _closest(name: str) -> list[str]:
    from foldrun.providers import presets

    try:
        return list(presets.closest_presets(name))[:3]
    except Exception:  # a suggestion must never hide the real error
        return []


def default_key_name(name: str | None) -> str:
    """The vault name a short-form block reads: `openrouter` → OPENROUTER_API_KEY."""
    return re.sub(r"[^A-Z0-9]+", "_", (name or "MODEL").upper()).strip("_") + "_API_KEY"


def _is_local(url: str) -> bool:
    return (urlparse(url).hostname or "") in {"localhost", "127.0.0.1", "::1"}


def supply_from_block(block: str | Mapping, resolve_secret: Callable[[str], str | None], *,
                      default_model: str | None = None) -> Supply:
    """Resolve a `provider:` block (a preset name alone, or the long form with
    `key: ${NAME}`, `base_url`, `format`, `model`/`models`, `params`,
    `fallback`) into a Supply. `resolve_secret(NAME)` returns the value or None.
    Raises ProviderConfigError (MissingSecret for an absent key) with a sentence."""
    if isinstance(block, str):
        block = {"name": block}
    if not isinstance(block, Mapping):
        raise ProviderConfigError("provider: must be a preset name or a block with name:, key:, base_url:")
    # A block is user-written YAML: a wrong type is a sentence naming the field, never a TypeError
    # (which would fail a whole account's key check, or a run, with no word on which file said what).
    name = block.get("name")
    if name is not None and not isinstance(name, str):
        raise ProviderConfigError("provider: name: must be a preset's name as text, e.g. anthropic")
    for key in ("base_url", "format", "model"):
        if block.get(key) is not None and not isinstance(block.get(key), str):
            raise ProviderConfigError(f"provider: {key}: must be text")
    if block.get("params") is not None and not isinstance(block.get("params"), Mapping):
        raise ProviderConfigError("provider: params: must be a mapping of request fields, e.g. params: {temperature: 0.2}")
    raw_models = block.get("models")
    if raw_models is not None and (not isinstance(raw_models, (list, Mapping))
                                   or not all(isinstance(m, str) for m in raw_models)):
        raise ProviderConfigError("provider: models: must be a list of model ids, e.g. models: [claude-sonnet-4-5]")
    if block.get("key_header") is not None and block.get("key_header") not in ("x-api-key", "bearer"):
        raise ProviderConfigError("provider: key_header: must be x-api-key or bearer")
    preset = _preset(name) if name else None
    if name and preset is None and not block.get("base_url"):
        near = _closest(name)
        hint = f" — did you mean {', '.join(near)}?" if near else ""
        raise ProviderConfigError(f"provider: unknown name '{name}'{hint}")
    fmt = block.get("format") or _field(preset, "format") or "anthropic"
    if fmt not in FORMATS:
        raise ProviderConfigError(f"provider: format must be one of anthropic, openai, responses, not '{fmt}'")
    base_url = block.get("base_url") or _field(preset, "base_url") or ""
    if not base_url or base_url.startswith("("):
        raise ProviderConfigError(f"provider: '{name}' has no fixed address — set base_url:")
    key_header = block.get("key_header") or _field(preset, "key_header") or (
        "x-api-key" if fmt == "anthropic" else "bearer")
    key_ref = block.get("key")
    if key_ref is not None:
        match = _REFERENCE.match(str(key_ref).strip())
        if not match:
            raise ProviderConfigError("provider: key: must be a reference like ${MY_KEY}, never the key itself")
        key_name = match.group(1)
    else:
        key_name = default_key_name(name)
    key = resolve_secret(key_name)
    if key is None and (key_ref is not None or not _is_local(base_url)):
        raise MissingSecret(key_name)
    models = list(block.get("models") or [])
    model = block.get("model") or (models[0] if models else None) or default_model
    params = dict(block.get("params") or {})
    fallback = block.get("fallback")
    return Supply(
        name=name, format=fmt, base_url=base_url, model=model, key=key, key_header=key_header,
        params=params, key_name=key_name, models=models,
        fallback=supply_from_block(fallback, resolve_secret, default_model=model) if fallback else None,
    )


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
    if status == 404 or ("model" in lowered and ("not found" in lowered or "does not exist" in lowered
                                                 or "not exist" in lowered or "unknown" in lowered)):
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
                verdict="provider-error")

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


def normalise_message(message: Mapping[str, Any]) -> dict[str, Any]:
    """Every reply, whatever the wire, leaves with the same keys."""
    usage = dict(message.get("usage") or {})
    usage.setdefault("input_tokens", 0)
    usage.setdefault("output_tokens", 0)
    return {
        "id": message.get("id") or f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": message.get("model") or "",
        "content": list(message.get("content") or []),
        "stop_reason": message.get("stop_reason") or "end_turn",
        "stop_sequence": message.get("stop_sequence"),
        "usage": usage,
    }


class ModelClient:
    """Calls one supply (and its second supply on a refusal).

    `timezone` is the step's zone for reset times in refusal lines;
    `on_line(text)` receives the lines a trace should show (refusals that move
    to the second supply, the translator's drop lines)."""

    def __init__(self, supply: Supply, http: httpx.Client | None = None, *, timezone: str | None = None,
                 on_line: Callable[[str], None] | None = None, timeout: float = 300.0,
                 allow_private: bool | None = None) -> None:
        self.supply = supply
        # The shared "model" client of foldrun.net: every connect checked on the address it goes to
        # (None: the install's policy, which the host passed in).
        self.http = http or net.client("model", allow_private=allow_private)
        # The shared client's 300 s is the longest a turn may take; a shorter `timeout` (the key probe's) goes
        # with each request. A caller's own client keeps its own.
        self._per_request = {} if http is not None else {"timeout": httpx.Timeout(timeout, connect=min(15.0, timeout))}
        # The step's zone (agent → flow → workspace → account); without one,
        # FOLDRUN_TIMEZONE, then UTC — see refusal.step_timezone.
        self.timezone = refusal_lines.step_timezone(timezone)
        self.on_line = on_line or (lambda line: None)
        self.timeout = timeout
        self.requests = 0
        self.last_supply: Supply | None = None

    def close(self) -> None:
        """Nothing to close: the client is shared by the process (foldrun.net) or the caller's."""

    def __enter__(self) -> "ModelClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create(self, system: str | list | None, messages: list, tools: list | None, max_tokens: int,
               tool_choice: Mapping | None = None, **options: Any) -> dict[str, Any]:
        """One model turn. Returns an Anthropic Messages-shaped dict."""
        # The provider's own words go onto failure lines, traces and the key check's record; a
        # provider that echoes the key it was sent must not carry it there.
        try:
            return self._create(system, messages, tools, max_tokens, tool_choice, options)
        except ProviderRefusal as refused:
            raise ProviderRefusal(self._scrub(refused.line), status=refused.status, headers=refused.headers,
                                  provider_message=self._scrub(refused.provider_message)) from None
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
                    self._line(first, refusal_lines.NO_SECOND), status=first.status,
                    headers=first.headers, provider_message=first.provider_message) from None
            self._emit(self._line(first, refusal_lines.TRYING_SECOND))
            try:
                return self._call(supply.fallback, system, messages, tools, max_tokens, tool_choice, options)
            except (ProviderRefusal, ProviderError):
                raise ProviderRefusal(
                    self._line(first, refusal_lines.SECOND_REFUSED), status=first.status,
                    headers=first.headers, provider_message=first.provider_message) from None
        except ProviderError as failed:
            # Failing at their end (a 5xx, no answer): the second supply is
            # worth the same try a refusal gets; a 4xx request error is not.
            if supply.fallback is None or failed.verdict not in ("unreachable", "provider-error") \
                    or (failed.status is not None and failed.status < 500):
                raise
            self._emit(f"{failed.message} — trying the second supply")
            try:
                return self._call(supply.fallback, system, messages, tools, max_tokens, tool_choice, options)
            except (ProviderRefusal, ProviderError):
                raise ProviderError(f"{failed.message} — the second supply failed too", status=failed.status,
                                    verdict=failed.verdict) from None

    def _line(self, refused: ProviderRefusal, ending: str) -> str:
        return refusal_lines.refusal_line(refused.status, refused.headers, timezone=self.timezone, ending=ending)

    def _call(self, supply: Supply, system, messages, tools, max_tokens, tool_choice, options) -> dict[str, Any]:
        from foldrun.providers import translate

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
        headers = {"content-type": "application/json", "accept": "text/event-stream", **supply.auth_headers()}
        if supply.format == "anthropic":
            headers["anthropic-version"] = ANTHROPIC_VERSION
        url = supply.endpoint()
        parsed = urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.hostname:
            raise ProviderError(f"base_url {supply.base_url!r} is not a URL", verdict="unreachable")
        self.requests += 1
        try:
            with self.http.stream("POST", url, headers=headers, content=json.dumps(body).encode(),
                                  **self._per_request) as response:
                if response.status_code >= 400:
                    raw = response.read()
                    message = _error_message(raw)
                    if response.status_code in refusal_lines.REFUSAL_STATUSES:
                        raise ProviderRefusal(
                            "", status=response.status_code,
                            headers=refusal_lines.keep_rate_limit_headers(response.headers),
                            provider_message=message)
                    raise ProviderError(
                        f"the provider answered HTTP {response.status_code}: {message or 'no explanation given'}",
                        status=response.status_code, verdict=_status_verdict(response.status_code, message))
                content_type = response.headers.get("content-type", "")
                if "text/event-stream" not in content_type:
                    raw = response.read()
                    try:
                        data = json.loads(raw)
                    except ValueError:
                        raise ProviderError("the provider's answer was neither a stream nor JSON") from None
                    return self._whole(supply, data, stop_sequences)
                return self._stream(supply, response, stop_sequences)
        except (net.PrivateAddress, net.NoSuchHost) as exc:
            raise ProviderError(f"base_url: {exc}", verdict="unreachable") from None
        except httpx.TimeoutException:
            raise ProviderError(f"the provider at {supply.host} did not answer in time",
                                verdict="unreachable") from None
        except (httpx.ConnectError, httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
            raise ProviderError(f"the provider at {supply.host or supply.base_url} could not be reached ({type(exc).__name__})",
                                verdict="unreachable") from None
        except httpx.HTTPError as exc:
            raise ProviderError(f"the connection to {supply.host} failed mid-answer ({type(exc).__name__})",
                                verdict="provider-error") from None

    def _whole(self, supply: Supply, data: Any, stop_sequences: list[str]) -> dict[str, Any]:
        try:
            return self._read_whole(supply, data, stop_sequences)
        except _SHAPE_ERRORS:
            raise ProviderError(_shape_sentence(supply)) from None

    def _read_whole(self, supply: Supply, data: Any, stop_sequences: list[str]) -> dict[str, Any]:
        from foldrun.providers import translate

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

    def _stream(self, supply: Supply, response: httpx.Response, stop_sequences: list[str]) -> dict[str, Any]:
        try:
            return self._read_stream(supply, response, stop_sequences)
        except _SHAPE_ERRORS:
            raise ProviderError(_shape_sentence(supply)) from None

    def _read_stream(self, supply: Supply, response: httpx.Response, stop_sequences: list[str]) -> dict[str, Any]:
        from foldrun.providers import translate

        if supply.format == "anthropic":
            acc: Any = AnthropicStream()
        elif supply.format == "responses":
            acc = translate.ResponsesStream()
        else:
            acc = translate.ChatStream(stop_sequences)
        for event in iter_events(response.iter_lines()):
            if event.data.strip() == "[DONE]":
                break
            try:
                data = json.loads(event.data)
            except ValueError:
                raise ProviderError("the provider's stream could not be read (an event was not JSON)") from None
            if not isinstance(data, Mapping):
                raise ProviderError("the provider's stream could not be read (an event was not an object)")
            if event.event and "type" not in data:
                data = {**data, "type": event.event}
            acc.feed(data)
        return acc.result()


# What an event of valid JSON but the wrong shape raises while it is read (a
# field missing, a string where an object belongs). The provider's answer is
# outside input: it becomes a ProviderError sentence, never a crash that
# fails a run with a Python error name or stops an account's key check.
_SHAPE_ERRORS = (KeyError, TypeError, ValueError, AttributeError, IndexError)


def _shape_sentence(supply: Supply) -> str:
    wire = {"anthropic": "Anthropic Messages", "openai": "Chat Completions", "responses": "Responses"}[supply.format]
    return f"the provider's answer could not be read (it is not shaped as the {wire} wire documents)"


def anthropic_request(supply: Supply, system, messages, tools, max_tokens, tool_choice,
                      options: Mapping[str, Any]) -> dict[str, Any]:
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
