"""Agents: their own keys, the tools they grant and the skills they name."""

from __future__ import annotations

from ..check import rule
from ..desk import AGENT, SKILL, TOOL
from ..findings import Finding
from ..model import BUILTIN_GROUPS, agent_of, agents_md_of, did_you_mean
from ..resolve import granted_tools, resolve_skill


@rule("agents.parse")
def parse(desk, context):
    for document in desk.of_kind(AGENT):
        if document.parsed is not None:
            yield from agent_of(desk, document).problems
    for scope in ("workspace",):
        defaults = agents_md_of(desk, scope)
        if defaults is not None:
            yield from defaults.problems


@rule("agents.grants")
def grants(desk, context):
    for document in desk.of_kind(AGENT):
        if document.parsed is None:
            continue
        agent = agent_of(desk, document)
        for grant in granted_tools(desk, document.name):
            if grant.kind != "missing":
                continue
            known = (
                desk.names(TOOL, agent=document.path_name)
                | set(BUILTIN_GROUPS)
                | set(agent.mcp_servers)
                | set(agent.apis)
                | {"web"}
            )
            hint = did_you_mean(grant.name, known) or "; add tools/" + grant.name + ".md or fix the name."
            yield Finding(
                document.path,
                document.line_in("tools", grant.name),
                "error",
                f"tools: grants {grant.name}, which is not a built-in group, an MCP server or a tool in this agent's folder, the workspace, the account library or the gallery{hint}",
                "agents.tool_missing",
            )


@rule("agents.skills")
def skills(desk, context):
    for document in desk.of_kind(AGENT):
        if document.parsed is None:
            continue
        agent = agent_of(desk, document)
        for name in agent.skills or []:
            if resolve_skill(desk, document.name, name) is not None:
                continue
            hint = (
                did_you_mean(name, desk.names(SKILL, agent=document.path_name))
                or f"; add skills/{name}/SKILL.md or fix the name."
            )
            yield Finding(
                document.path,
                document.line_in("skills", name),
                "error",
                f"skills: names {name}, which is not a skill in this agent's folder, the workspace, .agents/skills/ or the account library{hint}",
                "agents.skill_missing",
            )
