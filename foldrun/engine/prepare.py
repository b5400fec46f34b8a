"""A step's tools: the built-ins it was granted, then each tool file through its transport's registered
plan, with every secret they (and the agent) name resolved once, at the start."""

from __future__ import annotations

from .context import Host
from .errors import MissingSecret, StepFailed, ToolError
from .resolve import AgentSpec, ToolFile
from .stepenv import StepEnv
from .tools import registry
from .tools.base import Tool
from .tools.registry import ToolPlan


def _plans(agent: AgentSpec, env: StepEnv) -> tuple[list[Tool], list[str], list[ToolPlan]]:
    """The built-in tools, every secret name the step needs, and one plan per tool file."""
    tools = registry.builtin_tools(agent.builtin)
    names: list[str] = [str(n) for n in (agent.meta.get("secrets") or [])]
    plans: list[ToolPlan] = []
    outward = False
    for tool_file in agent.tool_files:
        transport = tool_file.transport
        gallery = registry.gallery_tool(tool_file.name) if transport in ("builtin", "gallery") else None
        planner = gallery or (registry.transport(transport) if transport not in ("builtin", "gallery") else None)
        if planner is None and transport == "gallery":
            env.log(f"{tool_file.name}: the gallery tool is not available on this install yet; it is not offered")
            continue
        if planner is None:
            raise StepFailed(f"tool {tool_file.name}: transport {transport!r} is not http, script or mcp")
        plan = planner(tool_file, env)
        names += plan.secret_names  # resolved with the step's other secrets; a missing one fails the step
        if plan.with_builtins:
            tools += plan.build()
            continue
        plans.append(plan)
        outward = outward or plan.outward
    mcp = registry.transport("mcp")
    for server, meta in agent.mcp_inline.items():
        assert mcp is not None
        plan = mcp(ToolFile(name=server, meta=meta, body="", path="", scope="", transport="mcp"), env)
        names += plan.secret_names
        plans.append(plan)
    env.withhold_all = env.is_test and outward
    return tools, list(dict.fromkeys(names)), plans


def prepare_tools(agent: AgentSpec, env: StepEnv, host: Host) -> list[Tool]:
    """Every tool the step offers, with its secrets resolved. Raises StepFailed with the step's error line."""
    tools, names, plans = _plans(agent, env)
    # Secrets: resolved once at the start; one missing fails the step by name.
    if names:
        try:
            resolved = host.resolve_secrets(names)
        except MissingSecret as exc:
            if exc.reason:
                host.trace("secret", {"name": exc.name, "store": None, "error": "unavailable"})
                raise StepFailed(exc.reason) from None
            host.trace("secret", {"name": exc.name, "store": None, "error": "missing"})
            raise StepFailed(
                f"secret {exc.name} is not in the vault (neither the workspace's nor the account's)"
            ) from None
        for name in names:
            value, store = resolved[name]
            env.real_values[name] = value
            env.secrets[name] = value
            host.trace("secret", {"name": name, "store": store, "withheld": bool(env.is_test and env.withhold_all)})
    if env.is_test:
        host.trace(
            "log",
            {
                "message": "test run: send-capable secrets read TEST_MODE_WITHHELD, FOLDRUN_TEST_MODE=1, "
                "programs have no network, outward calls fail closed"
            },
        )
    for plan in plans:
        try:
            tools += plan.build()
        except ToolError as exc:
            raise StepFailed(str(exc)) from None
    return tools
