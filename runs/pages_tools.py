"""The Tools tab: every tool a workspace can grant, each with its Test button (spec/tools.md, The Test button).

The button posts typed arguments and an optional agent; the page shows the raw
result — the same call a run makes (runs.tooltest), no model. Readers see the
list; a test is a write (it may call out), so it needs an editor.
"""
from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from foldrun.api import ApiError
from foldrun.contract.desk import AGENT, TOOL
from foldrun.nesting import MAX_DEPTH, sentence, too_deep

from . import actions
from .pages import _scope
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
    membership, workspace = _scope(request, ws)
    tools, agents = _tools(workspace)
    context = {"section": "workspace", "workspace": workspace, "tools": tools, "agents": agents,
               "can_write": membership.can_write, "tested": None}
    if request.method == "POST":
        if not membership.can_write:
            raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
        context["tested"] = _test(workspace, request.POST)
    return render(request, "runs/tools.html", context)


def _test(workspace, form) -> dict:
    tool, agent, raw = str(form.get("tool") or ""), str(form.get("agent") or "") or None, form.get("arguments") or "{}"
    shown = {"tool": tool, "agent": agent or "", "arguments": raw}
    if too_deep(str(raw)):
        return {**shown, "ok": False, "result": f"arguments: {sentence()}; at most {MAX_DEPTH} are read."}
    try:
        arguments = json.loads(raw)
    except ValueError:
        return {**shown, "ok": False, "result": "arguments: not JSON — write an object such as "
                                                '{"action": "fetch", "url": "https://example.com/"}'}
    if not isinstance(arguments, dict):
        return {**shown, "ok": False, "result": "arguments: must be a JSON object of the tool's arguments"}
    try:
        answer = run_tool_test(workspace, tool, arguments, agent=agent)
    except ApiError as exc:
        return {**shown, "ok": False, "result": exc.message}
    return {**shown, "ok": bool(answer.get("ok")), "result": str(answer.get("result") or ""),
            "seconds": answer.get("seconds")}
