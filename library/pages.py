"""Server-rendered pages over library files: the workspace page, file views
with history and diffs, revision diffs, and the Library page.

Every page needs a signed-in member; a workspace is found through
`accounts.access.workspace_for_user`, so another account's workspace is a
404 exactly like a missing one. Writes (the gallery update) need a write
role; a viewer's POST is a 403.
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.access import current_membership, workspace_for_user
from accounts.models import Membership, Workspace
from foldrun.contract.desk import AGENT, FLOW, SKILL, TOOL, Desk, classify

from .actions import files_at
from .models import Changeset, LibraryFile, Revision, scope_key_for

# Built-in tool groups: granted by name, resolved by nobody's files.
BUILTIN_GROUPS = {"read", "write", "code", "search", "history", "ask", "desks"}


def _membership(request: HttpRequest) -> Membership:
    membership = current_membership(request)
    if membership is None:
        raise Http404
    return membership


def _require_write(membership: Membership) -> None:
    if not membership.can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")


def _int_or_none(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except ValueError:
        raise Http404 from None
    if number < 0:
        raise Http404
    return number


# ---------------------------------------------------------------- diffs


@dataclass
class DiffLine:
    kind: str  # add | del | hunk | meta | same
    text: str


def diff_lines(old: str, new: str, old_label: str, new_label: str) -> list[DiffLine]:
    """A unified diff as classed lines for the template."""
    lines: list[DiffLine] = []
    for raw in difflib.unified_diff(
        old.splitlines(), new.splitlines(), fromfile=old_label, tofile=new_label, lineterm="", n=3
    ):
        if raw.startswith("+++") or raw.startswith("---"):
            kind = "meta"
        elif raw.startswith("@@"):
            kind = "hunk"
        elif raw.startswith("+"):
            kind = "add"
        elif raw.startswith("-"):
            kind = "del"
        else:
            kind = "same"
        lines.append(DiffLine(kind, raw))
    return lines


# ---------------------------------------------------------------- one scope's files


def _history(scope_key: str, path: str) -> list[Revision]:
    return list(
        Revision.objects.filter(file__scope_key=scope_key, file__path=path)
        .select_related("changeset", "changeset__author")
        .order_by("-number")
    )


def _at(history: list[Revision], number: int | None) -> Revision | None:
    """The file's revision as changeset `number` left it (newest when None)."""
    for revision in history:
        if number is None or revision.number <= number:
            return revision
    return None


def _content_at(history: list[Revision], number: int) -> str:
    revision = _at(history, number)
    return "" if revision is None or revision.deleted else revision.content


def _file_context(request: HttpRequest, scope_key: str, path: str, label: str) -> dict[str, Any]:
    history = _history(scope_key, path)
    if not history:
        raise Http404
    at = _int_or_none(request.GET.get("at"))
    revision = _at(history, at)
    if revision is None:
        raise Http404
    context: dict[str, Any] = {
        "path": path,
        "history": history,
        "revision": revision,
        "at": at,
        "head": history[0],
        "numbers": [r.number for r in history],
    }
    a, b = _int_or_none(request.GET.get("from")), _int_or_none(request.GET.get("to"))
    if a is not None or b is not None:
        a = a if a is not None else (history[1].number if len(history) > 1 else 0)
        b = b if b is not None else history[0].number
        context["diff_from"], context["diff_to"] = a, b
        context["diff"] = diff_lines(
            _content_at(history, a), _content_at(history, b), f"{label}{path} @{a}", f"{label}{path} @{b}"
        )
    # Each revision's diff against the one before it, for the history links.
    for i, item in enumerate(history):
        item.previous_number = history[i + 1].number if i + 1 < len(history) else None  # type: ignore[attr-defined]
    return context


def _changeset_context(changeset: Changeset, label: str) -> dict[str, Any]:
    files = []
    for revision in changeset.revisions.select_related("file").order_by("file__path"):
        before = (
            Revision.objects.filter(file_id=revision.file_id, number__lt=revision.number).order_by("-number").first()
        )
        old = "" if before is None or before.deleted else before.content
        new = "" if revision.deleted else revision.content
        status = "deleted" if revision.deleted else ("added" if before is None or before.deleted else "changed")
        files.append(
            {
                "path": revision.file.path,
                "status": status,
                "revision": revision,
                "diff": diff_lines(old, new, f"{label}{revision.file.path} @{before.number if before else 0}",
                                   f"{label}{revision.file.path} @{revision.number}"),
            }
        )
    return {"changeset": changeset, "files": files}


@dataclass
class TreeRow:
    depth: int
    name: str
    is_dir: bool
    path: str = ""
    size: int = 0


def file_tree(revisions: dict[str, Revision]) -> list[TreeRow]:
    """Paths as an indented tree: a row per folder (once) and per file, with sizes."""
    rows: list[TreeRow] = []
    seen: set[str] = set()
    for path in sorted(revisions):
        parts = path.split("/")
        for depth in range(len(parts) - 1):
            folder = "/".join(parts[: depth + 1])
            if folder not in seen:
                seen.add(folder)
                rows.append(TreeRow(depth, parts[depth] + "/", True, folder))
        rows.append(TreeRow(len(parts) - 1, parts[-1], False, path, revisions[path].size))
    return rows


# ---------------------------------------------------------------- desks


_STEP = re.compile(r"^\s*(?P<n>\d+)\.\s+\[\[(?P<agent>[^\]]+)\]\]\s*(?P<gate>!)?\s*(?:[—–-]+\s*(?P<task>.*))?$")


def flow_steps(body: str) -> list[dict[str, Any]]:
    """The numbered `[[agent]] — task` lines of a flow body, for display only."""
    steps = []
    for line in body.splitlines():
        match = _STEP.match(line)
        if match:
            steps.append({"n": int(match["n"]), "agent": match["agent"].strip(), "gate": bool(match["gate"]),
                          "task": (match["task"] or "").strip()})
    return steps


def _agent_folder(path: str) -> str:
    parts = path.split("/")
    return parts[1][:-3] if len(parts) == 2 else parts[1]


def _granted(meta: dict) -> list[str]:
    tools = meta.get("tools") or []
    if isinstance(tools, str):
        tools = [t.strip() for t in tools.split(",")]
    names = []
    for entry in tools if isinstance(tools, list) else []:
        if isinstance(entry, str):
            names.append(entry.strip())
        elif isinstance(entry, dict) and entry:
            names.append(str(next(iter(entry))))
    return [n for n in names if n]


def _tool_names(documents, *, agent: str | None) -> dict[str, str]:
    """Tool name → path of the document defining it, among `documents` owned by `agent`."""
    return {d.name: d.path for d in documents if d.kind == TOOL and d.agent == agent and d.name}


def _skill_names(documents, *, agent: str | None) -> dict[str, str]:
    return {d.name: d.path for d in documents if d.kind == SKILL and d.agent == agent and d.name}


def _gallery_files() -> dict[str, str]:
    try:
        from foldrun.gallery import gallery_files
    except ImportError:  # pragma: no cover - the shelf ships with the package
        return {}
    return gallery_files()


def _gallery_tools() -> dict[str, dict[str, str]]:
    try:
        from foldrun.gallery import gallery_tools
    except ImportError:  # pragma: no cover
        return {}
    return gallery_tools()


@dataclass
class DeskView:
    workspace: Workspace
    revisions: dict[str, Revision]
    desk: Desk

    @property
    def agents(self):
        return [d for d in self.desk.documents if d.kind == AGENT]


def desk_view(workspace: Workspace, library: dict[str, Revision] | None = None) -> DeskView:
    revisions = files_at(workspace.account, workspace)
    library = library if library is not None else files_at(workspace.account, None)
    desk = Desk(
        files={p: r.content for p, r in revisions.items()},
        library={p: r.content for p, r in library.items()},
        gallery=_gallery_files(),
    )
    return DeskView(workspace, revisions, desk)


def _resolve_tool(name: str, agent_folder: str, view: DeskView) -> tuple[str, str]:
    """(where the tool named `name` resolves for this agent, the path) — nearest wins."""
    if name in BUILTIN_GROUPS:
        return "built-in", ""
    documents = view.desk.documents
    for scope, table in (
        ("agent's own", _tool_names(documents, agent=agent_folder)),
        ("workspace", _tool_names(documents, agent=None)),
        ("library", _tool_names(view.desk.library_documents, agent=None)),
        ("gallery", _tool_names(view.desk.gallery_documents, agent=None)),
    ):
        if name in table:
            return scope, table[name]
    return "missing", ""


def workspace_overview(view: DeskView) -> dict[str, Any]:
    agents = []
    for document in view.agents:
        folder = _agent_folder(document.path)
        tools = []
        for name in _granted(document.meta):
            scope, path = _resolve_tool(name, folder, view)
            tools.append({"name": name, "scope": scope, "path": path})
        agents.append({"name": document.name or folder, "path": document.path,
                       "description": str(document.meta.get("description") or ""), "tools": tools,
                       "error": document.error})
    flows = []
    for document in view.desk.documents:
        if document.kind != FLOW:
            continue
        meta = document.meta
        flows.append({"name": str(meta.get("name") or document.name), "path": document.path,
                      "schedule": str(meta.get("schedule") or ""), "timezone": str(meta.get("timezone") or ""),
                      "steps": flow_steps(document.parsed.body if document.parsed else ""),
                      "error": document.error})
    return {"agents": agents, "flows": flows}


# ---------------------------------------------------------------- the Library page


@dataclass
class Grant:
    workspace: str
    agent: str
    overridden_by: str = ""   # the nearer copy that wins for this agent, e.g. "rank-desk/tools/sql.md"
    override_scope: str = ""  # "workspace" or "agent's own"

    @property
    def overridden(self) -> bool:
        return bool(self.overridden_by)


@dataclass
class SharedItem:
    kind: str               # tool | skill | file
    name: str
    source: str             # library | gallery
    paths: list[str]
    main_path: str
    description: str = ""
    gallery_mark: str = ""  # "" | current | differs
    gallery_tool: str = ""
    reaches_all: bool = False  # discovered by every agent (skills), not granted by name
    grants: list[Grant] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)
    head: Revision | None = None

    @property
    def anchor(self) -> str:
        return f"{self.kind}-{re.sub(r'[^a-z0-9-]+', '-', self.name.lower())}"

    @property
    def active_grants(self) -> list[Grant]:
        return [g for g in self.grants if not g.overridden]

    @property
    def overridden_grants(self) -> list[Grant]:
        return [g for g in self.grants if g.overridden]


def _item_key(path: str) -> tuple[str, str]:
    kind, agent, name = classify(path)
    parts = path.split("/")
    if parts[0] == "tools" and len(parts) >= 2 and (kind == TOOL or name):
        return "tool", name or parts[1]
    if parts[0] == "skills" and len(parts) >= 2:
        return "skill", name or parts[1]
    return "file", path


def _gallery_mark(library: dict[str, Revision], tool: str, shelf: dict[str, str]) -> str:
    """current when the library's copy is the shelf's files exactly, else differs."""
    from .actions import sha256_text

    ours = {p: r.sha256 for p, r in library.items() if _item_key(p) == ("tool", tool)}
    theirs = {p: sha256_text(t) for p, t in shelf.items()}
    return "current" if ours == theirs else "differs"


def library_overview(account) -> list[SharedItem]:
    """Every shared file of the account library and every gallery tool, each
    with the agents that reach it and where a nearer copy overrides it."""
    library = files_at(account, None)
    shelf_tools = _gallery_tools()
    items: dict[tuple[str, str], SharedItem] = {}
    for path in sorted(library):
        kind, name = _item_key(path)
        item = items.get((kind, name))
        if item is None:
            item = items[(kind, name)] = SharedItem(kind=kind, name=name, source="library", paths=[], main_path=path)
        item.paths.append(path)
        node_kind, _, _ = classify(path)
        if node_kind in (TOOL, SKILL):
            item.main_path = path
    for (kind, name), item in items.items():
        heads = [library[p] for p in item.paths]
        item.head = max(heads, key=lambda r: r.number)
        tagged = [r.gallery_tool for r in heads if r.gallery_tool]
        if kind == "tool" and (tagged or name in shelf_tools) and name in shelf_tools:
            item.gallery_tool = name
            item.gallery_mark = _gallery_mark(library, name, shelf_tools[name])
        item.reaches_all = kind == "skill"
    for name, files in sorted(shelf_tools.items()):
        if ("tool", name) in items:
            continue
        main = next((p for p in files if p.endswith("tool.md") or p == f"tools/{name}.md"), sorted(files)[0])
        items[("tool", name)] = SharedItem(kind="tool", name=name, source="gallery", paths=sorted(files),
                                          main_path=main, gallery_tool=name, gallery_mark="shelf")

    # Descriptions, from the defining document.
    from foldrun.contract.desk import make_document

    for item in items.values():
        text = library[item.main_path].content if item.source == "library" else shelf_tools[item.name][item.main_path]
        document = make_document(item.main_path, text, item.source)
        item.description = str(document.meta.get("description") or "").strip()

    # Who reaches each item, workspace by workspace.
    for workspace in Workspace.objects.filter(account=account).order_by("name"):
        view = desk_view(workspace, library)
        ws_tools = _tool_names(view.desk.documents, agent=None)
        ws_skills = _skill_names(view.desk.documents, agent=None)
        for agent_doc in view.agents:
            folder = _agent_folder(agent_doc.path)
            agent_name = agent_doc.name or folder
            own_tools = _tool_names(view.desk.documents, agent=folder)
            own_skills = _skill_names(view.desk.documents, agent=folder)
            granted = set(_granted(agent_doc.meta))
            for (kind, name), item in items.items():
                if kind == "tool" and name in granted:
                    own, ws = own_tools.get(name), ws_tools.get(name)
                elif kind == "skill":
                    own, ws = own_skills.get(name), ws_skills.get(name)
                else:
                    continue
                grant = Grant(workspace=workspace.name, agent=agent_name)
                if own:
                    grant.overridden_by, grant.override_scope = f"{workspace.name}/{own}", "agent's own"
                elif ws:
                    grant.overridden_by, grant.override_scope = f"{workspace.name}/{ws}", "workspace"
                item.grants.append(grant)

    # Each library item's revisions, newest first, one row per changeset.
    paths = [p for item in items.values() if item.source == "library" for p in item.paths]
    by_path: dict[str, list[Revision]] = {}
    for revision in (
        Revision.objects.filter(file__scope_key=scope_key_for(account, None), file__path__in=paths)
        .select_related("file", "changeset", "changeset__author")
        .order_by("-number")
    ):
        by_path.setdefault(revision.file.path, []).append(revision)
    for item in items.values():
        rows: dict[int, dict[str, Any]] = {}
        for path in item.paths:
            history = by_path.get(path, [])
            for i, revision in enumerate(history):
                row = rows.setdefault(revision.number, {"changeset": revision.changeset, "files": []})
                before = history[i + 1].number if i + 1 < len(history) else 0
                row["files"].append({"path": path, "from": before, "to": revision.number, "deleted": revision.deleted})
        item.history = [rows[n] for n in sorted(rows, reverse=True)]
    order = {"tool": 0, "skill": 1, "file": 2}
    return sorted(items.values(), key=lambda i: (order[i.kind], i.source != "library", i.name))


# ---------------------------------------------------------------- the blast-radius picture


def blast_picture(item: SharedItem, limit: int = 12) -> dict[str, Any]:
    """Coordinates for an inline SVG: the shared file in the middle, the agents
    that reach it around it, overridden ones greyed with the winning copy named."""
    width, height = 360, 300
    cx, cy = width / 2, height / 2
    grants = item.grants[:limit]
    nodes = []
    count = len(grants)
    for i, grant in enumerate(grants):
        angle = -math.pi / 2 + 2 * math.pi * i / max(count, 1)
        x = cx + 120 * math.cos(angle)
        y = cy + 105 * math.sin(angle)
        x = min(max(x, 68), width - 68)
        y = min(max(y, 22), height - 22)
        label = f"{grant.agent} · {grant.workspace}"
        sub = f"overridden: {grant.overridden_by.split('/', 1)[-1]}" if grant.overridden else ""
        box_height = 34 if sub else 24
        nodes.append({"x": round(x, 1), "y": round(y, 1), "label": _clip(label, 24), "sub": _clip(sub, 26),
                      "overridden": grant.overridden, "title": f"{label} — {sub or 'uses this copy'}",
                      "box_x": round(x - 66, 1), "box_y": round(y - 14, 1), "box_h": box_height,
                      "label_y": round(y + 2, 1), "sub_y": round(y + 14, 1)})
    return {"width": width, "height": height, "cx": cx, "cy": cy, "hub": _clip(item.name, 16),
            "nodes": nodes, "more": max(len(item.grants) - limit, 0), "more_y": height - 4}


def _clip(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


# ---------------------------------------------------------------- pages: workspace


def _workspace(request: HttpRequest, ws: str) -> tuple[Membership, Workspace, bool]:
    membership = _membership(request)
    workspace, can_write = workspace_for_user(membership, ws)
    return membership, workspace, can_write


@login_required
def workspace_page(request: HttpRequest, ws: str) -> HttpResponse:
    membership, workspace, can_write = _workspace(request, ws)
    view = desk_view(workspace)
    overview = workspace_overview(view)
    changesets = list(
        Changeset.objects.filter(workspace=workspace).select_related("author").order_by("-number")[:25]
    )
    context = {
        "section": "home",
        "workspace": workspace,
        "can_write": can_write,
        "agents": overview["agents"],
        "flows": overview["flows"],
        "tree": file_tree(view.revisions),
        "total_size": sum(r.size for r in view.revisions.values()),
        "file_count": len(view.revisions),
        "changesets": changesets,
    }
    return render(request, "library/workspace.html", context)


@login_required
def workspace_file(request: HttpRequest, ws: str, path: str) -> HttpResponse:
    membership, workspace, can_write = _workspace(request, ws)
    context = _file_context(request, scope_key_for(workspace.account, workspace), path, f"{workspace.name}/")
    context.update({"section": "home", "workspace": workspace, "can_write": can_write, "scope": "workspace",
                    "base_url": f"/w/{workspace.name}/files/{path}"})
    return render(request, "library/file.html", context)


@login_required
def workspace_revision(request: HttpRequest, ws: str, number: int) -> HttpResponse:
    membership, workspace, can_write = _workspace(request, ws)
    changeset = Changeset.objects.select_related("author").filter(workspace=workspace, number=number).first()
    if changeset is None:
        raise Http404
    context = _changeset_context(changeset, f"{workspace.name}/")
    context.update({"section": "home", "workspace": workspace, "scope": "workspace"})
    return render(request, "library/revision.html", context)


# ---------------------------------------------------------------- pages: library


@login_required
def library_page(request: HttpRequest) -> HttpResponse:
    membership = _membership(request)
    items = library_overview(membership.account)
    for item in items:
        item.picture = blast_picture(item)  # type: ignore[attr-defined]
    context = {
        "section": "library",
        "items": items,
        "can_write": membership.can_write,
        "library_changesets": list(
            Changeset.objects.filter(scope_key=scope_key_for(membership.account, None))
            .select_related("author").order_by("-number")[:10]
        ),
    }
    return render(request, "library/library.html", context)


@login_required
def library_file(request: HttpRequest, path: str) -> HttpResponse:
    membership = _membership(request)
    scope_key = scope_key_for(membership.account, None)
    if not LibraryFile.objects.filter(scope_key=scope_key, path=path).exists():
        shelf = _gallery_files()
        if path in shelf:  # a shelf file the account has no copy of: shown read-only
            return render(request, "library/file.html", {
                "section": "library", "scope": "gallery", "path": path, "gallery_text": shelf[path],
            })
        raise Http404
    context = _file_context(request, scope_key, path, "library/")
    context.update({"section": "library", "scope": "library", "can_write": membership.can_write,
                    "base_url": f"/library/files/{path}"})
    return render(request, "library/file.html", context)


@login_required
def library_revision(request: HttpRequest, number: int) -> HttpResponse:
    membership = _membership(request)
    changeset = (
        Changeset.objects.select_related("author")
        .filter(scope_key=scope_key_for(membership.account, None), number=number)
        .first()
    )
    if changeset is None:
        raise Http404
    context = _changeset_context(changeset, "library/")
    context.update({"section": "library", "scope": "library"})
    return render(request, "library/revision.html", context)


def _upgrade_to_gallery(account, tool: str, author) -> Changeset | None:
    """Write the shelf's current files of `tool` into the account library."""
    from . import actions

    upgrade = getattr(actions, "do_gallery_upgrade", None)
    if upgrade is not None:
        return upgrade(account=account, workspace=None, tool=tool, author=author)
    shelf = _gallery_tools().get(tool)
    if shelf is None:
        raise Http404
    library = files_at(account, None)
    writes = [
        actions.FileWrite(path=p, content=t, gallery_tool=tool, gallery_sha256=actions.sha256_text(t))
        for p, t in sorted(shelf.items())
    ]
    # Files the account added to its copy that the shelf does not have go too:
    # afterwards the copy is the gallery's, exactly.
    writes += [actions.FileWrite(path=p, content=None) for p in library if _item_key(p) == ("tool", tool)
               and p not in shelf]
    return actions.do_write_files(account=account, workspace=None, writes=writes, kind="gallery",
                                  message=f"update {tool} to gallery version", author=author)


@login_required
@require_POST
def gallery_update(request: HttpRequest, tool: str) -> HttpResponse:
    membership = _membership(request)
    _require_write(membership)
    library = files_at(membership.account, None)
    if not any(_item_key(p) == ("tool", tool) for p in library) or tool not in _gallery_tools():
        raise Http404
    changeset = _upgrade_to_gallery(membership.account, tool, request.user)
    if changeset is None:
        messages.info(request, f"{tool} is already the gallery version.")
    else:
        messages.success(request, f"{tool} now matches the gallery version (library revision #{changeset.number}); "
                                  f"your version is one revision back.")
    return redirect(f"/library/#tool-{tool}")
