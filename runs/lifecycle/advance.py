"""Moving a run through its plan: `advance(run_pk)` looks at the run under a lock and does the next thing —
parks at a gate (`!`, `ask:`), parks on `wait: event`, fans out `each:` as a Celery group (the last instance
to finish joins them, counted in the database under the parent row's lock — no result backend needed),
queues a plain step, or finishes the run (runs/lifecycle/finish.py: its verdict and headline). A step's end moves its run
on from here too (settle_failure, _after_step), inside its closing transaction.

Lock order, everywhere: Run, then Step(s), then (inside library writes) the Workspace.
"""
from __future__ import annotations

import json
import logging

from django.db import transaction
from django.utils import timezone

from foldrun.celery import send_after_commit
from foldrun.engine.flow import fill_task, split_items

from .chain import _chain, _claim_here, _enqueue_group, _start_try, _take, enqueue_step
from ..desks import flow_meta, run_inputs
from .finish import _clears_quarantine, _finish, _finish_within
from ..models import Approval, ApprovalKind, ApprovalState, Run, RunStatus, Step, StepStatus
from ..signals import emit
from .states import move_run, move_step, move_steps, take_step
from ..trace_log import trace

log = logging.getLogger(__name__)

FINISHED = {StepStatus.COMPLETED, StepStatus.FAILED, StepStatus.SKIPPED, StepStatus.CANCELLED}


# --------------------------------------------------------------------- advance


def advance(run_pk: int) -> None:
    with transaction.atomic():
        run = Run.objects.select_for_update().filter(pk=run_pk).first()
        if run is None:
            return
        _move(run)


def _move(run: Run) -> None:
    """advance's work. Precondition: inside a transaction holding the run's row lock."""
    if run.is_finished or run.status in (RunStatus.AWAITING_APPROVAL, RunStatus.WAITING):
        return
    if run.status == RunStatus.QUEUED:
        fields = move_run(run, RunStatus.RUNNING, "its first step is due")
        run.started_at = timezone.now()
        run.save(update_fields=[*fields, "started_at"])
    parents = {s.index: s for s in Step.objects.select_for_update().filter(run=run, instance__isnull=True)}
    chain = _chain()
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
            _finish(run, RunStatus.FAILED, error=f"step {step.index} ([[{step.agent}]]) failed: {step.error}")
            return
        if step.status != StepStatus.PENDING:
            return  # queued, running or parked: its task or a person moves it on
        if spec.get("gate") and not _decided(step, ApprovalKind.GATE):
            _park(run, step, ApprovalKind.GATE, question=f"Run step {step.index} ({step.agent}): "
                                                         f"{fill_task(spec['task'], inputs, outputs)[:500]}")
            return
        if spec.get("ask") and not _decided(step, ApprovalKind.ASK):
            _park(run, step, ApprovalKind.ASK, question=fill_task(spec["ask"], inputs, outputs))
            return
        if spec.get("wait_event") and step.event_received_at is None:
            step.save(update_fields=move_step(step, StepStatus.WAITING, f"waiting for event {spec['wait_event']}"))
            run.save(update_fields=move_run(run, RunStatus.WAITING, f"step {step.index} waits for an event"))
            trace(run, step, f"waiting for event {spec['wait_event']}: POST …/runs/{run.public_id}/events/"
                              f"{spec['wait_event']}")
            emit(run, "waiting", step=step)
            return
        step.task = fill_task(spec["task"], inputs, outputs)
        if spec.get("each"):
            if _fan_out(run, step, spec, outputs):
                return
            continue
        queue(step)
        step.save(update_fields=["task", *QUEUE_FIELDS])
        return
    _finish(run, RunStatus.COMPLETED, parents=parents)


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


def move_within(run: Run, ended: Step | None = None, *, unsaved: bool = False) -> None:
    """Move the run on inside the caller's transaction, which holds the run's lock (a step just ended under it):
    no queue hop and no second transaction. A savepoint keeps the step's own result when the move fails;
    the advance task then tries again (and fails the run with a sentence if it cannot).

    `unsaved`: `ended` is not saved yet — saved here, before anything reads the run's steps again or the chain
    takes the next one."""
    seen = _continue(run, ended, unsaved=unsaved)
    if seen == "taken":
        return
    if unsaved:
        ended.save()
    chain = _chain()
    if seen == "done" and not _clears_quarantine(run):
        _finish_within(run, chain.parents)
        return
    kept = (chain.next, chain.ending) if chain is not None else None
    try:
        with transaction.atomic():
            if seen == "done":
                _finish(run, RunStatus.COMPLETED, parents=chain.parents)
            else:
                _move(run)
    except Exception:  # noqa: BLE001 - the step's result stands; the task retries the idempotent move
        if chain is not None:  # what the rolled-back move took or wrote for this task is undone with it
            chain.next, chain.ending = kept
        log.exception("moving %s on after a step failed; the advance task tries again", run.public_id)
        send_after_commit("runs.advance", run.pk)


def _continue(run: Run, ended: Step | None, *, unsaved: bool = False) -> str:
    """`_move`'s decision without reading the run's steps again, for the step that just ended in this task:
    when the steps this task saw under the run's lock say the next thing is a plain step, it is taken here
    if it is still pending and untried (a conditional UPDATE) — "taken"; when they say every step ended,
    "done" (the caller finishes the run). "" for anything else — a gate, a question, a wait, a fan-out, a
    failure, a row not as seen — which `_move` then decides from fresh rows.

    Sound because a finished step stays finished, the step that just ended was ended here under the lock,
    and the next step is taken only if its row is still the one seen. `ended`: the plain step that just
    ended (saved). Precondition: as `move_within`."""
    chain = _chain()
    parents = chain.parents if chain is not None and chain.run is run and chain.parents_of == run.pk else None
    if parents is None or run.status != RunStatus.RUNNING or chain.next is not None:
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
        if (step.status != StepStatus.PENDING or spec.get("gate") or spec.get("ask") or spec.get("wait_event")
                or spec.get("each")):
            return ""
        try:
            task = fill_task(spec["task"], run_inputs(run), outputs)
        except Exception:  # noqa: BLE001 - `_move` meets the same error under its savepoint and says so
            return ""
        seen = step.attempt
        step.task = task
        holder = _take(step)
        if unsaved:  # the ended step first: its row is written before the next one's take
            ended.save()
        if not take_step(step, StepStatus.PENDING, seen, ["task", *QUEUE_FIELDS]):
            chain.parents = None  # not as seen: `_move` reads the rows afresh (and this object is dropped)
            return ""  # `ended` was saved; move_within saving it again changes nothing
        chain.next = (run, step, _start_try(chain, step), holder)
        return "taken"
    return "done"


def fail_run(run_pk: int, error: str) -> None:
    """End a run that cannot go on (it is not finished already) as failed, saying why."""
    with transaction.atomic():
        run = Run.objects.select_for_update().filter(pk=run_pk).first()
        if run is None or run.is_finished:
            return
        _finish(run, RunStatus.FAILED, error=error)


def _decided(step: Step, kind: str) -> bool:
    return Approval.objects.filter(step=step, kind=kind, state__in=[ApprovalState.APPROVED, ApprovalState.ANSWERED]).exists()


def _park(run: Run, step: Step, kind: str, *, question: str) -> Approval:
    meta = flow_meta(run)
    within = meta.get("approve_within") or 7 * 86400
    approval = Approval.objects.create(run=run, step=step, kind=kind, question=question,
                                       approvers=list(meta.get("approvers") or []),
                                       expires_at=timezone.now() + timezone.timedelta(seconds=within))
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
            _finish(run, RunStatus.FAILED, error=f"step {step.index} ([[{step.agent}]]) failed: {exc}")
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
    instances = [Step(run=run, index=step.index, instance=n, item=item, agent=step.agent,
                      task=fill_task(spec["task"], inputs, outputs, item),
                      status=StepStatus.QUEUED if n < first_wave else StepStatus.PENDING,
                      queued_at=now if n < first_wave else None, wait_event="") for n, item in enumerate(items)]
    Step.objects.bulk_create(instances)
    if all(s.pk for s in instances):  # the database returned the new keys (PostgreSQL, SQLite 3.35+)
        pks = [s.pk for s in instances if s.status == StepStatus.QUEUED]
    else:
        pks = list(Step.objects.filter(run=run, index=step.index, instance__isnull=False, status=StepStatus.QUEUED)
                   .order_by("instance").values_list("pk", flat=True))
    fields = move_step(step, StepStatus.RUNNING, f"each: {len(items)} instances")
    step.started_at = timezone.now()
    step.save(update_fields=["task", *fields, "started_at"])
    at_once = f", at most {cap} at a time" if cap and cap < len(items) else ""
    trace(run, step, f"each: {len(items)} instances in parallel{at_once}")
    _enqueue_group(pks)
    return True


# --------------------------------------------------------------------- a step


def queue(step: Step, now=None, why: str = "its turn came") -> None:
    """Mark `step` queued (the caller saves it, with `QUEUE_FIELDS`) and send its message after commit — or,
    in a worker task ending the step before it, take it for this task at once (see run_steps_from)."""
    if step.status == StepStatus.PENDING and _claim_here(step):
        return
    move_step(step, StepStatus.QUEUED, why)
    step.queued_at = now or timezone.now()
    step.lease_holder, step.lease_until = "", None
    enqueue_step(step.pk)


QUEUE_FIELDS = ["status", "status_reason", "queued_at", "lease_holder", "lease_until", "attempt", "started_at",
                "error"]


def _spec(run: Run, step: Step) -> dict:
    return next(s for s in run.plan if s["number"] == step.index)


def settle_failure(run: Run, step: Step, error: str, *, retry_allowed: bool) -> None:
    spec = _spec(run, step)
    step.error = error.splitlines()[0][:1000] if error else "the step failed"
    if retry_allowed and step.attempt - step.lost_reruns <= int(spec.get("retry") or 0) and not run.is_finished:
        trace(run, step, f"retry {step.attempt - step.lost_reruns} of {spec.get('retry')}: {step.error}")
        queue(step, why=f"retry {step.attempt - step.lost_reruns} of {spec.get('retry')}")
        step.save()
        return
    move_step(step, StepStatus.FAILED, step.error)
    step.finished_at = timezone.now()
    step.save()
    _after_step(run, step)


def _after_step(run: Run, step: Step) -> None:
    """A plain step advances the run; an instance joins its siblings (the last one advances).

    Precondition: inside the transaction that holds the run's lock (the step's own end), where the run moves on.
    """
    if step.instance is None:
        move_within(run, ended=step)
        return
    instances = Step.objects.filter(run=run, index=step.index, instance__isnull=False).order_by("instance")
    # Every instance's end reads its siblings' states (the run's lock, held, makes the ends take turns); only
    # the last one locks the parent and reads their outputs.
    states = list(instances.values_list("pk", "status"))
    waiting = [pk for pk, status in states if status == StepStatus.PENDING]
    if waiting and not run.is_finished:
        # One finished: the next waiting instance takes its place (`max:` at a time).
        nxt = waiting[0]
        if move_steps(Step.objects.filter(pk=nxt), StepStatus.PENDING, StepStatus.QUEUED,
                      "an earlier instance finished (max: at a time)", queued_at=timezone.now()):
            enqueue_step(nxt)
        return
    if any(status not in FINISHED for _, status in states):
        return
    parent = Step.objects.select_for_update().get(run=run, index=step.index, instance__isnull=True)
    if parent.status in FINISHED:
        return
    siblings = list(instances)
    failed = [s for s in siblings if s.status != StepStatus.COMPLETED]
    spec = _spec(run, step)
    if spec.get("each") == "json":
        parent.output = json.dumps([s.output for s in siblings], ensure_ascii=False)
    else:
        parent.output = "\n".join(s.output for s in siblings)
    parent.finished_at = timezone.now()
    if failed:
        move_step(parent, StepStatus.FAILED, "an instance failed")
        parent.error = (f"{len(failed)} of {len(siblings)} instances failed; the first "
                        f"({failed[0].label}): {failed[0].error}")[:1000]
    else:
        move_step(parent, StepStatus.COMPLETED, "every instance completed")
    parent.save()
    move_within(run)
