"""The browser's part of the dashboard: tasks and skill runs among the account's runs, the Browser
sessions tab, a skill run's page, a task's steps and recording on its Run page, and the recording
itself (a page route on the session login, with byte ranges so the <video> seeks).

Sessions, tasks and skill runs belong to the account; a task's run lives in the account's first
workspace (runs.browser_tasks.workspace_of). Every query here names the workspace's account, so
another account's session or skill run is a 404 like a missing one. Nothing here writes.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from accounts.access import current_membership, workspace_for_user
from accounts.models import Workspace
from browsing.models import BrowserSession, SessionStatus, SkillRun, Task, TaskStatus
from browsing.reports import skill_report
from browsing.tokens import WATCH, session_token
from foldrun.ranged import ranged_file

from .models import Run
from .templatetags.foldrun_ui import cost_text

SESSIONS_SHOWN = 200  # as the API's list
SKILL_RUNS_SHOWN = 20
# The colour class each browser state borrows from the runs' own states, so a status reads one way.
STATUS_CSS = {
    "running": "running",
    "passed": "completed",
    "failed": "failed",
    "error": "failed",
    "cancelled": "cancelled",
    "denied": "rejected",
    "starting": "queued",
    "live": "running",
    "closed": "completed",
    "finished": "completed",
}


def status_css(status: str) -> str:
    return STATUS_CSS.get(status, status)


def skill_kind(skill: str) -> str:
    return "smoke test" if skill == "smoke-uat" else "skill"


def _scope(request: HttpRequest, ws: str) -> Workspace:
    workspace, _ = workspace_for_user(current_membership(request), ws)
    return workspace


def tasks_home(account: Any) -> Workspace | None:
    """Where the account's tasks run (their runs are listed there)."""
    return Workspace.objects.filter(account=account).order_by("created_at", "pk").first()


def recording_of(session: BrowserSession | None) -> Path | None:
    if session is None or not session.recording:
        return None
    path = Path(session.recording)
    return path if path.is_file() else None


def mark_runs(account_id: int, runs: list[Run]) -> list[Run]:
    """Each task's run marked with its kind: `task`, or `smoke test` for a step of a smoke test's flow."""
    tasks = dict(
        Task.objects.filter(account_id=account_id, run__in=[r.pk for r in runs]).values_list("run_id", "skill_run_id")
    )
    for run in runs:
        run.browser_kind = "" if run.pk not in tasks else "smoke test" if tasks[run.pk] else "task"
    return runs


def skill_runs_part(workspace: Workspace) -> dict:
    """The runs list's section of the account's latest skill runs (smoke tests and skills). They belong to the
    account, not to one workspace, so every workspace's list shows them, as the Browser sessions tab does."""
    rows = list(
        SkillRun.objects.filter(account_id=workspace.account_id).only(
            "public_id", "skill", "status", "created_at", "finished_at", "report"
        )[:SKILL_RUNS_SHOWN]
    )
    for row in rows:
        row.kind = skill_kind(row.skill)
        row.css = status_css(row.status)
        row.verdict = (row.report or {}).get("verdict", "")
    return {"skill_runs": rows}


def step_rows(steps: list[dict]) -> list[dict]:
    """A task's steps as the table shows them, the cost read like every other cost on the pages."""
    rows = []
    for i, step in enumerate(steps or []):
        if not isinstance(step, dict):
            continue
        micros = step.get("costMicros") or 0
        try:
            cost = cost_text(Decimal(int(micros)) / Decimal(1_000_000))
        except (TypeError, ValueError):
            cost = cost_text(0)
        rows.append(
            {
                "n": i + 1,
                "op": step.get("op") or "",
                "ref": step.get("ref") or "",
                "provider": step.get("provider") or "",
                "ok": step.get("ok"),
                "ms": step.get("ms"),
                "cost": cost,
                "error": step.get("error") or "",
            }
        )
    return rows


def task_state(run: Run) -> tuple | None:
    """What of a task's row changes its Run page (the task is finished after its run ends, by a worker)."""
    return Task.objects.filter(account_id=run.account_id, run=run).values_list("status", "stopped_by").first()


def task_part(run: Run, workspace: Workspace) -> dict:
    """A task's part of its Run page: its steps, why it stopped, its session and recording."""
    task = Task.objects.filter(account_id=workspace.account_id, run=run).select_related("session", "skill_run").first()
    if task is None:
        return {"task": None}
    session = task.session
    recorded = recording_of(session) is not None
    return {
        "task": task,
        "task_steps": step_rows(task.steps),
        "task_running": task.status == TaskStatus.RUNNING,
        "task_cost": cost_text(Decimal(task.cost_micros or 0) / Decimal(1_000_000)),
        "task_session": session,
        "recording_url": reverse("session-recording", args=[workspace.name, session.public_id]) if recorded else "",
        "recording_pending": not recorded and bool((session.options or {}).get("record")) and session.is_open,
        "task_skill_run": task.skill_run,
    }


@login_required
def sessions_page(request: HttpRequest, ws: str) -> HttpResponse:
    """The Browser sessions tab: the account's sessions, newest first."""
    workspace = _scope(request, ws)
    sessions = list(
        BrowserSession.objects.filter(account_id=workspace.account_id).only(
            "public_id",
            "status",
            "status_reason",
            "end_reason",
            "created_at",
            "live_at",
            "closed_at",
            "recording",
            "options",
        )[:SESSIONS_SHOWN]
    )
    for session in sessions:
        session.css = status_css(session.status)
        session.recorded = recording_of(session) is not None
        session.ending = session.get_end_reason_display() if session.end_reason else ""
        # A live one's screen, to watch (browsing/live.py), with a fresh watch-only token: the live view takes it,
        # the CDP relay does not, so a link on this page never drives the browser, whoever reads it.
        session.watch = (
            f"/v1/sessions/{session.public_id}/watch?token={session_token(session.public_id, use=WATCH)[0]}"
            if session.status == SessionStatus.LIVE
            else ""
        )
    return render(
        request,
        "runs/sessions.html",
        {"section": "workspace", "workspace": workspace, "sessions": sessions, "shown": SESSIONS_SHOWN},
    )


@login_required
def skill_run_page(request: HttpRequest, ws: str, skill_run_id: str) -> HttpResponse:
    """A skill run (a smoke test): its status, verdict, report link, flow steps and recording."""
    workspace = _scope(request, ws)
    skill_run = (
        SkillRun.objects.filter(account_id=workspace.account_id, public_id=skill_run_id)
        .select_related("session", "account")
        .first()
    )
    if skill_run is None:
        raise Http404
    report = skill_report(skill_run)
    home = tasks_home(workspace.account)
    flow = list(skill_run.flow_tasks.select_related("run").order_by("flow_index", "pk"))
    for task in flow:
        task.run_url = (
            reverse("run-page", args=[home.name, task.run.public_id])
            if task.run is not None and home is not None
            else ""
        )
    session = skill_run.session
    return render(
        request,
        "runs/skill_run.html",
        {
            "section": "workspace",
            "workspace": workspace,
            "skill_run": skill_run,
            "kind": skill_kind(skill_run.skill),
            "css": status_css(skill_run.status),
            "report": report,
            "flow": flow,
            "session": session,
            "recording_url": (
                reverse("session-recording", args=[workspace.name, session.public_id]) if recording_of(session) else ""
            ),
            "live": skill_run.status == "running",
        },
    )


@login_required
def recording_page(request: HttpRequest, ws: str, session_id: str) -> HttpResponse:
    """A session's recording for the page's <video>: the session login, the account's session only."""
    workspace = _scope(request, ws)
    session = BrowserSession.objects.filter(account_id=workspace.account_id, public_id=session_id).first()
    path = recording_of(session)
    if path is None:
        raise Http404
    return ranged_file(request, path, "video/webm", filename=f"{session.public_id}.webm")
