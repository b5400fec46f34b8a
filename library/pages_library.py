"""The Library page: each shared tool, skill or file once, with who reaches
it and what overrides it (its blast radius, drawn as an inline SVG), its
revisions and its gallery mark — and the gallery's install and update
buttons (a write role; a viewer's POST is a 403)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from foldrun.contract.desk import make_document
from foldrun.gallery import gallery_files

from . import services
from .actions.gallery import GalleryError, do_install_gallery_tool
from .models import Changeset, Revision, scope_key_for
from .pages import membership_for, require_write
from .services import files_at


# ---------------------------------------------------------------- the Library page


@dataclass
class Grant:
    workspace: str
    agent: str = ""  # empty when a whole workspace overrides it
    overridden_by: str = ""  # the nearer copy that wins, e.g. "rank-desk/tools/sql.md"
    override_scope: str = ""  # "workspace" or "agent's own"

    @property
    def overridden(self) -> bool:
        return bool(self.overridden_by)


@dataclass
class SharedItem:
    kind: str  # tool | skill | file
    name: str
    source: str  # library | gallery
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
        grants.append(
            Grant(
                workspace=o["workspace"],
                agent=o["agent"] or "",
                overridden_by=f"{o['workspace']}/{o['path']}",
                override_scope="agent's own" if o["agent"] else "workspace",
            )
        )
    return grants


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
                kind=entry["kind"],
                name=entry["name"],
                source=entry["scope"],
                paths=[],
                main_path=entry["path"],
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
    shelf = gallery_files()
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
        nodes.append(
            {
                "x": round(x, 1),
                "y": round(y, 1),
                "overridden": grant.overridden,
                "title": f"{label} — "
                + (f"overridden by {grant.overridden_by}" if grant.overridden else "uses this copy"),
                "box_x": round(x - box_width / 2, 1),
                "box_y": round(top, 1),
                "box_w": box_width,
                "box_h": box_height,
                "lines": [
                    {"text": text, "y": round(top + 15 + 12 * n, 1), "first": n == 0} for n, text in enumerate(lines)
                ],
            }
        )
    # Crop the canvas to what is drawn, so one or two agents do not leave a
    # tall empty picture (it matters on a phone).
    top = min([cy - 50] + [n["box_y"] for n in nodes]) - 4
    bottom = max([cy + 50] + [n["box_y"] + n["box_h"] for n in nodes]) + (18 if len(item.grants) > limit else 4)
    return {
        "width": width,
        "height": height,
        "cx": cx,
        "cy": cy,
        "hub": _clip(item.name, 14),
        "view": f"0 {round(top, 1)} {width} {round(bottom - top, 1)}",
        "nodes": nodes,
        "more": max(len(item.grants) - limit, 0),
        "more_y": round(bottom - 6, 1),
    }


def _clip_left(text: str, length: int) -> str:
    return text if len(text) <= length else "…" + text[-(length - 1) :]


def _clip(text: str, length: int) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


# ---------------------------------------------------------------- pages: library


@login_required
def library_page(request: HttpRequest) -> HttpResponse:
    membership = membership_for(request)
    items = library_items(membership.account)
    for item in items:
        item.picture = blast_picture(item)  # type: ignore[attr-defined]
    context = {
        "section": "library",
        "items": items,
        "can_write": membership.can_write,
        "library_changesets": list(
            Changeset.objects.filter(scope_key=scope_key_for(membership.account, None))
            .select_related("author")
            .order_by("-number")[:10]
        ),
    }
    return render(request, "library/library.html", context)


def _write_gallery_tool(request: HttpRequest, tool: str, *, upgrade: bool):
    """Install (or upgrade) a shelf tool into the requester's account library: the result, or the page to go back
    to with the refusal said (a tool not on the shelf is a 404)."""
    membership = membership_for(request)
    require_write(membership)
    try:
        return do_install_gallery_tool(
            account=membership.account, workspace=None, name=tool, author=request.user, upgrade=upgrade
        )
    except GalleryError as refused:
        if refused.status == 404:
            raise Http404 from None
        messages.error(request, refused.message)
        return redirect("library")


@login_required
@require_POST
def gallery_install(request: HttpRequest, tool: str) -> HttpResponse:
    """Copy a shelf tool into the account library; the copy follows the
    gallery until someone edits it."""
    result = _write_gallery_tool(request, tool, upgrade=False)
    if isinstance(result, HttpResponse):
        return result
    if result.changeset is None:
        messages.info(request, f"The library already keeps the gallery's {tool}.")
    else:
        messages.success(
            request,
            f"{tool} copied into the library (library revision #{result.changeset.number}). "
            f"It follows the gallery until you edit it.",
        )
    return redirect(f"/library/#tool-{tool}")


@login_required
@require_POST
def gallery_update(request: HttpRequest, tool: str) -> HttpResponse:
    """ "Update to gallery version": the shelf's current files, written through
    the revision log, so the account's version is one revision back."""
    result = _write_gallery_tool(request, tool, upgrade=True)
    if isinstance(result, HttpResponse):
        return result
    if result.changeset is None:
        messages.info(request, f"{tool} is already the gallery version.")
    else:
        messages.success(
            request,
            f"{tool} now matches the gallery version (library revision "
            f"#{result.changeset.number}); your version is one revision back.",
        )
    return redirect(f"/library/#tool-{tool}")
