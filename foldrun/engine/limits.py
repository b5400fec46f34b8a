"""Limits: how many calls one step may make, per key.

Keys (spec, "Limits"): `web.<action>`, `web`, a tool's name as granted (an
http tool, a script tool — `desk-email` and `desk_email` are one key —, an MCP
server), the built-in groups `read` `write` `code` `search` `history` `desks`
`ask`, an exact SDK name (`Bash`), and `calls` (everything).

Nearest wins per key: the account's AGENTS.md, then the workspace's, then
the agent's own, then the flow step's `limits:`. A refused call counts toward
nothing; neither does one another check refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Mapping

from foldrun.contract.model import limit_key

REFUSAL = (
    "limit reached: {key} {used} of {limit} in this step — work with what you have, or say what more you would need"
)

GROUP_OF_SDK = {
    "Read": "read",
    "Glob": "read",
    "Grep": "read",
    "Write": "write",
    "Edit": "write",
    "Bash": "code",
    "search_files": "search",
    "recall_runs": "history",
    "read_run": "history",
    "ask": "ask",
}


def normalise_key(key: str) -> str:
    """`desk-email` and `desk_email` are the same key (the contract's `limit_key`)."""
    return limit_key(key)


def merge_limits(*layers: Mapping | None) -> dict[str, int]:
    """Nearest wins per key: later layers replace a key, other keys stand."""
    merged: dict[str, int] = {}
    for layer in layers:
        for key, value in (layer or {}).items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"limits: {key} must be a whole number, 1 or more (got {value!r})")
            merged[normalise_key(key)] = value
    return merged


@dataclass
class LimitCounter:
    """Counts one step's calls (one fan-out instance, one try)."""

    limits: dict[str, int]
    used: dict[str, int] = field(default_factory=dict)
    refused: int = 0

    def keys_for(self, tool_keys: Iterable[str]) -> list[str]:
        keys = [normalise_key(k) for k in tool_keys]
        return list(dict.fromkeys(keys + ["calls"]))

    def check(self, tool_keys: Iterable[str]) -> str | None:
        """Count the call, or return the refusal sentence (and count nothing)."""
        keys = self.keys_for(tool_keys)
        for key in keys:
            limit = self.limits.get(key)
            if limit is not None and self.used.get(key, 0) >= limit:
                self.refused += 1
                return REFUSAL.format(key=key, used=self.used.get(key, 0), limit=limit)
        for key in keys:
            self.used[key] = self.used.get(key, 0) + 1
        return None

    def opening_line(self) -> str:
        if not self.limits:
            return "limits: none"
        return "limits: " + ", ".join(f"{k} {v}" for k, v in self.limits.items())

    def closing_line(self) -> str:
        """`limits: web.search 40/40, crm 3/20 — 2 calls refused`."""
        parts = ", ".join(f"{k} {self.used.get(k, 0)}/{v}" for k, v in self.limits.items()) or "none"
        line = f"limits: {parts}"
        if self.refused:
            line += f" — {self.refused} call{'s' if self.refused != 1 else ''} refused"
        return line
