"""Template helpers every page shares, so a cost or a state reads one way
everywhere: `{{ run.cost_usd|usd }}`, `{% cost step.cost_usd step.models %}`,
`{{ run.status|state_label }}`."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal, InvalidOperation

from django import template

from foldrun.engine.cost import PRICES

register = template.Library()

STATE_LABELS = {
    "awaiting-approval": "awaiting approval",
    "awaiting-answer": "awaiting an answer",
    "waiting": "waiting for an event",
}


def priced(model: str) -> bool:
    return any(str(model).startswith(prefix) for prefix in PRICES)


def cost_text(value, models: Iterable[str] = ()) -> str:
    """`$0.0013`; under a hundredth of a cent `<$0.0001`; nothing charged for a model with no
    price: "no price known for stub-model" (the sentence names every such model)."""
    try:
        amount = Decimal(str(value or 0))
    except (InvalidOperation, ValueError):
        amount = Decimal(0)
    if amount == 0:
        unknown = sorted({str(m) for m in models or () if m and not priced(str(m))})
        if unknown:
            return "no price known for " + ", ".join(unknown)
        return "$0.0000"
    if amount < Decimal("0.0001"):
        return "<$0.0001"
    return f"${amount:,.4f}"


@register.filter
def usd(value) -> str:
    return cost_text(value)


@register.simple_tag
def cost(value, models=()) -> str:
    return cost_text(value, models)


@register.filter
def state_label(state) -> str:
    return STATE_LABELS.get(str(state), str(state or ""))


@register.filter
def inline_code(text) -> str:
    """A sentence written with `backticks` shows them as code, not as raw markdown (escaped first)."""
    import re

    from django.utils.html import escape
    from django.utils.safestring import mark_safe

    return mark_safe(re.sub(r"`([^`]+)`", r"<code>\1</code>", escape(str(text or ""))))
