"""What the reply translators share: tool-call arguments parsed (or kept
unparsed) and tool-call ids made distinct."""

from __future__ import annotations

import json
import uuid


def parse_arguments(raw: str) -> dict:
    if not raw or not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except ValueError:
        return {"_unparsed_arguments": raw}
    return value if isinstance(value, dict) else {"_value": value}


def unique_ids(blocks: list[dict]) -> None:
    """Some endpoints reuse one tool-call id across separate calls (Kimi K3);
    the loop needs them distinct to pair each result with its call."""
    seen: set[str] = set()
    for block in blocks:
        if block.get("type") != "tool_use":
            continue
        if not block.get("id"):
            block["id"] = f"toolu_{uuid.uuid4().hex[:24]}"
        while block["id"] in seen:
            block["id"] = f"{block['id']}_{len(seen)}"
        seen.add(block["id"])
