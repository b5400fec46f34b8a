"""A run of a library skill (any skill but `smoke-uat`): the browser agent follows its SKILL.md on a session.

The same SkillRun row and the same short worker phases as the smoke test (runs.skill_runs.advance holds the
lease and picks the phase):

1. `start` — once the session is live, one task of the browser agent whose goal is the skill's procedure
   with the run's inputs; its end (runs.browser_tasks.finish_task) advances the run again.
2. `flow`  — the task has ended: the session stopped (its recording kept), the verdict and the report.

A run whose skill needs a grant the caller did not give is recorded `denied` at once and opens no session.
"""

from __future__ import annotations

import json
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import Account
from browsing.actions import do_stop_session, wait_ended, wait_live
from browsing.cancelling import settle
from browsing.models import BrowserSession, SkillRun, SkillStatus, Task, TaskStatus
from browsing.skill_results import denied_report, procedure_report
from foldrun.celery import send_after_commit

from .browser_tasks import ADVANCE_SKILL_RUN as ADVANCE, do_start_task

MAX_STEPS = 25
BODY_LIMIT = 6000


def _creator(user: Any) -> Any:
    return user if getattr(user, "is_authenticated", False) else None


def do_start_skill(
    account: Account,
    session: BrowserSession,
    *,
    skill: str,
    version: str,
    description: str,
    procedure: str,
    inputs: dict[str, Any],
    user: Any = None,
) -> SkillRun:
    """The run's row, its procedure kept with it (the skill may change while it runs), the first phase queued."""
    with transaction.atomic():
        run = SkillRun.objects.create(
            account=account,
            created_by=_creator(user),
            session=session,
            skill=skill,
            inputs=inputs,
            state={"version": version, "description": description, "procedure": procedure[:BODY_LIMIT]},
        )
        send_after_commit(ADVANCE, run.pk)
    return run


def do_deny_skill(
    account: Account, *, skill: str, version: str, inputs: dict[str, Any], reason: str, user: Any = None
) -> SkillRun:
    """A run refused before it starts (a grant not given): on the records, ended, no session."""
    run = SkillRun(
        account=account,
        created_by=_creator(user),
        skill=skill,
        inputs=inputs,
        status=SkillStatus.DENIED,
        phase="done",
        state={"version": version, "denied": reason},
        finished_at=timezone.now(),
    )
    run.report = denied_report(run, reason)
    run.save()
    return run


def goal_of(run: SkillRun) -> str:
    state = run.state or {}
    given = json.dumps(run.inputs, ensure_ascii=False, indent=1) if run.inputs else "(none)"
    return (
        f"Run the skill {run.skill}: {state.get('description') or ''}\n\n"
        f"Follow its procedure on the browser's page, then answer DONE with what you found if it succeeded, "
        f"or STUCK with why not.\n\nThe procedure:\n{state.get('procedure') or ''}\n\nThe inputs:\n{given}"
    )


def start(run: SkillRun) -> str:
    session = wait_live(run.session)
    do_start_task(
        run.account, session, goal=goal_of(run), max_steps=MAX_STEPS, user=run.created_by, skill_run=run, flow_index=0
    )
    run.phase = "flow"
    if not settle(run, ["phase"]):  # cancelled meanwhile (stop_session): that verdict stands
        return "cancelled meanwhile"
    return "flow"


def flow(run: SkillRun) -> str:
    task = Task.objects.filter(skill_run=run).order_by("flow_index").first()
    if task is None or task.status != TaskStatus.FINISHED:
        return "flow: waiting for the agent"
    return finish(run, task)


def finish(run: SkillRun, task: Task | None, *, error: dict[str, str] | None = None) -> str:
    session = BrowserSession.objects.filter(pk=run.session_id).first()
    if session is not None:
        do_stop_session(run.account, session.public_id, who=f"the end of skill run {run.public_id}")
        wait_ended(session)
        session.refresh_from_db()
    report = procedure_report(run, task, session, error=error)
    run.report = report
    run.status = {"pass": SkillStatus.PASSED, "fail": SkillStatus.FAILED}.get(report["verdict"], SkillStatus.ERROR)
    run.phase = "done"
    run.finished_at = timezone.now()
    settle(run, ["report", "status", "phase", "finished_at"])
    return report["verdict"]
