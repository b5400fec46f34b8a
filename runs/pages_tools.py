"""The Tools tab: every tool a workspace can grant, each with its Test button (spec/tools.md, The Test button).

The button posts typed arguments and an optional agent; the page shows the raw
result — the same call a run makes (runs.tooltest), no model. Readers see the
list; a test is a write (it may call out), so it needs an editor.

Below it, each tool's Tool Test scratch (runs/scratch.py): what its tests left
in state/ and outputs/, each file downloadable by any member, and a Clear
button for a member who may write.
"""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_POST

from foldrun.api import ApiError
from foldrun.contract.desk import AGENT, TOOL
from foldrun.nesting import MAX_DEPTH, sentence, too_deep

from . import actions
from .pages import page_scope
from .scratch import check_scratch_file, do_clear_scratch, scratches_of
from .tooltest import run_tool_test


def _tools(workspace) -> tuple[list[dict], list[str]]:
    desk = actions.desk_at(workspace, None)
    seen: dict[str, dict] = {}
    for scope in ("workspace", "library", "gallery"):
        for document in desk.of_kind(TOOL, scopes=scope):
            name = document.name
            if name and name not in seen:
                seen[name] = {"name": name, "scope": scope, "path": document.path}
    agents = sorted(d.name for d in desk.of_kind(AGENT) if d.name)
    return sorted(seen.values(), key=lambda t: (t["scope"] != "gallery", t["name"])), agents


@login_required
def tools_page(request: HttpRequest, ws: str) -> HttpResponse:
    membership, workspace = page_scope(request, ws)
    tools, agents = _tools(workspace)
    context = {
        "section": "workspace",
        "workspace": workspace,
        "tools": tools,
        "agents": agents,
        "can_write": membership.can_write,
        "tested": None,
    }
    if request.method == "POST":
        if not membership.can_write:
            raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
        context["tested"] = _test(workspace, request.POST)
    context["scratches"] = scratches_of(workspace)  # after the test: its own files are listed at once
    return render(request, "runs/tools.html", context)


@login_required
def scratch_file(request: HttpRequest, ws: str, tool: str, path: str) -> HttpResponse:
    """One file of a tool's Tool Test scratch, as a download (any member)."""
    _membership, workspace = page_scope(request, ws)
    try:
        row = check_scratch_file(workspace, tool, path)
    except ApiError:
        raise Http404 from None
    response = HttpResponse(bytes(row.content), content_type="application/octet-stream")
    response["Content-Disposition"] = content_disposition_header(True, row.path.rsplit("/", 1)[-1])
    return response


@login_required
@require_POST
def clear_scratch(request: HttpRequest, ws: str, tool: str) -> HttpResponse:
    """The Clear button: the tool's next Tool Test starts from the workspace's files alone (a writer only)."""
    membership, workspace = page_scope(request, ws)
    if not membership.can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
    do_clear_scratch(workspace, tool)
    return redirect("tools-page", ws=workspace.name)


def _test(workspace, form) -> dict:
    tool, agent, raw = str(form.get("tool") or ""), str(form.get("agent") or "") or None, form.get("arguments") or "{}"
    shown = {"tool": tool, "agent": agent or "", "arguments": raw}
    if too_deep(str(raw)):
        return {**shown, "ok": False, "result": f"arguments: {sentence()}; at most {MAX_DEPTH} are read."}
    try:
        arguments = json.loads(raw)
    except ValueError:
        return {
            **shown,
            "ok": False,
            "result": "arguments: not JSON — write an object such as "
            '{"action": "fetch", "url": "https://example.com/"}',
        }
    if not isinstance(arguments, dict):
        return {**shown, "ok": False, "result": "arguments: must be a JSON object of the tool's arguments"}
    try:
        answer = run_tool_test(workspace, tool, arguments, agent=agent)
    except ApiError as exc:
        return {**shown, "ok": False, "result": exc.message}
    return {
        **shown,
        "ok": bool(answer.get("ok")),
        "result": str(answer.get("result") or ""),
        "seconds": answer.get("seconds"),
        "scratch_note": (answer.get("scratch") or {}).get("note"),
    }
