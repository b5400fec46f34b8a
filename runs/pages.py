"""Server-rendered run pages: the runs list (filters by flow, status, verdict)
and the Run page (steps as a timeline with their tries, the trace, cost and
tokens, approve/reject for approvers, artifacts to download).

Another account's run is a 404 like a missing one; deciding needs an
approver role (a viewer's POST is a 403); a GET never decides.
"""

from __future__ import annotations

import hashlib
from urllib.parse import quote

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.core.paginator import Paginator
from django.db.models import Max
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_POST

from accounts.access import current_membership, workspace_for_user
from accounts.models import Workspace
from foldrun import pageparts
from foldrun.api import ApiError
from foldrun.contract.desk import FLOW
from foldrun.contract.model import flow_of
from foldrun.engine.cache_summary import cache_words
from foldrun.engine.podcard import pod_card

from . import actions
from . import pages_browser as browser
from . import pages_live as watching
from . import pages_timeline as timeline
from .cache_use import run_cache
from .models import Approval, ApprovalState, Run, RunStatus, Step, TraceEvent, Try, Verdict
from foldrun.trace_view import views as trace_views
from .pages_workspace import flow_inputs, with_models
from .signals import triggers_parts
from .triggers import schedules_of


PAGE_SIZE = 50  # runs per page of the list: the page's queries do not grow with the account's runs
LIST_FIELDS = (
    "public_id",
    "name",
    "status",
    "verdict",
    "headline",
    "cost_usd",
    "is_test",
    "created_at",
    "workspace_id",
)


def page_scope(request: HttpRequest, ws: str):
    """The requester's membership and the workspace `ws` of their account (a 404 for any other): every page of a
    workspace starts here, this module's and runs/pages_tools.py's."""
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
    membership, workspace = page_scope(request, ws)
    runs = Run.objects.filter(workspace=workspace)
    filters = {k: request.GET.get(k, "") for k in ("flow", "status", "verdict")}
    if filters["flow"]:
        runs = runs.filter(name=filters["flow"])
    if filters["status"]:
        runs = runs.filter(status=filters["status"])
    if filters["verdict"]:
        runs = runs.filter(verdict=filters["verdict"])
    names = list(Run.objects.filter(workspace=workspace).order_by("name").values_list("name", flat=True).distinct())
    page = Paginator(runs.order_by("-created_at", "-pk").only(*LIST_FIELDS), PAGE_SIZE).get_page(
        request.GET.get("page")
    )
    query = "".join(f"{k}={quote(v)}&" for k, v in filters.items() if v)
    desk = actions.desk_at(workspace, None)
    flows = sorted(d.name for d in desk.of_kind(FLOW) if d.parsed is not None)
    return render(
        request,
        "runs/list.html",
        {
            "section": "workspace",
            "workspace": workspace,
            "runs": browser.mark_runs(workspace.account_id, with_models(list(page.object_list))),
            "page": page,
            "query": query,
            "filters": filters,
            "names": names,
            "statuses": [s.value for s in RunStatus],
            "verdicts": [v.value for v in Verdict],
            "flows": flows,
            "schedules": schedules_of(workspace),
            "can_write": membership.can_write,
            **browser.skill_runs_part(workspace),
        },
    )


@login_required
@require_POST
def start_page(request: HttpRequest, ws: str) -> HttpResponse:
    """The Run button: a manual run of a flow (optionally a test run)."""
    membership, workspace = page_scope(request, ws)
    if not membership.can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
    back = "workspace" if request.POST.get("back") == "workspace" else "runs-list"
    try:
        run = actions.check_start_run(
            workspace=workspace,
            user=request.user,
            flow=request.POST.get("flow") or None,
            inputs=flow_inputs(request.POST),
            is_test=request.POST.get("test") == "on",
            trigger="manual",
        )
    except ApiError as exc:
        messages.error(request, exc.message)
        return redirect(back, ws=workspace.name)
    return redirect("run-page", ws=workspace.name, run_id=run.public_id)


TRACE_LIMIT = 2000  # events shown on one page; the API and `foldrun log` have them all
# Up to this many events the page carries every step's trace; a bigger run's traces load when opened
# (a 100-step run would otherwise be half a megabyte of HTML on every change).
INLINE_TRACE = 300


def _fingerprint(run: Run) -> str:
    """What changes whenever the page would: a poll that finds the same answers 204 and swaps nothing
    (so an open trace stays open), in three small queries instead of the page's six."""
    steps = list(Step.objects.filter(run=run).values_list("status", "attempt", "cost_usd"))
    last_event = TraceEvent.objects.filter(run=run).aggregate(last=Max("pk"))["last"]
    states = list(Approval.objects.filter(run=run).values_list("state", flat=True))
    task = browser.task_state(run)  # a browser task is written after its run ends
    raw = repr((run.status, run.verdict, str(run.cost_usd), run.tokens_out, steps, last_event, states, task))
    return hashlib.sha256(raw.encode()).hexdigest()[:16]


def live_context(run: Run, membership, workspace) -> dict:
    """Everything the live part of the Run page shows, in a fixed number of queries whatever the
    number of steps, tries or events."""
    steps = list(run.steps.all())
    tries: dict[int, list[Try]] = {}
    for attempt in Try.objects.filter(step__run=run).order_by("step_id", "n"):
        tries.setdefault(attempt.step_id, []).append(attempt)
    approvals = list(run.approvals.select_related("decided_by").all())
    by_step_approvals: dict[int, list[Approval]] = {}
    for approval in approvals:
        by_step_approvals.setdefault(approval.step_id, []).append(approval)
    # One light query for what every step needs (how many events, which models), then the events
    # themselves: all of them for a small run, only the run's own log for a big one.
    light = list(run.trace.values_list("step_id", "kind", "data__model")[: TRACE_LIMIT + 1])
    truncated = len(light) > TRACE_LIMIT
    light = light[:TRACE_LIMIT]
    inline = len(light) <= INLINE_TRACE
    counts: dict[int | None, int] = {}
    models: dict[int | None, set[str]] = {}
    for step_id, kind, model in light:
        counts[step_id] = counts.get(step_id, 0) + 1
        if kind == "model_request" and model:
            models.setdefault(step_id, set()).add(str(model))
    shown = run.trace.all() if inline else run.trace.filter(step__isnull=True)
    events: dict[int | None, list] = {}
    for event in shown[:TRACE_LIMIT]:
        events.setdefault(event.step_id, []).append(event)
    parents_with_instances = {s.index for s in steps if s.instance is not None}
    labels = {s.pk: s.label for s in steps}
    for step in steps:
        step.try_list = tries.get(step.pk, [])
        step.approval_list = by_step_approvals.get(step.pk, [])
        step.events = trace_views(events.get(step.pk, [])) if inline else []
        step.event_count = counts.get(step.pk, 0)
        step.models = sorted(models.get(step.pk, ()))
        step.has_instances = step.instance is None and step.index in parents_with_instances
        step.pending = next((a for a in step.approval_list if a.state == ApprovalState.PENDING), None)
        step.answered = [a for a in step.approval_list if a.state == ApprovalState.ANSWERED]
        step.state_css = "awaiting-answer" if step.pending and step.pending.kind == "ask" else step.status
        step.seconds = sum(t.seconds for t in step.try_list)
        step.pod_line, step.pod_tries = pod_card(step.try_list)
        image = next((t.image for t in reversed(step.try_list) if t.image), "")
        step.image_mark = "slim · browser pod" if image == "slim" else ""  # its browse calls rendered in the pod
    for step in steps:
        if step.has_instances:  # a fan-out's parent: what its instances used and cost
            mine = [s for s in steps if s.index == step.index and s.instance is not None]
            step.instance_count = len(mine)
            step.models = sorted({m for s in mine for m in s.models})
            step.seconds = sum(s.seconds for s in mine)
    watching.watch_part(run, steps, workspace.name)  # a browsing step's live browser, videos, trace and HAR
    for approval in approvals:
        approval.step_label = labels.get(approval.step_id, "?")
    asking = any(a.state == ApprovalState.PENDING and a.kind == "ask" for a in approvals)
    run_state = "awaiting-answer" if run.status == RunStatus.AWAITING_APPROVAL and asking else run.status
    all_models = sorted(set().union(*models.values())) if models else []
    part = browser.task_part(run, workspace)
    began = run.started_at or run.created_at
    elapsed = timeline.seconds_text(((run.finished_at or timezone.now()) - began).total_seconds())
    return {
        "workspace": workspace,
        "run": run,
        "steps": steps,
        "run_state": run_state,
        "timeline": timeline.build(run, steps, timezone.now()),
        "run_events": trace_views(events.get(None, [])),
        "trace_truncated": truncated,
        "trace_limit": TRACE_LIMIT,
        "inline_trace": inline,
        "elapsed": elapsed,
        "approvals": approvals,
        "artifacts": list(run.artifacts.defer("content").all()),
        "models": all_models,
        "cache_words": cache_words(run_cache(run).as_dict()),
        "can_approve": membership.can_approve,
        "can_write": membership.can_write,
        "fingerprint": _fingerprint(run),
        **part,
        "live": not run.is_finished or part.get("task_running", False),
    }


@login_required
def run_page(request: HttpRequest, ws: str, run_id: str) -> HttpResponse:
    """The Run page; htmx polls it (`?since=` the fingerprint it has) for the live part alone."""
    membership, workspace = page_scope(request, ws)
    run = _run(workspace, run_id)
    if request.htmx and request.GET.get("trace"):  # one step's trace, opened on a big run
        step = Step.objects.filter(run=run, public_id=request.GET["trace"]).first()
        if step is None:
            raise Http404
        return render(request, "runs/_trace.html", {"events": trace_views(step.trace.all()[:TRACE_LIMIT])})
    if request.htmx:
        if request.GET.get("since") and request.GET["since"] == _fingerprint(run):
            return HttpResponse(status=204)
        return render(request, "runs/_run_live.html", live_context(run, membership, workspace))
    return render(request, "runs/run.html", {"section": "workspace", **live_context(run, membership, workspace)})


@login_required
@require_POST
def decide_page(request: HttpRequest, ws: str, run_id: str, index: int, decision: str) -> HttpResponse:
    """Approve, reject or answer. From htmx: the live part comes back with the outcome in it (no
    reload); from a plain form: a redirect to the page with the message."""
    membership, workspace = page_scope(request, ws)
    run = _run(workspace, run_id)
    if not membership.can_approve:
        raise PermissionDenied(f"Your role ({membership.role}) cannot approve or reject steps.")
    if decision not in ("approve", "reject"):
        raise Http404
    notice, ok = "", True
    try:
        approval_kind = (
            run.approvals.filter(step__index=index, state=ApprovalState.PENDING).values_list("kind", flat=True).first()
        )
        actions.check_decide(
            run=run, index=index, decision=decision, membership=membership, answer=request.POST.get("answer")
        )
        if decision == "reject":
            notice = f"Step {index} rejected."
        else:
            notice = f"Step {index} answered." if approval_kind == "ask" else f"Step {index} approved."
    except ApiError as exc:
        notice, ok = exc.message, False
    if request.htmx:
        run.refresh_from_db()
        context = live_context(run, membership, workspace)
        context.update({"notice": notice, "notice_ok": ok})
        return render(request, "runs/_run_live.html", context)
    (messages.success if ok else messages.error)(request, notice)
    return redirect("run-page", ws=workspace.name, run_id=run.public_id)


@login_required
def triggers_page(request: HttpRequest, ws: str) -> HttpResponse:
    """What starts this workspace's runs: schedules (with next fire times), inbound webhook URLs, and — at
    the end — the outbound webhook deliveries (the notifications app's partial)."""
    membership, workspace = page_scope(request, ws)
    desk = actions.desk_at(workspace, None)
    hooks = []
    for document in desk.of_kind(FLOW):
        if document.parsed is None:
            continue
        flow = flow_of(desk, document)
        if isinstance(flow.webhook, dict):
            hooks.append(
                {
                    "flow": flow.name,
                    "url": request.build_absolute_uri(f"/api/hooks/{workspace.public_id}/{flow.name}"),
                    "signed": str(flow.webhook.get("signature") or "").lower() == "hmac",
                    "secret": flow.webhook.get("secret") or "",
                }
            )
    context = {
        "section": "workspace",
        "workspace": workspace,
        "schedules": schedules_of(workspace),
        "hooks": hooks,
        "can_write": membership.can_write,
    }
    # notify's part: the outbound deliveries (has_deliveries says whether an app answered).
    context["has_deliveries"] = False
    context.update(pageparts.fill(triggers_parts, Workspace, request=request, workspace=workspace))
    return render(request, "runs/triggers.html", context)
