"""`check`: every rule over a desk, returning findings.

Rules register with `@rule`. Each takes the Desk and a Context and yields
Findings. `mode` is "check" (the CLI, the server's check endpoint) or
"deploy" (where some errors are only warnings — the rule decides).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from .desk import Desk
from .findings import Finding, sort_findings

RuleFn = Callable[["Desk", "Context"], Iterable[Finding]]
_RULES: list[tuple[str, RuleFn]] = []


@dataclass(frozen=True)
class Context:
    mode: str = "check"  # "check" | "deploy"


def rule(name: str) -> Callable[[RuleFn], RuleFn]:
    def register(fn: RuleFn) -> RuleFn:
        _RULES.append((name, fn))
        return fn

    return register


def _load_rules() -> None:
    # Importing the modules registers their rules.
    from .rules import load_all

    load_all()


def check(desk: Desk, *, mode: str = "check") -> list[Finding]:
    _load_rules()
    context = Context(mode=mode)
    findings: list[Finding] = []
    for _name, fn in _RULES:
        findings.extend(fn(desk, context))
    return sort_findings(findings)


def has_errors(findings: list[Finding]) -> bool:
    return any(f.level == "error" for f in findings)
