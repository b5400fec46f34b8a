"""Flow helpers shared by the server and `foldrun run --local`: the plan a
run keeps, task filling, `each:` items, `verify:`, verdict and headline.

Pure Python: the flow file is parsed by the contract (`foldrun.contract.model`);
this module only turns its Steps into plain dicts a run can store as JSON.
"""

from __future__ import annotations

import json
import re
from typing import Any

VERDICTS = ("GOOD", "BAD", "QUIET", "BLOCKED")
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}")


def plan_from_steps(steps) -> list[dict]:
    """Contract Steps -> JSON-able dicts (what a run keeps for its whole life)."""
    plan: list[dict] = []
    for step in steps:
        plan.append(
            {
                "number": step.number,
                "agent": step.agent,
                "task": step.task,
                "gate": bool(step.gate),
                "each": step.each,
                "max": step.max,
                "verify": {"kind": step.verify.kind, "argument": step.verify.argument} if step.verify else None,
                "retry": int(step.retry or 0),
                "on_fail": step.on_fail or "stop",
                "limits": dict(step.limits or {}),
                "wait_event": step.wait_event,
                "ask": step.ask,
            }
        )
    return plan


def adhoc_plan(agent: str, task: str) -> list[dict]:
    return [
        {
            "number": 1,
            "agent": agent,
            "task": task,
            "gate": False,
            "each": None,
            "max": None,
            "verify": None,
            "retry": 0,
            "on_fail": "stop",
            "limits": {},
            "wait_event": None,
            "ask": None,
        }
    ]


def fill_task(template: str, inputs: dict[str, Any], outputs: dict[int, str], item: str | None = None) -> str:
    """`{{name}}` from the inputs, `{{inputs}}` all of them, `{{steps.N.output}}`, `{{item}}`."""

    def sub(match: re.Match) -> str:
        key = match.group(1)
        if key == "inputs":
            return json.dumps(inputs, ensure_ascii=False)
        if key == "item" and item is not None:
            return item
        found = re.fullmatch(r"steps\.(\d+)\.output", key)
        if found:
            return outputs.get(int(found.group(1)), "")
        if key.startswith("inputs."):
            key = key[len("inputs.") :]
        if key in inputs:
            value = inputs[key]
            return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return match.group(0)

    text = _PLACEHOLDER.sub(sub, template or "")
    if item is not None and "{{item}}" not in (template or ""):
        text += f"\n\nThe item: {item}"
    return text


def split_items(output: str, each: str) -> list[str]:
    """The previous step's output as `each:` items: non-empty lines, or a JSON array."""
    if each == "json":
        text = output.strip()
        start = text.find("[")
        end = text.rfind("]")
        if start < 0 or end < start:
            raise ValueError("each: json — the previous step's output holds no JSON array")
        try:
            items = json.loads(text[start : end + 1])
        except ValueError as exc:
            raise ValueError(f"each: json — the previous step's output is not a JSON array ({exc})") from None
        return [i if isinstance(i, str) else json.dumps(i, ensure_ascii=False) for i in items]
    return [line.strip() for line in output.splitlines() if line.strip()]


def headline_of(text: str) -> str:
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:500]
    return ""


def verdict_of(text: str) -> str | None:
    """The first word of the reply when it is GOOD, BAD, QUIET or BLOCKED."""
    words = re.findall(r"[A-Za-z]+", headline_of(text))
    return words[0] if words and words[0] in VERDICTS else None


def _lines(text: str | None) -> int:
    return len([l for l in (text or "").splitlines() if l.strip()])


def check_verify(
    verify: dict | None, reply: str, files_before: dict[str, str], files_after: dict[str, str | bytes | None]
) -> str | None:
    """None when the check passes, else the sentence the step fails with.

    `files_after` holds what the step left: outputs/ artifacts and memory/state
    writes (None = deleted); `files_before` the desk's files as the step began.
    """
    if not verify:
        return None
    kind, argument = verify["kind"], verify["argument"]
    if kind == "file":
        content = files_after.get(argument, files_before.get(argument))
        if not content:
            return f"verify: file {argument} — the step left no such file, or it is empty"
        return None
    if kind == "reply":
        line = headline_of(reply)
        if not re.search(argument, line):
            return f"verify: reply {argument} — the reply's verdict line does not match: {line[:200]!r}"
        return None
    if kind == "grows":
        before = _lines(files_before.get(argument))
        after_value = files_after.get(argument, files_before.get(argument))
        after = _lines(after_value.decode("utf-8", "replace") if isinstance(after_value, bytes) else after_value)
        if after <= before:
            return f"verify: grows {argument} — the ledger did not gain a line ({before} before, {after} after)"
        return None
    return f"verify: {kind} is not a check foldrun runs"
