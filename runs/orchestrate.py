"""Moving a run through its plan, and running one step of it.

`advance(run_pk)` looks at the run under a lock and does the next thing:
parks at a gate (`!`, `ask:`), parks on `wait: event`, fans out `each:` as a
Celery group (the last instance to finish joins them, counted in the
database under the parent row's lock — no result backend needed), enqueues
a plain step, or finishes the run with its verdict and headline.

`execute_step(step_pk)` takes the step once with a lease (foldrun/leases.py:
a random holder id and an expiry, renewed by a heartbeat), runs the engine
outside any transaction, and saves what it returned only if it still holds
the lease. A message for a step already running is dropped; a step whose
lease ran out was lost with its worker, and the recovery sweep
(runs/recovery.py) re-runs it when it had only read and fails it naming what
it wrote when it had written — never sent twice.

Lock order, everywhere: Run, then Step(s), then (inside library writes) the Workspace.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from foldrun import net
from foldrun import incidents, leases
from foldrun.celery import send_after_commit
from foldrun.commits import without_flush_wait
from foldrun.engine import StepRequest, run_step
from foldrun.engine.flow import check_verify, fill_task, headline_of, split_items, verdict_of
from library.actions import WriteRefused, do_write_run_files

from .desks import desk_at, flow_meta, library_head, run_inputs
from .host import DbHost, HeldSecrets
from .models import (
    Approval,
    ApprovalKind,
    ApprovalState,
    Artifact,
    Run,
    RunStatus,
    Schedule,
    Step,
    StepStatus,
    TraceEvent,
    Try,
)
from .signals import emit
from .states import end_try, end_try_with_next, move_run, move_step, skip_unstarted, start_try_with_step

log = logging.getLogger(__name__)

FINISHED = {StepStatus.COMPLETED, StepStatus.FAILED, StepStatus.SKIPPED, StepStatus.CANCELLED}


def trace(run: Run, step: Step | None, message: str, **extra) -> None:
    TraceEvent.objects.create(run=run, step=step, try_n=step.attempt if step else 0, kind="log",
                              data={"message": message, **extra})


# The worker task running steps: the one step its run queues next is run by the same task once this one ends
# (no broker hop, no second task) — the hop is kept for work that really moves: a fan-out's instances, a step
# queued by a person's answer or from the web.
_here = threading.local()


@dataclass
class _Chain:
    """What one worker task keeps while it runs one run's steps one after another (run_steps_from)."""

    held: HeldSecrets = field(default_factory=HeldSecrets)  # vault values read by the steps before
    desk: tuple[int, Any] | None = None  # (run pk, the desk at the run's revision): a revision never changes
    # The run's plain and parent steps as this task last read or wrote them under the run's lock. A row
    # seen finished stays so (finished is final), which is all `_continue` relies on; any other row it
    # takes only if the row is still as seen (a conditional UPDATE), else `_move` reads them afresh.
    parents: dict[int, Step] | None = None
    parents_of: int | None = None  # the run they are of
    run: Run | None = None  # the run, locked, while a step's closing transaction is open
    ending: tuple | None = None  # (try, status, why, fields): the try just ended, written with the next one
    next: Any = None  # what this task runs next: a step's pk (queued) or (run, step, try, holder) (taken)


def _chain() -> _Chain | None:
    return getattr(_here, "chain", None)


def enqueue_step(step_pk: int) -> None:
    chain = _chain()
    if chain is not None and chain.next is None:
        chain.next = step_pk  # still queued in the database: if this worker dies first, the sweep sends it
        return
    send_after_commit("runs.run_step", step_pk)


def run_steps_from(step_pk: int) -> str:
    """Run the step, then, in this same task, each step its run queues next while nothing parks, fans out or
    waits. Returns the words of each for the task log.

    A next step met while the previous one ends is taken there and then, in that step's closing transaction
    (the run's lock is held): no second claim transaction, no queue hop. If this worker dies before running
    it, its lease runs out and the sweep re-runs it like any lost try."""
    words: list[str] = []
    nxt: Any = step_pk
    chain = _Chain()
    _here.chain = chain
    try:
        while nxt is not None:
            chain.next, chain.run = None, None
            if isinstance(nxt, int):
                words.append(execute_step(nxt))
            else:
                words.append(_run_claimed(*nxt))
            nxt = chain.next
    finally:
        _here.chain = None
    return "; ".join(words)


def _claim_here(step: Step) -> bool:
    """Take `step` for this task inside the transaction ending the previous step (which holds the run's lock):
    the next step of a run continued in the same worker task. The caller saves it with QUEUE_FIELDS."""
    chain = _chain()
    run = chain.run if chain is not None else None
    if run is None or chain.next is not None or run.pk != step.run_id or run.is_finished:
        return False
    holder = _take(step)
    chain.next = (run, step, _start_try(chain, step), holder)
    return True


def _start_try(chain: _Chain, step: Step) -> Try:
    """The running try of a step this task just took, written with the end of the try before it when that is
    still held (one statement); see `_end_held_try`."""
    attempt = Try(step=step, n=step.attempt, status="running", started_at=step.queued_at)
    if chain.ending is None:
        attempt.save(force_insert=True)
        return attempt
    ended, to, why, fields = chain.ending
    chain.ending = None
    end_try_with_next(ended, to, why, attempt, **fields)
    return attempt


def _end_held_try(chain: _Chain) -> None:
    """End the try the closing transaction still holds (no next try was taken to write it with)."""
    if chain.ending is not None:
        ended, to, why, fields = chain.ending
        chain.ending = None
        end_try(ended.pk, to, why, **fields)


def _take(step: Step) -> str:
    """Mark `step` running under a new lease held by this task (the caller saves it); returns the holder."""
    now = timezone.now()
    holder = leases.new_holder()
    step.attempt += 1
    move_step(step, StepStatus.RUNNING, f"try {step.attempt} started")
    step.lease_holder, step.lease_until = holder, now + dt.timedelta(seconds=leases.lease_seconds())
    step.queued_at = now
    step.started_at = step.started_at or now
    step.error = ""
    return holder


def _enqueue_group(step_pks: list[int]) -> None:
    for pk in step_pks:
        send_after_commit("runs.run_step", pk)


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
            _park(run, step, ApprovalKind.GATE, question=f"Run step {step.index} ([[{step.agent}]]): "
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


def move_within(run: Run, ended: Step | None = None) -> None:
    """Move the run on inside the caller's transaction, which holds the run's lock (a step just ended under it):
    no queue hop and no second transaction. A savepoint keeps the step's own result when the move fails;
    the advance task then tries again (and fails the run with a sentence if it cannot)."""
    seen = _continue(run, ended)
    if seen == "taken":
        return
    chain = _chain()
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


def _continue(run: Run, ended: Step | None) -> str:
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
        fields = ["task", *QUEUE_FIELDS]
        if not Step.objects.filter(pk=step.pk, status=StepStatus.PENDING, attempt=seen).update(
                **{name: getattr(step, name) for name in fields}):
            chain.parents = None  # not as seen: `_move` reads the rows afresh (and this object is dropped)
            return ""
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


def _finish(run: Run, status: str, *, error: str = "", parents: dict[int, Step] | None = None) -> None:
    """`parents`: the run's plain and parent steps by index, when the caller has them locked in hand."""
    move_run(run, status, error.splitlines()[0] if error else f"every step ended")
    run.finished_at = timezone.now()
    run.error = error[:2000]
    if status == RunStatus.COMPLETED:
        if parents is not None:
            done = [s for s in parents.values() if s.status == StepStatus.COMPLETED]
            last = max(done, key=lambda s: s.index) if done else None
        else:
            last = (Step.objects.filter(run=run, instance__isnull=True, status=StepStatus.COMPLETED)
                    .order_by("-index").first())
        reply = last.output if last else ""
        run.headline = headline_of(reply)
        run.verdict = verdict_of(reply)
        lines = reply.strip().splitlines()
        run.summary = "\n".join(lines[1:]).strip()[:4000]
    else:
        run.headline = run.headline or error.splitlines()[0][:500] if error else run.headline
    run.save(update_fields=["status", "status_reason", "finished_at", "error", "headline", "verdict", "summary"])
    if status == RunStatus.FAILED:
        # Steps that never started end skipped, not pending: the record says the run will not get to them.
        skip_unstarted(run, "the run failed before this step started")
    if status == RunStatus.COMPLETED:
        emit(run, "completed")
        if run.verdict == "BLOCKED":
            emit(run, "blocked")
        # A success forgets a quarantine. `quarantined`: whether one was there when the step's closing
        # transaction took the run's lock (absent on a run read elsewhere: then the UPDATE is made). One set by
        # another run's failure since then is one that run's streak counted without this success (it cannot
        # see it before this commits), as it would have been had this UPDATE run first.
        if run.kind == "flow" and getattr(run, "quarantined", True):
            Schedule.objects.filter(workspace_id=run.workspace_id, flow=run.name).update(quarantined_at=None)
    elif status == RunStatus.FAILED:
        emit(run, "failed")
        _maybe_quarantine(run)


def _maybe_quarantine(run: Run) -> None:
    """`disable_after: N`: N failed runs of the flow in a row stop its schedule (once, until it succeeds)."""
    limit = flow_meta(run).get("disable_after")
    if run.kind != "flow" or not limit:
        return
    recent = list(Run.objects.filter(workspace_id=run.workspace_id, name=run.name, kind="flow", is_test=False,
                                     status__in=[RunStatus.COMPLETED, RunStatus.FAILED])
                  .exclude(pk=run.pk).order_by("-finished_at", "-pk").values_list("status", flat=True)[: limit - 1])
    streak = [run.status] + recent
    if len(streak) < limit or any(s != RunStatus.FAILED for s in streak):
        return
    if Schedule.objects.filter(workspace_id=run.workspace_id, flow=run.name, quarantined_at__isnull=True).update(
            quarantined_at=timezone.now()):
        trace(run, None, f"flow {run.name} failed {limit} times in a row (disable_after: {limit}); its schedule "
                          f"stops firing until it succeeds")
        emit(run, "quarantined")


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


def execute_step(step_pk: int) -> str:
    """Run one step (or `each:` instance) once. Returns a word for the task log.

    The step is taken with a lease (a random holder id, an expiry) under the row lock and held by a heartbeat
    while the engine runs. A message for a step already running is dropped: its lease is live (another worker,
    on any host, is running it), or it ran out and the recovery sweep decides (re-run or fail).
    """
    holder = leases.new_holder()
    with transaction.atomic():
        # The run's lock first (lock order), found through the step in the same query, with what the step
        # reads of it (workspace, account, revision) joined in rather than fetched one by one later.
        # The claim need not wait for the disk: the same query says so (foldrun/commits.py).
        # The account library's head rides on it too: the desk's cache key (desks.desk_at) needs no query of its own.
        run = without_flush_wait(Run.objects.select_for_update(of=("self",))
                                 .select_related("workspace__account", "changeset")
                                 .annotate(library_head=library_head()).filter(steps__pk=step_pk)).first()
        if run is None:
            return "missing"
        # The step, and in the same query the run's plain and parent steps: when it ends, the run moves on
        # from these without reading them again (see _continue).
        rows = list(Step.objects.select_for_update().filter(run=run).filter(Q(instance__isnull=True) | Q(pk=step_pk)))
        step = next(s for s in rows if s.pk == step_pk)
        if step.status in FINISHED:
            return "already finished"  # refused: a step runs once
        if run.is_finished:
            step.save(update_fields=move_step(step, StepStatus.CANCELLED, f"the run had {run.status}"))
            return "run finished"
        if step.status == StepStatus.RUNNING:
            return "held by a lease"  # live: its holder runs it; expired: the sweep acts on it
        if step.status != StepStatus.QUEUED:
            return f"not runnable ({step.status})"
        now = timezone.now()
        step.attempt += 1
        fields = move_step(step, StepStatus.RUNNING, f"try {step.attempt} started")
        step.lease_holder = holder
        step.lease_until = now + dt.timedelta(seconds=leases.lease_seconds())
        step.started_at = step.started_at or now
        step.error = ""
        attempt = Try(step=step, n=step.attempt, status="running", started_at=now)
        start_try_with_step(step, ["attempt", *fields, "lease_holder", "lease_until", "started_at", "error"], attempt)
    chain = _chain()
    if chain is not None:
        chain.parents, chain.parents_of = {s.index: s for s in rows if s.instance is None}, run.pk
    return _run_claimed(run, step, attempt, holder)


def _run_claimed(run: Run, step: Step, attempt: Try, holder: str) -> str:
    try:
        return _execute_claimed(run, step, attempt, holder)
    except Exception:  # noqa: BLE001 - never leave a claimed step running: fail it with a sentence
        chain = _chain()
        if chain is not None:  # the closing transaction rolled back: nothing it took for this task stands
            chain.next = chain.ending = None
        code = incidents.record(log, "step %s of %s stopped on an internal error", step.label, run.public_id)
        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=run.pk)
            step = Step.objects.select_for_update().get(pk=step.pk)
            if step.lease_holder != holder or step.status != StepStatus.RUNNING:
                return "lease lost"
            end_try(attempt.pk, "failed", "an internal error", finished_at=timezone.now(),
                    error=f"internal error (incident {code})")
            settle_failure(run, step, incidents.sentence("the step", code),
                            retry_allowed=False)
        return "internal error"


def sandbox_base() -> str | None:
    """Sandboxes on tmpfs when the machine has one: creating and removing them is then cheap."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


def _spec(run: Run, step: Step) -> dict:
    return next(s for s in run.plan if s["number"] == step.index)


def _execute_claimed(run: Run, step: Step, attempt: Try, holder: str) -> str:
    spec = _spec(run, step)
    chain = _chain() or _Chain()
    # A step continued in the same task reads the same revision as the one before it: its desk is in hand.
    if chain.desk is not None and chain.desk[0] == run.pk:
        desk = chain.desk[1]
    else:
        desk = desk_at(run.workspace, run.changeset_number, changeset=run.changeset,
                       library_head=getattr(run, "library_head", None))
        chain.desk = (run.pk, desk)
    answer = None
    # An answer exists only for a step that parked on a question: `ask:` before its first try, or a question
    # the model asked on an earlier try — a first try without `ask:` has none to look for.
    if spec.get("ask") or step.attempt > 1:
        # The flow's `ask:` is answered on the parent row; an instance's own `ask` tool on the instance.
        answer = (Approval.objects.filter(Q(step=step) | Q(step__run=run, step__index=step.index,
                                                           step__instance__isnull=True),
                                          kind=ApprovalKind.ASK, state=ApprovalState.ANSWERED)
                  .order_by("-decided_at").values_list("answer", flat=True).first())
    task = step.task
    if step.event_received_at is not None and step.event_payload not in (None, {}, ""):
        task += f"\n\nThe event {spec.get('wait_event')} arrived with: {json.dumps(step.event_payload, ensure_ascii=False)[:4000]}"
    request = StepRequest(
        run_id=run.public_id, label=step.label, agent=step.agent, task=task, limits=spec.get("limits") or {},
        is_test=run.is_test, answer=answer, inputs=run_inputs(run),
        allow_private_urls=net.allows_private(),
        venv_cache=Path(settings.DATA_DIR) / "venvs", sandbox_base=sandbox_base(),
        timezone=flow_meta(run).get("timezone"),
        # The install's data (database file, broker, keys) is out of a program's sight; its venvs are not.
        hide_under=[str(settings.DATA_DIR)], keep_visible=[str(Path(settings.DATA_DIR) / "venvs")],
        tenant=run.workspace.account.public_id,  # loaded by desk_at: no extra query
        search_engine_url=run.workspace.account.search_engine_url,
        # A browser agent's task browses in its session's browser (browsing puts the endpoint in the run's copy
        # of its settings; it never shows among the run's inputs).
        browser_cdp=str((flow_meta(run).get("browser") or {}).get("cdp") or ""),
        # The re-run of a step whose browser pod was lost browses with a browser inside the step.
        browser_pod=not (step.lost_reruns and _pod_was_lost(step)),
    )
    beat = leases.Heartbeat(Step, step.pk, holder)
    host = DbHost(run, step, attempt, lease=beat, held=chain.held)
    started = time.monotonic()
    try:
        with beat:
            result = run_step(desk, request, host)
    except BaseException:
        if not beat.lost:
            host.flush()  # what the step traced before it broke is kept
        raise
    finally:
        host.close()
    seconds = time.monotonic() - started
    with transaction.atomic():
        # The run's lock, and in the same query the lease check: the step is still this try's. Every change
        # to a running step's holder or status is made under the run's lock (the sweep's too), so holding it
        # the step stays ours; the step in hand is current (what else changed on it while it ran — its
        # lease's expiry, the writes it noted — it changed itself). Joined: the end of the run (its
        # notifications) reads the workspace and account.
        # The same query lets this transaction commit without waiting for the disk (foldrun/commits.py).
        # Whether a schedule of the flow is quarantined rides on it too: a success forgets a quarantine
        # (_finish), and the common case, none, then costs no query of its own.
        run = without_flush_wait(Run.objects.select_for_update(of=("self",)).select_related("workspace__account")
                                 .annotate(quarantined=Exists(Schedule.objects.filter(
                                     workspace_id=OuterRef("workspace_id"), flow=OuterRef("name"),
                                     quarantined_at__isnull=False)))
                                 .filter(pk=run.pk, steps__pk=step.pk, steps__lease_holder=holder,
                                         steps__status=StepStatus.RUNNING)).first()
        if run is None:
            # Another holder (the sweep) took the step while this one could not renew: commit nothing.
            return "lease lost"
        chain.run = run  # the run's next step may be taken in this transaction (see run_steps_from)
        host.flush()  # the trace lines the step still holds, in this transaction
        word = _settle_result(run, step, attempt, result, spec, desk, seconds, chain)
        _end_held_try(chain)
        return word


def _settle_result(run: Run, step: Step, attempt: Try, result, spec: dict, desk, seconds: float,
                   chain: _Chain) -> str:
    """What a try's result makes of its step and run. Precondition: inside the closing transaction, which
    holds the run's lock, with the lease checked."""
    step.lease_holder, step.lease_until = "", None
    problem = None
    if result.status == "completed":
        before = {p: t for p, t in desk.files.items()}
        after: dict = {**result.writes, **result.outputs}
        problem = check_verify(spec.get("verify"), result.output, before, after)
    # The try failed on the check, whatever the model said: its record says so.
    status, error = ("failed", problem) if problem else (result.status, result.error)
    # Written with the run's next try when this transaction takes one (one statement), else at its end.
    chain.ending = (attempt, status, (error or f"the step {status}").splitlines()[0],
                    dict(error=error[:2000], seconds=seconds, finished_at=timezone.now(), cost_usd=result.cost,
                         tokens_in=result.tokens_in, tokens_out=result.tokens_out, image=result.image,
                         pod_line=_pod_line(result)[:300]))
    step.limits_line = result.limits_line[:1000]
    step.cost_usd += result.cost
    step.tokens_in += result.tokens_in
    step.tokens_out += result.tokens_out
    if result.status not in ("parked", "lost"):  # a lost try's outputs come again from its re-run
        _keep_files(run, step, result)
    if problem:
        trace(run, step, problem)
        step.output = result.output
        settle_failure(run, step, problem, retry_allowed=True)
        return "verify failed"
    if result.status == "completed":
        move_step(step, StepStatus.COMPLETED, f"try {step.attempt} completed")
        step.output = result.output
        step.finished_at = timezone.now()
        step.save()
        _after_step(run, step)
        return "completed"
    if result.status == "parked":
        if run.is_finished:
            move_step(step, StepStatus.CANCELLED, f"it asked a person, but the run had {run.status}")
            step.save()
            return "run finished"
        move_step(step, StepStatus.PENDING, "it asked a person")
        step.save()
        # The step's conversation is not kept: answered, it runs again from the start with the answer.
        trace(run, step, f"step {step.label} ([[{step.agent}]]) asked a person; when they answer, the step "
                          f"runs again from the start with their answer — what it did in its sandbox before "
                          f"asking is not kept")
        _park(run, step, ApprovalKind.ASK, question=result.question)
        return "parked"
    if result.status == "lost":  # its browser pod went and it had only read: again, part of the attempt
        step.lost_reruns += 1
        trace(run, step, "browser pod lost; re-ran on full")
        queue(step, why=f"try {step.attempt} lost its browser pod; it had only read")
        step.save()
        return "browser pod lost"
    step.output = result.output
    settle_failure(run, step, result.error or "the step failed", retry_allowed=not result.error.startswith("budget reached"))
    return "failed"


def _pod_line(result) -> str:
    """The try's browser pod line as the step card says it, with what became of the step when the pod was lost."""
    line, why = result.pod_line, result.error.split(" — ", 1)[-1]
    if result.status == "lost":
        return f"{line}; re-ran on full ({why})" if line else f"browser pod lost; re-ran on full ({why})"
    if line.endswith("browser pod lost") and result.error.startswith("browser pod died after"):
        return f"{line}; not re-run ({result.error})"
    return line


def _pod_was_lost(step: Step) -> bool:
    """Whether the step's last try ended with its browser pod lost (asked only of a step re-run after a loss)."""
    return Try.objects.filter(step=step, n=step.attempt - 1, status="lost", image="slim").exists()


def _keep_files(run: Run, step: Step, result) -> None:
    """Outputs become run artifacts; memory/ and state/ writes a revision attributed to the run."""
    for path, content in result.outputs.items():
        Artifact.objects.create(run=run, step=step, path=path, content=content, size=len(content),
                                sha256=hashlib.sha256(content).hexdigest())
    if result.writes:
        try:
            do_write_run_files(run.public_id, account=run.account, workspace=run.workspace, files=result.writes,
                               message=f"Written by {run.public_id} step {step.label} ([[{step.agent}]])")
            trace(run, step, "kept as a revision: " + ", ".join(sorted(result.writes)))
        except WriteRefused as exc:
            findings = getattr(exc, "findings", [])
            words = "; ".join(getattr(f, "message", str(f)) for f in findings) or str(exc)
            trace(run, step, f"writes refused: {words}")


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
        Step.objects.filter(pk=nxt, status=StepStatus.PENDING).update(
            status=StepStatus.QUEUED, status_reason="an earlier instance finished (max: at a time)",
            queued_at=timezone.now())
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
