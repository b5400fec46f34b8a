"""What a model response cost: tokens × prices (USD per million tokens), cache reads and writes included.

A provider block may state its own `price: {input: 3, output: 15}` (and `cache_read:`, `cache_write:`); else
the table below by model name prefix; else nothing is charged (a local model).

Usage is read in the Anthropic Messages shape the model loop speaks: `input_tokens` are the tokens read at
full price, `cache_read_input_tokens` the ones served from the provider's prompt cache, and
`cache_creation_input_tokens` the ones written to it (the translator gives Chat Completions' and Responses'
`cached_tokens` the same meaning: read from the cache, and not counted again in `input_tokens`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any, Mapping

# model name prefix -> (input, output, cached input or None). The cached input price is the provider's
# published one where it publishes a price per model (OpenAI); None means the preset's rule below applies.
# OpenAI: https://platform.openai.com/docs/pricing — gpt-4o-mini $0.075, gpt-4o $1.25, gpt-4.1 $0.50 per
# million cached input tokens (written 2026-12-08 from the published figures; not re-fetched from this machine).
PRICES: dict[str, tuple[str, str, str | None]] = {
    "claude-opus-4": ("15", "75", None),
    "claude-sonnet-4": ("3", "15", None),
    "claude-haiku-4": ("1", "5", None),
    "claude-3-5-haiku": ("0.8", "4", None),
    "gpt-4o-mini": ("0.15", "0.6", "0.075"),
    "gpt-4o": ("2.5", "10", "1.25"),
    "gpt-4.1": ("2", "8", "0.5"),
}
MILLION = Decimal(1_000_000)
# A cost is kept to the micro-dollar, as the run's records hold it: the run's cost is then exactly the sum of
# its calls' costs on the trace.
MICRO = Decimal("0.000001")


@dataclass(frozen=True)
class CacheRule:
    """How a preset bills its prompt cache, as multiples of the model's input price.

    `write` prices a token written to the cache (`cache_creation_input_tokens`), `read` one read from it. A
    model with a published cached price (the PRICES table's third column) uses that for reads instead. A
    preset whose provider publishes no cache price is billed at the full input price both ways: never less
    than the provider may charge."""

    write: Decimal
    read: Decimal
    source: str


FULL = CacheRule(Decimal("1"), Decimal("1"), "no cache price published: billed as uncached input")
# Anthropic, https://docs.anthropic.com/en/docs/build-with-claude/prompt-caching#pricing (written 2026-12-08
# from the published figures): a 5-minute cache write is 1.25× the base input price, a cache read 0.1×.
ANTHROPIC = CacheRule(Decimal("1.25"), Decimal("0.1"), "Anthropic prompt-caching pricing, 2026-12-08")
# OpenAI, https://platform.openai.com/docs/guides/prompt-caching (written 2026-12-08): caching is automatic, a
# write costs nothing extra, a read is the model's published cached-input price (PRICES), else half of input.
OPENAI = CacheRule(Decimal("1"), Decimal("0.5"), "OpenAI prompt caching and pricing pages, 2026-12-08")

# One row per preset of the spec's table (providers.md), in its order; tests/providers/
# test_cache_prices_cover_every_preset.py fails when a preset is added there and not here.
CACHE_RULES: dict[str, CacheRule] = {
    "anthropic": ANTHROPIC,
    # OpenRouter passes Anthropic's cache prices through for Claude models (openrouter.ai/docs, prompt caching).
    "openrouter": ANTHROPIC,
    "deepseek": FULL,  # ignores cache_control (the spec's note)
    "kimi": FULL,
    "moonshot": FULL,
    "zai": FULL,
    "minimax": FULL,
    "qwen": FULL,
    "fireworks": FULL,
    "deepinfra": FULL,
    "sambanova": FULL,
    "vercel": FULL,
    "litellm": FULL,
    # A pass-through to Anthropic: Anthropic's bill.
    "cloudflare-gateway": ANTHROPIC,
    "ollama": FULL,  # local, ignores cache_control
    "lmstudio": FULL,
    "vllm": FULL,
    "openai": OPENAI,
    "gemini": FULL,
    "xai": FULL,
    "groq": FULL,
    "mistral": FULL,
    "together": FULL,
    "cerebras": FULL,
    "huggingface": FULL,
    "cloudflare": FULL,
    "nebius": FULL,
    "novita": FULL,
    "hyperbolic": FULL,
}


@dataclass(frozen=True)
class Rates:
    """USD per million tokens: input read at full price, output, a cache write, a cache read."""

    input: Decimal
    output: Decimal
    cache_write: Decimal
    cache_read: Decimal


def _rule(provider: Mapping[str, Any], model: str) -> CacheRule:
    name = str(provider.get("name") or "")
    if name in CACHE_RULES:
        return CACHE_RULES[name]
    if model.startswith("claude-"):  # an unnamed block serving Claude is billed as Anthropic bills it
        return ANTHROPIC
    if model.startswith("gpt-"):
        return OPENAI
    return FULL


def cache_rates(provider: dict, model: str | None = None) -> Rates | None:
    """The four rates for a provider block and model; None when nothing is charged (a local model)."""
    block: Mapping[str, Any] = provider if isinstance(provider, Mapping) else {}
    name = str(model or block.get("model") or "")
    price = block.get("price")
    rule = _rule(block, name)
    if isinstance(price, Mapping):
        rate_in = Decimal(str(price.get("input", 0)))
        rate_out = Decimal(str(price.get("output", 0)))
        write = price.get("cache_write")
        read = price.get("cache_read")
        return Rates(
            rate_in,
            rate_out,
            Decimal(str(write)) if write is not None else rate_in * rule.write,
            Decimal(str(read)) if read is not None else rate_in * rule.read,
        )
    match = next((v for k, v in PRICES.items() if name.startswith(k)), None)
    if match is None:
        return None
    rate_in, rate_out = Decimal(match[0]), Decimal(match[1])
    read_rate = Decimal(match[2]) if match[2] is not None and rule is not FULL else rate_in * rule.read
    return Rates(rate_in, rate_out, rate_in * rule.write, read_rate)


def rates(provider: dict, model: str | None = None) -> tuple[Decimal, Decimal] | None:
    """(input, output) USD per million tokens for a provider block (its `price:`, else the table by
    model name); None when nothing is charged (a local model)."""
    found = cache_rates(provider, model)
    return (found.input, found.output) if found else None


@dataclass(frozen=True)
class Usage:
    """A response's tokens, in the loop's (Anthropic's) terms."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    @property
    def prompt(self) -> int:
        """Every input token the request carried, however it was billed."""
        return self.input + self.cache_read + self.cache_write


def usage_of(response: Mapping[str, Any]) -> Usage:
    usage = response.get("usage") or {}

    def count(key: str) -> int:
        try:
            return max(int(usage.get(key) or 0), 0)
        except (TypeError, ValueError):
            return 0

    return Usage(
        count("input_tokens"),
        count("output_tokens"),
        count("cache_read_input_tokens"),
        count("cache_creation_input_tokens"),
    )


def response_cost(response: dict, provider: dict) -> Decimal:
    found = cache_rates(provider, response.get("model"))
    if found is None:
        return Decimal("0")
    used = usage_of(response)
    return (
        (
            used.input * found.input
            + used.output * found.output
            + used.cache_write * found.cache_write
            + used.cache_read * found.cache_read
        )
        / MILLION
    ).quantize(MICRO, ROUND_HALF_UP)


def uncached_cost(response: dict, provider: dict) -> Decimal:
    """What the same response would have cost with no cache: every prompt token at the input price."""
    found = cache_rates(provider, response.get("model"))
    if found is None:
        return Decimal("0")
    used = usage_of(response)
    return ((used.prompt * found.input + used.output * found.output) / MILLION).quantize(MICRO, ROUND_HALF_UP)
