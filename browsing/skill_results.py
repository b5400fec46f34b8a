"""A skill run read back: its report (a skill of the library, run by the browser agent) and its record.

A library skill's run is one task of the browser agent following the skill's procedure on a session of its
own; its report lists the agent's steps and the verdict the agent gave. The record (`skill_record`) is what
get_skill_run, skill_<name> and GET /v1/skill-runs/<id> return: the spec's skill result, the same for
`smoke-uat` and for any other skill.
"""

from __future__ import annotations

from typing import Any

from django.utils import timezone

from .models import STOPS_THAT_ARE_RESULTS, BrowserSession, SkillRun, SkillStatus, Task
from .reports import step_counts, cut_strings, ms_between, add_step, skill_report

FAILED_LISTED = 5
LOG_LINES = 50
# The keys of a report that are media or bulky evidence: in the report, never in the record.
LEFT_OUT = ("screenshot", "violations", "actions")
# A platform skill's runner keeps no version in the run's state (smoke-uat's phases own it): the platform's.
PLATFORM_VERSION = "gallery"


def procedure_report(
    run: SkillRun, task: Task | None, session: BrowserSession | None, *, error: dict[str, str] | None = None
) -> dict[str, Any]:
    """The report of a library skill's run: the agent's steps, then its verdict on the procedure."""
    steps: list[dict] = []
    for action in task.steps if task else []:
        label = " ".join(str(part) for part in (action.get("op"), action.get("ref")) if part)
        add_step(
            steps,
            "action",
            label[:120] or "browser action",
            "passed" if action.get("ok") else "failed",
            ms=int(action.get("ms") or 0),
            error=action.get("error"),
        )
    if task is not None:
        add_step(
            steps,
            "procedure",
            f"follow the skill {run.skill}",
            "passed" if task.ok else "failed",
            ms=task.ms,
            error=None if task.ok else f"{task.stopped_by}: {task.reason}"[:500],
            taskId=task.public_id,
        )
    if error is None and task is not None and task.stopped_by not in STOPS_THAT_ARE_RESULTS:
        error = {"code": task.stopped_by, "message": task.reason or f"The browser agent stopped ({task.stopped_by})."}
    verdict = "error" if error else ("pass" if task is not None and task.ok else "fail")
    report: dict[str, Any] = {
        "id": run.public_id,
        "kind": "skill",
        "skill": run.skill,
        "url": None,
        "verdict": verdict,
        "sessionId": session.public_id if session else None,
        "startedAt": run.created_at.isoformat(),
        "ms": ms_between(run.created_at, None),
        "counts": step_counts(steps),
        "steps": steps,
        "consoleErrors": [{"level": "error", "text": t} for t in (task.console_errors if task else [])][:100],
        "failedRequests": [{"url": t, "status": None} for t in (task.failed_requests if task else [])][:100],
        "finalUrl": (task.final_url if task else "") or None,
        "summary": (task.answer or task.reason) if task else "",
        "notes": ["The browser agent followed the skill's procedure; its verdict is the agent's own."],
        "recording": bool(session and session.recording),
    }
    if error:
        report["error"] = error
    return report


def denied_report(run: SkillRun, reason: str) -> dict[str, Any]:
    return {
        "id": run.public_id,
        "kind": "skill",
        "skill": run.skill,
        "url": None,
        "verdict": "error",
        "sessionId": None,
        "startedAt": run.created_at.isoformat(),
        "ms": 0,
        "counts": step_counts([]),
        "steps": [],
        "consoleErrors": [],
        "failedRequests": [],
        "finalUrl": None,
        "summary": reason,
        "notes": [],
        "recording": False,
        "error": {"code": "denied", "message": reason},
    }


def _summary(run: SkillRun, report: dict | None) -> str:
    if run.status == SkillStatus.RUNNING:
        return f"The skill {run.skill} is still running."
    if report is None:
        return ""
    if report.get("summary"):
        return str(report["summary"])
    counts = report.get("counts") or {}
    if report.get("kind") == "smoke":
        word = {"pass": "passed", "fail": "failed"}.get(report["verdict"], "could not run")
        return (
            f"Smoke test of {report.get('url')} {word}: {counts.get('passed', 0)} of {counts.get('total', 0)} "
            f"steps passed."
        )
    return ""


def _reason(run: SkillRun, report: dict | None) -> str | None:
    if report and isinstance(report.get("error"), dict):
        return report["error"].get("message")
    return None


def skill_record(run: SkillRun) -> dict[str, Any]:
    """The spec's skill result: the run, its summary and counts, screenshots and clips left out."""
    report = skill_report(run) if run.report or run.status == SkillStatus.RUNNING else None
    stored = run.report
    ended = run.finished_at
    result = None
    if stored:
        result = {
            "verdict": stored["verdict"],
            "steps": [{k: v for k, v in s.items() if k not in LEFT_OUT} for s in stored.get("steps") or []],
            "consoleErrors": (stored.get("consoleErrors") or [])[-LOG_LINES:],
            "failedRequests": (stored.get("failedRequests") or [])[-LOG_LINES:],
            "finalUrl": stored.get("finalUrl"),
            "notes": stored.get("notes") or [],
        }
        if stored.get("error"):
            result["error"] = stored["error"]
    record: dict[str, Any] = {
        "runId": run.public_id,
        "skill": run.skill,
        "version": (run.state or {}).get("version") or (PLATFORM_VERSION if run.skill == "smoke-uat" else None),
        "sessionId": run.session.public_id if run.session_id else None,
        "status": run.status,
        "startedAt": run.created_at.isoformat(),
        "ms": ms_between(run.created_at, ended) if ended else ms_between(run.created_at, timezone.now()),
        "summary": _summary(run, stored),
        "reason": _reason(run, stored),
        "counts": stored.get("counts") if stored else None,
        "result": result,
        "hasReport": bool(stored),
    }
    if stored and report is not None:
        record["reportUrl"] = report.get("reportUrl")
    return cut_strings(record)


def skill_text(record: dict[str, Any]) -> str:
    """The result's text, in the spec's order: name, version, run id, status; summary; reason; counts;
    up to five failed steps; the report link."""
    version = f" {record['version']}" if record.get("version") else ""
    lines = [f"Skill {record['skill']}{version}, run {record['runId']}: {record['status']}."]
    if record.get("summary"):
        lines.append(record["summary"])
    if record.get("reason"):
        lines.append(f"Stopped: {record['reason']}")
    counts = record.get("counts")
    if counts:
        lines.append("Counts: " + ", ".join(f"{k} {v}" for k, v in counts.items()) + ".")
    failed = [s for s in ((record.get("result") or {}).get("steps") or []) if s.get("status") == "failed"]
    for step in failed[:FAILED_LISTED]:
        lines.append(f"- Step {step['path']} ({step['label']}) failed: {step.get('error') or 'it failed'}")
    if record["status"] == SkillStatus.RUNNING:
        lines.append(f"Call get_skill_run with runId {record['runId']} to wait for its verdict.")
    if record.get("reportUrl"):
        lines.append(f"Report (short-lived link): {record['reportUrl']}")
    return "\n".join(lines)
