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


def response_cost(response: dict, provider: dict) -> Decimal:
    usage = response.get("usage") or {}
    tokens_in = Decimal(int(usage.get("input_tokens") or 0))
    tokens_out = Decimal(int(usage.get("output_tokens") or 0))
    price = provider.get("price") if isinstance(provider, dict) else None
    if isinstance(price, dict):
        rate_in, rate_out = Decimal(str(price.get("input", 0))), Decimal(str(price.get("output", 0)))
    else:
        model = str(response.get("model") or (provider or {}).get("model") or "")
        match = next((v for k, v in PRICES.items() if model.startswith(k)), None)
        if match is None:
            return Decimal("0")
        rate_in, rate_out = Decimal(match[0]), Decimal(match[1])
    return (tokens_in * rate_in + tokens_out * rate_out) / MILLION
