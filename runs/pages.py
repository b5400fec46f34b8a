"""Server-rendered run pages: the runs list (filters by flow, status, verdict)
and the Run page (steps as a timeline with their tries, the trace, cost and
tokens, approve/reject for approvers, artifacts to download).

Another account's run is a 404 like a missing one; deciding needs an
approver role (a viewer's POST is a 403); a GET never decides.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.access import current_membership, workspace_for_user
from foldrun.api import ApiError

from . import actions
from .models import Run, RunStatus, Verdict


def _scope(request: HttpRequest, ws: str):
    membership = current_membership(request)
    workspace, _ = workspace_for_user(membership, ws)
    return membership, workspace


def _run(workspace, run_id: str) -> Run:
    run = Run.objects.filter(workspace=workspace, public_id=run_id).first()
    if run is None:
        raise Http404
    return run


@login_required
def runs_list(request: HttpRequest, ws: str) -> HttpResponse:
    membership, workspace = _scope(request, ws)
    runs = Run.objects.filter(workspace=workspace)
    filters = {k: request.GET.get(k, "") for k in ("flow", "status", "verdict")}
    if filters["flow"]:
        runs = runs.filter(name=filters["flow"])
    if filters["status"]:
        runs = runs.filter(status=filters["status"])
    if filters["verdict"]:
        runs = runs.filter(verdict=filters["verdict"])
    names = sorted(set(Run.objects.filter(workspace=workspace).values_list("name", flat=True)))
    from foldrun.contract.desk import FLOW

    from .triggers import sync_schedules

    desk = actions.desk_at(workspace, None)
    flows = sorted(d.name for d in desk.of_kind(FLOW) if d.parsed is not None)
    return render(request, "runs/list.html", {
        "section": "home", "workspace": workspace, "runs": runs[:200], "filters": filters, "names": names,
        "statuses": [s.value for s in RunStatus], "verdicts": [v.value for v in Verdict],
        "flows": flows, "schedules": sync_schedules(workspace), "can_write": membership.can_write,
    })


@login_required
@require_POST
def start_page(request: HttpRequest, ws: str) -> HttpResponse:
    """The Run button: a manual run of a flow (optionally a test run)."""
    membership, workspace = _scope(request, ws)
    if not membership.can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
    try:
        run = actions.check_start_run(workspace=workspace, user=request.user, flow=request.POST.get("flow") or None,
                                      is_test=request.POST.get("test") == "on", trigger="manual")
    except ApiError as exc:
        messages.error(request, exc.message)
        return redirect("runs-list", ws=workspace.name)
    return redirect("run-page", ws=workspace.name, run_id=run.public_id)


@login_required
def run_page(request: HttpRequest, ws: str, run_id: str) -> HttpResponse:
    membership, workspace = _scope(request, ws)
    run = _run(workspace, run_id)
    steps = list(run.steps.prefetch_related("tries").all())
    trace = list(run.trace.select_related("step").all()[:2000])
    by_step: dict[int, list] = {}
    for event in trace:
        by_step.setdefault(event.step_id, []).append(event)
    for step in steps:
        step.events = by_step.get(step.pk, [])
    pending = {a.step_id: a for a in run.approvals.filter(state="pending")}
    for step in steps:
        step.pending = pending.get(step.pk)
    return render(request, "runs/run.html", {
        "section": "home", "workspace": workspace, "run": run, "steps": steps,
        "run_events": by_step.get(None, []), "approvals": run.approvals.all(), "artifacts": run.artifacts.all(),
        "can_approve": membership.can_approve, "can_write": membership.can_write,
    })


@login_required
@require_POST
def decide_page(request: HttpRequest, ws: str, run_id: str, index: int, decision: str) -> HttpResponse:
    membership, workspace = _scope(request, ws)
    run = _run(workspace, run_id)
    if not membership.can_approve:
        raise PermissionDenied(f"Your role ({membership.role}) cannot approve or reject steps.")
    if decision not in ("approve", "reject"):
        raise Http404
    try:
        actions.check_decide(run=run, index=index, decision=decision, membership=membership,
                             answer=request.POST.get("answer"))
        messages.success(request, f"Step {index} {'approved' if decision == 'approve' else 'rejected'}.")
    except ApiError as exc:
        messages.error(request, exc.message)
    return redirect("run-page", ws=workspace.name, run_id=run.public_id)


@login_required
def triggers_page(request: HttpRequest, ws: str) -> HttpResponse:
    """What starts this workspace's runs: schedules (with next fire times), inbound webhook URLs, and — at
    the end — the outbound webhook deliveries (the notifications app's partial)."""
    from foldrun.contract.desk import FLOW
    from foldrun.contract.model import flow_of

    from .triggers import sync_schedules

    membership, workspace = _scope(request, ws)
    desk = actions.desk_at(workspace, None)
    hooks = []
    for document in desk.of_kind(FLOW):
        if document.parsed is None:
            continue
        flow = flow_of(desk, document)
        if isinstance(flow.webhook, dict):
            hooks.append({"flow": flow.name, "url": request.build_absolute_uri(f"/api/hooks/{workspace.public_id}/{flow.name}"),
                          "signed": str(flow.webhook.get("signature") or "").lower() == "hmac",
                          "secret": flow.webhook.get("secret") or ""})
    context = {"section": "home", "workspace": workspace, "schedules": sync_schedules(workspace), "hooks": hooks,
               "can_write": membership.can_write}
    try:
        from notify.pages import deliveries_context

        context.update(deliveries_context(request, workspace))
        context["has_deliveries"] = True
    except ImportError:  # the notifications app is optional here
        context["has_deliveries"] = False
    return render(request, "runs/triggers.html", context)
