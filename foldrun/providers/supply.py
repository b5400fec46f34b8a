"""What a `provider:` block resolves to: a Supply (endpoint, key, model), the
errors a model call can end in, and the Anthropic message shape both the client
and the translator read. Below the client and the translator (both import it).

Nothing here logs or returns a key: the key lives on the Supply, whose repr hides it.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from foldrun.contract import presets
from foldrun.contract.placeholders import PLACEHOLDER

FORMATS = ("anthropic", "openai", "responses")


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

    def __init__(
        self, line: str, *, status: int, headers: Mapping[str, str] | None = None, provider_message: str = ""
    ) -> None:
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
    """The preset row for `name`, or None."""
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
    try:
        return list(presets.closest_presets(name))[:3]
    except Exception:  # a suggestion must never hide the real error
        return []


def default_key_name(name: str | None) -> str:
    """The vault name a short-form block reads: `openrouter` → OPENROUTER_API_KEY."""
    return re.sub(r"[^A-Z0-9]+", "_", (name or "MODEL").upper()).strip("_") + "_API_KEY"


def _is_local(url: str) -> bool:
    return (urlparse(url).hostname or "") in {"localhost", "127.0.0.1", "::1"}


def supply_from_block(
    block: str | Mapping, resolve_secret: Callable[[str], str | None], *, default_model: str | None = None
) -> Supply:
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
        raise ProviderConfigError(
            "provider: params: must be a mapping of request fields, e.g. params: {temperature: 0.2}"
        )
    raw_models = block.get("models")
    if raw_models is not None and (
        not isinstance(raw_models, (list, Mapping)) or not all(isinstance(m, str) for m in raw_models)
    ):
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
    key_header = (
        block.get("key_header") or _field(preset, "key_header") or ("x-api-key" if fmt == "anthropic" else "bearer")
    )
    key_ref = block.get("key")
    if key_ref is not None:
        match = PLACEHOLDER.fullmatch(str(key_ref).strip())
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
        name=name,
        format=fmt,
        base_url=base_url,
        model=model,
        key=key,
        key_header=key_header,
        params=params,
        key_name=key_name,
        models=models,
        fallback=supply_from_block(fallback, resolve_secret, default_model=model) if fallback else None,
    )


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
