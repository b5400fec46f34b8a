"""The trace as events a person reads: each TraceEvent's JSON turned into a
title, a few facts and, for tool calls, formatted JSON — never a Python dict.

Pure: no query, no HTML, no Django. The Run page (runs/pages.py, whose template
escapes and lays it out) and `foldrun logs` (foldrun/cli/cmd_logs.py, from the
API's `trace`) read the same views, so both say the same thing. An event is
anything with `pk`, `at`, `try_n`, `kind` and `data`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

LONG_LINES = 8  # a JSON block longer than this is collapsed
LONG_CHARS = 600


@dataclass
class Block:
    """A formatted body: JSON pretty-printed, or plain text."""

    text: str
    is_json: bool
    long: bool
    label: str = ""


@dataclass
class EventView:
    pk: int
    at: Any
    kind: str  # css: model, call, result, refusal, limit, secret, log
    title: str
    facts: list[str] = field(default_factory=list)
    blocks: list[Block] = field(default_factory=list)
    line: str = ""  # the one sentence of a refusal, a limit or a log
    error: bool = False
    try_n: int = 0


def block(value: Any, label: str = "") -> Block:
    """Pretty JSON for structured values and for strings that hold JSON; plain text otherwise."""
    is_json = True
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
            try:
                value = json.loads(stripped)
            except ValueError:
                is_json = False
        else:
            is_json = False
    text = json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False) if is_json else str(value)
    return Block(text=text, is_json=is_json, long=text.count("\n") >= LONG_LINES or len(text) > LONG_CHARS, label=label)


def _tokens(data: dict) -> str:
    tin, tout = data.get("input_tokens"), data.get("output_tokens")
    if tin is None and tout is None:
        return ""
    return f"{tin or 0:,} in · {tout or 0:,} out tokens"


def _cache(data: dict) -> str:
    read, write = data.get("cache_read_tokens"), data.get("cache_write_tokens")
    if not isinstance(read, int) or not isinstance(write, int) or not (read or write):
        return ""
    return f"cache {read:,} read · {write:,} written"


def _cost(data: dict) -> str:
    """A call's own cost, as the line recorded it (a string of dollars)."""
    try:
        return f"${float(data['cost_usd']):.4f}"
    except (KeyError, TypeError, ValueError):
        return ""


def _seconds(data: dict) -> str:
    seconds = data.get("seconds")
    return f"{float(seconds):.2f} s" if isinstance(seconds, (int, float)) else ""


def refusal_title(line: str) -> str:
    """What stopped the step, in two words: a limit, a connection that was refused, or another refusal
    (a provider's answer, a missing secret) — never one word for all of them."""
    lowered = line.lower()
    if lowered.startswith("limit reached") or lowered.startswith("budget reached"):
        return "Limit reached"
    if "connection refused" in lowered or "could not connect" in lowered or "refused to connect" in lowered:
        return "Connection refused"
    if lowered.startswith("the provider answered"):
        return "Provider refused"
    return "Stopped"


def view(event) -> EventView:
    data = event.data if isinstance(event.data, dict) else {"value": event.data}
    base = {"pk": event.pk, "at": event.at, "try_n": event.try_n}
    kind = event.kind
    if kind == "model_request":
        facts = [
            f"stop: {data.get('stop_reason') or 'none given'}",
            _tokens(data),
            _cache(data),
            _cost(data),
            _seconds(data),
        ]
        return EventView(
            kind="model", title=f"Model request · {data.get('model') or 'model'}", facts=[f for f in facts if f], **base
        )
    if kind == "tool_call":
        arguments = data.get("input")
        return EventView(
            kind="call",
            title=f"Tool call · {data.get('name') or '?'}",
            blocks=[block(arguments if arguments is not None else {}, "arguments")],
            **base,
        )
    if kind == "tool_result":
        error = bool(data.get("error"))
        facts = ["error" if error else "ok", _cost(data), _seconds(data)]
        return EventView(
            kind="result",
            title=f"Result · {data.get('name') or '?'}",
            error=error,
            facts=[f for f in facts if f],
            blocks=[block(data.get("content", ""), "result")],
            **base,
        )
    if kind == "refusal":
        line = str(data.get("line") or "")
        if "refused cache_control" in line:  # the request went again without it: nothing stopped
            return EventView(kind="log", title="Sent again without cache_control", line=line, **base)
        return EventView(kind="refusal", title=refusal_title(line), line=line, error=True, **base)
    if kind == "limit":
        if data.get("refused"):
            return EventView(
                kind="limit refused",
                title=f"Limit reached · {data.get('tool') or 'tool'}",
                line=str(data["refused"]),
                error=True,
                **base,
            )
        return EventView(kind="limit", title="Limits", line=str(data.get("line") or ""), **base)
    if kind == "secret":
        if data.get("tool"):
            facts = []
            if data.get("materialised"):
                facts.append("given: " + ", ".join(data["materialised"]))
            if data.get("withheld"):
                facts.append("withheld: " + ", ".join(data["withheld"]))
            return EventView(kind="secret", title=f"Secrets · {data['tool']}", facts=facts, **base)
        where = data.get("store") or data.get("error") or ""
        return EventView(
            kind="secret",
            title=f"Secret · {data.get('name') or '?'}",
            facts=[str(where)] if where else [],
            error=bool(data.get("error")),
            **base,
        )
    if kind == "log":
        if data.get("stderr"):
            return EventView(
                kind="log",
                title=f"Program output · {data.get('program') or ''}".rstrip(" ·"),
                blocks=[block(str(data["stderr"]), "stderr")],
                **base,
            )
        return EventView(kind="log", title="Note", line=str(data.get("message") or ""), **base)
    # A kind this page does not know yet: its fields, formatted, rather than a dict's repr.
    return EventView(kind="log", title=kind.replace("_", " ").capitalize(), blocks=[block(data)], **base)


def views(events) -> list[EventView]:
    return [view(e) for e in events]
