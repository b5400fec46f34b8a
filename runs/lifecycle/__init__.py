"""A run's life, in one package: start, claim, execute, settle, advance, finish, recover.

The way a step goes, in order (ARCHITECTURE.md draws it):

- `start` — `create_run` writes a checked run and its steps in one transaction (runs/actions.py checks the
  request first) and makes the first move: the first step's message, or the advance.
- `claim` — `claim(step_pk, holder)` takes a queued step under a lease (foldrun/leases.py): one conditional
  UPDATE decides, then its try. A message for a step already taken is dropped.
- `execute` — `run_steps_from(step_pk)` (the `runs.run_step` task) runs the step through the engine outside any
  transaction, then ends it in one closing transaction that holds the run's lock with the lease checked; a
  chain of plain steps runs in the same task (`chain`: what the task keeps between its steps).
- `settle` — what a try's result makes of its step (completed, failed and retried, parked, re-run) inside
  that closing transaction, and the run moved on from there; each returns what the task runs next.
- `advance` — `advance(run_pk)` and `move_within` decide the run's next thing: a gate, a wait, an `each:`
  fan-out, a plain step, or the end.
- `finish` — a run's end: verdict, headline, notify's events, a schedule's quarantine.
- `recover` — the sweep: a step whose lease ran out, a message a dead worker took, a run whose move was lost.
- `states` — the one transition function per model; every Run, Step and Try status change goes through it.

Lock order, everywhere: Run, then Step(s), then (inside library writes) the Workspace.

This module is the package's public interface: the API and pages (through runs/actions.py), the tasks
(runs/tasks.py), the sweep and the tests call what it exports, never a module inside.
"""

from __future__ import annotations

from ..trace_log import trace
from .advance import FINISHED, advance, fail_run, move_within, plain_first_task
from .chain import QUEUE_FIELDS, enqueue_step, queue
from .claim import claim, vault_empty
from .execute import execute_step, run_steps_from, sandbox_base
from .recover import recover_step, sweep
from .settle import settle_failure
from .start import create_run
from .states import (
    IllegalMove,
    cancel_unstarted,
    end_try,
    move_run,
    move_step,
    move_steps,
    move_try,
    take_step,
)

__all__ = [
    "FINISHED",
    "QUEUE_FIELDS",
    "IllegalMove",
    "advance",
    "cancel_unstarted",
    "claim",
    "create_run",
    "end_try",
    "enqueue_step",
    "execute_step",
    "fail_run",
    "move_run",
    "move_step",
    "move_steps",
    "move_try",
    "move_within",
    "plain_first_task",
    "queue",
    "recover_step",
    "run_steps_from",
    "sandbox_base",
    "settle_failure",
    "sweep",
    "take_step",
    "trace",
    "vault_empty",
]
