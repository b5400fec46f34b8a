"""Moving a run through its plan, and running one step of it — the facade over three modules, by seam:

- `runs.progress` — `advance(run_pk)` looks at the run under a lock and does the next thing: parks at a gate
  (`!`, `ask:`), parks on `wait: event`, fans out `each:` as a Celery group (the last instance to finish joins
  them, counted in the database under the parent row's lock — no result backend needed), queues a plain step,
  or finishes the run with its verdict and headline (`runs.finish`, the run's end); a step's end moves its run
  on from there too.
- `runs.execute` — `execute_step(step_pk)` takes the step once with a lease (foldrun/leases.py: a random
  holder id and an expiry, renewed by a heartbeat), runs the engine outside any transaction, and saves what
  it returned only if it still holds the lease. A message for a step already running is dropped; a step whose
  lease ran out was lost with its worker, and the recovery sweep (runs/recovery.py) re-runs it when it had
  only read and fails it naming what it wrote when it had written — never sent twice.
- `runs.chain` — what one worker task keeps while it runs a run's steps one after another
  (`run_steps_from`): the next step is taken in the closing transaction of the one before it.

Lock order, everywhere: Run, then Step(s), then (inside library writes) the Workspace.
"""
from __future__ import annotations

from .chain import enqueue_step
from .execute import execute_step, run_steps_from, sandbox_base
from .progress import (
    FINISHED,
    QUEUE_FIELDS,
    advance,
    fail_run,
    move_within,
    plain_first_task,
    queue,
    settle_failure,
)
from .trace_log import trace

__all__ = ["FINISHED", "QUEUE_FIELDS", "advance", "enqueue_step", "execute_step", "fail_run", "move_within",
           "plain_first_task", "queue", "run_steps_from", "sandbox_base", "settle_failure", "trace"]
