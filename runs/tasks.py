"""Celery tasks. Thin: they take ids and call `runs.orchestrate`.

Every task is `acks_late` (settings) so a worker lost mid-step leaves the
message to be delivered again; `execute_step` claims the step once and knows
what to do with one found running (see orchestrate).
"""
from __future__ import annotations

from celery import shared_task

from . import orchestrate


@shared_task(name="runs.advance", acks_late=True)
def advance_run(run_pk: int) -> None:
    try:
        orchestrate.advance(run_pk)
    except Exception as exc:  # noqa: BLE001 - a run that cannot move on fails with a sentence, never hangs
        orchestrate.fail_run(run_pk, f"the run stopped on an internal error ({type(exc).__name__}: {exc})")
        raise


@shared_task(name="runs.run_step", acks_late=True, reject_on_worker_lost=True)
def run_step_task(step_pk: int) -> str:
    return orchestrate.execute_step(step_pk)


@shared_task(name="runs.fire_schedules", acks_late=True)
def fire_schedules() -> int:
    from .triggers import fire_due_schedules

    return fire_due_schedules()
