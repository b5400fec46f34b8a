"""The browser agent's tools: run_task, get_task, smoke_test, get_report (browsing does the work).

A task is a foldrun run of the gallery's browser agent on a session (runs.browser_tasks); a smoke test is
a run of the gallery skill `smoke-uat` on a recorded session (runs.skill_runs); both are read back as a
report (browsing.reports). The waits are capped at 90 s: what runs longer goes on, and is read again.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings

from browsing.actions import (
    check_create_session,
    do_create_session,
    do_refused_session,
    give_up_starting,
    scoped_session,
)
from browsing.errors import SessionError
from browsing.models import (
    STOPS_THAT_ARE_RESULTS,
    BrowserSession,
    SessionStatus,
    SkillRun,
    SkillStatus,
    Task,
    TaskStatus,
)
from browsing.options import MAX_HEADERS, MAX_URL
from browsing.reports import is_error, read_report, report_text, scoped_report, skill_report, summary_line, task_record

from runs.browser_tasks import do_queue_task, workspace_of
from runs.skill_runs import do_start_smoke

from .. import once
from ..call import McpCall
from ..registry import mcp_tool
from ..results import ToolError, ToolResult, cut, cut_strings, ok

WAIT_CAP = 90
POLL_SECONDS = 0.2
# The options that only apply when run_task opens the session itself.
SESSION_ONLY = ("startUrl", "engineId", "engineVersion", "record", "headers", "proxyUrl", "allowHosts", "credentials")
SIGN_IN_OPTIONS = ("credentials", "profileId", "persistProfile", "profileName", "extensionIds")

_HEADERS = {
    "type": "array",
    "maxItems": MAX_HEADERS,
    "description": "Extra request headers sent only to the hosts named (up to 20)",
    "items": {
        "type": "object",
        "properties": {"host": {"type": "string"}, "name": {"type": "string"}, "value": {"type": "string"}},
        "required": ["host", "name", "value"],
        "additionalProperties": False,
    },
}
_CREDENTIALS = {
    "description": "Fill login forms from the credential vault: true, or {namespace, autoSubmit}",
    "oneOf": [
        {"type": "boolean"},
        {
            "type": "object",
            "properties": {"namespace": {"type": "string"}, "autoSubmit": {"type": "boolean"}},
            "additionalProperties": False,
        },
    ],
}

RUN_TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "minLength": 1, "maxLength": 2000, "description": "What to do, in plain language"},
        "maxSteps": {"type": "integer", "minimum": 1, "maximum": 50, "description": "1 to 50. Default 25"},
        "sessionId": {"type": "string", "description": "An open session of yours; leave it out to open one"},
        "startUrl": {"type": "string", "maxLength": MAX_URL, "description": "Page to open first (new session only)"},
        "engineId": {"type": "string", "description": "Engine for the new session"},
        "engineVersion": {"type": "integer", "description": "A saved engine's version; needs engineId"},
        "record": {"type": "boolean", "description": "Record the new session as video"},
        "headers": _HEADERS,
        "proxyUrl": {"type": "string", "description": "Your own proxy, to reach a private host (new session only)"},
        "allowHosts": {"type": "array", "items": {"type": "string"}, "description": "Hosts reached through proxyUrl"},
        "credentials": _CREDENTIALS,
        "mode": {"type": "string", "enum": ["auto", "full_auto"], "description": "Default auto"},
        "keepOpen": {"type": "boolean", "description": "Keep the session the tool opened open after the task"},
        "waitSeconds": {
            "type": "integer",
            "minimum": 1,
            "maximum": WAIT_CAP,
            "description": "1 to 90. How long to wait. Default 90",
        },
        once.ARGUMENT: once.SCHEMA,
    },
    "required": ["goal"],
    "additionalProperties": False,
}

RUN_TASK_DESCRIPTION = (
    "Give the browser agent a goal in plain language. It looks at the page, decides, acts and repeats until it is "
    "done or stops, then returns the answer, why it stopped (stoppedBy), its steps and the cost. Without sessionId "
    "the tool opens a session and closes it when the task ends (unless keepOpen); with sessionId the task runs on "
    "that open session, which stays open. Waits up to 90 s; a longer task goes on: read it with get_report or "
    "get_task. It checks no assertions: for a pass/fail check use smoke_test. "
    "Do not put real passwords in a goal: the goal text goes to the model and into the task record. Use the "
    "credential vault (credentials) for logins."
)

GET_TASK_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sessionId": {"type": "string", "description": "The session the task ran on"},
        "taskId": {"type": "string", "description": "Default: the session's latest task"},
        "waitSeconds": {
            "type": "integer",
            "minimum": 0,
            "description": "Default 30, at most 90 (a larger value is lowered to 90)",
        },
    },
    "required": ["sessionId"],
    "additionalProperties": False,
}

_TEXT = {"type": "string", "maxLength": 500}
SMOKE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "minLength": 1, "maxLength": MAX_URL, "description": "The page to test (http/https)"},
        "steps": {
            "type": "array",
            "maxItems": 30,
            "items": {"type": "string", "minLength": 1, "maxLength": 500},
            "description": "Plain-language steps run in order after the page loads; the first that fails "
            "stops the flow. The step text is stored with the run: use a throwaway account",
        },
        "expectText": {**_TEXT, "description": "Text that must be on the page when the steps are done"},
        "expectUrl": {**_TEXT, "description": "Text the page address must contain when the steps are done"},
        "expectNoText": {**_TEXT, "description": "Text that must not be on the page when the steps are done"},
        "maxLinks": {
            "type": "integer",
            "minimum": 0,
            "maximum": 200,
            "description": "How many same-origin links of the start page to check. Default 50",
        },
        "strictLinks": {"type": "boolean", "description": "A broken link fails the test. Default true"},
        "waitSeconds": {"type": "integer", "minimum": 1, "maximum": WAIT_CAP, "description": "1 to 90. Default 60"},
        "session": {
            "type": "object",
            "description": "Session options for this test (proxyUrl, allowHosts, "
            "headers); recording is always on; sign-in options are refused",
        },
    },
    "required": ["url"],
    "additionalProperties": False,
}

GET_REPORT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "description": "A run id (run_…) or a task id (tsk_…)"},
        "waitSeconds": {
            "type": "integer",
            "minimum": 0,
            "maximum": WAIT_CAP,
            "description": "How long to wait while it runs. 0 to 90. Default 30",
        },
    },
    "required": ["id"],
    "additionalProperties": False,
}


def _session_errors(fn: Callable[[McpCall, dict], ToolResult]) -> Callable[[McpCall, dict], ToolResult]:
    """browsing's SessionError is the tool's error, code for code."""

    def handler(call: McpCall, args: dict) -> ToolResult:
        try:
            return fn(call, args)
        except SessionError as exc:
            raise ToolError(exc.code, exc.message, exc.details) from None

    handler.__name__ = fn.__name__
    handler.__doc__ = fn.__doc__
    return handler


def _wait(done: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        if done():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(POLL_SECONDS)


FULL_AUTO = (
    "mode full_auto is not offered here: a task runs in auto mode only (the agent acts until the goal is "
    "reached or it stops, and says why). Leave mode out or send auto."
)


def _invalid(issues: list[dict[str, str]], message: str) -> ToolError:
    return ToolError("invalid_input", message, {"issues": issues})


# ---------------------------------------------------------------- run_task / get_task


def task_is_error(task: Task) -> bool:
    return task.status == TaskStatus.FINISHED and task.stopped_by not in STOPS_THAT_ARE_RESULTS


def _task_text(task: Task, session_closed: bool) -> str:
    lines = [summary_line(task)]
    if task.answer:
        lines.append(f"Answer: {cut(task.answer)}")
    if task.reason:
        lines.append(f"Reason: {cut(task.reason)}")
    if session_closed:
        lines.append(f"Session {task.session.public_id} was closed.")
    else:
        lines.append(
            f"Session {task.session.public_id} is still open: run another task with sessionId, or "
            f"stop_session when done."
        )
    lines.append(
        f"For a verdict with console errors and failed network calls, call get_report with id {task.public_id}."
    )
    return "\n".join(lines)


def _result_task(task: Task) -> dict[str, Any]:
    return cut_strings(
        {
            "taskId": task.public_id,
            "ok": task.ok,
            "answer": task.answer or None,
            "stoppedBy": task.stopped_by,
            "reason": task.reason or None,
            "limit": task.limit,
            "steps": task.steps,
            "costMicros": task.cost_micros,
            "ms": task.ms,
            "text": summary_line(task),
        }
    )


def _finished(task: Task, starting: BrowserSession | None = None) -> Callable[[], bool]:
    """Whether the task ended (and closed the session it closes). With `starting`, the session the tool opened:
    one that no worker began to start within FOLDRUN_SESSION_START_SECONDS (its queue's wait not counted) is
    closed, so the task ends `error` with that sentence rather than waiting for the sweep."""
    limit = float(settings.FOLDRUN_SESSION_START_SECONDS)
    deadline = [time.monotonic() + limit]

    def check() -> bool:
        task.refresh_from_db()
        if task.status == TaskStatus.FINISHED:
            return not task.closes_session or task.session_closed
        if starting is not None and task.run_id is None:
            fresh = BrowserSession.objects.filter(pk=starting.pk).values("queued_until").first() or {}
            if fresh.get("queued_until") is not None:
                deadline[0] = time.monotonic() + limit
            elif time.monotonic() >= deadline[0]:
                give_up_starting(starting, limit)
        return False

    return check


def _task_on_its_own_session(call: McpCall, args: dict) -> Task:
    """The task on a session the tool opens for it. Every way it may end is a task with its stoppedBy: a busy
    pool (capacity_exceeded: run_task takes no waitForCapacityMs, so it waits for none), a blocked start URL
    (navigation_blocked), a browser that never started (error). Its run starts once the session is live."""
    body = {key: args[key] for key in SESSION_ONLY if key in args}
    opts = check_create_session(call.account, body)
    workspace_of(call.account)  # refused before a browser is taken for it
    try:
        session = do_create_session(call.account, opts, user=call.user)
    except SessionError as exc:
        if exc.code != "capacity_exceeded":
            raise
        session = do_refused_session(call.account, opts, exc, user=call.user)
    return do_queue_task(
        call.account,
        session,
        goal=args["goal"],
        max_steps=int(args.get("maxSteps", 25)),
        mode=str(args.get("mode") or "auto"),
        closes_session=not args.get("keepOpen"),
    )


def _start_task(call: McpCall, args: dict) -> Task:
    """run_task's task: on the session named (an open one of the account's), else on one the tool opens."""
    if not args.get("sessionId"):
        return _task_on_its_own_session(call, args)
    session = scoped_session(call.account, args["sessionId"])
    if session.status == SessionStatus.CLOSED:
        raise ToolError(
            "session_closed",
            f"Session {session.public_id} is closed: {session.status_reason}.",
            {"sessionId": session.public_id},
        )
    # A session still starting (or queued for a browser, queueForCapacity) is waited for by the task itself:
    # its run starts when the session is live, and a queue that runs out ends it capacity_timeout.
    return do_queue_task(
        call.account,
        session,
        goal=args["goal"],
        max_steps=int(args.get("maxSteps", 25)),
        mode=str(args.get("mode") or "auto"),
    )


def _running_note(task: Task) -> str:
    return (
        f"Task {task.public_id} is still running on session {task.session.public_id}, which stays open. Call "
        f"get_report with id {task.public_id} (or get_task), then stop_session when you are done."
    )


@mcp_tool(
    name="run_task", description=RUN_TASK_DESCRIPTION, input_schema=RUN_TASK_SCHEMA, waits_seconds=WAIT_CAP, acts=True
)
@_session_errors
def run_task(call: McpCall, args: dict) -> ToolResult:
    wait = int(args.get("waitSeconds", WAIT_CAP))
    if args.get("mode") == "full_auto":  # named by the spec, defined nowhere in it: refused, never ignored
        raise _invalid([{"path": "mode", "message": FULL_AUTO}], FULL_AUTO)
    if args.get("sessionId"):
        given = [key for key in SESSION_ONLY if key in args]
        if given:
            raise _invalid(
                [
                    {"path": key, "message": "Only when run_task opens the session; not with sessionId."}
                    for key in given
                ],
                f"{', '.join(given)} only appl{'ies' if len(given) == 1 else 'y'} when run_task opens the "
                f"session; leave {'it' if len(given) == 1 else 'them'} out with sessionId.",
            )
    # A client that gave up waiting and calls again with its idempotencyKey gets the task it started, waited for.
    task, _again = once.start_once(
        "run_task",
        lambda: workspace_of(call.account),
        args,
        lambda: _start_task(call, args),
        kept=lambda task: {"task": task},
        found=lambda row: row.task,
    )
    session = task.session
    if not _wait(_finished(task, starting=session), wait):
        # The task goes on, and its session stays open for the caller to read it and stop it (the spec).
        if Task.objects.filter(pk=task.pk, status=TaskStatus.RUNNING).update(closes_session=False):
            note = _running_note(task)
            return ok(
                note,
                {
                    "sessionId": session.public_id,
                    "taskId": task.public_id,
                    "status": "running",
                    "sessionClosed": False,
                    "note": note,
                },
            )
        _wait(_finished(task), 15)  # it ended just now: its own end closes the session
    closed = task.session_closed
    return ok(
        _task_text(task, closed),
        {"sessionId": session.public_id, "sessionClosed": closed, "task": _result_task(task)},
        is_error=task_is_error(task),
    )


@mcp_tool(
    name="get_task",
    description=(
        "Read a task started by run_task; waits for a running one (default 30 s, at most 90), then returns the "
        "stored task record. It never closes the session. For a verdict with console errors and failed network "
        "calls, use get_report."
    ),
    input_schema=GET_TASK_SCHEMA,
    waits_seconds=WAIT_CAP,
)
@_session_errors
def get_task(call: McpCall, args: dict) -> ToolResult:
    session = scoped_session(call.account, args["sessionId"])
    tasks = Task.objects.filter(session=session, account=call.account).select_related("session")
    task = (
        tasks.filter(public_id=args["taskId"]).first()
        if args.get("taskId")
        else tasks.order_by("-created_at", "-pk").first()
    )
    if task is None:
        where = f"task {str(args['taskId'])[:60]} on" if args.get("taskId") else "task yet on"
        raise ToolError("not_found", f"No {where} session {session.public_id}.")
    wait = min(int(args.get("waitSeconds", 30)), WAIT_CAP)
    if not _wait(lambda: task.refresh_from_db() or task.status == TaskStatus.FINISHED, wait):
        note = _running_note(task)
        return ok(note, {"sessionId": session.public_id, "taskId": task.public_id, "status": "running", "note": note})
    return ok(
        _task_text(task, task.session_closed or task.session.status == SessionStatus.CLOSED),
        {"sessionId": session.public_id, "taskId": task.public_id, "status": "finished", "task": task_record(task)},
        is_error=task_is_error(task),
    )


# ---------------------------------------------------------------- smoke_test / get_report


def check_smoke_args(args: dict) -> dict[str, Any]:
    url = args["url"].strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _invalid(
            [{"path": "url", "message": "Must be an http or https URL."}],
            "url must be an http or https address, at most 2048 characters.",
        )
    session = args.get("session") or {}
    signed_in = [key for key in SIGN_IN_OPTIONS if key in session]
    if signed_in:
        raise _invalid(
            [{"path": f"session.{key}", "message": "Skill runs cannot sign in yet."} for key in signed_in],
            f"Signed-in skill runs are not available yet: remove session.{signed_in[0]}",
        )
    if "url" in session or "startUrl" in session:
        key = "url" if "url" in session else "startUrl"
        raise _invalid(
            [{"path": f"session.{key}", "message": "The test opens url itself."}],
            f"session.{key} is not taken here: the test opens url itself.",
        )
    return {
        "url": url,
        "steps": list(args.get("steps") or []),
        "expectText": args.get("expectText"),
        "expectUrl": args.get("expectUrl"),
        "expectNoText": args.get("expectNoText"),
        "maxLinks": int(args.get("maxLinks", 50)),
        "strictLinks": bool(args.get("strictLinks", True)),
    }


def _report_result(report: dict) -> ToolResult:
    return ok(report_text(report), cut_strings(report), is_error=is_error(report))


@mcp_tool(
    name="smoke_test",
    description=(
        "Test a page or a short user flow and return a pass/fail report. Opens a recorded browser, loads url, checks "
        "basic accessibility and the start page's links, runs your plain-language steps (the first that fails stops "
        "the flow), checks the console over the whole run, then expectText, expectUrl and expectNoText. A test that "
        "ran and failed is a normal result with verdict fail; isError means it could not run. Waits up to 90 s "
        "(60 by default); a longer test goes on: read it with get_report."
    ),
    input_schema=SMOKE_SCHEMA,
    waits_seconds=WAIT_CAP,
    acts=True,
)
@_session_errors
def smoke_test(call: McpCall, args: dict) -> ToolResult:
    inputs = check_smoke_args(args)
    options = check_create_session(call.account, {**(args.get("session") or {}), "record": True})
    session = do_create_session(call.account, options, user=call.user)
    run = do_start_smoke(call.account, session, inputs, user=call.user)
    _wait(lambda: run.refresh_from_db() or run.status != SkillStatus.RUNNING, int(args.get("waitSeconds", 60)))
    return _report_result(skill_report(run))


def _still_running(found: Task | SkillRun) -> bool:
    found.refresh_from_db()
    return found.status == (TaskStatus.RUNNING if isinstance(found, Task) else SkillStatus.RUNNING)


@mcp_tool(
    name="get_report",
    description=(
        "Read the test report of a smoke test or skill run (run_…) or a task (tsk_…), waiting while it runs (default "
        "30 s, at most 90). Call again with the same id until the verdict is not running. isError is true only for "
        "verdict error. A task's console errors and failed network calls come from the session log, stored when the "
        "session ends: stop_session, then read the report again."
    ),
    input_schema=GET_REPORT_SCHEMA,
    waits_seconds=WAIT_CAP,
)
@_session_errors
def get_report(call: McpCall, args: dict) -> ToolResult:
    found = scoped_report(call.account, args["id"])
    _wait(lambda: not _still_running(found), int(args.get("waitSeconds", 30)))
    return _report_result(read_report(found))
