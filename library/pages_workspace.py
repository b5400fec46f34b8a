"""The workspace page: the desk's files as a tree, each agent with the tools
it grants and where each resolves, each flow with its steps — and the parts
the apps above library fill in (pageparts)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from accounts.models import Workspace
from foldrun import pageparts
from foldrun.contract.desk import Desk
from foldrun.contract.model import flow_of
from foldrun.contract.resolve import granted_tools

from . import services
from .models import Changeset
from .pages import page_workspace
from .signals import workspace_parts


# ---------------------------------------------------------------- the file tree


@dataclass
class TreeRow:
    depth: int
    name: str
    is_dir: bool
    path: str = ""
    size: int = 0


def file_tree(sizes: dict[str, int]) -> list[TreeRow]:
    """Paths as an indented tree: a row per folder (once) and per file, with sizes."""
    rows: list[TreeRow] = []
    seen: set[str] = set()
    for path in sorted(sizes):
        parts = path.split("/")
        for depth in range(len(parts) - 1):
            folder = "/".join(parts[: depth + 1])
            if folder not in seen:
                seen.add(folder)
                rows.append(TreeRow(depth, parts[depth] + "/", True, folder))
        rows.append(TreeRow(len(parts) - 1, parts[-1], False, path, sizes[path]))
    return rows


# ---------------------------------------------------------------- desks


# Where a granted name resolved, in words for the page.
_SCOPE_WORDS = {"agent": "agent's own", "workspace": "workspace", "library": "library", "gallery": "gallery"}


def _tool_rows(desk: Desk, agent_name: str) -> list[dict[str, str]]:
    """Each name the agent grants and where it resolves — the same
    `granted_tools` a run uses, so the page and the run agree."""
    rows = []
    for grant in granted_tools(desk, agent_name):
        if grant.kind == "builtin":
            scope, path = "built-in", ""
        elif grant.kind == "mcp":
            scope, path = "inline MCP", ""
        elif grant.kind == "api" and grant.api is not None:
            scope, path = "inline API", grant.api.path
        elif grant.kind == "tool" and grant.resolved is not None:
            scope, path = _SCOPE_WORDS.get(grant.resolved.scope, grant.resolved.scope), grant.resolved.path
        else:
            scope, path = "missing", ""
        rows.append({"name": grant.name, "scope": scope, "path": path})
    return rows


def _step_row(step) -> dict[str, Any]:
    return {
        "n": step.number,
        "agent": step.agent,
        "task": step.task,
        "gate": step.gate,
        "ask": step.ask,
        "each": step.each,
        "verify": f"{step.verify.kind} {step.verify.argument}" if step.verify else "",
    }


def workspace_view(workspace: Workspace) -> dict[str, Any]:
    """The workspace page's data: `services.workspace_overview`, with each
    granted tool resolved (nearest wins) and each flow's steps, read by the
    file contract."""
    overview = services.workspace_overview(workspace)
    desk = services.desk_for_workspace(workspace)
    agents = [{**entry, "tools": _tool_rows(desk, entry["name"])} for entry in overview["agents"]]
    flows = []
    for entry in overview["flows"]:
        document = next((d for d in desk.documents if d.path == entry["path"]), None)
        if document is None or document.parsed is None:
            flows.append(
                {
                    **entry,
                    "schedule": str(entry.get("schedule") or ""),
                    "timezone": "",
                    "steps": [],
                    "problem": document.error.message if document and document.error else "",
                }
            )
            continue
        flow = flow_of(desk, document)
        errors = [f for f in flow.problems if f.level == "error"]
        flows.append(
            {
                **entry,
                "schedule": flow.schedule or "",
                "timezone": flow.timezone or "",
                "steps": [_step_row(step) for step in flow.steps],
                "inputs": [
                    {"name": str(k), "default": "" if v is None else str(v)} for k, v in (flow.inputs or {}).items()
                ],
                "problem": errors[0].message if errors else "",
            }
        )
    return {"agents": agents, "flows": flows, "files": overview["files"]}


# ---------------------------------------------------------------- the page


@login_required
def workspace_page(request: HttpRequest, ws: str) -> HttpResponse:
    membership, workspace, can_write = page_workspace(request, ws)
    overview = workspace_view(workspace)
    sizes = {f["path"]: f["size"] for f in overview["files"]}
    changesets = list(Changeset.objects.filter(workspace=workspace).select_related("author").order_by("-number")[:25])
    context = {
        "section": "workspace",
        "workspace": workspace,
        "can_write": can_write,
        "agents": overview["agents"],
        "flows": overview["flows"],
        "tree": file_tree(sizes),
        "total_size": sum(sizes.values()),
        "file_count": len(sizes),
        "changesets": changesets,
    }
    # The apps above library fill in their parts: vault the secrets the desk needs and whether they are
    # held, runs its recent runs, Run buttons and runs-per-day chart.
    context.update(pageparts.fill(workspace_parts, Workspace, workspace=workspace))
    return render(request, "library/workspace.html", context)
