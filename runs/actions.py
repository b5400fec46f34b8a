"""Starting runs, deciding gates, receiving events, cancelling.

`check_*` validates and scopes (raising ApiError with a sentence naming the
field), then `do_*` changes rows in one transaction and queues Celery work
with `transaction.on_commit`. The flow itself advances in `runs.lifecycle`.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Workspace
from foldrun.api import ApiError
from foldrun.celery import send_after_commit
from foldrun.contract.model import agents_md_of, find_flow, flow_choices, flow_names
from foldrun.contract.resolve import resolve_agent
from foldrun.engine.flow import adhoc_plan, plan_from_steps
from library.models import Changeset

from .models import (
    Approval,
    ApprovalState,
    Run,
    RunKind,
    RunStatus,
    Step,
    StepStatus,
    Trigger,
)
from .budget import WINDOWS, spent_in_window
from .desks import desk_at, flow_meta, head_changeset, run_inputs  # noqa: F401 - pages and apps read them here
from .lifecycle import cancel_unstarted, create_run, move_run, move_step, plain_first_task
from .signals import emit


def check_workspace_budget(workspace: Workspace, desk) -> None:
    """At 100% of AGENTS.md `budget:` ({month: 50}) new runs are refused until the window turns."""
    defaults = agents_md_of(desk, "workspace")
    budget = defaults.budget if defaults else None
    if not isinstance(budget, dict):
        return
    now = timezone.now()
    for window in ("day", "week", "month"):
        cap = budget.get(window)
        if not isinstance(cap, (int, float)) or isinstance(cap, bool) or cap <= 0:
            continue
        spent = spent_in_window(workspace.pk, window, now)
        if spent >= Decimal(str(cap)):
            label = WINDOWS[window]
            raise ApiError(
                f"workspace {workspace.name} has spent ${spent:.2f} of its ${Decimal(str(cap)):.2f} {label} budget; "
                f"new runs are refused until the {window} turns.",
                code="budget_exhausted",
                status_code=409,
            )


def check_start_run(
    *,
    workspace: Workspace,
    user=None,
    flow: str | None = None,
    agent: str | None = None,
    task: str | None = None,
    inputs: Any = None,
    is_test: bool = False,
    trigger: str = Trigger.API,
    delivery_id: str = "",
) -> Run:
    """Validate a request to run a flow (or one agent, adhoc) and start it."""
    if bool(flow) == bool(agent):
        raise ApiError("Give either flow (a flow's name) or agent (with task) to run.", code="invalid")
    if inputs is None:
        inputs = {}
    if not isinstance(inputs, dict):
        raise ApiError("inputs: must be an object of names to values.", code="invalid")
    inputs = {k: v for k, v in inputs.items() if k != "__flow__"}  # reserved: the run's copy of the flow's settings
    return _start_at(
        head_changeset(workspace),
        workspace=workspace,
        user=user,
        flow=flow,
        agent=agent,
        task=task,
        inputs=inputs,
        is_test=is_test,
        trigger=trigger,
        delivery_id=delivery_id,
    )


def _start_at(
    changeset: Changeset | None,
    *,
    workspace: Workspace,
    user,
    flow: str | None,
    agent: str | None,
    task: Any,
    inputs: dict,
    is_test: bool,
    trigger: str,
    delivery_id: str,
) -> Run:
    """check_start_run at the workspace revision `changeset`."""
    number = changeset.number if changeset else 0
    desk = desk_at(workspace, number, changeset=changeset)
    check_workspace_budget(workspace, desk)
    if flow:
        found = find_flow(desk, flow)
        if found is None:
            names = flow_names(desk)
            raise ApiError(
                f"flow: there is no flow {flow} in workspace {workspace.name} (flows/{flow}.md); "
                f"{flow_choices(names)}.",
                code="not_found",
                status_code=404,
                details={"what": "flow", "name": flow, "where": workspace.name, "choices": names},
            )
        errors = [p for p in found.problems if p.level == "error"]
        if errors:
            raise ApiError(
                f"flow: flows/{flow}.md has {len(errors)} error(s); the first: line {errors[0].line}: "
                f"{errors[0].message}",
                code="invalid",
            )
        for spec in found.steps:  # before step 1 is paid for: a step naming no agent would fail mid-run
            name = spec.agent
            if name and resolve_agent(desk, name) is None:
                raise ApiError(
                    f"flow: flows/{flow}.md step {spec.number} names [[{name}]], and "
                    f"there is no agent {name} in workspace {workspace.name}; nothing was started.",
                    code="invalid",
                )
        merged = {**(found.inputs or {}), **inputs}
        return do_start_run(
            workspace=workspace,
            user=user,
            kind=RunKind.FLOW,
            name=flow,
            plan=plan_from_steps(found.steps),
            flow_meta={
                "approvers": found.approvers,
                "approve_within": found.approve_within.total_seconds(),
                "timezone": found.timezone,
                "sla": found.sla.total_seconds() if found.sla else None,
                "disable_after": found.disable_after,
            },
            budget=found.budget,
            inputs=merged,
            is_test=is_test,
            trigger=trigger,
            changeset=changeset,
            delivery_id=delivery_id,
        )
    if resolve_agent(desk, agent) is None:
        raise ApiError(
            f"agent: there is no agent {agent} in workspace {workspace.name}.", code="not_found", status_code=404
        )
    if not task or not str(task).strip():
        raise ApiError("task: say what the agent should do.", code="invalid")
    return do_start_run(
        workspace=workspace,
        user=user,
        kind=RunKind.ADHOC,
        name=f"adhoc:{agent}",
        plan=adhoc_plan(agent, str(task)),
        flow_meta={},
        budget=None,
        inputs=inputs,
        is_test=is_test,
        trigger=trigger,
        changeset=changeset,
        delivery_id=delivery_id,
    )


def do_start_run(
    *,
    workspace: Workspace,
    user,
    kind: str,
    name: str,
    plan: list[dict],
    flow_meta: dict,  # noqa: F811 - the parameter, not desks.flow_meta
    budget: float | None,
    inputs: dict,
    is_test: bool,
    trigger: str,
    changeset: Changeset | None,
    delivery_id: str = "",
) -> Run:
    # A first step with nothing to wait for is queued at once: the run is saved as `advance` would leave it
    # after its first move, and only that step's task is enqueued (no advance, no second transaction).
    first_task = plain_first_task(plan, inputs)
    moved = first_task is not None
    now = timezone.now()
    try:
        return create_run(
            workspace=workspace,
            user=user,
            kind=kind,
            name=name,
            plan=plan,
            flow_meta=flow_meta,
            budget=budget,
            inputs=inputs,
            is_test=is_test,
            trigger=trigger,
            changeset=changeset,
            delivery_id=delivery_id,
            first_task=first_task,
            moved=moved,
            now=now,
        )
    except IntegrityError:
        if not delivery_id:
            raise
        # Another request with the same delivery id won the race: its run is the answer.
        earlier = Run.objects.filter(
            workspace=workspace, name=name, delivery_id=delivery_id, delivery_day=now.date()
        ).first()
        if earlier is None:
            raise
        raise DuplicateDelivery(earlier) from None


class DuplicateDelivery(Exception):
    """A run for this delivery id (flow, day) exists already; `run` is it."""

    def __init__(self, run: Run) -> None:
        super().__init__(run.public_id)
        self.run = run


def earlier_delivery(workspace: Workspace, flow: str, delivery_id: str) -> Run | None:
    """The run a delivery id already started for this flow within the last day, if any."""
    if not delivery_id:
        return None
    return Run.objects.filter(
        workspace=workspace, name=flow, delivery_id=delivery_id, created_at__gte=timezone.now() - dt.timedelta(days=1)
    ).first()


# --------------------------------------------------------------- gates


def check_decide(*, run: Run, index: int, decision: str, membership, answer: str | None = None) -> Approval:
    """Preconditions: `run` is in the member's account. Approvers and up may decide."""
    if not membership.can_approve:
        raise ApiError(
            f"Your role ({membership.role}) cannot approve or reject steps.", code="permission_denied", status_code=403
        )
    pending = Approval.objects.filter(run=run, step__index=index, state=ApprovalState.PENDING).first()
    email = (membership.user.email or "").lower()
    if (
        pending is not None
        and pending.approvers
        and not membership.can_manage
        and email not in {str(a).lower() for a in pending.approvers}
    ):
        raise ApiError(
            f"Only the flow's approvers ({', '.join(pending.approvers)}) or an owner or admin may decide step {index}.",
            code="permission_denied",
            status_code=403,
        )
    return decide(
        run=run, index=index, decision=decision, user=membership.user, label=membership.user.email, answer=answer
    )


def decide(*, run: Run, index: int, decision: str, user=None, label: str = "", answer: str | None = None) -> Approval:
    """Decide the pending approval of step `index` (also used by notify's approve/reject links)."""
    if decision not in ("approve", "reject"):
        raise ApiError("decision must be approve or reject.", code="invalid")
    # The oldest question still open at that step (fan-out instances may each have asked one); else the
    # latest, decided, so a second decision is refused saying by whom.
    approval = (
        Approval.objects.filter(run=run, step__index=index, state=ApprovalState.PENDING)
        .order_by("created_at", "pk")
        .first()
        or Approval.objects.filter(run=run, step__index=index).order_by("-created_at", "-pk").first()
    )
    if approval is None:
        waiting = sorted(
            set(Approval.objects.filter(run=run, state=ApprovalState.PENDING).values_list("step__index", flat=True))
        )
        if not waiting:
            which = "no step of it is"
        else:
            which = f"step{'s' if len(waiting) > 1 else ''} {', '.join(map(str, waiting))} {'are' if len(waiting) > 1 else 'is'}"
        raise ApiError(
            f"Step {index} of {run.public_id} is not waiting for a decision; {which}.",
            code="not_waiting",
            status_code=409,
            details={"what": "step", "name": index, "where": run.public_id, "choices": waiting},
        )
    return do_decide_approval(approval, approved=decision == "approve", user=user, label=label, answer=answer)


def do_decide_approval(
    approval: Approval, *, approved: bool, user=None, label: str = "", answer: str | None = None
) -> Approval:
    """Decide once: a second decision is refused with 409 and changes nothing."""
    with transaction.atomic():
        approval = Approval.objects.select_for_update().get(pk=approval.pk)
        if approval.state != ApprovalState.PENDING:
            who = approval.decided_by_label or "someone"
            raise ApiError(
                f"Step {approval.step.index} was already {approval.state} by {who}; a decision is made once.",
                code="already_decided",
                status_code=409,
            )
        if approval.expires_at and approval.expires_at < timezone.now():
            raise ApiError(
                "This decision has expired; the run cannot be approved any more.", code="expired", status_code=409
            )
        if approved and approval.kind == "ask" and not (answer or "").strip():
            raise ApiError("answer: the step asked a question; give the answer.", code="invalid")
        approval.state = (
            (ApprovalState.ANSWERED if approval.kind == "ask" else ApprovalState.APPROVED)
            if approved
            else ApprovalState.REJECTED
        )
        approval.answer = (answer or "").strip() if approved else (answer or "").strip()
        approval.decided_by = user if getattr(user, "is_authenticated", False) else None
        approval.decided_by_label = label or (user.email if user is not None else "")
        approval.decided_at = timezone.now()
        # Lock order: the run, then its step.
        run = Run.objects.select_for_update().get(pk=approval.run_id)
        step = Step.objects.select_for_update().get(pk=approval.step_id)
        if run.is_finished:
            raise ApiError(
                f"{run.public_id} has already {run.status}; there is nothing left to decide.",
                code="finished",
                status_code=409,
            )
        approval.save()
        who = approval.decided_by_label
        if approved and step.instance is not None:
            # A fan-out instance that asked: it runs again with the answer; its siblings were not stopped.
            fields = move_step(step, StepStatus.QUEUED, f"answered by {who}")
            step.queued_at = timezone.now()
            step.save(update_fields=[*fields, "queued_at"])
            if not Approval.objects.filter(run=run, state=ApprovalState.PENDING).exists():
                run.save(update_fields=move_run(run, RunStatus.RUNNING, f"step {step.label} was answered by {who}"))
            send_after_commit("runs.run_step", step.pk)
        elif approved:
            step.save(update_fields=move_step(step, StepStatus.PENDING, f"{approval.state} by {who}"))
            run.save(update_fields=move_run(run, RunStatus.RUNNING, f"step {step.index} was {approval.state} by {who}"))
            send_after_commit("runs.advance", run.pk)
        else:
            fields = move_step(step, StepStatus.CANCELLED, f"rejected by {who}")
            step.error = f"rejected by {who}"
            step.finished_at = timezone.now()
            step.save(update_fields=[*fields, "error", "finished_at"])
            run.error = f"step {step.index} ({step.agent}) was rejected by {who}"
            fields = move_run(run, RunStatus.CANCELLED, run.error)
            run.finished_at = timezone.now()
            run.save(update_fields=[*fields, "error", "finished_at"])
            cancel_unstarted(run, f"the run was cancelled: step {step.index} was rejected")
            emit(run, "cancelled", step=step)
    return approval


# --------------------------------------------------------------- events


def do_receive_event(run: Run, name: str, payload: Any = None) -> Step:
    """`POST …/runs/<id>/events/<name>`: resume a step parked on `wait: event <name>`."""
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        step = (
            Step.objects.select_for_update()
            .filter(run=locked, wait_event=name, instance__isnull=True, event_received_at__isnull=True)
            .order_by("index")
            .first()
        )
        if step is None:
            raise ApiError(
                f"{run.public_id} has no step waiting for event {name}.", code="not_waiting", status_code=409
            )
        step.event_received_at = timezone.now()
        step.event_payload = payload
        fields = (
            move_step(step, StepStatus.PENDING, f"event {name} arrived") if step.status == StepStatus.WAITING else []
        )
        step.save(update_fields=["event_received_at", "event_payload", *fields])
        if locked.status == RunStatus.WAITING:
            locked.save(update_fields=move_run(locked, RunStatus.RUNNING, f"event {name} arrived"))
        send_after_commit("runs.advance", locked.pk)
    return step


def do_cancel_run(run: Run, *, user=None) -> Run:
    with transaction.atomic():
        locked = Run.objects.select_for_update().get(pk=run.pk)
        if locked.is_finished:
            raise ApiError(f"{run.public_id} has already {locked.status}.", code="finished", status_code=409)
        locked.error = f"cancelled by {user.email if user else 'foldrun'}"
        fields = move_run(locked, RunStatus.CANCELLED, locked.error)
        locked.finished_at = timezone.now()
        locked.save(update_fields=[*fields, "error", "finished_at"])
        cancel_unstarted(locked, locked.error)
        Approval.objects.filter(run=locked, state=ApprovalState.PENDING).update(
            state=ApprovalState.REJECTED, decided_by_label="cancelled"
        )
        emit(locked, "cancelled")
    return locked
