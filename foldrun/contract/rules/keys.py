"""A frontmatter key that is a near miss of one foldrun reads (`tool:` for
`tools:`) is a warning: the file would otherwise quietly do less than it says.
Keys that are near nothing are left alone — other tools write their own."""

from __future__ import annotations

from ..check import rule
from ..desk import AGENT, AGENTS_MD, FLOW, SKILL, TOOL
from ..findings import Finding
from ..model import closest

KNOWN_KEYS: dict[str, tuple[str, frozenset[str]]] = {
    AGENTS_MD: (
        "AGENTS.md",
        frozenset(
            {"notify", "limits", "web", "provider", "language", "region", "timezone", "budget", "name", "description"}
        ),
    ),
    AGENT: (
        "an agent",
        frozenset(
            {
                "name",
                "description",
                "tools",
                "skills",
                "secrets",
                "limits",
                "web",
                "provider",
                "mcpServers",
                "language",
                "region",
                "timezone",
                "apis",
                "model",
            }
        ),
    ),
    FLOW: (
        "a flow",
        frozenset(
            {
                "name",
                "description",
                "schedule",
                "timezone",
                "inputs",
                "sla",
                "disable_after",
                "approve_within",
                "approvers",
                "budget",
                "webhook",
                "notify",
            }
        ),
    ),
    TOOL: (
        "a tool",
        frozenset(
            {
                "transport",
                "name",
                "description",
                "outward",
                "base",
                "methods",
                "headers",
                "query",
                "timeout",
                "rate",
                "openapi",
                "operations",
                "run",
                "args",
                "interpreter",
                "secrets",
                "test_mode",
                "testMode",
                "runtime",
                "command",
                "url",
                "env",
                "gallery",
                "actions",
            }
        ),
    ),
    SKILL: ("a skill", frozenset({"name", "description", "license", "compatibility", "metadata", "allowed-tools"})),
}


@rule("keys.near_miss")
def near_miss(desk, context):
    for kind, (noun, known) in KNOWN_KEYS.items():
        for document in desk.of_kind(kind):
            for key in document.meta:
                if key in known:
                    continue
                near = closest(key, known, n=1)
                if near and near[0] not in document.meta:
                    yield Finding(
                        document.path,
                        document.line_of(key),
                        "warning",
                        f"{key}: is not a key foldrun reads in {noun}; did you mean {near[0]}:?",
                        "keys.near_miss",
                    )
