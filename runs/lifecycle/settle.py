"""A try's end, settled: what its result makes of its step and its run, inside the step's closing transaction
(which holds the run's lock, the lease checked) — completed, failed (retried as `retry:` allows), parked on a
person's answer, or re-run after its browser pod went — and the run moved on from there (advance.move_within;
an `each:` instance joins its siblings, the last one joining them and moving the run on).

Every function here returns what the worker task holding the `Chain` runs next (`Next`), or None.
"""

from __future__ import annotations

import hashlib
import json

from django.utils import timezone

from foldrun.engine.flow import check_verify
from library.actions.run_files import do_write_run_files
from library.actions.writes import WriteRefused

from ..models import ApprovalKind, Artifact, Run, Step, StepStatus, Try
from ..trace_log import trace
from .advance import FINISHED, move_within, park, spec_of
from .chain import Chain, Next, enqueue_step, queue, steering
from .states import move_step, move_steps


def settle_result(
    run: Run, step: Step, attempt: Try, result, spec: dict, desk, seconds: float, chain: Chain
) -> tuple[str, Next]:
    """What a try's result makes of its step and run: a word for the task log, and what the task runs next.
    The try's end is left in `chain.ending` (written with the next try when this transaction takes one; the
    caller ends it otherwise). Precondition: inside the closing transaction, which holds the run's lock, with
    the lease checked."""
    step.lease_holder, step.lease_until = "", None
    problem = None
    if result.status == "completed":
        before = {p: t for p, t in desk.files.items()}
        after: dict = {**result.writes, **result.outputs}
        problem = check_verify(spec.get("verify"), result.output, before, after)
    # The try failed on the check, whatever the model said: its record says so.
    status, error = ("failed", problem) if problem else (result.status, result.error)
    # Written with the run's next try when this transaction takes one (one statement), else at its end.
    chain.ending = (
        attempt,
        status,
        (error or f"the step {status}").splitlines()[0],
        dict(
            error=error[:2000],
            seconds=seconds,
            finished_at=timezone.now(),
            cost_usd=result.cost,
            tokens_in=result.tokens_in,
            tokens_out=result.tokens_out,
            image=result.image,
            pod_line=_pod_line(result)[:300],
        ),
    )
    step.limits_line = result.limits_line[:1000]
    step.cost_usd += result.cost
    step.tokens_in += result.tokens_in
    step.tokens_out += result.tokens_out
    if result.status not in ("parked", "lost"):  # a lost try's outputs come again from its re-run
        _keep_files(run, step, result)
    if problem:
        trace(run, step, problem)
        step.output = result.output
        return "verify failed", settle_failure(run, step, problem, retry_allowed=True, chain=chain)
    if result.status == "completed":
        move_step(step, StepStatus.COMPLETED, f"try {step.attempt} completed")
        step.output = result.output
        step.finished_at = timezone.now()
        if step.instance is None:  # saved as the run moves on: with the next step's claim when there is one
            return "completed", move_within(run, ended=step, unsaved=True, chain=chain)
        step.save()
        return "completed", after_step(run, step, chain=chain)
    if result.status == "parked":
        if run.is_finished:
            move_step(step, StepStatus.CANCELLED, f"it asked a person, but the run had {run.status}")
            step.save()
            return "run finished", None
        move_step(step, StepStatus.PENDING, "it asked a person")
        step.save()
        # The step's conversation is not kept: answered, it runs again from the start with the answer.
        trace(
            run,
            step,
            f"step {step.label} ({step.agent}) asked a person; when they answer, the step "
            f"runs again from the start with their answer — what it did in its sandbox before "
            f"asking is not kept",
        )
        park(run, step, ApprovalKind.ASK, question=result.question)
        return "parked", None
    if result.status == "lost":  # its browser pod went and it had only read: again, part of the attempt
        step.lost_reruns += 1
        trace(run, step, "browser pod lost; re-ran on full")
        nxt = queue(step, why=f"try {step.attempt} lost its browser pod; it had only read", chain=chain)
        step.save()
        return "browser pod lost", nxt
    step.output = result.output
    return "failed", settle_failure(
        run,
        step,
        result.error or "the step failed",
        retry_allowed=not result.error.startswith("budget reached"),
        chain=chain,
    )


def _pod_line(result) -> str:
    """The try's browser pod line as the step card says it, with what became of the step when the pod was lost."""
    line, why = result.pod_line, result.error.split(" — ", 1)[-1]
    if result.status == "lost":
        return f"{line}; re-ran on full ({why})" if line else f"browser pod lost; re-ran on full ({why})"
    if line.endswith("browser pod lost") and result.error.startswith("browser pod died after"):
        return f"{line}; not re-run ({result.error})"
    return line


def settle_failure(run: Run, step: Step, error: str, *, retry_allowed: bool, chain: Chain | None = None) -> Next:
    """A try that failed (`error`, its first line kept): the step queued again while its `retry:` allows (and
    `retry_allowed`), else failed and its run moved on. Precondition: the run's lock is held (a step's closing
    transaction, or the sweep's)."""
    spec = spec_of(run, step)
    step.error = error.splitlines()[0][:1000] if error else "the step failed"
    if retry_allowed and step.attempt - step.lost_reruns <= int(spec.get("retry") or 0) and not run.is_finished:
        trace(run, step, f"retry {step.attempt - step.lost_reruns} of {spec.get('retry')}: {step.error}")
        nxt = queue(step, why=f"retry {step.attempt - step.lost_reruns} of {spec.get('retry')}", chain=chain)
        step.save()
        return nxt
    move_step(step, StepStatus.FAILED, step.error)
    step.finished_at = timezone.now()
    step.save()
    return after_step(run, step, chain=chain)


def after_step(run: Run, step: Step, *, chain: Chain | None = None) -> Next:
    """A plain step advances the run; an instance joins its siblings (the last one advances).

    Precondition: inside the transaction that holds the run's lock (the step's own end), where the run moves on.
    """
    if step.instance is None:
        return move_within(run, ended=step, chain=chain)
    instances = Step.objects.filter(run=run, index=step.index, instance__isnull=False).order_by("instance")
    # Every instance's end reads its siblings' states (the run's lock, held, makes the ends take turns); only
    # the last one locks the parent and reads their outputs.
    states = list(instances.values_list("pk", "status"))
    waiting = [pk for pk, status in states if status == StepStatus.PENDING]
    if waiting and not run.is_finished:
        # One finished: the next waiting instance takes its place (`max:` at a time).
        nxt = waiting[0]
        if move_steps(
            Step.objects.filter(pk=nxt),
            StepStatus.PENDING,
            StepStatus.QUEUED,
            "an earlier instance finished (max: at a time)",
            queued_at=timezone.now(),
        ):
            if steering(chain) is not None:
                return nxt  # still queued in the database: if this worker dies first, the sweep sends it
            enqueue_step(nxt)
        return None
    if any(status not in FINISHED for _, status in states):
        return None
    parent = Step.objects.select_for_update().get(run=run, index=step.index, instance__isnull=True)
    if parent.status in FINISHED:
        return None
    siblings = list(instances)
    failed = [s for s in siblings if s.status != StepStatus.COMPLETED]
    spec = spec_of(run, step)
    if spec.get("each") == "json":
        parent.output = json.dumps([s.output for s in siblings], ensure_ascii=False)
    else:
        parent.output = "\n".join(s.output for s in siblings)
    parent.finished_at = timezone.now()
    if failed:
        move_step(parent, StepStatus.FAILED, "an instance failed")
        parent.error = (
            f"{len(failed)} of {len(siblings)} instances failed; the first ({failed[0].label}): {failed[0].error}"
        )[:1000]
    else:
        move_step(parent, StepStatus.COMPLETED, "every instance completed")
    parent.save()
    return move_within(run, chain=chain)


def _keep_files(run: Run, step: Step, result) -> None:
    """Outputs become run artifacts; memory/ and state/ writes a revision attributed to the run."""
    for path, content in result.outputs.items():
        Artifact.objects.create(
            run=run,
            step=step,
            path=path,
            content=content,
            size=len(content),
            sha256=hashlib.sha256(content).hexdigest(),
        )
    if result.writes:
        try:
            do_write_run_files(
                run.public_id,
                account=run.account,
                workspace=run.workspace,
                files=result.writes,
                message=f"Written by {run.public_id} step {step.label} ({step.agent})",
            )
            trace(run, step, "kept as a revision: " + ", ".join(sorted(result.writes)))
        except WriteRefused as exc:
            findings = getattr(exc, "findings", [])
            words = "; ".join(getattr(f, "message", str(f)) for f in findings) or str(exc)
            trace(run, step, f"writes refused: {words}")
