"""Moving a run through its plan: `advance(run_pk)` looks at the run under a lock and does the next thing —
parks at a gate (`!`, `ask:`), parks on `wait: event`, fans out `each:` as a Celery group (the last instance
to finish joins them, counted in the database under the parent row's lock — no result backend needed),
queues a plain step, or finishes the run (runs/lifecycle/finish.py: its verdict and headline). A step's end moves its
run on from here too (`move_within`, called by runs/lifecycle/settle.py), inside its closing transaction; with the
worker task's `Chain` in hand, the run's next plain step is taken for that task and returned (`Next`).

Lock order, everywhere: Run, then Step(s), then (inside library writes) the Workspace.
"""

from __future__ import annotations

import logging

from django.db import transaction
from django.utils import timezone

from foldrun.celery import send_after_commit
from foldrun.engine.flow import fill_task, split_items

from ..desks import flow_meta, run_inputs
from ..models import Approval, ApprovalKind, ApprovalState, Run, RunStatus, Step, StepStatus
from ..signals import emit
from ..trace_log import trace
from .chain import QUEUE_FIELDS, Chain, Next, Taken, enqueue_group, queue, steering, take
from .finish import clears_quarantine, finish_run, finish_within
from .states import move_run, move_step, take_step

log = logging.getLogger(__name__)

FINISHED = {StepStatus.COMPLETED, StepStatus.FAILED, StepStatus.SKIPPED, StepStatus.CANCELLED}


# --------------------------------------------------------------------- advance


def advance(run_pk: int) -> None:
    """Look at the run under its lock and do the next thing (the `runs.advance` task, a decision, an event, the
    sweep): a message is sent for whatever it queues."""
    with transaction.atomic():
        run = Run.objects.select_for_update().filter(pk=run_pk).first()
        if run is None:
            return
        _move(run)


def _move(run: Run, chain: Chain | None = None) -> Next:
    """advance's work; with a worker task's `chain`, what that task runs next. Precondition: inside a
    transaction holding the run's row lock."""
    if run.is_finished or run.status in (RunStatus.AWAITING_APPROVAL, RunStatus.WAITING):
        return None
    if run.status == RunStatus.QUEUED:
        fields = move_run(run, RunStatus.RUNNING, "its first step is due")
        run.started_at = timezone.now()
        run.save(update_fields=[*fields, "started_at"])
    parents = {s.index: s for s in Step.objects.select_for_update().filter(run=run, instance__isnull=True)}
    if chain is not None and chain.run is run:
        chain.parents, chain.parents_of = parents, run.pk  # the next step's end may move on from these
    outputs = {i: s.output for i, s in parents.items() if s.status == StepStatus.COMPLETED}
    inputs = run_inputs(run)
    for spec in run.plan:
        step = parents[spec["number"]]
        if step.status in (StepStatus.COMPLETED, StepStatus.SKIPPED):
            continue
        if step.status in (StepStatus.FAILED, StepStatus.CANCELLED):
            if spec.get("on_fail") == "continue":
                continue
            finish_run(run, RunStatus.FAILED, error=f"step {step.index} ({step.agent}) failed: {step.error}")
            return None
        if step.status != StepStatus.PENDING:
            return None  # queued, running or parked: its task or a person moves it on
        if spec.get("gate") and not _decided(step, ApprovalKind.GATE):
            park(
                run,
                step,
                ApprovalKind.GATE,
                question=f"Run step {step.index} ({step.agent}): {fill_task(spec['task'], inputs, outputs)[:500]}",
            )
            return None
        if spec.get("ask") and not _decided(step, ApprovalKind.ASK):
            park(run, step, ApprovalKind.ASK, question=fill_task(spec["ask"], inputs, outputs))
            return None
        if spec.get("wait_event") and step.event_received_at is None:
            step.save(update_fields=move_step(step, StepStatus.WAITING, f"waiting for event {spec['wait_event']}"))
            run.save(update_fields=move_run(run, RunStatus.WAITING, f"step {step.index} waits for an event"))
            trace(
                run,
                step,
                f"waiting for event {spec['wait_event']}: POST …/runs/{run.public_id}/events/{spec['wait_event']}",
            )
            emit(run, "waiting", step=step)
            return None
        step.task = fill_task(spec["task"], inputs, outputs)
        if spec.get("each"):
            if _fan_out(run, step, spec, outputs):
                return None
            continue
        nxt = queue(step, chain=chain)
        step.save(update_fields=["task", *QUEUE_FIELDS])
        return nxt
    finish_run(run, RunStatus.COMPLETED, parents=parents)
    return None


def plain_first_task(plan: list[dict], inputs: dict) -> str | None:
    """The filled task of a new run's first step when `advance` would simply queue it (no `!` gate, `ask:`,
    `wait:` or `each:`), else None. Lets the start save the run already running with that step queued — the
    move `advance` would make, in the start's own transaction (no second transaction, no row re-read)."""
    if not plan:
        return None
    spec = plan[0]
    if spec.get("gate") or spec.get("ask") or spec.get("wait_event") or spec.get("each"):
        return None
    return fill_task(spec["task"], inputs, {})


def move_within(run: Run, ended: Step | None = None, *, unsaved: bool = False, chain: Chain | None = None) -> Next:
    """Move the run on inside the caller's transaction, which holds the run's lock (a step just ended under it):
    no queue hop and no second transaction. A savepoint keeps the step's own result when the move fails;
    the advance task then tries again (and fails the run with a sentence if it cannot). Returns what the
    worker task holding `chain` runs next (None without a chain: a message is sent instead).

    `unsaved`: `ended` is not saved yet — saved here, before anything reads the run's steps again or the chain
    takes the next one."""
    chain = steering(chain)
    seen = _continue(run, ended, chain, unsaved=unsaved)
    if isinstance(seen, Taken):
        return seen
    if unsaved:
        ended.save()
    if seen == "done" and not clears_quarantine(run):
        finish_within(run, chain.parents)
        return None
    kept = chain.ending if chain is not None else None
    try:
        with transaction.atomic():
            if seen == "done":
                finish_run(run, RunStatus.COMPLETED, parents=chain.parents)
                return None
            return _move(run, chain)
    except Exception:  # noqa: BLE001 - the step's result stands; the task retries the idempotent move
        if chain is not None:  # what the rolled-back move wrote for this task is undone with it
            chain.ending = kept
        log.exception("moving %s on after a step failed; the advance task tries again", run.public_id)
        send_after_commit("runs.advance", run.pk)
        return None


def _continue(run: Run, ended: Step | None, chain: Chain | None, *, unsaved: bool = False) -> Taken | str:
    """`_move`'s decision without reading the run's steps again, for the step that just ended in this task:
    when the steps this task saw under the run's lock say the next thing is a plain step, it is taken here
    if it is still pending and untried (a conditional UPDATE) — the step taken; when they say every step ended,
    "done" (the caller finishes the run). "" for anything else — a gate, a question, a wait, a fan-out, a
    failure, a row not as seen — which `_move` then decides from fresh rows.

    Sound because a finished step stays finished, the step that just ended was ended here under the lock,
    and the next step is taken only if its row is still the one seen. `ended`: the plain step that just
    ended (saved). Precondition: as `move_within`."""
    parents = chain.parents if chain is not None and chain.run is run and chain.parents_of == run.pk else None
    if parents is None or run.status != RunStatus.RUNNING:
        return ""
    if ended is not None:
        parents[ended.index] = ended
    outputs = {i: s.output for i, s in parents.items() if s.status == StepStatus.COMPLETED}
    for spec in run.plan:
        step = parents.get(spec["number"])
        if step is None:
            return ""
        if step.status in (StepStatus.COMPLETED, StepStatus.SKIPPED):
            continue
        if step.status in (StepStatus.FAILED, StepStatus.CANCELLED) and spec.get("on_fail") == "continue":
            continue
        if (
            step.status != StepStatus.PENDING
            or spec.get("gate")
            or spec.get("ask")
            or spec.get("wait_event")
            or spec.get("each")
        ):
            return ""
        try:
            task = fill_task(spec["task"], run_inputs(run), outputs)
        except Exception:  # noqa: BLE001 - `_move` meets the same error under its savepoint and says so
            return ""
        seen = step.attempt
        step.task = task
        holder = take(step)
        if unsaved:  # the ended step first: its row is written before the next one's take
            ended.save()
        if not take_step(step, StepStatus.PENDING, seen, ["task", *QUEUE_FIELDS]):
            chain.parents = None  # not as seen: `_move` reads the rows afresh (and this object is dropped)
            return ""  # `ended` was saved; move_within saving it again changes nothing
        return Taken(run, step, chain.start_try(step), holder)
    return "done"


def fail_run(run_pk: int, error: str) -> None:
    """End a run that cannot go on (it is not finished already) as failed, saying why."""
    with transaction.atomic():
        run = Run.objects.select_for_update().filter(pk=run_pk).first()
        if run is None or run.is_finished:
            return
        finish_run(run, RunStatus.FAILED, error=error)


def _decided(step: Step, kind: str) -> bool:
    return Approval.objects.filter(
        step=step, kind=kind, state__in=[ApprovalState.APPROVED, ApprovalState.ANSWERED]
    ).exists()


def park(run: Run, step: Step, kind: str, *, question: str) -> Approval:
    """Park the run at `step` until a person decides: a gate (`!`), a flow's `ask:`, or a question the step's
    model asked (runs/lifecycle/settle.py). The approval is created, the step and run await it, notify hears."""
    meta = flow_meta(run)
    within = meta.get("approve_within") or 7 * 86400
    approval = Approval.objects.create(
        run=run,
        step=step,
        kind=kind,
        question=question,
        approvers=list(meta.get("approvers") or []),
        expires_at=timezone.now() + timezone.timedelta(seconds=within),
    )
    fields = move_step(step, StepStatus.AWAITING_APPROVAL, f"a {kind} waits for a person")
    step.approvers = approval.approvers
    step.save(update_fields=[*fields, "approvers"])
    run.save(update_fields=move_run(run, RunStatus.AWAITING_APPROVAL, f"step {step.label} waits for a person"))
    trace(run, step, f"awaiting approval: {question[:300]}", approval=approval.public_id)
    emit(run, "awaiting-approval", step=step, approval=approval)
    return approval


def _fan_out(run: Run, step: Step, spec: dict, outputs: dict[int, str]) -> bool:
    """Create one instance per item and enqueue them as a group. False when there is nothing to do."""
    previous = outputs.get(step.index - 1, "")
    try:
        items = split_items(previous, spec["each"])
    except ValueError as exc:
        fields = move_step(step, StepStatus.FAILED, "each: its input could not be split")
        step.error = str(exc)
        step.finished_at = timezone.now()
        step.save(update_fields=["task", *fields, "error", "finished_at"])
        trace(run, step, str(exc))
        if spec.get("on_fail") != "continue":
            finish_run(run, RunStatus.FAILED, error=f"step {step.index} ({step.agent}) failed: {exc}")
            return True
        return False
    cap = spec.get("max")
    if not items:
        fields = move_step(step, StepStatus.COMPLETED, "each: nothing to fan out")
        step.output = ""
        step.finished_at = timezone.now()
        step.save(update_fields=["task", *fields, "output", "finished_at"])
        trace(run, step, f"each: {spec['each']} — the previous step's output has no items; nothing to fan out")
        return False
    inputs = run_inputs(run)
    now = timezone.now()
    # `max:` is how many instances run at once; the rest wait (pending) and start as others finish.
    first_wave = len(items) if not cap else min(cap, len(items))
    instances = [
        Step(
            run=run,
            index=step.index,
            instance=n,
            item=item,
            agent=step.agent,
            task=fill_task(spec["task"], inputs, outputs, item),
            status=StepStatus.PENDING,
            wait_event="",
        )
        for n, item in enumerate(items)
    ]
    for instance in instances[:first_wave]:  # moved before they are written: one INSERT still
        move_step(instance, StepStatus.QUEUED, f"each: {len(items)} instances")
        instance.queued_at = now
    Step.objects.bulk_create(instances)
    if all(s.pk for s in instances):  # the database returned the new keys (PostgreSQL, SQLite 3.35+)
        pks = [s.pk for s in instances if s.status == StepStatus.QUEUED]
    else:
        pks = list(
            Step.objects.filter(run=run, index=step.index, instance__isnull=False, status=StepStatus.QUEUED)
            .order_by("instance")
            .values_list("pk", flat=True)
        )
    fields = move_step(step, StepStatus.RUNNING, f"each: {len(items)} instances")
    step.started_at = timezone.now()
    step.save(update_fields=["task", *fields, "started_at"])
    at_once = f", at most {cap} at a time" if cap and cap < len(items) else ""
    trace(run, step, f"each: {len(items)} instances in parallel{at_once}")
    enqueue_group(pks)
    return True


def spec_of(run: Run, step: Step) -> dict:
    """The run's plan entry for `step` (by its number): what the flow file said of it."""
    return next(s for s in run.plan if s["number"] == step.index)
