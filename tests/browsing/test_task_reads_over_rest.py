"""GET /v1/tasks/<id>, /v1/tasks/<id>/report.json and /v1/skill-runs/<id>/report.json: scoped reads."""

from __future__ import annotations

from django.utils import timezone

from browsing.models import BrowserSession, SkillRun, Task


def finished_task(account) -> Task:
    session = BrowserSession.objects.create(account=account, status="closed", closed_at=timezone.now())
    return Task.objects.create(
        account=account,
        session=session,
        goal="Open the pricing page",
        status="finished",
        ok=True,
        stopped_by="done",
        answer="It is open.",
        cost_micros=617,
        ms=4753,
        steps=[
            {
                "op": "click",
                "ref": "e2",
                "provider": "anthropic",
                "ok": True,
                "ms": 3458,
                "costMicros": 472,
                "error": None,
            }
        ],
        final_url="http://127.0.0.1/pricing/",
        finished_at=timezone.now(),
    )


def test_a_task_reads_as_its_stored_record(alice_api, account):
    task = finished_task(account)
    body = alice_api.get(f"/v1/tasks/{task.public_id}").json()
    assert body["id"] == task.public_id and body["sessionId"] == task.session.public_id
    assert (body["status"], body["ok"], body["stoppedBy"], body["costMicros"]) == ("finished", True, "done", 617)
    assert body["steps"][0] == {
        "op": "click",
        "ref": "e2",
        "provider": "anthropic",
        "ok": True,
        "ms": 3458,
        "costMicros": 472,
        "error": None,
    }


def test_a_tasks_report_says_it_checked_no_assertions_and_links_its_page(alice_api, account):
    task = finished_task(account)
    report = alice_api.get(f"/v1/tasks/{task.public_id}/report.json").json()
    assert (report["verdict"], report["kind"], report["finalUrl"]) == ("pass", "task", "http://127.0.0.1/pricing/")
    assert "No assertions were checked, so `ok` only means the agent says it is done." in report["notes"]
    assert report["reportUrl"].startswith("/reports/")
    page = alice_api.get(report["reportUrl"])
    assert page.status_code == 200 and "Open the pricing page" in page.content.decode()


def test_a_task_of_another_account_is_not_found(charlie_api, account):
    task = finished_task(account)
    for path in (f"/v1/tasks/{task.public_id}", f"/v1/tasks/{task.public_id}/report.json"):
        answer = charlie_api.get(path)
        assert answer.status_code == 404 and answer.json()["code"] == "not_found"


def test_a_running_smoke_tests_report_is_verdict_running(alice_api, account):
    run = SkillRun.objects.create(account=account, skill="smoke-uat", inputs={"url": "https://a.example/"})
    report = alice_api.get(f"/v1/skill-runs/{run.public_id}/report.json").json()
    assert (report["verdict"], report["steps"], report["id"]) == ("running", [], run.public_id)
    assert alice_api.get(f"/v1/tasks/{run.public_id}/report.json").status_code == 404
