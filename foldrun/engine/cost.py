"""What a model response cost — the table lives with the providers (foldrun.providers.cost)."""

from __future__ import annotations

from foldrun.providers.cost import (
    MILLION,
    PRICES,
    Usage,
    cache_rates,
    rates,
    response_cost,
    uncached_cost,
    usage_of,
)

__all__ = ["MILLION", "PRICES", "Usage", "cache_rates", "rates", "response_cost", "uncached_cost", "usage_of"]
