"""What a call may cost, reserved before it goes out (issue 8: budgets that stop exactly at the cap).

Every host reserves (`reserve(amount, minimum, windows)`, `release(amount)`, `charge(..., reserved=)`: the
`Host` protocol, engine/context.py; the server's `DbHost` through runs/budget.py, the laptop's `LocalHost` in
its one process, a host with no cap granting what is asked). It is asked for what the next call can cost at most: for a
model call the request's input (bounded from its size) plus `max_tokens` of output. The grant may be
smaller — then the call's `max_tokens` is lowered to what it pays for, and a line on the trace says so —
but never below what a useful reply needs; less than that and the call is not made (BudgetExceeded).
After the call the real cost settles the reservation.
"""

from __future__ import annotations

import json
from decimal import ROUND_FLOOR, Decimal
from typing import Any

from .cost import MILLION, cache_rates

# A token is at least this many bytes of the request in practice (English averages ~4, CJK ~3), so the
# input part of a reservation is an upper bound; output is bounded exactly by max_tokens.
BYTES_PER_INPUT_TOKEN = 2
# Fewer output tokens than this is not a useful model call: refuse rather than send it.
MIN_USEFUL_TOKENS = 256
ZERO = Decimal("0")


def input_bound(system: Any, messages: list, tools: list) -> int:
    size = len(json.dumps([system, messages, tools], ensure_ascii=False, default=str).encode())
    return size // BYTES_PER_INPUT_TOKEN + 64


def reserve_model_call(
    host: Any, provider: dict, system: Any, messages: list, tools: list, max_tokens: int, windows: Any = None
) -> tuple[Decimal, int]:
    """(the reservation, the max_tokens the call may use). Raises BudgetExceeded when too little is left."""
    found = cache_rates(provider)
    if found is None:  # nothing is charged: the call needs only that the cap is not yet reached
        return host.reserve(ZERO, ZERO, windows), max_tokens
    # An input token may be written to the prompt cache, which costs more than reading it in full: the bound
    # prices every one at the dearer of the two.
    rate_in, rate_out = max(found.input, found.cache_write) / MILLION, found.output / MILLION
    input_cost = input_bound(system, messages, tools) * rate_in
    want = input_cost + max_tokens * rate_out
    minimum = input_cost + min(MIN_USEFUL_TOKENS, max_tokens) * rate_out
    grant = host.reserve(want, minimum, windows)
    tokens = max_tokens
    if grant < want and rate_out > 0:
        tokens = int(((grant - input_cost) / rate_out).to_integral_value(rounding=ROUND_FLOOR))
        tokens = max(min(tokens, max_tokens), 1)
        host.trace(
            "budget",
            {
                "line": f"budget: max_tokens lowered from {max_tokens} to {tokens} so this call "
                f"stays within what is left (${grant:.4f} reserved)"
            },
        )
    return grant, tokens


def reserve_tool_call(host: Any, windows: Any = None) -> None:
    """A paid tool call: no tool declares a price yet, so what it needs is that the caps are not reached
    counting every call in flight (the same locked read as a model call's reservation; nothing is held)."""
    host.reserve(ZERO, ZERO, windows)


def charge(host: Any, response: dict, provider: dict, reserved: Decimal) -> Decimal:
    return host.charge(response, provider, reserved=reserved)


def release(host: Any, reserved: Decimal) -> None:
    if reserved:
        host.release(reserved)
