"""A skill run whose session a caller stops (stop_session, DELETE /v1/sessions) can reach no result: it ends
`cancelled` there and then, with its report, rather than as a browser failure once its next phase notices.

The run is settled before the browser closes, so a phase still working sees a run that is no longer `running`
and writes nothing over it (runs/skill_runs.py and runs/skill_procedure.py settle only a running run).
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from .models import BrowserSession, SkillRun, SkillStatus, Task
from .reports import smoke_report
from .skill_results import procedure_report

SMOKE = "smoke-uat"


def cancel_runs_on(session: BrowserSession, who: str) -> list[str]:
    """End the running skill runs of `session` as `cancelled`; their ids."""
    cancelled: list[str] = []
    with transaction.atomic():
        for run in SkillRun.objects.select_for_update().filter(session=session, status=SkillStatus.RUNNING):
            error = {
                "code": "cancelled",
                "message": f"The run was cancelled: its session {session.public_id} was stopped by {who}.",
            }
            tasks = list(Task.objects.filter(skill_run=run).order_by("flow_index"))
            run.status, run.phase, run.finished_at = SkillStatus.CANCELLED, "done", timezone.now()
            run.state = {**run.state, "error": error}
            run.report = (
                smoke_report(run, run.state, tasks, session)
                if run.skill == SMOKE
                else procedure_report(run, tasks[-1] if tasks else None, session, error=error)
            )
            run.save(update_fields=["status", "phase", "finished_at", "state", "report"])
            cancelled.append(run.public_id)
    return cancelled


def settle(run: SkillRun, fields: list[str]) -> bool:
    """Write a run's end from its own phase, only while it is still running: a caller's stop may have cancelled
    it meanwhile, and that verdict stands. Whether it was written."""
    return bool(
        SkillRun.objects.filter(pk=run.pk, status=SkillStatus.RUNNING).update(
            **{field: getattr(run, field) for field in fields}
        )
    )
