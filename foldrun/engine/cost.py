"""What a model response cost — the table lives with the providers (foldrun.providers.cost)."""

from __future__ import annotations

from foldrun.providers.cost import MILLION, PRICES, rates, response_cost

__all__ = ["MILLION", "PRICES", "rates", "response_cost"]
