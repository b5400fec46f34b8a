"""A run of the gallery skill `smoke-uat`: a smoke test on a recorded session of its own.

The run moves through phases, each one short worker task (`runs.advance_skill_run`) under the run's
lease, so no worker slot waits on another's work:

1. `start`  — once the session is live: load the start page, axe-core, collect the links (in an attach),
   then check the links through foldrun.net; then the first plain-language step, or straight to `final`.
2. `flow`   — each step is a task of the browser agent on the session; its end (runs.finish_browser_task)
   advances the run again. The first step that fails stops the flow; the checks after it still run.
3. `final`  — expectText, expectUrl, expectNoText on the page the flow left, the session stopped (its
   recording kept), the verdict and the report.

Safe to run twice: a phase re-reads the row under the lease and does only what its phase says is left.
"""

from __future__ import annotations

import base64
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import Account
from browsing import smoke
from browsing.actions import do_stop_session, wait_ended, wait_live
from browsing.attach import attach
from browsing.cancelling import settle
from browsing.errors import SessionError
from browsing.models import BrowserSession, SkillRun, SkillStatus, Task, TaskStatus
from browsing.reports import smoke_report
from foldrun import leases
from foldrun.celery import send_after_commit

from . import skill_procedure
from .browser_tasks import ADVANCE_SKILL_RUN as ADVANCE, do_start_task

SMOKE = "smoke-uat"
STEP_MAX_STEPS = 10  # the browser agent's steps for one plain-language step of the flow


# A phase's write found the run no longer running: a caller's stop cancelled it meanwhile, and that stands.
CANCELLED_MEANWHILE = "cancelled meanwhile: the phase's work is not written over the cancelled run"


def do_start_smoke(account: Account, session: BrowserSession, inputs: dict[str, Any], *, user: Any = None) -> SkillRun:
    with transaction.atomic():
        run = SkillRun.objects.create(
            account=account,
            created_by=user if getattr(user, "is_authenticated", False) else None,
            session=session,
            skill=SMOKE,
            inputs=inputs,
        )
        send_after_commit(ADVANCE, run.pk)
    return run


def advance(run_pk: int) -> str:
    holder = leases.new_holder()
    if not leases.claim(SkillRun, run_pk, holder, status=SkillStatus.RUNNING):
        return "not claimed (finished, or another worker holds it)"
    try:
        run = SkillRun.objects.select_related("session").get(pk=run_pk)
        smoke_test = run.skill == SMOKE
        phases = (
            {"start": _start, "flow": _flow, "final": _final}
            if smoke_test
            else {"start": skill_procedure.start, "flow": skill_procedure.flow}
        )
        phase = phases.get(run.phase)
        if phase is None:
            return f"nothing to do in phase {run.phase}"
        try:
            return phase(run)
        except SessionError as exc:
            if not smoke_test:  # another skill's run: the procedure's own end, with the error
                return skill_procedure.finish(run, None, error={"code": exc.code, "message": exc.message})
            _end_with_error(run, exc.message, code=exc.code)
            return f"error: {exc.code}"
    finally:
        leases.release(SkillRun, run_pk, holder)


def _start(run: SkillRun) -> str:
    inputs = run.inputs
    session = wait_live(run.session)
    with attach(session) as page:
        found = smoke.start_checks(page, inputs["url"], int(inputs.get("maxLinks", 50)))
    state = {
        "load": found["load"],
        "a11y": found["a11y"],
        "console": found["console"],
        "failed": found["failed"],
        "links": smoke.check_links(found["links"]) if found["links"] else [],
        "flow": [],
    }
    steps = list(inputs.get("steps") or [])
    if not found["load"]["ok"]:
        # The start page is the test: without it nothing else can be checked.
        run.state, run.phase = state, "final"
        if not settle(run, ["state", "phase"]):
            return CANCELLED_MEANWHILE
        return _final(run)
    run.state = state
    if steps:
        run.phase = "flow"
        if not settle(run, ["state", "phase"]):
            return CANCELLED_MEANWHILE
        _start_flow_step(run, 0)
        return "flow"
    run.phase = "final"
    if not settle(run, ["state", "phase"]):
        return CANCELLED_MEANWHILE
    return _final(run)


def _start_flow_step(run: SkillRun, index: int) -> None:
    session = BrowserSession.objects.get(pk=run.session_id)
    goal = (
        f"This is step {index + 1} of a smoke test of a web page. Do exactly this on the page the browser is "
        f"on, then stop: {run.inputs['steps'][index]}"
    )
    do_start_task(
        run.account, session, goal=goal, max_steps=STEP_MAX_STEPS, user=run.created_by, skill_run=run, flow_index=index
    )


def _flow(run: SkillRun) -> str:
    tasks = list(Task.objects.filter(skill_run=run).order_by("flow_index"))
    if not tasks or tasks[-1].status != TaskStatus.FINISHED:
        return "flow: waiting for its step"
    last = tasks[-1]
    steps = list(run.inputs.get("steps") or [])
    if not last.ok and str(last.flow_index) not in (run.state.get("flow_shots") or {}):
        _keep_screenshot(run, last.flow_index)
    if last.ok and last.flow_index + 1 < len(steps):
        _start_flow_step(run, last.flow_index + 1)
        return f"flow: step {last.flow_index + 2}"
    run.phase = "final"
    if not settle(run, ["phase"]):
        return CANCELLED_MEANWHILE
    return _final(run)


def _keep_screenshot(run: SkillRun, index: int) -> None:
    """The page as a failed step left it, for the report's screenshot link."""
    session = BrowserSession.objects.get(pk=run.session_id)
    try:
        with attach(session, timeout=10) as page:
            shot = page.screenshot(type="png")
    except Exception:  # noqa: BLE001 - no screenshot is no reason to stop the report
        return
    state = dict(run.state)
    state["flow_shots"] = {**(state.get("flow_shots") or {}), str(index): base64.b64encode(shot).decode()}
    run.state = state
    settle(run, ["state"])


def _final(run: SkillRun) -> str:
    inputs = run.inputs
    state = dict(run.state)
    session = BrowserSession.objects.get(pk=run.session_id)
    if state.get("load", {}).get("ok"):
        try:
            with attach(session, timeout=10) as page:
                final = smoke.final_checks(
                    page, inputs.get("expectText"), inputs.get("expectUrl"), inputs.get("expectNoText")
                )
        except SessionError as exc:
            final = {
                "finalUrl": "",
                "checks": {},
                "screenshot": None,
                "console": [],
                "failed": [],
                "error": exc.message,
            }
        shot = final.pop("screenshot", None)
        state["final"] = {**final, "screenshot": base64.b64encode(shot).decode() if shot else None}
    flow_tasks = list(Task.objects.filter(skill_run=run).order_by("flow_index"))
    do_stop_session(run.account, session.public_id, who=f"the end of smoke test {run.public_id}")
    wait_ended(session)  # the recording is written before the report names it
    session.refresh_from_db()
    report = smoke_report(run, state, flow_tasks, session)
    run.state = state
    run.report = report
    run.status = {"pass": SkillStatus.PASSED, "fail": SkillStatus.FAILED}.get(report["verdict"], SkillStatus.ERROR)
    run.phase = "done"
    run.finished_at = timezone.now()
    settle(run, ["state", "report", "status", "phase", "finished_at"])
    return report["verdict"]


def _end_with_error(run: SkillRun, message: str, *, code: str) -> None:
    state = {**run.state, "error": {"code": code, "message": message}}
    session = BrowserSession.objects.filter(pk=run.session_id).first()
    if session is not None:
        do_stop_session(run.account, session.public_id, who=f"smoke test {run.public_id}, which could not run")
    run.state = state
    run.report = smoke_report(run, state, list(Task.objects.filter(skill_run=run).order_by("flow_index")), session)
    run.status = SkillStatus.ERROR
    run.phase = "done"
    run.finished_at = timezone.now()
    settle(run, ["state", "report", "status", "phase", "finished_at"])
