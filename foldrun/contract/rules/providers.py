"""`provider:` blocks: the check rules (spec/providers.md, DESIGN "Providers").

A block may sit in AGENTS.md, an agent or a flow. Two spellings, as
`web.search:` also takes:

    provider: anthropic                                   # a preset name
    provider: {name: anthropic, model: claude-sonnet-4-5}
    provider:                                             # the long form
      name: openai
      key: ${OPENAI_KEY}         # a reference to a vault secret, never a value
      base_url: https://…        # required where the preset has no fixed address
      format: responses          # anthropic | openai | responses
      models: [gpt-5-mini]
      params: {temperature: 0.2} # reaches only openai-/responses-format endpoints
      fallback: {name: openrouter, key: ${OPENROUTER_API_KEY}}   # a second supply

Rules read the raw frontmatter dicts, so they do not depend on any model of
the agent or flow. Messages never repeat a value written where a secret
reference belongs: it may be the credential itself.

This module also holds the small helpers the `web:` rules share (where a
nested key sits in the file, secret references and names, "did you mean").
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Iterable, Iterator
from urllib.parse import urlparse

import yaml

from ..presets import FORMATS, KEY_HEADERS, PRESET_NAMES, Preset, closest_presets, find_preset

from ..check import Context, rule
from ..desk import AGENT, AGENTS_MD, FLOW, Desk, Document
from ..findings import Finding

BLOCK_KINDS = (AGENTS_MD, AGENT, FLOW)

# A vault secret's name, and a reference to one. The vault's names are
# environment-variable shaped and upper-case (as notify's rules read them).
SECRET_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
SECRET_REF_RE = re.compile(r"^\$\{([A-Z][A-Z0-9_]{0,63})\}$")
# Only a value shaped like a vault name (words joined by underscores) is ever
# repeated in a message; anything else may be the credential itself.
_SAFE_TO_SHOW_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")

# Presets whose own address also serves the Responses API (providers.md, "Chat Completions vs Responses").
RESPONSES_PRESETS = frozenset({"openai", "xai", "groq", "nebius", "cloudflare"})

PROVIDER_KEYS = ("name", "model", "key", "base_url", "format", "models", "params", "fallback", "key_header")

# Names people reach for that the table leaves out on purpose, with the spec's reason.
NOT_PRESETS = {
    "perplexity": (
        "Perplexity was removed on 2026-09-06: its Sonar chat route sunsets on 2026-09-27 and the "
        "successor Agent API is not Chat-Completions-shaped, so there is nothing to spell out for it"
    ),
    "vertex": "Vertex AI puts the model in the URL, so a base URL alone cannot reach it",
    "bedrock": "Bedrock's legacy InvokeModel streams AWS events, not SSE",
    "github": "GitHub Models retired on 2026-07-30",
    "assistants": "OpenAI's Assistants API sunset on 2026-08-26 and was never targeted",
}
_NOT_PRESET_SPELLINGS = {
    "perplexity": "perplexity",
    "vertex": "vertex",
    "vertex-ai": "vertex",
    "vertexai": "vertex",
    "google-vertex": "vertex",
    "bedrock": "bedrock",
    "aws-bedrock": "bedrock",
    "amazon-bedrock": "bedrock",
    "github": "github",
    "github-models": "github",
    "assistants": "assistants",
    "openai-assistants": "assistants",
}


# ---------------------------------------------------------------- shared helpers


def closest(word: Any, choices: Iterable[str], limit: int = 3) -> list[str]:
    """Choices that look like `word`, nearest first."""
    return difflib.get_close_matches(str(word).strip().lower(), list(choices), n=limit, cutoff=0.6)


def did_you_mean(word: Any, choices: Iterable[str]) -> str:
    """'; did you mean x?' naming the one closest choice, or '.' when nothing is close."""
    near = closest(word, choices, limit=1)
    return f"; did you mean {near[0]}?" if near else "."


def one_of(choices: Iterable[str]) -> str:
    items = list(choices)
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def shown(value: Any, limit: int = 40) -> str:
    """A value quoted for a message, cut short. Never call it on a credential."""
    text = str(value)
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def is_secret_name(value: Any) -> bool:
    return isinstance(value, str) and bool(SECRET_NAME_RE.match(value))


def reference_name(value: Any) -> str | None:
    """NAME for a `${NAME}` reference, else None."""
    if not isinstance(value, str):
        return None
    match = SECRET_REF_RE.match(value.strip())
    return match.group(1) if match else None


def key_reference_problem(value: Any, where: str) -> str | None:
    """The sentence for a `key:` that is not a `${NAME}` reference, or None.

    The value is repeated only when it is shaped like a vault name (then the fix
    is spelled out); anything else may be the key itself and is never echoed.
    """
    if reference_name(value):
        return None
    if isinstance(value, str) and _SAFE_TO_SHOW_RE.match(value.strip()):
        name = value.strip()
        return f"{where} names the vault secret {name} without marking it as a reference; write key: ${{{name}}}."
    return (
        f"{where} is not a reference: key: takes ${{NAME}}, the name of a vault secret, never a value — "
        "a credential written into the file is refused. Store it with `foldrun secrets set NAME` and write key: ${NAME}."
    )


def secret_name_problem(value: Any, where: str, example: str) -> str | None:
    """The sentence for a setting that must hold a secret's NAME, or None.

    `${NAME}` is accepted (it names the secret just as well). The value itself
    is never repeated: a cookie line or a proxy URL pasted here is a credential.
    """
    if is_secret_name(value) or reference_name(value):
        return None
    return (
        f"{where} must be the NAME of a vault secret (capitals, digits and underscores, like {example}), "
        f"never the value; store the value with `foldrun secrets set {example}` and write {where.rsplit('.', 1)[-1]}: {example}."
    )


class Locator:
    """File lines of nested frontmatter keys, e.g. ("web", "browse", "engine").

    The frontmatter is composed once more with PyYAML to read node marks, so a
    finding points at the line a person sees. A key that cannot be found falls
    back to its nearest ancestor, then to the top-level key's line.
    """

    def __init__(self, document: Document) -> None:
        self.document = document
        self._root: yaml.Node | None | bool = False

    def _compose(self) -> yaml.Node | None:
        if self._root is False:
            root = None
            parsed = self.document.parsed
            if parsed is not None and parsed.has_frontmatter:
                text = self.document.text[1:] if self.document.text.startswith("\ufeff") else self.document.text
                lines = text.split("\n")
                source = "\n".join(lines[1 : parsed.body_line - 2])
                try:
                    root = yaml.compose(source, Loader=yaml.SafeLoader)
                except yaml.YAMLError:
                    root = None
            self._root = root
        return self._root  # type: ignore[return-value]

    def line(self, *path: Any) -> int | None:
        node = self._compose()
        found: int | None = self.document.line_of(str(path[0])) if path else None
        for part in path:
            if isinstance(node, yaml.MappingNode):
                for key_node, value_node in node.value:
                    if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(part):
                        found = key_node.start_mark.line + 2
                        node = value_node
                        break
                else:
                    return found
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
                found = node.start_mark.line + 2
            else:
                return found
        return found


def block_documents(desk: Desk) -> Iterator[Document]:
    """AGENTS.md, agents and flows whose frontmatter parsed."""
    for kind in BLOCK_KINDS:
        for document in desk.of_kind(kind):
            if document.parsed is not None and document.error is None:
                yield document


def provider_name_of(block: Any) -> str | None:
    if isinstance(block, str):
        return block.strip()
    if isinstance(block, dict) and isinstance(block.get("name"), str):
        return block["name"].strip()
    return None


def effective_provider_name(desk: Desk, document: Document) -> str | None:
    """The provider an agent runs on as far as the desk says: its own block,
    else the workspace's AGENTS.md. None when neither names one (the account's
    library may, which a desk cannot see)."""
    if "provider" in document.meta:
        return provider_name_of(document.meta["provider"])
    if document.kind == AGENT:
        for agents_md in desk.of_kind(AGENTS_MD):
            if "provider" in agents_md.meta:
                return provider_name_of(agents_md.meta["provider"])
    return None


# ---------------------------------------------------------------- the rules


class Emitter:
    """Collects findings for one document with the lines of their keys."""

    def __init__(self, document: Document) -> None:
        self.document = document
        self.locator = Locator(document)
        self.findings: list[Finding] = []

    def __call__(self, path: tuple, level: str, message: str, code: str) -> None:
        self.findings.append(Finding(self.document.path, self.locator.line(*path), level, message, code))


def _dotted(path: tuple) -> str:
    return ".".join(str(part) for part in path)


def _is_url(value: Any) -> bool:
    if not isinstance(value, str) or any(ch.isspace() for ch in value.strip()):
        return False
    parsed = urlparse(value.strip())
    return parsed.scheme in ("http", "https") and bool(parsed.hostname)


def _check_block(block: Any, path: tuple, emit: Emitter, *, primary: dict | None = None) -> None:
    where = _dotted(path)
    if isinstance(block, str):
        block = {"name": block}
    if not isinstance(block, dict):
        emit(
            path,
            "error",
            f"{where} must be a provider name (provider: anthropic) or a block with name:, model: and key: ${{NAME}}.",
            "provider.shape",
        )
        return

    for key in block:
        if str(key) not in PROVIDER_KEYS:
            emit(
                path + (key,),
                "error",
                f"{where}.{key} is not a provider key{did_you_mean(key, PROVIDER_KEYS)} "
                f"The keys are {', '.join(k for k in PROVIDER_KEYS if k != 'key_header')}.",
                "provider.unknown_key",
            )

    preset: Preset | None = None
    name = block.get("name")
    base_url = block.get("base_url")
    if name is None:
        emit(
            path,
            "error",
            f"{where} has no name:; name the provider, e.g. name: anthropic (the 29 names are in providers.md).",
            "provider.name_missing",
        )
    elif not isinstance(name, str) or not name.strip():
        emit(
            path + ("name",),
            "error",
            f"{where}.name must be a provider's name as text, e.g. anthropic.",
            "provider.name_missing",
        )
    else:
        name = name.strip()
        preset = find_preset(name)
        lowered = name.lower()
        if preset is None and lowered in _NOT_PRESET_SPELLINGS:
            reason = NOT_PRESETS[_NOT_PRESET_SPELLINGS[lowered]]
            emit(
                path + ("name",),
                "error",
                f"{where}.name: {name} is not a provider foldrun can reach: {reason}.",
                "provider.not_offered",
            )
        elif preset is None:
            near = closest_presets(name)
            hint = (
                f"the closest {'name is' if len(near) == 1 else 'names are'} {', '.join(near)}"
                if near
                else f"the names it knows are {', '.join(PRESET_NAMES)}"
            )
            if base_url is None:
                emit(
                    path + ("name",),
                    "error",
                    f"{where}.name: {shown(name)} is not a provider foldrun knows; {hint}.",
                    "provider.unknown_name",
                )
            else:
                fmt = block.get("format") if block.get("format") in FORMATS else "anthropic"
                emit(
                    path + ("name",),
                    "warning",
                    f"{where}.name: {shown(name)} is not a preset, so foldrun speaks {fmt} to its base_url with no preset's knowledge of it; {hint}.",
                    "provider.unknown_name",
                )

    if "key" in block:
        problem = key_reference_problem(block["key"], f"{where}.key")
        if problem:
            emit(path + ("key",), "error", problem, "provider.key_not_reference")

    if base_url is not None:
        if not _is_url(base_url):
            emit(
                path + ("base_url",),
                "error",
                f"{where}.base_url is not a URL; give the endpoint's address, e.g. https://api.anthropic.com.",
                "provider.base_url",
            )
        elif urlparse(base_url.strip()).password or urlparse(base_url.strip()).username:
            emit(
                path + ("base_url",),
                "error",
                f"{where}.base_url carries a user name or password; put the credential in the vault and write key: ${{NAME}}.",
                "provider.base_url",
            )
    elif preset is not None and preset.needs_base_url:
        emit(
            path,
            "error",
            f"{where}: {preset.name} has no fixed address ({_per(preset)}); set base_url: — {preset.note}",
            "provider.base_url_required",
        )

    fmt = block.get("format")
    if fmt is not None and fmt not in FORMATS:
        emit(
            path + ("format",),
            "error",
            f"{where}.format: {shown(fmt)} is not a format; use anthropic, openai or responses.",
            "provider.format",
        )
    effective_format = fmt if fmt in FORMATS else (preset.format if preset else "anthropic")
    if preset is not None and preset.name == "xai" and fmt == "anthropic" and base_url is None:
        emit(
            path + ("format",),
            "error",
            f"{where}.format: xAI documents no Anthropic-shaped route, so xAI is reached as openai; drop format: anthropic.",
            "provider.format",
        )
    elif (
        preset is not None
        and not preset.needs_base_url
        and fmt in FORMATS
        and fmt != preset.format
        and base_url is None
        and not (fmt == "responses" and preset.name in RESPONSES_PRESETS)
    ):
        emit(
            path + ("format",),
            "warning",
            f"{where}.format: {fmt} is not what {preset.name}'s address speaks ({preset.format}), and no base_url: says where its {fmt} route is; "
            + (
                "the Responses API is offered by OpenAI, and xAI, Groq, Nebius, Cloudflare in various states of beta; "
                if fmt == "responses"
                else ""
            )
            + "set base_url: to that route or drop format:.",
            "provider.format_without_base_url",
        )

    if "key_header" in block and block["key_header"] not in KEY_HEADERS:
        emit(path + ("key_header",), "error", f"{where}.key_header must be x-api-key or bearer.", "provider.key_header")

    if "model" in block and (not isinstance(block["model"], str) or not block["model"].strip()):
        emit(
            path + ("model",),
            "error",
            f"{where}.model must be a model id as text, e.g. claude-sonnet-4-5.",
            "provider.model",
        )

    if "models" in block:
        models = block["models"]
        ok = (isinstance(models, list) and models and all(isinstance(m, str) and m.strip() for m in models)) or (
            isinstance(models, dict)
            and models
            and all(isinstance(k, str) and isinstance(v, str) for k, v in models.items())
        )
        if not ok:
            emit(
                path + ("models",),
                "error",
                f"{where}.models must be a list of model ids, e.g. models: [claude-sonnet-4-5].",
                "provider.models",
            )

    if "params" in block:
        params = block["params"]
        if not isinstance(params, dict):
            emit(
                path + ("params",),
                "error",
                f"{where}.params must be a mapping of request fields, e.g. params: {{temperature: 0.2}}.",
                "provider.params",
            )
        elif effective_format == "anthropic":
            emit(
                path + ("params",),
                "warning",
                f"{where}.params reaches only openai- and responses-format endpoints, where the translator builds the request; "
                "this one is anthropic-shaped and spoken to directly by the SDK, so set its knobs at the provider (an OpenRouter preset, say).",
                "provider.params_anthropic",
            )

    if preset is not None and not preset.verified:
        model = block.get("model") if isinstance(block.get("model"), str) else "<model>"
        emit(
            path + ("name",),
            "warning",
            f"{where}.name: {preset.name} is documented, not proven — nobody here has watched an agent complete a run against it; "
            f"run `foldrun probe {model}` before a flow depends on one.",
            "provider.unverified",
        )

    if "fallback" in block:
        fallback = block["fallback"]
        if fallback is None or not isinstance(fallback, (str, dict)):
            emit(
                path + ("fallback",),
                "error",
                f"{where}.fallback must be a second provider block, e.g. fallback: {{name: openrouter, key: ${{OPENROUTER_API_KEY}}}}.",
                "provider.shape",
            )
        else:
            fb = {"name": fallback} if isinstance(fallback, str) else fallback
            if _same_supply(block, fb):
                emit(
                    path + ("fallback",),
                    "warning",
                    f"{where}.fallback is the same endpoint and key as the block it backs, so it cannot help when that one refuses; name another supply.",
                    "provider.fallback_same",
                )
            _check_block(fallback, path + ("fallback",), emit, primary=block)


def _per(preset: Preset) -> str:
    """'per plan' or 'per account', from the table's `(per … — set base_url)` cell."""
    return preset.base_url.strip("()").split("—")[0].strip()


def _same_supply(first: dict, second: dict) -> bool:
    keys = ("name", "base_url", "key")
    return all(first.get(k) == second.get(k) for k in keys) and first.get("name") is not None


@rule("providers")
def check_provider_blocks(desk: Desk, ctx: Context) -> Iterator[Finding]:
    """Every `provider:` block in AGENTS.md, agents and flows, recursively through `fallback:`."""
    for document in block_documents(desk):
        if "provider" not in document.meta:
            continue
        emit = Emitter(document)
        _check_block(document.meta["provider"], ("provider",), emit)
        yield from emit.findings
