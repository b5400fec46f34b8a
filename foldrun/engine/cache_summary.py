"""A run's prompt cache in one line: how much of its input was read from the cache and what that saved.

Read from the run's `model_request` trace lines (each carries its input, cache-read and cache-write tokens and
what the cache saved against the same request uncached — engine/step.py), so the server's Run page and API
and a laptop's `foldrun report` say the same thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any


@dataclass(frozen=True)
class CacheSummary:
    prompt_tokens: int = 0  # every input token the requests carried, however it was billed
    read_tokens: int = 0
    write_tokens: int = 0
    saved_usd: Decimal = Decimal("0")

    @property
    def hit_rate(self) -> float | None:
        """The share of input tokens read from the cache; None for a run that sent none."""
        return round(self.read_tokens / self.prompt_tokens, 4) if self.prompt_tokens else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "cache_read_tokens": self.read_tokens,
            "cache_write_tokens": self.write_tokens,
            "hit_rate": self.hit_rate,
            "saved_usd": str(self.saved_usd),
        }


def _int(value: Any) -> int:
    try:
        return max(int(value or 0), 0)
    except (TypeError, ValueError):
        return 0


def _usd(value: Any) -> Decimal:
    try:
        return Decimal(str(value or 0))
    except InvalidOperation:
        return Decimal("0")


def summarise(requests: Iterable[Mapping[str, Any]]) -> CacheSummary:
    """The sum over `model_request` lines' data."""
    prompt = read = write = 0
    saved = Decimal("0")
    for data in requests:
        r, w = _int(data.get("cache_read_tokens")), _int(data.get("cache_write_tokens"))
        prompt += _int(data.get("input_tokens")) + r + w
        read, write, saved = read + r, write + w, saved + _usd(data.get("saved_usd"))
    return CacheSummary(prompt, read, write, saved)


def cache_line(summary: Mapping[str, Any] | None) -> str:
    """`cache: 82% of 61,200 input tokens read from the cache · saved $0.1310`; empty for a run that used
    no cache (a provider without one, or a single short request)."""
    words = cache_words(summary)
    return f"cache: {words}" if words else ""


def cache_words(summary: Mapping[str, Any] | None) -> str:
    """The line without its `cache:` (the Run page names it in its own label)."""
    if not summary or not (_int(summary.get("cache_read_tokens")) or _int(summary.get("cache_write_tokens"))):
        return ""
    rate = float(summary.get("hit_rate") or 0)
    saved = _usd(summary.get("saved_usd"))
    money = f"saved ${saved:.4f}" if saved >= 0 else f"cost ${-saved:.4f} more (written, not yet read back)"
    return f"{rate:.0%} of {_int(summary.get('prompt_tokens')):,} input tokens read from the cache · {money}"
