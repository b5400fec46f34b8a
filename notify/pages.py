"""Notify's pages: the approve/reject link page (no login), a workspace's
Notifications settings (destination, the test button, outbound webhook
deliveries with Redeliver) and Profile → Notifications."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from accounts.access import current_membership, workspace_for_user
from accounts.models import Workspace
from foldrun.api import ApiError
from runs.actions import do_decide_approval
from runs.models import Approval, Step

from . import actions
from .config import notify_config_for
from .links import LinkError, read_approval_token
from .models import Delivery, Endpoint, MailSend
from .preferences import PER_WORKSPACE, do_set_preference, preferences_for


def _workspace(request: HttpRequest, ws: str):
    membership = current_membership(request)
    workspace, can_write = workspace_for_user(membership, ws)
    return membership, workspace, can_write


# ------------------------------------------------------- approve / reject


def _waiting(claim):
    """(approval, problem page context) for a link's step."""
    approval = (
        Approval.objects.select_related("run", "run__workspace", "step")
        .filter(step__public_id=claim.step_id, kind="gate")
        .order_by("-created_at", "-pk")
        .first()
    )
    return approval


def _link_problem(request, reason: str, message: str, status: int = 400) -> HttpResponse:
    return render(request, "notify/decide.html", {"problem": reason, "message": message}, status=status)


def _previous_outputs(step) -> list:
    """What the approver decides on: the previous step's reply (each instance's, for a fan-out)."""
    if step.index <= 1:
        return []
    return list(
        Step.objects.filter(run_id=step.run_id, index=step.index - 1)
        .exclude(output="")
        .only("index", "instance", "agent", "item", "output", "status")
        .order_by("instance")
    )


@never_cache
def decide(request: HttpRequest, token: str) -> HttpResponse:
    """GET shows what is waiting and asks; only the POST decides — inbox
    link-checkers follow links, and a GET must never approve anything."""
    try:
        claim = read_approval_token(token)
    except LinkError as exc:
        return _link_problem(request, exc.reason, exc.message)
    approval = _waiting(claim)
    if approval is None:
        return _link_problem(request, "tampered", "This link is not valid. Nothing was changed.")
    if approval.state != "pending":
        who = approval.decided_by_label or "someone"
        return _link_problem(
            request,
            "spent",
            f"This link has been used: step {approval.step.index} was already {approval.state} by {who}. "
            "Nothing was changed.",
            status=409,
        )
    signed_in = getattr(request.user, "email", "") if request.user.is_authenticated else ""
    if claim.approver and signed_in and signed_in.lower() != claim.approver:
        # A forwarded mail decides as nobody: the link is that approver's alone.
        return _link_problem(
            request,
            "not-yours",
            f"This link was sent to {claim.approver}, and you are signed in as {signed_in}. Nothing was changed; "
            "decide from the dashboard instead.",
            status=403,
        )
    context = {
        "approval": approval,
        "run": approval.run,
        "step": approval.step,
        "action": claim.action,
        "approver": claim.approver,
        "token": token,
        "previous": _previous_outputs(approval.step),
    }
    if request.method == "POST":
        try:
            do_decide_approval(
                approval, approved=claim.action == "approve", label=claim.approver or "a link in a notification"
            )
        except ApiError as exc:
            reason = {"already_decided": "spent", "expired": "expired"}.get(exc.code, "refused")
            return _link_problem(request, reason, f"{exc.message} Nothing was changed.", status=409)
        approval.refresh_from_db()
        return render(request, "notify/decide.html", {**context, "approval": approval, "done": True})
    return render(request, "notify/decide.html", context)


# --------------------------------------------------- workspace settings


def deliveries_context(request: HttpRequest, workspace: Workspace) -> dict:
    """What `notify/_deliveries.html` and `notify/_test_button.html` need, for
    any page that includes them (the Triggers page, workspace settings).
    Precondition: `workspace` was found through the requester's membership."""
    deliveries = list(Delivery.objects.filter(workspace=workspace).prefetch_related("attempts")[:50])
    for delivery in deliveries:
        delivery.shown_body = actions.redact_body(delivery.body)
    return {
        "deliveries": deliveries,
        "endpoint": Endpoint.objects.filter(workspace=workspace).first(),
        "mails": list(MailSend.objects.filter(workspace=workspace)[:20]),
        "test_result": request.session.pop("notify_test_result", None) if hasattr(request, "session") else None,
    }


@login_required
def workspace_notifications(request: HttpRequest, ws: str) -> HttpResponse:
    membership, workspace, can_write = _workspace(request, ws)
    return render(
        request,
        "notify/workspace.html",
        {
            "section": "workspace",
            "workspace": workspace,
            "can_write": can_write,
            "config": notify_config_for(workspace),
            **deliveries_context(request, workspace),
        },
    )


@login_required
@require_POST
def workspace_test(request: HttpRequest, ws: str) -> HttpResponse:
    membership, workspace, can_write = _workspace(request, ws)
    if not can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
    try:
        result = actions.do_send_test(workspace)
    except ApiError as exc:
        result = {"ok": False, "message": exc.message}
    request.session["notify_test_result"] = result
    return redirect("notify-workspace", ws=workspace.name)


@login_required
@require_POST
def workspace_redeliver(request: HttpRequest, ws: str, delivery_id: str) -> HttpResponse:
    membership, workspace, can_write = _workspace(request, ws)
    if not can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
    try:
        attempt = actions.do_redeliver(actions.check_redeliver(workspace, delivery_id))
        if attempt.ok:
            messages.success(request, f"Redelivered {delivery_id}: the receiver answered {attempt.status_code}.")
        else:
            messages.error(request, f"Redelivered {delivery_id}: it failed — {attempt.error.rstrip('.')}.")
    except ApiError as exc:
        messages.error(request, exc.message)
    except Http404:
        raise
    return redirect("notify-workspace", ws=workspace.name)


# ------------------------------------------------ Profile → Notifications


@login_required
def profile_notifications(request: HttpRequest) -> HttpResponse:
    membership = current_membership(request)
    workspaces = Workspace.objects.filter(account=membership.account).order_by("name") if membership else []
    if request.method == "POST":
        category = request.POST.get("category", "")
        enabled = request.POST.get("enabled") == "on"
        workspace = None
        if request.POST.get("workspace"):
            if category not in PER_WORKSPACE:
                raise Http404
            workspace, _ = workspace_for_user(membership, request.POST["workspace"])
        categories = {c["category"]: c for c in preferences_for(request.user.email, [])}
        if category not in categories or categories[category]["locked"]:
            notice, ok = f"{category or 'That category'} cannot be turned off.", False
        else:
            do_set_preference(request.user.email, category, enabled, workspace)
            where = f" for {workspace.name}" if workspace else ""
            notice, ok = f"Saved: {category} mail is {'on' if enabled else 'off'}{where}.", True
        if request.htmx and category in categories:
            # The row alone comes back, saying what was saved, so the reader sees it where they clicked.
            row = next(c for c in preferences_for(request.user.email, workspaces) if c["category"] == category)
            return render(request, "notify/_preference_row.html", {"c": row, "notice": notice, "notice_ok": ok})
        (messages.success if ok else messages.error)(request, notice)
        return redirect("notify-profile")
    return render(
        request,
        "notify/profile.html",
        {
            "section": "profile",
            "categories": preferences_for(request.user.email, workspaces),
        },
    )


def triggers_part(sender, request: HttpRequest, workspace: Workspace, **kwargs) -> dict:
    """notify's part of the Triggers tab (`runs.signals.triggers_parts`, connected in NotifyConfig.ready)."""
    return {**deliveries_context(request, workspace), "has_deliveries": True}
