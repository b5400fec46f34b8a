"""The provider presets: what `provider: {name: …}` resolves to.

One table, in code, mirroring the table in the spec's providers.md cell for
cell; `tests/providers/test_presets_match_spec.py` parses that markdown at test
time and fails when a name, a format, an address, a header, a verified mark or
a note differ — and when the spec's "N of M" sentence stops matching the
verified marks and the length of this table.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

# The three wire formats an endpoint may speak. `responses` is never a preset's
# default: a block asks for it by name (`name: openai` + `format: responses`).
FORMATS: tuple[str, ...] = ("anthropic", "openai", "responses")

# How the key is sent: `x-api-key: <key>` or `Authorization: Bearer <key>`.
KEY_HEADERS: tuple[str, ...] = ("x-api-key", "bearer")


@dataclass(frozen=True)
class Preset:
    """One row of the table.

    `base_url` is the table's cell as written: an address, or for an endpoint
    that differs per plan or per account the words `(per account — set
    base_url)`; `fixed_base_url` is None for those.
    """

    name: str
    provider: str
    format: str
    base_url: str
    key_header: str
    verified: bool
    note: str

    @property
    def fixed_base_url(self) -> str | None:
        return None if self.base_url.startswith("(") else self.base_url

    @property
    def needs_base_url(self) -> bool:
        return self.fixed_base_url is None


PRESETS: tuple[Preset, ...] = (
    Preset(
        "anthropic",
        "Anthropic",
        "anthropic",
        "https://api.anthropic.com",
        "x-api-key",
        True,
        "Models newer than Opus 4.6 reject `top_k` with a 400; the runtime never sends it unless a `params:` block does.",
    ),
    Preset(
        "openrouter",
        "OpenRouter",
        "anthropic",
        "https://openrouter.ai/api",
        "bearer",
        True,
        "Hundreds of models behind one key. Its own docs disagree on how well non-Anthropic models hold a tool loop on this endpoint — probe the model you mean to use.",
    ),
    Preset(
        "deepseek",
        "DeepSeek",
        "anthropic",
        "https://api.deepseek.com/anthropic",
        "x-api-key",
        False,
        "Ignores top_k, cache_control and thinking budgets; Claude model names are remapped to DeepSeek's.",
    ),
    Preset(
        "kimi",
        "Moonshot Kimi",
        "anthropic",
        "https://api.moonshot.ai/anthropic",
        "bearer",
        False,
        "Own model ids only. Known bug (2026-09): K3 reuses one `tool_use` id across separate calls, which breaks a tool loop.",
    ),
    Preset(
        "moonshot",
        "Moonshot Kimi",
        "anthropic",
        "https://api.moonshot.ai/anthropic",
        "bearer",
        False,
        "Same endpoint as `kimi`.",
    ),
    Preset("zai", "z.ai (GLM)", "anthropic", "https://api.z.ai/api/anthropic", "bearer", False, ""),
    Preset("minimax", "MiniMax", "anthropic", "https://api.minimax.io/anthropic", "bearer", False, ""),
    Preset(
        "qwen",
        "Alibaba Qwen (Model Studio)",
        "anthropic",
        "(per plan — set base_url)",
        "x-api-key",
        False,
        "base_url depends on the plan: pay-as-you-go `https://<workspace>.<region>.maas.aliyuncs.com/apps/anthropic`; Coding Plan `https://coding-intl.dashscope.aliyuncs.com/apps/anthropic`. Own model ids, no remap; no `reasoning_effort`, use thinking.",
    ),
    Preset(
        "fireworks",
        "Fireworks AI",
        "anthropic",
        "https://api.fireworks.ai/inference",
        "bearer",
        False,
        "No server-side tools; no adaptive thinking.",
    ),
    Preset("deepinfra", "DeepInfra", "anthropic", "https://api.deepinfra.com/anthropic", "bearer", False, ""),
    Preset(
        "sambanova",
        "SambaNova",
        "anthropic",
        "https://api.sambanova.ai",
        "x-api-key",
        False,
        "No server-side tools, base64 images only.",
    ),
    Preset(
        "vercel",
        "Vercel AI Gateway",
        "anthropic",
        "https://ai-gateway.vercel.sh",
        "bearer",
        False,
        "Model ids are namespaced, e.g. openai/gpt-5.",
    ),
    Preset(
        "litellm",
        "LiteLLM (yours)",
        "anthropic",
        "(per account — set base_url)",
        "x-api-key",
        False,
        "base_url is your proxy, e.g. http://litellm.internal:4000. It presents an Anthropic endpoint and speaks anything behind it.",
    ),
    Preset(
        "cloudflare-gateway",
        "Cloudflare AI Gateway",
        "anthropic",
        "(per account — set base_url)",
        "x-api-key",
        False,
        "base_url is https://gateway.ai.cloudflare.com/v1/<account>/<gateway>/anthropic — a pass-through to Anthropic with logging; for Cloudflare's own models use name: cloudflare.",
    ),
    Preset(
        "ollama",
        "Ollama (local)",
        "anthropic",
        "http://localhost:11434",
        "x-api-key",
        False,
        "v0.14+ (2026-01). Ignores `tool_choice` and `cache_control`; accepts but does not enforce thinking budgets; base64 images only. Any key value is accepted.",
    ),
    Preset("lmstudio", "LM Studio (local)", "anthropic", "http://localhost:1234", "x-api-key", False, ""),
    Preset(
        "vllm",
        "vLLM (yours)",
        "anthropic",
        "(per account — set base_url)",
        "bearer",
        False,
        "base_url is your server (default :8000). Start it with `--enable-auto-tool-choice` and a `--tool-call-parser` or no tool loop closes.",
    ),
    Preset(
        "openai",
        "OpenAI",
        "openai",
        "https://api.openai.com/v1",
        "bearer",
        True,
        'Chat Completions by default, which OpenAI keeps supporting indefinitely. Add `format: responses` for the Responses API ("recommended for all new projects"): PDFs cross as input files and `reasoning.effort` is native; still every turn carries the whole conversation.',
    ),
    Preset(
        "gemini",
        "Google Gemini",
        "openai",
        "https://generativelanguage.googleapis.com/v1beta/openai",
        "bearer",
        False,
        "Google's OpenAI-compatible route. Unknown parameters are ignored silently; reasoning cannot be switched off on the newest models.",
    ),
    Preset(
        "xai",
        "xAI Grok",
        "openai",
        "https://api.x.ai/v1",
        "bearer",
        False,
        "Sends `max_completion_tokens` and `reasoning_effort`.",
    ),
    Preset(
        "groq",
        "Groq",
        "openai",
        "https://api.groq.com/openai/v1",
        "bearer",
        False,
        "Sends `max_completion_tokens` and `reasoning_effort`.",
    ),
    Preset("mistral", "Mistral", "openai", "https://api.mistral.ai/v1", "bearer", False, ""),
    Preset("together", "Together AI", "openai", "https://api.together.ai/v1", "bearer", False, ""),
    Preset(
        "cerebras",
        "Cerebras",
        "openai",
        "https://api.cerebras.ai/v1",
        "bearer",
        False,
        "Sends `max_completion_tokens` and `reasoning_effort`.",
    ),
    Preset(
        "huggingface",
        "Hugging Face",
        "openai",
        "https://router.huggingface.co/v1",
        "bearer",
        False,
        "The Inference Providers router; model ids are Hub ids, e.g. meta-llama/Llama-3.3-70B-Instruct.",
    ),
    Preset(
        "cloudflare",
        "Cloudflare Workers AI",
        "openai",
        "(per account — set base_url)",
        "bearer",
        False,
        "base_url is https://api.cloudflare.com/client/v4/accounts/<account>/ai/v1",
    ),
    Preset("nebius", "Nebius Token Factory", "openai", "https://api.tokenfactory.nebius.com/v1", "bearer", False, ""),
    Preset(
        "novita",
        "Novita",
        "openai",
        "https://api.novita.ai/openai",
        "bearer",
        False,
        "Also has an Anthropic-shaped route at `https://api.novita.ai/anthropic` — spell it out with `format: anthropic` to skip the translator (header shape unverified).",
    ),
    Preset("hyperbolic", "Hyperbolic", "openai", "https://api.hyperbolic.xyz/v1", "bearer", False, ""),
)

_BY_NAME: dict[str, Preset] = {preset.name: preset for preset in PRESETS}
PRESET_NAMES: tuple[str, ...] = tuple(_BY_NAME)


def get_preset(name: str) -> Preset:
    """The preset called `name`; raises KeyError for a name not in the table."""
    return _BY_NAME[name]


def find_preset(name: object) -> Preset | None:
    """The preset called `name`, or None (also for a name that is not text)."""
    return _BY_NAME.get(name) if isinstance(name, str) else None


def closest_presets(name: str, limit: int = 3) -> list[str]:
    """Preset names that look like `name`, nearest first — for "did you mean"."""
    lowered = str(name).strip().lower()
    if lowered in _BY_NAME:
        return [lowered]
    close = difflib.get_close_matches(lowered, PRESET_NAMES, n=limit, cutoff=0.6)
    if not close:
        # A shared prefix catches what edit distance misses: "cloudflare-ai" → cloudflare…
        close = [n for n in PRESET_NAMES if n.startswith(lowered[:4])][:limit] if len(lowered) >= 4 else []
    return close


def verified_presets() -> list[Preset]:
    """The presets a tool loop was actually driven through from this runtime."""
    return [preset for preset in PRESETS if preset.verified]
