"""What a model response cost: tokens × prices (USD per million tokens).

A provider block may state its own `price: {input: 3, output: 15}`; else the
table below by model name prefix; else nothing is charged (a local model).
"""

from __future__ import annotations

from decimal import Decimal

PRICES: dict[str, tuple[str, str]] = {
    "claude-opus-4": ("15", "75"),
    "claude-sonnet-4": ("3", "15"),
    "claude-haiku-4": ("1", "5"),
    "claude-3-5-haiku": ("0.8", "4"),
    "gpt-4o-mini": ("0.15", "0.6"),
    "gpt-4o": ("2.5", "10"),
    "gpt-4.1": ("2", "8"),
}
MILLION = Decimal(1_000_000)


def rates(provider: dict, model: str | None = None) -> tuple[Decimal, Decimal] | None:
    """(input, output) USD per million tokens for a provider block (its `price:`, else the table by
    model name); None when nothing is charged (a local model)."""
    price = provider.get("price") if isinstance(provider, dict) else None
    if isinstance(price, dict):
        return Decimal(str(price.get("input", 0))), Decimal(str(price.get("output", 0)))
    name = str(model or (provider or {}).get("model") or "")
    match = next((v for k, v in PRICES.items() if name.startswith(k)), None)
    return (Decimal(match[0]), Decimal(match[1])) if match else None


def response_cost(response: dict, provider: dict) -> Decimal:
    usage = response.get("usage") or {}
    tokens_in = Decimal(int(usage.get("input_tokens") or 0))
    tokens_out = Decimal(int(usage.get("output_tokens") or 0))
    found = rates(provider, response.get("model"))
    if found is None:
        return Decimal("0")
    rate_in, rate_out = found
    return (tokens_in * rate_in + tokens_out * rate_out) / MILLION
