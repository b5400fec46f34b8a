"""Nearest-wins resolution, for runs, deploy and check.

    resolve_agent(desk, name) -> Resolved | None
    resolve_tool(desk, agent_name, tool_name) -> Resolved | None
    resolve_skill(desk, agent_name, skill_name) -> Resolved | None
    granted_tools(desk, agent_name) -> [Grant]     (what `tools:` and `mcpServers:` give the agent)
    agent_skills(desk, agent_name) -> [Resolved]   (the skills whose names and descriptions sit in context)
    effective_limits(desk, agent_name, step=None) -> {canonical key: int}
    step_secrets(desk, agent_name) -> {NAME: where it was declared}
    concept_layers(desk, agent_name, "knowledge"|"memory") -> [(scope, directory)]   nearest first
    visible_concepts(desk, agent_name, "knowledge"|"memory") -> {relative path: Resolved}

Order: the agent's own (agents/<name>/tools|skills), the workspace's, the
account library's (`Desk.library`), the gallery shelf (`Desk.gallery`). The
gallery's `web` exists in every account, so `web` always resolves — to the
shelf's copy when there is one, else to WEB_TOOL_TEXT below
(transport: builtin, gallery: true, like foldrun/gallery/tools/web/tool.md).

`Resolved.scope` is "agent", "workspace", "library" or "gallery";
`Resolved.model` is the parsed Tool / Skill / Agent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .desk import AGENT, CONCEPT, SKILL, TOOL, Desk, Document, make_document
from .model import (
    BUILTIN_GROUPS,
    SDK_NAMES,
    McpServer,
    Step,
    Tool,
    agent_of,
    agents_md_of,
    concept_of,
    is_whole,
    limit_key,
    skill_of,
    tool_of,
)

WEB_TOOL_PATH = "tools/web/tool.md"
WEB_TOOL_TEXT = """---
name: web
transport: builtin
gallery: true
description: The web — search, fetch, browse, crawl, map, extract, answer, monitor. Call it with action= and the action's arguments.
---
"""


@dataclass
class Resolved:
    document: Document
    scope: str  # agent | workspace | library | gallery
    model: Any = None  # Tool | Skill | Agent

    @property
    def path(self) -> str:
        return self.document.path


@dataclass
class Grant:
    """One name an agent grants and what it turned out to be."""

    name: str
    kind: str  # builtin | tool | api | mcp | missing
    resolved: Resolved | None = None  # for kind "tool"
    server: McpServer | None = None  # for kind "mcp" (inline mcpServers:)
    api: Tool | None = None  # for kind "api" (the agent's inline apis:)

    @property
    def tool(self):
        return self.resolved.model if self.resolved else self.api


def web_document(desk: Desk) -> Document:
    key = ("web-document",)
    if key not in desk.cache:
        desk.cache[key] = make_document(WEB_TOOL_PATH, WEB_TOOL_TEXT, "gallery")
    return desk.cache[key]


def _first(documents: list[Document]) -> Document | None:
    # Two files claiming one name in one scope is a `check` error; pick a
    # stable one so runs are deterministic meanwhile. Prefer skills/ over .agents/skills/.
    usable = [d for d in documents if d.parsed is not None]
    if not usable:
        return None
    return sorted(usable, key=lambda d: (".agents/" in d.path, d.path))[0]


def _named(desk: Desk, kind: str, name: str, scope: str, agent: str | None) -> Document | None:
    # desk-email and desk_email are one name
    return _first(desk.named_loosely(kind, name, scope=scope, agent=agent))


def agent_folder(desk: Desk, agent_name: str) -> str:
    """The folder name under agents/ holding an agent's own files. It is the
    agent's name unless its `name:` differs from its path (check warns)."""
    found = _first(desk.named(AGENT, agent_name, scope="workspace"))
    return found.path_name if found is not None else agent_name


def _search(desk: Desk, kind: str, agent_name: str | None, name: str) -> tuple[Document, str] | None:
    if agent_name:
        own = _named(desk, kind, name, "workspace", agent_folder(desk, agent_name))
        if own:
            return own, "agent"
    for scope in ("workspace", "library", "gallery"):
        found = _named(desk, kind, name, scope, None)
        if found:
            return found, scope
    return None


def resolve_tool(desk: Desk, agent_name: str | None, tool_name: str) -> Resolved | None:
    """The tool file `agent_name` gets for `tool_name`, nearest first; None when there is none."""
    key = ("resolve", TOOL, agent_name, tool_name)
    if key not in desk.cache:
        hit = _search(desk, TOOL, agent_name, tool_name)
        if hit is None and tool_name == "web":
            hit = (web_document(desk), "gallery")
        desk.cache[key] = Resolved(hit[0], hit[1], tool_of(desk, hit[0])) if hit else None
    return desk.cache[key]


def resolve_skill(desk: Desk, agent_name: str | None, skill_name: str) -> Resolved | None:
    key = ("resolve", SKILL, agent_name, skill_name)
    if key not in desk.cache:
        hit = _search(desk, SKILL, agent_name, skill_name)
        desk.cache[key] = Resolved(hit[0], hit[1], skill_of(desk, hit[0])) if hit else None
    return desk.cache[key]


def resolve_agent(desk: Desk, agent_name: str) -> Resolved | None:
    """Agents live in the workspace; the gallery shelf's few (the browser agent of a task) lie beneath it,
    so a workspace agent of the same name wins."""
    key = ("resolve", AGENT, None, agent_name)
    if key not in desk.cache:
        found = _first(desk.named(AGENT, agent_name, scope="workspace"))
        scope = "workspace"
        if found is None:
            found, scope = _first(desk.named(AGENT, agent_name, scope="gallery")), "gallery"
        desk.cache[key] = Resolved(found, scope, agent_of(desk, found)) if found else None
    return desk.cache[key]


def granted_tools(desk: Desk, agent_name: str) -> list[Grant]:
    """Every grant of the agent, in the order written; inline apis: then mcpServers: last."""
    key = ("grants", agent_name)
    if key in desk.cache:
        return desk.cache[key]
    resolved_agent = resolve_agent(desk, agent_name)
    grants: list[Grant] = []
    if resolved_agent is not None:
        agent = resolved_agent.model
        seen: set[str] = set()
        for name in agent.tools:
            if name in seen:
                continue
            seen.add(name)
            if name in BUILTIN_GROUPS or name in SDK_NAMES:
                grants.append(Grant(name, "builtin"))
                continue
            if name in agent.mcp_servers:
                grants.append(Grant(name, "mcp", server=agent.mcp_servers[name]))
                continue
            if name in agent.apis:
                grants.append(Grant(name, "api", api=agent.apis[name]))
                continue
            hit = resolve_tool(desk, agent_name, name)
            grants.append(Grant(name, "tool", resolved=hit) if hit else Grant(name, "missing"))
        # An API the agent declares is granted by declaring it (as an inline MCP server is).
        for name, api in agent.apis.items():
            if name not in seen:
                seen.add(name)
                grants.append(Grant(name, "api", api=api))
        for name, server in agent.mcp_servers.items():
            if name not in seen:
                grants.append(Grant(name, "mcp", server=server))
    desk.cache[key] = grants
    return grants


def agent_skills(desk: Desk, agent_name: str) -> list[Resolved]:
    """The skills the agent carries: those it lists in `skills:`, else every
    one it can see (its own, the workspace's, .agents/skills/, the library's,
    the shelf's), nearest wins per name."""
    resolved_agent = resolve_agent(desk, agent_name)
    if resolved_agent is None:
        return []
    listed = resolved_agent.model.skills
    if listed is not None:
        names = listed
    else:
        names = sorted(desk.names(SKILL, agent=agent_folder(desk, agent_name)))
    result = []
    for name in names:
        hit = resolve_skill(desk, agent_name, name)
        if hit:
            result.append(hit)
    return result


def _limits_from(mapping: dict) -> dict[str, int]:
    return {limit_key(k): v for k, v in mapping.items() if is_whole(v, 1)}


def effective_limits(desk: Desk, agent_name: str, step: Step | None = None) -> dict[str, int]:
    """Nearest wins per key: the account's AGENTS.md, the workspace's, the
    agent's own, the flow step's `limits:`. Unreadable values are left out
    (check reports them)."""
    limits: dict[str, int] = {}
    for scope in ("library", "workspace"):
        defaults = agents_md_of(desk, scope)
        if defaults is not None:
            limits.update(_limits_from(defaults.limits))
    resolved_agent = resolve_agent(desk, agent_name)
    if resolved_agent is not None:
        limits.update(_limits_from(resolved_agent.model.limits))
    if step is not None:
        limits.update(_limits_from(step.limits))
    return limits


def step_secrets(desk: Desk, agent_name: str) -> dict[str, str]:
    """Vault names a step of this agent receives -> where each was declared
    ("agent" or "tool <name>"). A name in both places is granted once."""
    secrets: dict[str, str] = {}
    resolved_agent = resolve_agent(desk, agent_name)
    if resolved_agent is None:
        return secrets
    for name in resolved_agent.model.secrets:
        secrets.setdefault(name, "agent")
    for grant in granted_tools(desk, agent_name):
        names = grant.tool.secret_names if grant.tool else grant.server.secret_names if grant.server else []
        for name in names:
            secrets.setdefault(name, f"tool {grant.name}")
    return secrets


def concept_layers(desk: Desk, agent_name: str | None, directory: str = "knowledge") -> list[tuple[str, str]]:
    """Where an agent's knowledge/ (or memory/) comes from, nearest first:
    its own folder's, the workspace's, the account library's."""
    if directory not in ("knowledge", "memory"):
        raise ValueError("directory is 'knowledge' or 'memory'")
    layers = [("agent", f"agents/{agent_folder(desk, agent_name)}/{directory}")] if agent_name else []
    return layers + [("workspace", directory), ("library", directory)]


def visible_concepts(desk: Desk, agent_name: str | None, directory: str = "knowledge") -> dict[str, Resolved]:
    """Every concept the agent reads in `directory`, by path relative to it;
    a nearer file shadows a farther one of the same relative path. The
    generated index.md and log.md are not concepts."""
    found: dict[str, Resolved] = {}
    for scope, folder in concept_layers(desk, agent_name, directory):
        pool = "library" if scope == "library" else "workspace"
        for path in desk.files_under(pool, folder):
            relative = path[len(folder) + 1 :]
            if relative in found:
                continue
            document = _document_at(desk, pool, path)
            if document is None or document.kind != CONCEPT:
                continue
            found[relative] = Resolved(document, scope, concept_of(desk, document) if document.parsed else None)
    return found


def _document_at(desk: Desk, scope: str, path: str) -> Document | None:
    key = ("documents-by-path", scope)
    if key not in desk.cache:
        desk.cache[key] = {d.path: d for d in desk.pool(scope)}
    return desk.cache[key].get(path)
