"""Pushing a desk and driving a run in-process (no worker) for the fast tests."""

from __future__ import annotations

from library.actions.writes import FileWrite, do_write_files
from runs import lifecycle
from runs.models import Run, Step, StepStatus


def agent_file(name: str, fake, *, tools: str = "[read]", extra: str = "", body: str = "You do the work.") -> str:
    # A local base_url needs no key: the provider block carries none.
    return (
        f"---\nname: {name}\ndescription: test agent\ntools: {tools}\n"
        f"provider: {{name: anthropic, base_url: '{fake.base_url}', model: claude-sonnet-4-5}}\n"
        f"{extra}---\n{body}\n"
    )


def push(workspace, files: dict[str, str]):
    return do_write_files(
        account=workspace.account,
        workspace=workspace,
        kind="push",
        writes=[FileWrite(path, content) for path, content in files.items()],
        message="test push",
    )


def drive(run: Run, *, rounds: int = 50) -> Run:
    """Advance the run and execute its queued steps, in this process, until it stops moving."""
    for _ in range(rounds):
        lifecycle.advance(run.pk)
        queued = list(Step.objects.filter(run=run, status=StepStatus.QUEUED).order_by("index", "instance"))
        if not queued:
            run.refresh_from_db()
            if run.is_finished or run.status in ("awaiting-approval", "waiting"):
                return run
            parent_running = Step.objects.filter(run=run, status=StepStatus.RUNNING).exists()
            if not parent_running:
                continue
        for step in queued:
            lifecycle.execute_step(step.pk)
    run.refresh_from_db()
    return run
