"""Test reports: a smoke test's (a `smoke-uat` skill run) and a task's, as JSON and as their texts.

A report is built from the run's record when it ends (`smoke_report`, kept on the row) or read from a task's
record each time (`task_report`). The signed, short-lived link to its HTML page is made when the report is
read (`with_links`), never stored: notify makes it (its link key, and the page, are notify's: derived, bound
to the report and its account, expiring), answering `report_link`, which it connects in its AppConfig.ready.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from django.dispatch import Signal

from .errors import SessionError

from .models import STOPS_THAT_ARE_RESULTS, BrowserSession, SessionStatus, SkillRun, SkillStatus, Task, TaskStatus

SESSION_LOG_NOTE = (
    "The session log is not available (it is stored when the session ends), so console errors, "
    "failed network calls and URLs are missing."
)
TASK_NOTE = "No assertions were checked, so `ok` only means the agent says it is done."
WHOLE = "The whole report is in structuredContent."
ASSERT = "assert 1 condition"
FAILED_LISTED = 5
STRING_LIMIT = 2000

# sender=None, report_id, account_id, suffix -> the signed URL (notify.links answers it).
report_link = Signal()


def report_url(report_id: str, account_id: str, suffix: str = "") -> str | None:
    for _receiver, url in report_link.send(sender=None, report_id=report_id, account_id=account_id, suffix=suffix):
        if url:
            return url
    return None


def cut_strings(value: Any) -> Any:
    """Every string cut at 2,000 characters (the spec's limit for a record read over MCP or REST)."""
    if isinstance(value, str):
        return value if len(value) <= STRING_LIMIT else value[: STRING_LIMIT - 1] + "…"
    if isinstance(value, dict):
        return {k: cut_strings(v) for k, v in value.items()}
    if isinstance(value, list):
        return [cut_strings(v) for v in value]
    return value


# The kind of the last step: whether every link of the start page worked (strictLinks decides).
LINK_VERDICT = "linkverdict"


def add_step(
    steps: list[dict],
    kind: str,
    label: str,
    status: str,
    *,
    ms: int = 0,
    error: str | None = None,
    path: str | None = None,
    **extra: Any,
) -> None:
    """One step of the report. `index` counts every step from 0; `path` is the number a person reads, from 1,
    where a step inside a loop is its loop's number and its own (`3.2`)."""
    top = sum(1 for step in steps if "." not in step["path"])
    steps.append(
        {
            "index": len(steps),
            "path": path or str(top + 1),
            "kind": kind,
            "label": label,
            "status": status,
            "ok": None if status == "skipped" else status == "passed",
            "ms": ms,
            "error": error,
            **extra,
        }
    )


def whole_run_console(session: BrowserSession | None) -> list[dict] | None:
    """The console errors of every page the session showed, over its whole life, as its keeper kept them
    (between the checks and the agent's calls too: a timer's error while the agent thinks); None when no keeper
    watched it."""
    if session is None or session.console_log is None:
        return None
    return [dict(entry) for entry in session.console_log]


def smoke_report(run: SkillRun, state: dict, flow_tasks: list[Task], session: BrowserSession | None) -> dict:
    """The report of an ended smoke test: its steps in the order the spec checks them, and the verdict."""
    inputs = run.inputs
    steps: list[dict] = []
    notes: list[str] = []
    load = state.get("load") or {}
    started = bool(load)
    if started:
        add_step(
            steps,
            "load",
            "open the start page",
            "passed" if load.get("ok") else "failed",
            ms=load.get("ms", 0),
            error=load.get("error"),
        )
    a11y = state.get("a11y")
    add_step(
        steps,
        "a11y",
        "check accessibility",
        "skipped" if a11y is None else ("passed" if a11y.get("ok") else "failed"),
        ms=(a11y or {}).get("ms", 0),
        error=(a11y or {}).get("error"),
        violations=(a11y or {}).get("violations", []),
    )
    strict = bool(inputs.get("strictLinks", True))
    links = state.get("links") or []
    # The start page's links are a loop checked third, each link a step inside it (findings); whether every link
    # worked is the test's last step, the verdict strictLinks decides (the spec's order).
    broken = [link for link in links if not link["ok"]]
    found_broken = f"{len(broken)} of {len(links)} links are broken" if broken else None
    if links:
        add_step(steps, "links", "check the start page's links", "failed" if broken else "passed", error=found_broken)
        loop = steps[-1]["path"]
        for number, link in enumerate(links, start=1):
            add_step(
                steps,
                "link",
                f"check link {link['url']}",
                "passed" if link["ok"] else "failed",
                ms=link["ms"],
                error=link["error"],
                url=link["url"],
                httpStatus=link["status"],
                path=f"{loop}.{number}",
            )
        if broken and not strict:
            notes.append(
                f"{len(broken)} broken link{'s' if len(broken) != 1 else ''} found; strictLinks is false, "
                f"so they do not fail the test."
            )
    else:
        add_step(steps, "links", "check the start page's links", "skipped")
    flow_by_index = {t.flow_index: t for t in flow_tasks}
    for index, text in enumerate(inputs.get("steps") or []):
        task = flow_by_index.get(index)
        if task is None or task.status != TaskStatus.FINISHED:
            add_step(steps, "step", text[:120], "skipped", error="not run: an earlier step failed" if started else None)
            continue
        shot = (state.get("flow_shots") or {}).get(str(index))
        add_step(
            steps,
            "step",
            text[:120],
            "passed" if task.ok else "failed",
            ms=task.ms,
            error=None if task.ok else f"{task.stopped_by}: {task.reason}"[:500],
            taskId=task.public_id,
            actions=task.steps,
            **({"screenshot": shot} if shot else {}),
        )
    final = state.get("final") or {}
    console = whole_run_console(session)
    seen_by_checks = list(state.get("console") or []) + list(final.get("console") or [])
    if console is None:  # a session no keeper watched: what the checks and the flow's browse calls saw
        console = (
            seen_by_checks[: len(state.get("console") or [])]
            + [{"level": "error", "text": t} for task in flow_tasks for t in task.console_errors]
            + list(final.get("console") or [])
        )
    else:  # the keeper keeps on its tick: what the checks heard since its last one is added, once
        kept = {(e.get("text"), e.get("url") or "") for e in console}
        for entry in seen_by_checks:
            if (entry.get("text"), entry.get("url") or "") not in kept:
                kept.add((entry.get("text"), entry.get("url") or ""))
                console.append(dict(entry))
    failed_calls = (
        list(state.get("failed") or [])
        + [{"url": t, "status": None} for task in flow_tasks for t in task.failed_requests]
        + list(final.get("failed") or [])
    )
    if started:
        add_step(
            steps,
            "console",
            "check the console",
            "failed" if console else "passed",
            error=f"{len(console)} console error{'s' if len(console) != 1 else ''}: {console[0]['text'][:200]}"
            if console
            else None,
        )
    checks = final.get("checks") or {}
    for key in ("expectText", "expectUrl", "expectNoText"):
        check = checks.get(key)
        add_step(
            steps,
            "assert",
            ASSERT,
            "skipped" if check is None else ("passed" if check["ok"] else "failed"),
            error=None if check is None else check["error"],
            condition=key,
            **({"screenshot": True} if check is not None and not check["ok"] and final.get("screenshot") else {}),
        )
    add_step(
        steps,
        LINK_VERDICT,
        "check every link worked",
        "skipped" if not links else ("failed" if broken and strict else "passed"),
        error=found_broken if strict else None,
    )
    if a11y is not None and not a11y.get("ran"):
        notes.append(a11y.get("error") or "The accessibility check did not run.")
    notes.append("Links and accessibility are checked on the start page only; the console over the whole run.")
    error = state.get("error")
    # With strictLinks false a broken link is a finding: only the last step (then passed) decides.
    failed_steps = [s for s in steps if s["status"] == "failed" and not (s["kind"] in ("links", "link") and not strict)]
    verdict = (
        "error"
        if error or run.status in (SkillStatus.CANCELLED, SkillStatus.DENIED)
        else ("fail" if failed_steps else "pass")
    )
    if load.get("code") == "navigation_blocked":
        verdict = "error"
    report = {
        "id": run.public_id,
        "kind": "smoke",
        "skill": run.skill,
        "url": inputs.get("url"),
        "verdict": verdict,
        "sessionId": session.public_id if session else None,
        "startedAt": run.created_at.isoformat(),
        "ms": ms_between(run.created_at, None),
        "counts": step_counts(steps),
        "steps": steps,
        "consoleErrors": console[:100],
        "failedRequests": failed_calls[:100],
        "finalUrl": final.get("finalUrl") or None,
        "notes": notes,
        "recording": bool(session and session.recording),
    }
    if error:
        report["error"] = error
    if verdict == "error" and load.get("code") == "navigation_blocked":
        report["error"] = {"code": "navigation_blocked", "message": load.get("error")}
    return report


def step_counts(steps: list[dict]) -> dict[str, int]:
    return {
        "passed": sum(s["status"] == "passed" for s in steps),
        "failed": sum(s["status"] == "failed" for s in steps),
        "skipped": sum(s["status"] == "skipped" for s in steps),
        "total": len(steps),
    }


def ms_between(start: Any, end: Any) -> int:
    return int(((end or timezone.now()) - start).total_seconds() * 1000)


def running_smoke(run: SkillRun) -> dict:
    return {
        "id": run.public_id,
        "kind": "smoke" if run.skill == "smoke-uat" else "skill",
        "skill": run.skill,
        "url": run.inputs.get("url") if run.skill == "smoke-uat" else None,
        "verdict": "running",
        "sessionId": run.session.public_id if run.session else None,
        "startedAt": run.created_at.isoformat(),
        "ms": ms_between(run.created_at, None),
        "counts": None,
        "steps": [],
        "consoleErrors": [],
        "failedRequests": [],
        "finalUrl": None,
        "notes": ["The test is still running: its steps and findings appear when it ends."],
    }


def skill_report(run: SkillRun) -> dict:
    """The report of a skill run as it is now, with its links."""
    report = dict(run.report) if run.report else running_smoke(run)
    return with_links(report, run.account.public_id)


def task_report(task: Task) -> dict:
    """A task's report: verdict `pass` means the agent says it is done; no assertions are checked."""
    session = task.session
    notes = [TASK_NOTE]
    log_ready = session.status == SessionStatus.CLOSED
    if task.status != TaskStatus.FINISHED:
        verdict = "running"
        notes.append("The task is still running: its steps and findings appear when it ends.")
    elif task.ok:
        verdict = "pass"
    elif task.stopped_by in STOPS_THAT_ARE_RESULTS:
        verdict = "fail"
    else:
        verdict = "error"
    if not log_ready:
        notes.append(SESSION_LOG_NOTE)
    steps = [
        {"index": i, "path": str(i + 1), "kind": "action", "label": s.get("op"), **s} for i, s in enumerate(task.steps)
    ]
    report = {
        "id": task.public_id,
        "kind": "task",
        "goal": task.goal,
        "verdict": verdict,
        "sessionId": session.public_id,
        "ok": task.ok,
        "stoppedBy": task.stopped_by or None,
        "reason": task.reason or None,
        "answer": task.answer or None,
        "startedAt": task.started_at.isoformat(),
        "ms": task.ms if task.status == TaskStatus.FINISHED else ms_between(task.started_at, None),
        "costMicros": task.cost_micros,
        "counts": step_counts([{"status": "passed" if s["ok"] else "failed"} for s in task.steps]),
        "steps": steps,
        "consoleErrors": [{"level": "error", "text": t} for t in task.console_errors] if log_ready else [],
        "failedRequests": [{"url": t} for t in task.failed_requests] if log_ready else [],
        "finalUrl": (task.final_url or None) if log_ready else None,
        "notes": notes,
        "logComplete": log_ready,
    }
    return with_links(report, task.account.public_id)


def with_links(report: dict, account_id: str) -> dict:
    """The report with its signed links: the HTML page and each failed step's screenshot."""
    out = dict(report)
    out["reportUrl"] = report_url(report["id"], account_id)
    steps = []
    for step in report.get("steps") or []:
        step = dict(step)
        if step.get("screenshot"):
            step["screenshot"] = report_url(report["id"], account_id, f"/steps/{step['index']}.png")
        steps.append(step)
    out["steps"] = steps
    return out


def _seconds(ms: int) -> int:
    return max(0, round((ms or 0) / 1000))


def _findings(report: dict) -> str:
    console, failed = len(report.get("consoleErrors") or []), len(report.get("failedRequests") or [])
    if not console and not failed:
        return "No console errors or failed network calls."
    return (
        f"{console} console error{'s' if console != 1 else ''} and {failed} failed network "
        f"call{'s' if failed != 1 else ''}."
    )


def report_text(report: dict) -> str:
    """The text of a report, as the spec writes it."""
    if report.get("kind") == "task":
        return _task_text(report)
    if report.get("kind") == "skill":
        return _skill_text(report)
    url, verdict, seconds = report.get("url"), report["verdict"], _seconds(report.get("ms") or 0)
    link = f"Full HTML report (short-lived link): {report['reportUrl']}"
    if verdict == "running":
        return (
            f"Smoke test of {url} is still running after {seconds} s. Call get_report with id {report['id']} "
            f"for its verdict.\n{link}"
        )
    if verdict == "error":
        error = report.get("error") or {}
        return f"Smoke test of {url} could not run: {error.get('message') or 'it ended without a result.'}\n{link}\n{WHOLE}"
    counts = report["counts"]
    head = (
        f"Smoke test of {url} {'PASSED' if verdict == 'pass' else 'FAILED'} in {seconds} s: {counts['passed']} "
        f"of {counts['total']} steps passed."
    )
    failed = [s for s in report["steps"] if s["status"] == "failed"]
    lines = []
    if verdict == "fail" and failed:
        # A loop that failed because a step inside it did: the head names that step, the one a person fixes.
        first = next(s for s in failed if not any(o["path"].startswith(f"{s['path']}.") for o in failed))
        head += f" Step {first['path']} ({first['label']}) failed: {_sentence(first['error'])}"
        lines.append("Failed steps:")
        for step in failed[:FAILED_LISTED]:
            shot = f" (screenshot: {step['screenshot']})" if step.get("screenshot") else ""
            lines.append(f"- Step {step['path']} ({step['label']}): {(step['error'] or 'it failed').rstrip('.')}{shot}")
    head += f" {_findings(report)}"
    return "\n".join([head, *lines, link, WHOLE])


def _skill_text(report: dict) -> str:
    """A library skill's report (browsing/skill_results.py): the verdict, the agent's summary, the link."""
    link = f"Full HTML report (short-lived link): {report['reportUrl']}"
    if report["verdict"] == "running":
        return f"Skill {report['skill']} is still running. Call get_report with id {report['id']}.\n{link}"
    if report["verdict"] == "error":
        message = (report.get("error") or {}).get("message") or "it ended without a result."
        return f"Skill {report['skill']} could not run: {message}\n{link}\n{WHOLE}"
    word = "PASSED" if report["verdict"] == "pass" else "FAILED"
    summary = f" {_sentence(report['summary'])}" if report.get("summary") else ""
    return (
        f"Skill {report['skill']} {word} in {_seconds(report.get('ms') or 0)} s.{summary} {_findings(report)}"
        f"\n{link}\n{WHOLE}"
    )


def _sentence(text: str | None) -> str:
    text = (text or "it failed").strip()
    return text if text.endswith(".") else text + "."


def _task_text(report: dict) -> str:
    seconds, steps = _seconds(report.get("ms") or 0), report.get("steps") or []
    bad = sum(1 for s in steps if not s.get("ok"))
    count = f"{len(steps)} agent step{'s' if len(steps) != 1 else ''}, " + ("all ok." if not bad else f"{bad} failed.")
    goal = report.get("goal", "")
    if report["verdict"] == "running":
        head = f'Task "{goal}" is still running after {seconds} s.'
    elif report["verdict"] == "pass":
        head = f'Task "{goal}" finished in {seconds} s: the agent says it is done. {count}'
        if report.get("answer"):
            head += f" Answer: {report['answer']}"
    else:
        head = f'Task "{goal}" stopped ({report.get("stoppedBy")}) in {seconds} s: {_sentence(report.get("reason"))} {count}'
    if report.get("logComplete"):
        head += f" {_findings(report)}"
    else:
        head += f" {SESSION_LOG_NOTE}"
    head += " Note: no assertions were checked, so `ok` only means the agent says it is done."
    return f"{head}\n{WHOLE}"


def _money(micros: int) -> str:
    return f"${micros / 1_000_000:.4f}"


def summary_line(task: Task) -> str:
    verb = "finished" if task.stopped_by == "done" else "stopped"
    count = len(task.steps)
    return (
        f"Task {verb} ({task.stopped_by}) in {count} step{'s' if count != 1 else ''}, {_money(task.cost_micros)}, "
        f"{round(task.ms / 1000)} s."
    )


def task_record(task: Task) -> dict[str, Any]:
    """The stored task record (get_task, GET /v1/tasks/<id>)."""
    return cut_strings(
        {
            "id": task.public_id,
            "sessionId": task.session.public_id,
            "goal": task.goal,
            "status": task.status,
            "ok": task.ok,
            "stoppedBy": task.stopped_by or None,
            "limit": task.limit,
            "reason": task.reason or None,
            "answer": task.answer or None,
            "steps": task.steps,
            "costMicros": task.cost_micros,
            "ms": task.ms,
            "startedAt": task.started_at.isoformat(),
            "finishedAt": task.finished_at.isoformat() if task.finished_at else None,
        }
    )


def scoped_report(account: Any, report_id: Any) -> Task | SkillRun:
    """The account's task (tsk_…) or skill run (run_…) with this id; another account's, or none, is not_found."""
    found: Task | SkillRun | None = None
    if isinstance(report_id, str) and report_id.startswith("tsk_"):
        found = Task.objects.filter(account=account, public_id=report_id).select_related("session").first()
    elif isinstance(report_id, str) and report_id.startswith("run_"):
        found = SkillRun.objects.filter(account=account, public_id=report_id).select_related("session").first()
    if found is None:
        raise SessionError("not_found", f"No run or task {str(report_id)[:60]} in this account.")
    return found


def read_report(found: Task | SkillRun) -> dict:
    return task_report(found) if isinstance(found, Task) else skill_report(found)


def is_error(report: dict) -> bool:
    return report["verdict"] == "error"
