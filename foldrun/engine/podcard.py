"""A step's browser pod in two lines, as its card on the Run page and `foldrun report` say them (spec: "Slim
steps and a lost pod"): what the pod did — `3 reconnects; browser pod lost; re-ran on full (…)` — and, under
it, the tries — `#1 slim · lost · $0.0040 → #2 full · completed · $0.0060`. Pure: reads tries as dicts (the
API's shape) or rows."""

from __future__ import annotations

from decimal import Decimal
from typing import Any


def _get(row: Any, name: str) -> Any:
    return row.get(name) if isinstance(row, dict) else getattr(row, name, None)


def pod_card(tries: list[Any]) -> tuple[str, str]:
    """(the pod line, the tries line); both empty when no try browsed on a pod."""
    if not any(_get(t, "image") == "slim" for t in tries):
        return "", ""
    lines = [str(_get(t, "pod_line") or "") for t in tries]
    line = next((text for text in reversed(lines) if "browser pod lost" in text), "") or next(
        (text for text in reversed(lines) if text), ""
    )
    row = " → ".join(
        f"#{_get(t, 'n')} {_get(t, 'image') or 'full'} · {_get(t, 'status')} · "
        f"${Decimal(str(_get(t, 'cost_usd') or 0)):.4f}"
        for t in tries
    )
    return line, row
