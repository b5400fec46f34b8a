"""Parsed models of the files in a desk. Pure Python, no Django.

Use these from runs, deploy and the CLI; every parser is lenient — it keeps
what it can read and records what it cannot as `problems` (Findings that
`check` reports), so a run never re-validates and `check` never re-parses.

    agents_md_of(desk, scope="workspace") -> Defaults | None
    agent_of(desk, document) -> Agent         find_agent(desk, name) -> Agent | None
    flow_of(desk, document) -> Flow           find_flow(desk, name) -> Flow | None
    flow_names(desk) -> [name, …]              flow_choices(names) -> "its flows are a, b"
    tool_of(desk, document) -> Tool
    skill_of(desk, document) -> Skill
    concept_of(desk, document) -> Concept
    parse_steps(body, body_line, path) -> (steps, problems)
    parse_duration("2h") -> timedelta | None      cron_problem("0 7 * * MON") -> None | why
    limit_key("desk-email") -> "desk_email"

All results are cached on the Desk (desk.cache), so build a new Desk when
files change. Resolution (nearest wins) lives in resolve.py.

A module per concern, and every public name importable from here as before:
`values` (names, limits, durations, rates, near-miss hints, cron, time zones, the
per-Desk cache), `records` (the dataclasses), `agents` (AGENTS.md, agents, mcpServers:),
`flows` (steps and flows), `tools`, and `skills` (skills, concepts, find_agent/find_flow).
"""

from __future__ import annotations

from ..desk import AGENTS_MD
from .agents import agent_of, agents_md_of, parse_mcp_server
from .flows import WEBHOOK_SCHEMES, flow_of, parse_steps, webhook_problems
from .records import Agent, Concept, Defaults, Flow, McpServer, Runtime, Skill, Step, Tool, Verify
from .skills import concept_of, find_agent, find_flow, flow_choices, flow_names, skill_of
from .tools import tool_of
from .values import (
    BUILTIN_GROUPS,
    DEFAULT_APPROVE_WITHIN,
    DURATION_RE,
    EVENT_NAME_RE,
    HTTP_METHODS,
    NAME_RE,
    PLACEHOLDER_RE,
    RATE_RE,
    SDK_NAMES,
    SECRET_NAME_RE,
    STEP_OPTIONS,
    TRANSPORTS,
    VERIFY_KINDS,
    WEB_ACTIONS,
    as_list,
    closest,
    cron_problem,
    did_you_mean,
    is_whole,
    limit_key,
    parse_duration,
    parse_rate,
    timezone_problem,
)

__all__ = [
    "Agent",
    "Concept",
    "Defaults",
    "Flow",
    "McpServer",
    "Runtime",
    "Skill",
    "Step",
    "Tool",
    "Verify",
    "agent_of",
    "agents_md_of",
    "concept_of",
    "flow_of",
    "skill_of",
    "tool_of",
    "find_agent",
    "find_flow",
    "flow_choices",
    "flow_names",
    "parse_steps",
    "parse_duration",
    "parse_rate",
    "cron_problem",
    "limit_key",
    "closest",
    "BUILTIN_GROUPS",
    "SDK_NAMES",
    "WEB_ACTIONS",
    "STEP_OPTIONS",
    "NAME_RE",
    "SECRET_NAME_RE",
    "PLACEHOLDER_RE",
    "AGENTS_MD",
    "WEBHOOK_SCHEMES",
    "webhook_problems",
]
