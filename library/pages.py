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
from foldrun import pageparts
from foldrun.contract.desk import Desk, make_document
from foldrun.contract.model import flow_of
from foldrun.contract.resolve import granted_tools
from foldrun.gallery import gallery_files

from . import services
from .actions.gallery import GalleryError, do_install_gallery_tool
from .actions.pushes import do_edit_file, do_rollback
from .actions.writes import WriteRefused
from .models import Changeset, LibraryFile, Revision, scope_key_for
from .services import files_at
from .signals import workspace_parts


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


def _refused_draft(request: HttpRequest, base_url: str) -> str | None:
    """The text of an edit that was just refused, so the form can offer it back once."""
    draft = request.session.get("foldrun_refused_edit")
    if draft and draft.get("path") == base_url:
        del request.session["foldrun_refused_edit"]
        return draft["content"]
    return None


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
        elif grant.kind == "tool" and grant.resolved is not None:
            scope, path = _SCOPE_WORDS.get(grant.resolved.scope, grant.resolved.scope), grant.resolved.path
        else:
            scope, path = "missing", ""
        rows.append({"name": grant.name, "scope": scope, "path": path})
    return rows


def _step_row(step) -> dict[str, Any]:
    return {"n": step.number, "agent": step.agent, "task": step.task, "gate": step.gate, "ask": step.ask,
            "each": step.each, "verify": f"{step.verify.kind} {step.verify.argument}" if step.verify else ""}


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
            flows.append({**entry, "schedule": str(entry.get("schedule") or ""), "timezone": "", "steps": [],
                          "problem": document.error.message if document and document.error else ""})
            continue
        flow = flow_of(desk, document)
        errors = [f for f in flow.problems if f.level == "error"]
        flows.append({**entry, "schedule": flow.schedule or "", "timezone": flow.timezone or "",
                      "steps": [_step_row(step) for step in flow.steps],
                      "inputs": [{"name": str(k), "default": "" if v is None else str(v)}
                                 for k, v in (flow.inputs or {}).items()],
                      "problem": errors[0].message if errors else ""})
    return {"agents": agents, "flows": flows, "files": overview["files"]}


# ---------------------------------------------------------------- the Library page


@dataclass
class Grant:
    workspace: str
    agent: str = ""           # empty when a whole workspace overrides it
    overridden_by: str = ""   # the nearer copy that wins, e.g. "rank-desk/tools/sql.md"
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
    gallery_mark: str = ""  # "" | "gallery · current" | "gallery · differs" | "shelf"
    reaches_all: bool = False  # discovered or read by every agent, not granted by name
    grants: list[Grant] = field(default_factory=list)
    history: list[dict[str, Any]] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return f"{self.kind}-{re.sub(r'[^a-z0-9-]+', '-', self.name.lower())}"

    @property
    def active_grants(self) -> list[Grant]:
        return [g for g in self.grants if not g.overridden]

    @property
    def overridden_grants(self) -> list[Grant]:
        return [g for g in self.grants if g.overridden]

    @property
    def differs(self) -> bool:
        return self.gallery_mark == services.MARK_DIFFERS


def _is_main(kind: str, name: str, path: str) -> bool:
    if kind == "tool":
        return path in (f"tools/{name}.md", f"tools/{name}/tool.md")
    if kind == "skill":
        return path == f"skills/{name}/SKILL.md"
    return True


def _grants(entry: dict[str, Any]) -> list[Grant]:
    grants = [Grant(workspace=g["workspace"], agent=g["agent"]) for g in entry["granted_by"]]
    for o in entry["overridden_by"]:
        if not o["workspace"]:  # the library's own copy of a gallery tool: shown as that copy
            continue
        grants.append(Grant(workspace=o["workspace"], agent=o["agent"] or "",
                            overridden_by=f"{o['workspace']}/{o['path']}",
                            override_scope="agent's own" if o["agent"] else "workspace"))
    return grants


def _gallery_files() -> dict[str, str]:
    return gallery_files()


def library_items(account) -> list[SharedItem]:
    """`services.library_overview` (one entry per file) grouped into what a
    person changes: a tool, a skill, or a single file. A gallery tool the
    library keeps a copy of is shown once, as the library's copy."""
    entries = services.library_overview(account)
    items: dict[tuple[str, str, str], SharedItem] = {}
    for entry in entries:
        key = (entry["scope"], entry["kind"], entry["name"])
        if entry["scope"] == "gallery" and ("library", entry["kind"], entry["name"]) in items:
            continue
        item = items.get(key)
        if item is None:
            item = items[key] = SharedItem(
                kind=entry["kind"], name=entry["name"], source=entry["scope"], paths=[], main_path=entry["path"],
                reaches_all=entry["kind"] != "tool",
                gallery_mark=entry.get("gallery") or ("shelf" if entry["scope"] == "gallery" else ""),
            )
        item.paths.append(entry["path"])
        if entry.get("gallery") == services.MARK_DIFFERS:
            item.gallery_mark = services.MARK_DIFFERS
        # Every file of a tool or skill has the same readers; the defining
        # file (tool.md, SKILL.md) names the item and its blast radius.
        main = _is_main(entry["kind"], entry["name"], entry["path"])
        if main or not item.grants:
            if main:
                item.main_path = entry["path"]
            item.grants = _grants(entry)

    library = files_at(account, None)
    shelf = _gallery_files()
    for item in items.values():
        text = library[item.main_path].content if item.source == "library" else shelf.get(item.main_path, "")
        document = make_document(item.main_path, text, item.source)
        item.description = " ".join(str(document.meta.get("description") or "").split())

    # Each library item's revisions, newest first, one row per changeset.
    paths = [p for item in items.values() if item.source == "library" for p in item.paths]
    by_path: dict[str, list[Revision]] = {}
    for revision in (
        Revision.objects.filter(file__scope_key=scope_key_for(account, None), file__path__in=paths)
        .select_related("file", "changeset", "changeset__author")
        .defer("content")
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
    return sorted(items.values(), key=lambda i: (order.get(i.kind, 3), i.source != "library", i.name))


# ---------------------------------------------------------------- the blast-radius picture


def blast_picture(item: SharedItem, limit: int = 12) -> dict[str, Any]:
    """Coordinates for an inline SVG: the shared file in the middle, the agents
    that reach it around it, overridden ones greyed with the winning copy named."""
    width, height, box_width = 400, 320, 170
    cx, cy = width / 2, height / 2
    grants = item.grants[:limit]
    nodes = []
    for i, grant in enumerate(grants):
        angle = -math.pi / 2 + 2 * math.pi * i / max(len(grants), 1)
        label = f"{grant.agent} · {grant.workspace}" if grant.agent else f"workspace {grant.workspace}"
        lines = [_clip(label, 28)]
        if grant.overridden:
            lines += ["overridden by", _clip_left(grant.overridden_by.split("/", 1)[-1], 30)]
        box_height = 12 * len(lines) + 10
        x = min(max(cx + 130 * math.cos(angle), box_width / 2 + 2), width - box_width / 2 - 2)
        y = min(max(cy + 118 * math.sin(angle), box_height / 2 + 2), height - box_height / 2 - 2)
        top = y - box_height / 2
        nodes.append({
            "x": round(x, 1), "y": round(y, 1), "overridden": grant.overridden,
            "title": f"{label} — " + (f"overridden by {grant.overridden_by}" if grant.overridden else "uses this copy"),
            "box_x": round(x - box_width / 2, 1), "box_y": round(top, 1), "box_w": box_width, "box_h": box_height,
            "lines": [{"text": text, "y": round(top + 15 + 12 * n, 1), "first": n == 0} for n, text in enumerate(lines)],
        })
    # Crop the canvas to what is drawn, so one or two agents do not leave a
    # tall empty picture (it matters on a phone).
    top = min([cy - 50] + [n["box_y"] for n in nodes]) - 4
    bottom = max([cy + 50] + [n["box_y"] + n["box_h"] for n in nodes]) + (18 if len(item.grants) > limit else 4)
    return {"width": width, "height": height, "cx": cx, "cy": cy, "hub": _clip(item.name, 14),
            "view": f"0 {round(top, 1)} {width} {round(bottom - top, 1)}",
            "nodes": nodes, "more": max(len(item.grants) - limit, 0), "more_y": round(bottom - 6, 1)}


def _clip_left(text: str, length: int) -> str:
    return text if len(text) <= length else "…" + text[-(length - 1):]


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
    overview = workspace_view(workspace)
    sizes = {f["path"]: f["size"] for f in overview["files"]}
    changesets = list(
        Changeset.objects.filter(workspace=workspace).select_related("author").order_by("-number")[:25]
    )
    context = {
        "section": "home",
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


@login_required
def workspace_file(request: HttpRequest, ws: str, path: str) -> HttpResponse:
    membership, workspace, can_write = _workspace(request, ws)
    context = _file_context(request, scope_key_for(workspace.account, workspace), path, f"{workspace.name}/")
    base_url = f"/w/{workspace.name}/files/{path}"
    context.update({"section": "home", "workspace": workspace, "can_write": can_write, "scope": "workspace",
                    "base_url": base_url, "edit_url": f"/w/{workspace.name}/edit/{path}",
                    "rollback_url": f"/w/{workspace.name}/rollback/{path}",
                    "draft": _refused_draft(request, base_url)})
    return render(request, "library/file.html", context)


def _edit(request: HttpRequest, membership: Membership, workspace: Workspace | None, path: str,
          base_url: str) -> None:
    """A dashboard edit of one text file (kind "edit"), validated like a push.
    The outcome goes to messages; a refused text is kept for the form once."""
    _require_write(membership)
    content = request.POST.get("content")
    if content is None:
        messages.error(request, "content: the edit form sent no text.")
        return
    content = content.replace("\r\n", "\n")
    try:
        result = do_edit_file(account=membership.account, workspace=workspace, path=path, content=content,
                              author=request.user, message=(request.POST.get("message") or "").strip())
    except WriteRefused as refused:
        messages.error(request, refused.message)
        for finding in refused.findings[1:]:
            messages.error(request, finding.format())
        request.session["foldrun_refused_edit"] = {"path": base_url, "content": content}
        return
    if result.changeset is None:
        messages.info(request, f"{path} is unchanged; nothing was written.")
    else:
        messages.success(request, f"Saved {path} as revision #{result.changeset.number}.")


def _rollback(request: HttpRequest, membership: Membership, workspace: Workspace | None, path: str) -> None:
    _require_write(membership)
    to = _int_or_none(request.POST.get("to"))
    history = _history(scope_key_for(membership.account, workspace), path)
    if to is None or not history or to not in {r.number for r in history}:
        raise Http404
    try:
        result = do_rollback(account=membership.account, workspace=workspace, path=path, to=to, author=request.user)
    except WriteRefused as refused:
        messages.error(request, refused.message)
        return
    if result.changeset is None:
        messages.info(request, f"{path} is already as revision #{to} left it.")
    else:
        messages.success(request, f"Rolled {path} back to revision #{to}, as revision #{result.changeset.number}.")


@login_required
@require_POST
def workspace_edit(request: HttpRequest, ws: str, path: str) -> HttpResponse:
    membership, workspace, _ = _workspace(request, ws)
    base_url = f"/w/{workspace.name}/files/{path}"
    if not LibraryFile.objects.filter(scope_key=scope_key_for(workspace.account, workspace), path=path).exists():
        raise Http404
    _edit(request, membership, workspace, path, base_url)
    return redirect(base_url)


@login_required
@require_POST
def workspace_rollback(request: HttpRequest, ws: str, path: str) -> HttpResponse:
    membership, workspace, _ = _workspace(request, ws)
    _rollback(request, membership, workspace, path)
    return redirect(f"/w/{workspace.name}/files/{path}")


@login_required
@require_POST
def library_edit(request: HttpRequest, path: str) -> HttpResponse:
    membership = _membership(request)
    if not LibraryFile.objects.filter(scope_key=scope_key_for(membership.account, None), path=path).exists():
        raise Http404
    _edit(request, membership, None, path, f"/library/files/{path}")
    return redirect(f"/library/files/{path}")


@login_required
@require_POST
def library_rollback(request: HttpRequest, path: str) -> HttpResponse:
    membership = _membership(request)
    _rollback(request, membership, None, path)
    return redirect(f"/library/files/{path}")


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
    items = library_items(membership.account)
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
    base_url = f"/library/files/{path}"
    context.update({"section": "library", "scope": "library", "can_write": membership.can_write,
                    "base_url": base_url, "edit_url": f"/library/edit/{path}",
                    "rollback_url": f"/library/rollback/{path}", "draft": _refused_draft(request, base_url)})
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


@login_required
@require_POST
def gallery_install(request: HttpRequest, tool: str) -> HttpResponse:
    """Copy a shelf tool into the account library; the copy follows the
    gallery until someone edits it."""
    membership = _membership(request)
    _require_write(membership)
    try:
        result = do_install_gallery_tool(account=membership.account, workspace=None, name=tool, author=request.user)
    except GalleryError as refused:
        if refused.status == 404:
            raise Http404 from None
        messages.error(request, refused.message)
        return redirect("library")
    if result.changeset is None:
        messages.info(request, f"The library already keeps the gallery's {tool}.")
    else:
        messages.success(request, f"{tool} copied into the library (library revision #{result.changeset.number}). "
                                  f"It follows the gallery until you edit it.")
    return redirect(f"/library/#tool-{tool}")


@login_required
@require_POST
def gallery_update(request: HttpRequest, tool: str) -> HttpResponse:
    """"Update to gallery version": the shelf's current files, written through
    the revision log, so the account's version is one revision back."""
    membership = _membership(request)
    _require_write(membership)
    try:
        result = do_install_gallery_tool(account=membership.account, workspace=None, name=tool,
                                         author=request.user, upgrade=True)
    except GalleryError as refused:
        if refused.status == 404:
            raise Http404 from None
        messages.error(request, refused.message)
        return redirect("library")
    if result.changeset is None:
        messages.info(request, f"{tool} is already the gallery version.")
    else:
        messages.success(request, f"{tool} now matches the gallery version (library revision "
                                  f"#{result.changeset.number}); your version is one revision back.")
    return redirect(f"/library/#tool-{tool}")
