"""Tasks: a goal given to the gallery's browser agent, as a foldrun run of it on one browser session.

`do_start_task` starts the run with the session's DevTools endpoint in the run's own copy of its settings,
so each `web action=browse` call of the step drives that session's page (foldrun/web/browse, `browser_cdp`).
The run goes on by itself on the workers; when it ends, `runs.signals.run_event` reaches `task_run_ended`
(connected in RunsConfig.ready), which enqueues `runs.finish_browser_task`: `finish_task` reads the run's trace into the
task's record (steps, stoppedBy, cost) and closes the session when the task opened it for itself.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import Account, Workspace
from browsing.ending import close_session
from browsing.errors import SessionError
from browsing.models import STOPPED_BY, BrowserSession, EndReason, SessionStatus, Task, TaskStatus
from foldrun.celery import send, send_after_commit
from foldrun.engine.resolve import resolve_agent

from .actions import do_start_run
from .desks import desk_at
from .models import Run, RunKind, RunStatus, Step, TraceEvent

AGENT = "browser-agent"
FINISH_TASK = "runs.finish_browser_task"
START_SESSION_TASKS = "runs.start_session_tasks"  # browsing sends it by name (keeper live, a close)
ADVANCE_SKILL_RUN = "runs.advance_skill_run"
ENDINGS = ("completed", "failed", "cancelled")
# The first word of the agent's last reply, as its agent file asks it to write one.
VERDICTS = {"DONE": "done", "STUCK": "stuck", "UNANSWERED": "unanswered", "CAPTCHA": "captcha", "BLOCKED": "blocked"}
NOT_OPENED = "was not opened — "


def workspace_of(account: Account) -> Workspace:
    """Where the account's tasks run: its first workspace (its AGENTS.md names the provider)."""
    workspace = Workspace.objects.filter(account=account).order_by("created_at", "pk").first()
    if workspace is None:
        raise SessionError(
            "not_found", "This account has no workspace for the browser agent to run in; create one first."
        )
    return workspace


def do_start_task(
    account: Account,
    session: BrowserSession,
    *,
    goal: str,
    max_steps: int = 25,
    mode: str = "auto",
    closes_session: bool = False,
    user: Any = None,
    skill_run: Any = None,
    flow_index: int | None = None,
) -> Task:
    """A task on a live session: its row and its run, in one transaction."""
    if session.status != SessionStatus.LIVE or not session.cdp_endpoint:
        raise SessionError(
            "session_closed",
            f"Session {session.public_id} is not live; a task needs an open session.",
            {"sessionId": session.public_id},
        )
    workspace = workspace_of(account)
    with transaction.atomic():
        task = Task.objects.create(
            account=account,
            session=session,
            goal=goal,
            max_steps=max_steps,
            mode=mode,
            closes_session=closes_session,
            skill_run=skill_run,
            flow_index=flow_index,
        )
        _start_run(task, workspace, session, user)
    return task


def do_queue_task(
    account: Account,
    session: BrowserSession,
    *,
    goal: str,
    max_steps: int = 25,
    mode: str = "auto",
    closes_session: bool = False,
) -> Task:
    """A task on a session run_task has just opened (starting, queued for a browser, or refused one): its row
    now, its run once the session is live. Whichever comes last of this row, the keeper's `live` and the
    session's close reaches `start_session_tasks`, which starts the run or ends the task by the session's end."""
    workspace_of(account)  # no workspace: refused now, before the session is kept waiting for nothing
    task = Task.objects.create(
        account=account,
        session=session,
        goal=goal,
        max_steps=max_steps,
        mode=mode,
        closes_session=closes_session,
        started_at=timezone.now(),
    )
    start_session_tasks(session.pk)
    return task


def start_session_tasks(session_pk: int) -> int:
    """Start the runs of the tasks waiting for this session once it is live, or end them once it closed
    without them (their stoppedBy from why it closed). Safe to call any number of times: how many moved."""
    moved = 0
    with transaction.atomic():
        session = (
            BrowserSession.objects.select_for_update(of=("self",))
            .select_related("created_by")
            .filter(pk=session_pk)
            .first()
        )
        if session is None:
            return 0
        waiting = list(
            Task.objects.select_for_update(of=("self",)).filter(
                session_id=session_pk, run__isnull=True, status=TaskStatus.RUNNING
            )
        )
        for task in waiting:
            if session.status == SessionStatus.LIVE and session.cdp_endpoint:
                # The run is the session's opener's, as the task's own call would have made it.
                _start_run(task, workspace_of(task.account), session, session.created_by)
                moved += 1
            elif session.status == SessionStatus.CLOSED:
                _end_unstarted(task, session)
                moved += 1
    return moved


# Why a task never began, from why its session closed before it was live.
UNSTARTED = {
    EndReason.NAVIGATION_BLOCKED: "navigation_blocked",
    EndReason.CAPACITY_TIMEOUT: "capacity_timeout",
    EndReason.CAPACITY_EXCEEDED: "capacity_exceeded",
    EndReason.STOPPED: "aborted",
    EndReason.IDLE: "timeout",
    EndReason.MAX_DURATION: "timeout",
}


def _end_unstarted(task: Task, session: BrowserSession) -> None:
    now = timezone.now()
    task.status, task.ok, task.stopped_by = TaskStatus.FINISHED, False, UNSTARTED.get(session.end_reason, "error")
    task.reason = session.status_reason or "its session closed before the task began"
    task.finished_at, task.session_closed = now, True
    task.ms = max(0, int((now - task.started_at).total_seconds() * 1000))
    task.save(update_fields=["status", "ok", "stopped_by", "reason", "finished_at", "session_closed", "ms"])


def _start_run(task: Task, workspace: Workspace, session: BrowserSession, user: Any) -> None:
    plan = [
        {
            "number": 1,
            "agent": AGENT,
            "task": _task_text(task.goal, task.max_steps),
            "gate": False,
            "each": None,
            "max": None,
            "verify": None,
            "retry": 0,
            "on_fail": "stop",
            # maxSteps: the browse calls the step may make (a refused one ends the task as `budget`).
            "limits": {"web.browse": task.max_steps},
            "wait_event": None,
            "ask": None,
        }
    ]
    with transaction.atomic():
        task.run = do_start_run(
            workspace=workspace,
            user=user,
            kind=RunKind.ADHOC,
            name=f"task:{AGENT}",
            plan=plan,
            flow_meta={
                "browser": {
                    "session": session.public_id,
                    "cdp": session.cdp_endpoint,
                    "private": session.private_addresses,
                    # the hosts its guard sends through the user's proxy
                    "allow_hosts": list(session.options.get("allowHosts") or []),
                }
            },
            budget=None,
            inputs={},
            is_test=False,
            trigger="api",
            changeset=None,
        )
        task.started_at = timezone.now()
        task.save(update_fields=["run", "started_at"])


def _task_text(goal: str, max_steps: int) -> str:
    return (
        f"Goal: {goal}\n\nYou have at most {max_steps} browse calls. The browser is already open; start by "
        f"reading the page it is on."
    )


def task_of_run(run_pk: int) -> Task | None:
    return Task.objects.filter(run_id=run_pk).first()


def task_run_ended(sender, run, event: str, **kwargs) -> None:  # noqa: ANN001 - a run_event receiver
    """A task's run ended: its task is finished on a worker (by name; run_event comes after the commit)."""
    if event not in ENDINGS or not run.name.startswith("task:"):
        return
    task = task_of_run(run.pk)
    if task is not None:
        send(FINISH_TASK, task.pk)


def finish_task(task_pk: int) -> bool:
    """Write the ended run into its task (once: a second call changes nothing); close a session it opened."""
    with transaction.atomic():
        task = Task.objects.select_for_update(of=("self",)).filter(pk=task_pk).select_related("run", "session").first()
        if task is None or task.status == TaskStatus.FINISHED:
            return False
        run = task.run
        if run is None or not run.is_finished:
            return False
        for key, value in read_run(task, run).items():
            setattr(task, key, value)
        task.status = TaskStatus.FINISHED
        task.finished_at = run.finished_at or timezone.now()
        task.ms = int((task.finished_at - task.started_at).total_seconds() * 1000)
        task.save()
        if task.skill_run_id:
            send_after_commit(ADVANCE_SKILL_RUN, task.skill_run_id)
    if task.closes_session:
        close_session(task.session_id, EndReason.STOPPED, f"its task {task.public_id} ended")
        Task.objects.filter(pk=task.pk).update(session_closed=True)
    return True


def read_run(task: Task, run: Run) -> dict[str, Any]:
    """What the run's trace says of the task: its steps, why it stopped, the answer, the cost."""
    events = list(TraceEvent.objects.filter(run=run).order_by("pk").values("kind", "data"))
    steps: list[dict] = []
    calls: dict[str, dict] = {}
    pending_cost = 0
    refused = False
    blocked = ""
    console: list[str] = []
    failed: list[str] = []
    final_url = ""
    provider = _provider_name(run)
    for event in events:
        kind, data = event["kind"], event["data"] or {}
        if kind == "model_request":
            pending_cost = _micros(data.get("cost_usd"))
        elif kind == "tool_call" and data.get("name") == "web":
            step = {
                "op": _op(data.get("input") or {}),
                "ref": _ref(data.get("input") or {}),
                "provider": provider,
                "ok": True,
                "ms": 0,
                "costMicros": pending_cost,
                "error": None,
            }
            pending_cost = 0  # a request that made several calls is priced on its first
            calls[str(data.get("id"))] = step
            steps.append(step)
        elif kind == "tool_result" and str(data.get("id")) in calls:
            step = calls[str(data.get("id"))]
            step["ms"] = int(float(data.get("seconds") or 0) * 1000)
            if data.get("error"):
                content = str(data.get("content") or "")
                step["ok"], step["error"] = False, content.splitlines()[0][:500] if content else "failed"
                if NOT_OPENED in content:
                    blocked = content.splitlines()[0]
        elif kind == "limit" and data.get("refused"):
            refused = True
            if data.get("tool") == "web" and steps:
                steps.pop()  # the refused call never ran: it is not a step
        elif kind == "log":
            line = str(data.get("message") or "")
            if ": console error: " in line or ": uncaught error: " in line:
                console.append(line.split(": ", 1)[1][:500])
            elif ": request failed: " in line:
                failed.append(line.split(": request failed: ", 1)[1][:500])
            elif line.startswith(("http://", "https://")):
                final_url = line
    out = _verdict(run, refused, blocked, task)
    out.update(
        {
            "steps": steps,
            "cost_micros": _micros(run.cost_usd),
            "console_errors": console[:50],
            "failed_requests": failed[:50],
            "final_url": final_url[:2048],
        }
    )
    return out


def _verdict(run: Run, refused: bool, blocked: str, task: Task) -> dict[str, Any]:
    """ok, stoppedBy, reason, answer and limit from how the run ended and the agent's last reply."""
    if run.status == RunStatus.CANCELLED:
        return {
            "ok": False,
            "stopped_by": "aborted",
            "reason": run.error or "the task was cancelled",
            "answer": "",
            "limit": None,
        }
    session = BrowserSession.objects.filter(pk=task.session_id).first()
    under = _closed_under(session, run)
    if under is not None:
        return {
            "ok": False,
            "stopped_by": under,
            "reason": session.status_reason or "its session closed",
            "answer": "",
            "limit": None,
        }
    if run.status != RunStatus.COMPLETED:
        return {
            "ok": False,
            "stopped_by": "error",
            "reason": run.error or "the run failed",
            "answer": "",
            "limit": None,
        }
    reply = (Step.objects.filter(run=run).order_by("-index").values_list("output", flat=True).first() or "").strip()
    word, _, rest = reply.partition(":")
    stopped = VERDICTS.get(word.strip().upper())
    text = rest.strip() if stopped else reply
    if stopped == "done":
        return {"ok": True, "stopped_by": "done", "reason": "", "answer": text, "limit": None}
    if refused:
        return {
            "ok": False,
            "stopped_by": "budget",
            "answer": "",
            "limit": {"maxSteps": task.max_steps},
            "reason": f"the agent used all {task.max_steps} of its steps before it was done",
        }
    if blocked and stopped in (None, "stuck", "blocked"):
        return {"ok": False, "stopped_by": "navigation_blocked", "reason": blocked, "answer": "", "limit": None}
    stopped = stopped or "stuck"
    assert stopped in STOPPED_BY
    return {
        "ok": False,
        "stopped_by": stopped,
        "reason": text or "the agent did not say why",
        "answer": "",
        "limit": None,
    }


# A session that closed under its running task, by why: the task ended so, whatever the agent said after.
CLOSED_UNDER = {EndReason.STOPPED: "aborted", EndReason.IDLE: "timeout", EndReason.MAX_DURATION: "timeout"}


def _closed_under(session: BrowserSession | None, run: Run) -> str | None:
    """`aborted` when a caller stopped the session while the task ran (stop_session), `timeout` when it ran past
    the session's idleTimeoutMs or maxDurationMs; None when the session was open to the run's end."""
    if session is None or session.closed_at is None or session.end_reason not in CLOSED_UNDER:
        return None
    if run.finished_at is not None and session.closed_at > run.finished_at:
        return None  # it closed after the task (a task that closes its own session does so once it ended)
    return CLOSED_UNDER[session.end_reason]


def _micros(usd: Any) -> int:
    try:
        return int((Decimal(str(usd or 0)) * 1_000_000).to_integral_value())
    except ArithmeticError:
        return 0


def _op(args: dict) -> str:
    """The step's operation: its first browse action, else a navigation or a read."""
    actions = _actions(args)
    if actions:
        return str(next(iter(actions[0])))
    return "navigate" if args.get("url") else "read"


def _actions(args: dict) -> list[dict]:
    """The call's `actions` (a JSON array, or that array as a string), when its first is a step."""
    actions = args.get("actions")
    if isinstance(actions, str):
        try:
            actions = json.loads(actions)
        except ValueError:
            return []
    if isinstance(actions, list) and actions and isinstance(actions[0], dict) and actions[0]:
        return actions
    return []


_REF = re.compile(r"^@?([ef]\d+(?:e\d+)?)$")


def _ref(args: dict) -> str | None:
    actions = _actions(args)
    if actions:
        value = next(iter(actions[0].values()))
        match = _REF.match(str(value)) if isinstance(value, str) else None
        return match.group(1) if match else None
    return None


def _provider_name(run: Run) -> str | None:
    """The provider that answered the run's model requests: the agent's, else its workspace's or account's."""
    try:
        spec = resolve_agent(desk_at(run.workspace, run.changeset_number or None), AGENT)
    except Exception:  # noqa: BLE001 - a desk that no longer resolves: the steps say no provider
        return None
    for layer in (spec.meta, spec.workspace_defaults, spec.account_defaults):
        value = (layer or {}).get("provider")
        if value:
            return str(value.get("name") if isinstance(value, dict) else value)
    return None
