"""What the engine needs to know about an agent, from the file contract.

Delegates to `foldrun.contract.resolve` (nearest wins: the agent's own, the
workspace's, the account library's, the gallery shelf) and packs the answer
into an `AgentSpec` the step runs with.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from foldrun.contract import Desk
from foldrun.contract.model import BUILTIN_GROUPS, SDK_NAMES, agents_md_of
from foldrun.contract.resolve import agent_skills, effective_limits, granted_tools, resolve_agent as contract_agent


class ResolveError(Exception):
    """A name that resolves to nothing; the message names it, `details` says what it was and the names there
    are (`what`, `name`, `choices`) for an API answer or the CLI's --json."""

    def __init__(self, message: str, *, details: dict | None = None) -> None:
        super().__init__(message)
        self.details = details or {}


@dataclass
class ToolFile:
    name: str  # the name it is granted as
    meta: dict
    body: str
    path: str
    scope: str
    transport: str
    folder_files: dict[str, str] = field(default_factory=dict)  # files beside tool.md, relative to its folder
    model: object = None  # the contract's Tool
    fail_closed: bool = False  # an agent's inline `apis:` entry: no generic tool when its openapi does not load


@dataclass
class AgentSpec:
    name: str
    meta: dict
    body: str
    path: str
    tools: list[str]
    builtin: set[str]
    tool_files: list[ToolFile]
    mcp_inline: dict[str, dict]
    skills: list[dict]
    account_defaults: dict
    workspace_defaults: dict
    limits: dict[str, int] = field(default_factory=dict)
    # The bodies of the account library's and the workspace's AGENTS.md, in that order: every agent reads them.
    house_rules: list[str] = field(default_factory=list)


def files_in_folder(desk: Desk, scope: str, folder: str | None) -> dict[str, str]:
    if not folder:
        return {}
    prefix = folder.rstrip("/") + "/"
    return {
        p[len(prefix) :]: t for p, t in desk.texts(scope).items() if p.startswith(prefix) and not p.endswith("/tool.md")
    }


def resolve_agent(desk: Desk, name: str) -> AgentSpec:
    """Raises ResolveError naming an unknown agent or a grant that resolves to nothing."""
    resolved = contract_agent(desk, name)
    if resolved is None:
        raise ResolveError(f"agent {name} is not in this workspace (agents/{name}/agent.md or agents/{name}.md)")
    agent = resolved.model
    builtin: set[str] = set()
    files: list[ToolFile] = []
    inline: dict[str, dict] = {}
    for grant in granted_tools(desk, name):
        if grant.kind == "builtin":
            builtin.add(SDK_NAMES.get(grant.name, grant.name))
        elif grant.kind == "mcp":
            server = grant.server
            inline[grant.name] = {
                "command": server.command,
                "args": server.args,
                "env": server.env,
                "url": server.url,
                "headers": server.headers,
            }
        elif grant.kind == "api":
            # An API declared inline in the agent: an http tool whose openapi: file is beside the agent
            # (or in the workspace), and which fails closed when that document does not load.
            api = grant.api
            files.append(
                ToolFile(
                    name=grant.name,
                    meta=dict(api.meta),
                    body="",
                    path=api.path,
                    scope=api.scope,
                    transport="http",
                    folder_files=files_in_folder(desk, api.scope, api.folder),
                    model=api,
                    fail_closed=True,
                )
            )
        elif grant.kind == "tool":
            tool = grant.tool
            document = grant.resolved.document
            files.append(
                ToolFile(
                    name=grant.name,
                    meta=dict(tool.meta),
                    body=document.body,
                    path=tool.path,
                    scope=tool.scope,
                    transport=tool.transport or "",
                    folder_files=files_in_folder(desk, tool.scope, tool.folder),
                    model=tool,
                )
            )
        else:
            raise ResolveError(
                f"agent {name} grants tool {grant.name}, which is not in the agent's tools/, the "
                f"workspace's tools/, the account library or the gallery"
            )
    skills = [
        {
            "name": s.model.name,
            "description": s.model.description,
            "path": s.path if s.scope in ("agent", "workspace") else f"library/{s.path}",
        }
        for s in agent_skills(desk, name)
    ]
    account = agents_md_of(desk, "library")
    workspace = agents_md_of(desk, "workspace")
    return AgentSpec(
        name=name,
        meta=dict(agent.meta),
        body=agent.prompt.strip(),
        path=agent.path,
        tools=list(agent.tools),
        builtin={b for b in builtin if b in BUILTIN_GROUPS},
        tool_files=files,
        mcp_inline=inline,
        skills=skills,
        account_defaults=dict(account.meta) if account else {},
        workspace_defaults=dict(workspace.meta) if workspace else {},
        limits=effective_limits(desk, name),
        house_rules=[d.body.strip() for d in (account, workspace) if d is not None and d.body.strip()],
    )
