"""A line in a run's trace: what moving the run did, as the run's record tells it (a TraceEvent of kind "log").
Its own module so that both the run's moves (runs/lifecycle/advance.py) and its end (runs/lifecycle/finish.py) write it."""

from __future__ import annotations

from .models import Run, Step, TraceEvent


def trace(run: Run, step: Step | None, message: str, **extra) -> None:
    TraceEvent.objects.create(
        run=run, step=step, try_n=step.attempt if step else 0, kind="log", data={"message": message, **extra}
    )
