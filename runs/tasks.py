"""Celery tasks. Thin: they take ids and call `runs.lifecycle` (a run's life: its steps, its advance, the sweep) or the schedules.

Every task is `acks_late` (settings), but recovery never waits for a message to come back: a step is held by
a lease in the database, and the recovery sweep (`runs.sweep`, on beat every few seconds) acts on a lease that
ran out. A message for a step already held is dropped, so a redelivery is harmless.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from celery.signals import celeryd_after_setup, worker_process_init

from foldrun import incidents
from foldrun.engine.step import shared_http
from foldrun.engine.tools import registry

from . import browser_tasks, lifecycle, skill_runs, triggers

log = logging.getLogger(__name__)


@celeryd_after_setup.connect
def _import_tool_transports(**kwargs: Any) -> None:
    # In the worker's main process, before its pool forks: every pool process starts with the tool transports
    # imported, rather than paying for the imports in its first step (the MCP SDK alone took ~0.25 s here).
    registry.load()


@worker_process_init.connect
def _make_the_shared_client(**kwargs: Any) -> None:
    # Each pool process makes its own (a client's connections are not shared across a fork), at its start rather
    # than in its first step's model call (~30 ms: the TLS context).
    shared_http()


@shared_task(name="runs.advance", acks_late=True)
def advance_run(run_pk: int) -> None:
    try:
        lifecycle.advance(run_pk)
    except Exception:  # noqa: BLE001 - a run that cannot move on fails with a sentence, never hangs
        code = incidents.record(log, "run %s could not move on", run_pk)
        lifecycle.fail_run(run_pk, incidents.sentence("the run", code))
        raise


@shared_task(name="runs.run_step", acks_late=True, reject_on_worker_lost=True)
def run_step_task(step_pk: int) -> str:
    return lifecycle.run_steps_from(step_pk)


@shared_task(name="runs.sweep", acks_late=True)
def sweep() -> dict[str, int]:
    return lifecycle.sweep()


@shared_task(name="runs.fire_schedules", acks_late=True)
def fire_schedules() -> int:
    return triggers.fire_due_schedules()


@shared_task(name="runs.chores", acks_late=True)
def chores() -> None:
    triggers.run_chores()


@shared_task(name="runs.finish_browser_task", acks_late=True)
def finish_task(task_pk: int) -> bool:
    """A task's run ended: its record, and the session it opened for itself closed."""
    return browser_tasks.finish_task(task_pk)


@shared_task(name="runs.start_session_tasks", acks_late=True)
def start_session_tasks(session_pk: int) -> int:
    """A session went live or closed: the tasks waiting for it start, or end by why it closed."""
    return browser_tasks.start_session_tasks(session_pk)


@shared_task(name="runs.advance_skill_run", acks_late=True)
def advance_skill_run(skill_run_pk: int) -> str:
    """The skill run's next phase, under its lease (a smoke test's checks, its flow, its report)."""
    return skill_runs.advance(skill_run_pk)
