"""spec/tools.md, Limits: `foldrun check` errors on a key that names nothing
(and lists the keys that would work) or a value that is not a whole number
above zero, and warns on a limit for a tool the agent is not granted.
Limits are read in AGENTS.md, an agent's frontmatter and a flow step's
`limits:` option."""

from __future__ import annotations

from ..check import rule
from ..desk import AGENT, FLOW, TOOL
from ..findings import Finding
from ..model import (
    BUILTIN_GROUPS,
    SDK_NAMES,
    WEB_ACTIONS,
    agent_of,
    agents_md_of,
    closest,
    flow_of,
    is_whole,
    limit_key,
)
from ..resolve import granted_tools

FIXED_KEYS = ("calls", "web", *(f"web.{a}" for a in WEB_ACTIONS), *BUILTIN_GROUPS, *SDK_NAMES)


def _all_tool_names(desk) -> set[str]:
    key = ("limits-tool-names",)
    if key not in desk.cache:
        names = set()
        for kind, _scope, _agent, name in desk._by_name:
            if kind == TOOL:
                names.add(name)
        for document in desk.of_kind(AGENT):
            if document.parsed is not None:
                names.update(agent_of(desk, document).mcp_servers)
                names.update(agent_of(desk, document).apis)
        desk.cache[key] = names
    return desk.cache[key]


_FIXED = frozenset(limit_key(k) for k in FIXED_KEYS)


def _known_tool_keys(desk) -> set[str]:
    key = ("limits-tool-keys",)
    if key not in desk.cache:
        desk.cache[key] = {limit_key(n) for n in _all_tool_names(desk)}
    return desk.cache[key]


def _working_keys(granted: list[str] | None) -> str:
    tools = ", ".join(granted) if granted else "none"
    return (
        f"calls, web, web.<action> ({' '.join(WEB_ACTIONS)}), {', '.join(BUILTIN_GROUPS)}, "
        f"the SDK names {' '.join(SDK_NAMES)}"
        + (f", and the granted tools ({tools})" if granted is not None else ", and any tool's name")
    )


def _check_limits(desk, path: str, limits: dict, line_for, prefix: str, agent_name: str | None, context):
    """Findings for one `limits:` mapping; `agent_name` None for AGENTS.md.

    A key that names nothing is an error in `check` and a warning on deploy
    (it counts nothing either way); "The deploy refuses an unreadable value",
    so a bad value is an error in both."""
    granted: list[str] | None = None
    granted_keys: set[str] = set()
    if agent_name is not None:
        grants = granted_tools(desk, agent_name)
        granted = [g.name for g in grants if g.kind != "builtin"]
        granted_keys = {limit_key(g.name) for g in grants}
        for g in grants:
            if g.kind == "builtin" and g.name in SDK_NAMES:
                granted_keys.add(SDK_NAMES[g.name])
    known_tools = _known_tool_keys(desk) | {limit_key(n) for n in (granted or [])}
    fixed = _FIXED
    for raw_key, value in limits.items():
        key = str(raw_key)
        canonical = limit_key(key)
        if canonical not in fixed and canonical not in known_tools:
            near = closest(
                key,
                list(FIXED_KEYS) + sorted(set(granted or []) | (_all_tool_names(desk) if granted is None else set())),
            )
            hint = f" (did you mean {' or '.join(near)}?)" if near else ""
            yield Finding(
                path,
                line_for(key),
                context.level(),
                f"{prefix}limits: {key} names nothing foldrun counts{hint}; the keys that work are {_working_keys(granted)}.",
                "limits.unknown_key",
            )
            continue
        if not is_whole(value, 1):
            yield Finding(
                path,
                line_for(key),
                "error",
                f"{prefix}limits: {key} is {value!r}, not a whole number above zero; write a whole number, 1 or more — to withhold a tool, leave it out of tools:.",
                "limits.value",
            )
            continue
        if agent_name is None or canonical == "calls":
            continue
        if canonical == "web" or canonical.startswith("web."):
            needed = "web"
        elif key in SDK_NAMES:
            needed = SDK_NAMES[key]
        else:
            needed = canonical
        if needed not in granted_keys:
            yield Finding(
                path,
                line_for(key),
                "warning",
                f"{prefix}limits: {key} limits {needed}, which agent {agent_name} does not grant; add {needed} to its tools: or drop the limit.",
                "limits.not_granted",
            )


@rule("limits.keys")
def limits(desk, context):
    defaults = agents_md_of(desk, "workspace")
    if defaults is not None and defaults.limits:
        document = desk.agents_md("workspace")
        yield from _check_limits(
            desk, defaults.path, defaults.limits, lambda k: document.line_in("limits", k), "", None, context
        )
    for document in desk.of_kind(AGENT):
        if document.parsed is None:
            continue
        agent = agent_of(desk, document)
        if agent.limits:
            yield from _check_limits(
                desk,
                document.path,
                agent.limits,
                lambda k, d=document: d.line_in("limits", k),
                "",
                document.name,
                context,
            )
    for document in desk.of_kind(FLOW):
        if document.parsed is None:
            continue
        for step in flow_of(desk, document).steps:
            if not step.limits:
                continue
            agent_known = bool(desk.named(AGENT, step.agent))
            yield from _check_limits(
                desk,
                document.path,
                step.limits,
                lambda k, s=step: s.option_lines.get("limits", s.line),
                f"{step.label} has ",
                step.agent if agent_known else None,
                context,
            )
