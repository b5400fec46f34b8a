"""AGENTS.md and agent files parsed: agents_md_of, agent_of, and the mcpServers: blocks they and mcp tools share."""

from __future__ import annotations

import re
from typing import Any, Callable

from ..desk import Desk, Document
from ..findings import Finding
from .apis import apis_of
from .records import Agent, Defaults, McpServer
from .values import cached_model, as_str, timezone_problems, as_list


def agents_md_of(desk: Desk, scope: str = "workspace") -> Defaults | None:
    document = desk.agents_md(scope)
    if document is None:
        return None

    def build() -> Defaults:
        meta = document.meta
        limits = meta.get("limits")
        defaults = Defaults(
            path=document.path,
            scope=scope,
            notify=meta.get("notify"),
            limits=limits if isinstance(limits, dict) else {},
            web=meta.get("web"),
            provider=meta.get("provider"),
            language=meta.get("language"),
            region=meta.get("region"),
            timezone=meta.get("timezone"),
            budget=meta.get("budget"),
            body=document.body,
            meta=meta,
        )
        if limits is not None and not isinstance(limits, dict):
            defaults.problems.append(_limits_not_mapping(document.path, document.line_of("limits"), "limits:"))
        timezone_problems(document, meta.get("timezone"), defaults.problems)
        budget = meta.get("budget")
        if budget is not None:
            window = _budget_window(budget)
            if window is None:
                defaults.problems.append(
                    Finding(
                        document.path,
                        document.line_of("budget"),
                        "error",
                        "budget: must be the workspace's spend for one window, such as budget: {month: 50} — day, week or month, in USD.",
                        "agents_md.budget",
                    )
                )
            else:
                defaults.budget_window = window
        return defaults

    return cached_model(desk, document, "defaults", build)


def _budget_window(value: Any) -> tuple[str, float] | None:
    """`{month: 50}` -> ("month", 50.0); None when it is not one window and a positive amount."""
    if not isinstance(value, dict) or len(value) != 1:
        return None
    ((window, amount),) = value.items()
    if (
        window not in ("day", "week", "month")
        or isinstance(amount, bool)
        or not isinstance(amount, (int, float))
        or amount <= 0
    ):
        return None
    return str(window), float(amount)


def _limits_not_mapping(path: str, line: int | None, where: str) -> Finding:
    return Finding(
        path,
        line,
        "error",
        f"{where} must be a mapping of keys to whole numbers, such as limits: {{web.search: 40, calls: 300}}.",
        "limits.not_mapping",
    )


def parse_mcp_server(name: str, block: Any) -> McpServer | None:
    if not isinstance(block, dict):
        return None
    args = block.get("args") or []
    env = block.get("env") or {}
    headers = block.get("headers") or {}
    return McpServer(
        name=name,
        command=as_str(block.get("command")) or None,
        args=[str(a) for a in args] if isinstance(args, list) else [str(args)],
        env={str(k): as_str(v) for k, v in env.items()} if isinstance(env, dict) else {},
        url=as_str(block.get("url")) or None,
        headers={str(k): as_str(v) for k, v in headers.items()} if isinstance(headers, dict) else {},
    )


def mcp_problems(path: str, line_of: Callable[[str], int | None], server: McpServer, where: str) -> list[Finding]:
    """`line_of(key)` is the file line of the server block's own `key`
    (url, command), or of the block itself when `key` is ""."""
    if server.command and server.url:
        return [
            Finding(
                path,
                line_of("url"),
                "error",
                f"{where} has both command: and url:; give command: (a local process) or url: (a remote endpoint), not both.",
                "mcp.both",
            )
        ]
    if not server.command and not server.url:
        return [
            Finding(
                path,
                line_of(""),
                "error",
                f"{where} has neither command: nor url:; give command: (with args: and env:) for a local process or url: (with headers:) for a remote endpoint.",
                "mcp.neither",
            )
        ]
    if server.url and not re.match(r"^https?://", server.url):
        return [Finding(path, line_of("url"), "error", f"{where} has url: that is not an http(s) URL.", "mcp.url")]
    return []


def _names(value: Any) -> list[str]:
    """A `secrets:` list as written (strings only; check reports the rest)."""
    if isinstance(value, list):
        return [item.strip() for item in value if isinstance(item, str) and item.strip()]
    if isinstance(value, str):
        return as_list(value)
    return []


def agent_of(desk: Desk, document: Document) -> Agent:
    """The Agent an agent file describes (cached)."""

    def build() -> Agent:
        meta = document.meta
        path = document.path
        problems: list[Finding] = []
        tools_value = meta.get("tools")
        if tools_value is not None and not isinstance(tools_value, (list, str)):
            problems.append(
                Finding(
                    path,
                    document.line_of("tools"),
                    "error",
                    "tools: must be a list of names, such as tools: [web, read].",
                    "agent.tools",
                )
            )
        skills_value = meta.get("skills")
        limits = meta.get("limits")
        if limits is not None and not isinstance(limits, dict):
            problems.append(_limits_not_mapping(path, document.line_of("limits"), "limits:"))
        servers: dict[str, McpServer] = {}
        raw_servers = meta.get("mcpServers")
        if raw_servers is not None:
            if isinstance(raw_servers, list):  # [{name: x, url: …}]
                raw_servers = {str(s.get("name")): s for s in raw_servers if isinstance(s, dict) and s.get("name")}
            if not isinstance(raw_servers, dict):
                problems.append(
                    Finding(
                        path,
                        document.line_of("mcpServers"),
                        "error",
                        "mcpServers: must be a mapping of server names to command: or url: blocks.",
                        "agent.mcp",
                    )
                )
            else:
                for server_name, block in raw_servers.items():
                    server = parse_mcp_server(str(server_name), block)
                    line = document.line_in("mcpServers", server_name)
                    if server is None:
                        problems.append(
                            Finding(
                                path,
                                line,
                                "error",
                                f"mcpServers: {server_name} must be a mapping with command: or url:.",
                                "agent.mcp",
                            )
                        )
                        continue
                    problems.extend(
                        mcp_problems(
                            path,
                            lambda key, name=server_name, at=line: (
                                (document.line_at("mcpServers", name, key) if key else None) or at
                            ),
                            server,
                            f"mcpServers: {server_name}",
                        )
                    )
                    servers[server.name] = server
        apis = apis_of(desk, document, meta.get("apis"), problems)
        timezone_problems(document, meta.get("timezone"), problems)
        folder = document.folder if document.path.endswith("/agent.md") else None
        return Agent(
            name=document.name,
            path=path,
            description=as_str(meta.get("description")),
            tools=as_list(tools_value) if isinstance(tools_value, (list, str)) else [],
            skills=as_list(skills_value) if skills_value is not None else None,
            secrets=_names(meta.get("secrets")),
            limits=limits if isinstance(limits, dict) else {},
            web=meta.get("web"),
            provider=meta.get("provider"),
            mcp_servers=servers,
            apis=apis,
            language=meta.get("language"),
            region=meta.get("region"),
            timezone=meta.get("timezone"),
            prompt=document.body.strip("\n"),
            own_folder=folder,
            meta=meta,
            problems=problems,
        )

    return cached_model(desk, document, "agent", build)
