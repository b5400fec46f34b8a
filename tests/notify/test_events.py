"""Which run events reach which destination, and what arrives."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone as dt_timezone
from decimal import Decimal

from django.db import connection
from django.test.utils import CaptureQueriesContext

from notify.actions import check_budget, handle_run_event, notify_quarantined, redact_body
from notify.config import agents_metas
from notify.receivers import on_run_event
from notify.models import Delivery
from runs.models import Approval, Run, Schedule, Step

from .conftest import send_outbox, write_agents_md

SPEC_FIELDS = [
    "text",
    "workspace",
    "runId",
    "flow",
    "status",
    "verdict",
    "summary",
    "costUsd",
    "startedAt",
    "finishedAt",
    "approveUrl",
    "rejectUrl",
    "links",
]
START = datetime(2026, 11, 2, 7, 0, tzinfo=dt_timezone.utc)


def _run(workspace, **fields):
    defaults = dict(
        account=workspace.account,
        workspace=workspace,
        name="rankings",
        status="completed",
        verdict="BAD",
        headline="BAD — 3 targets fell out of the top 20",
        summary="3 targets fell out of the top 20",
        cost_usd=Decimal("1.01"),
        started_at=START,
        finished_at=START + timedelta(minutes=4),
    )
    defaults.update(fields)
    return Run.objects.create(**defaults)


def _email(workspace, events=None, library=False):
    block = "notify:\n  email: ops@example.com\n" + (f"  events: [{', '.join(events)}]\n" if events else "")
    write_agents_md(workspace, f"---\n{block}---\n", library=library)


def _hook(workspace, events=None):
    block = "notify:\n  url: http://127.0.0.1:9/hook\n" + (f"  events: [{', '.join(events)}]\n" if events else "")
    write_agents_md(workspace, f"---\n{block}---\n")


def test_by_default_a_failure_is_sent_and_a_completion_is_not(workspace):
    _email(workspace)
    handle_run_event(_run(workspace), "completed")
    assert send_outbox() == []
    handle_run_event(
        _run(workspace, status="failed", verdict=None, headline="", summary="", error="step 2 timed out"), "failed"
    )
    assert [m.subject for m in send_outbox()] == ["rankings failed: step 2 timed out"]


def test_the_subject_is_the_headline_then_the_summary(workspace):
    _email(workspace, ["completed"])
    handle_run_event(_run(workspace, headline="BAD", summary="3 targets fell out of the top 20"), "completed")
    assert send_outbox()[0].subject == "BAD — 3 targets fell out of the top 20"


def test_the_webhook_body_carries_exactly_the_spec_s_fields(workspace):
    _hook(workspace, ["completed"])
    run = _run(workspace)
    handle_run_event(run, "completed")
    body = json.loads(Delivery.objects.get().body)
    assert list(body) == SPEC_FIELDS
    assert body["text"] == f"BAD — 3 targets fell out of the top 20 · rank-desk/{run.public_id} · $1.01"
    assert body["workspace"] == "rank-desk" and body["runId"] == run.public_id and body["flow"] == "rankings"
    assert body["status"] == "completed" and body["verdict"] == "BAD" and body["costUsd"] == 1.01
    assert body["startedAt"] == "2026-11-02T07:00:00Z" and body["finishedAt"] == "2026-11-02T07:04:00Z"
    assert body["approveUrl"] is None and body["links"] == []


def test_the_mail_body_carries_the_same_fields(workspace):
    _email(workspace, ["completed"])
    run = _run(workspace)
    handle_run_event(run, "completed")
    body = send_outbox()[0].body
    assert body.startswith(f"BAD — 3 targets fell out of the top 20 · rank-desk/{run.public_id} · $1.01\n")
    for line in (f"runId: {run.public_id}", "flow: rankings", "verdict: BAD", "costUsd: 1.01", "workspace: rank-desk"):
        assert line in body


def test_a_blocked_run_is_its_own_event_and_follows_failed(workspace):
    _hook(workspace, ["failed"])
    run = _run(workspace, verdict="BLOCKED", headline="BLOCKED — publisher refused to push")
    handle_run_event(run, "completed")
    handle_run_event(run, "blocked")
    delivery = Delivery.objects.get()
    body = json.loads(delivery.body)
    assert delivery.event == "blocked"
    assert body["text"].startswith("⛔ rankings blocked · ")
    assert body["verdict"] == "BLOCKED" and body["status"] == "completed"


def test_a_completed_only_list_does_not_hear_a_blocked_run(workspace):
    _hook(workspace, ["completed"])
    run = _run(workspace, verdict="BLOCKED")
    handle_run_event(run, "completed")
    handle_run_event(run, "blocked")
    assert Delivery.objects.count() == 0


def test_an_eval_or_adhoc_completion_sends_nothing_but_its_failure_does(workspace):
    _email(workspace, ["failed", "completed"])
    handle_run_event(_run(workspace, kind="eval", name="eval:smoke"), "completed")
    handle_run_event(_run(workspace, kind="adhoc", name="adhoc:researcher"), "completed")
    assert send_outbox() == []
    handle_run_event(_run(workspace, kind="eval", name="eval:smoke", status="failed", headline=""), "failed")
    assert len(send_outbox()) == 1


def test_a_workspace_block_replaces_the_account_s_whole(workspace):
    _email(workspace, ["failed", "completed"], library=True)
    handle_run_event(_run(workspace), "completed")
    assert len(send_outbox()) == 1  # inherited from the account
    write_agents_md(workspace, "---\nnotify:\n  url: http://127.0.0.1:9/hook\n---\n")
    handle_run_event(_run(workspace), "completed")
    assert len(send_outbox()) == 1 and Delivery.objects.count() == 0  # not merged: no email, no completed


def test_sla_is_sent_once_per_run(workspace):
    _hook(workspace, ["failed"])
    run = _run(workspace, status="running", finished_at=None, headline="")
    handle_run_event(run, "sla")
    handle_run_event(run, "sla")
    assert list(Delivery.objects.values_list("event", flat=True)) == ["sla"]


def test_a_quarantine_is_announced_once_and_forgotten_when_the_flow_succeeds(workspace):
    _hook(workspace, ["failed"])
    Schedule.objects.create(workspace=workspace, flow="rankings", cron="0 7 * * *", quarantined_at=START)
    handle_run_event(_run(workspace, status="failed"), "failed")
    handle_run_event(_run(workspace, status="failed"), "failed")
    assert sorted(Delivery.objects.values_list("event", flat=True)) == ["failed", "failed", "quarantined"]
    handle_run_event(_run(workspace, verdict="GOOD"), "completed")
    assert notify_quarantined(workspace, "rankings") is True  # the next outage is its own


def test_a_schedule_that_goes_takes_its_quarantine_with_it_and_the_next_one_is_announced(workspace):
    # Beat removes the row of a flow whose file lost its `schedule:`; put back and quarantined again, that is a
    # new outage, announced as its own.
    _hook(workspace, ["failed"])
    schedule = Schedule.objects.create(workspace=workspace, flow="rankings", cron="0 7 * * *", quarantined_at=START)
    handle_run_event(_run(workspace, status="failed"), "failed")
    schedule.delete()
    Schedule.objects.create(workspace=workspace, flow="rankings", cron="0 7 * * *", quarantined_at=START)
    handle_run_event(_run(workspace, status="failed"), "failed")
    assert list(Delivery.objects.filter(event="quarantined").values_list("event", flat=True)) == ["quarantined"] * 2


def test_a_success_whose_schedule_was_not_quarantined_looks_for_no_quarantine_mark(workspace):
    run = _run(workspace, verdict="GOOD")
    run.quarantined = False  # as the step's closing transaction read it
    with CaptureQueriesContext(connection) as caught:
        handle_run_event(run, "completed")
    assert not [q for q in caught.captured_queries if "notify_mark" in q["sql"]]


def test_a_completed_run_with_nothing_to_send_opens_no_savepoint_and_one_with_a_destination_sends(workspace):
    run = _run(workspace, verdict="GOOD")
    run.quarantined = False
    with CaptureQueriesContext(connection) as caught:
        on_run_event(sender=Run, run=run, event="completed")
    assert not [q for q in caught.captured_queries if "SAVEPOINT" in q["sql"].upper()]
    assert not Delivery.objects.exists()
    _hook(workspace, ["completed"])
    on_run_event(sender=Run, run=run, event="completed")
    assert list(Delivery.objects.values_list("event", flat=True)) == ["completed"]


def test_agents_md_is_read_afresh_after_a_push_and_each_reader_gets_its_own_copy(workspace):
    write_agents_md(workspace, "---\nbudget: {day: 5}\n---\n")
    agents_metas(workspace)[0]["budget"]["day"] = 999
    assert agents_metas(workspace) == [{"budget": {"day": 5}}]
    write_agents_md(workspace, "---\nbudget: {day: 7}\n---\n")
    assert agents_metas(workspace) == [{"budget": {"day": 7}}]
    write_agents_md(workspace, "---\nbudget: [unclosed\n---\n")
    assert agents_metas(workspace) == []


def _agents_md_reads(queries) -> int:
    return sum(1 for q in queries if "library_libraryfile" in q["sql"] and "AGENTS.md" in q["sql"])


def test_a_failed_flow_that_is_quarantined_reads_agents_md_once_and_sends_the_same_bodies(workspace):
    write_agents_md(workspace, "---\nbudget: {month: 1}\nnotify:\n  url: http://127.0.0.1:9/hook\n---\n")
    Schedule.objects.create(workspace=workspace, flow="rankings", cron="0 7 * * *", quarantined_at=START)
    run = _run(workspace, status="failed", cost_usd=Decimal("0.90"))
    with CaptureQueriesContext(connection) as caught:
        handle_run_event(run, "failed")
    assert _agents_md_reads(caught.captured_queries) == 1  # one read: failed's notify:, the quarantine's and budget:
    bodies = {d.event: json.loads(d.body) for d in Delivery.objects.all()}
    assert sorted(bodies) == ["budget", "failed", "quarantined"]
    assert bodies["quarantined"]["text"] == (
        "🚫 rankings is quarantined: it failed too many times in a row and has stopped firing"
    )
    assert bodies["quarantined"]["flow"] == "rankings" and bodies["quarantined"]["status"] == "quarantined"
    assert bodies["budget"]["text"] == "💸 rank-desk has spent 80% of its monthly budget ($0.90 of $1.00)"
    assert bodies["failed"]["runId"] == run.public_id


def test_a_budget_check_on_its_own_reads_agents_md_once(workspace):
    write_agents_md(workspace, "---\nbudget: {day: 1, month: 1}\nnotify:\n  url: http://127.0.0.1:9/hook\n---\n")
    now = datetime(2026, 11, 20, tzinfo=dt_timezone.utc)
    _run(workspace, cost_usd=Decimal("0.99"), created_at=now)
    with CaptureQueriesContext(connection) as caught:
        assert check_budget(workspace, now) == [95, 95]  # the day's and the month's
    assert _agents_md_reads(caught.captured_queries) == 1
    assert sorted(json.loads(d.body)["text"] for d in Delivery.objects.all()) == [
        "💸 rank-desk has spent 95% of its daily budget ($0.99 of $1.00)",
        "💸 rank-desk has spent 95% of its monthly budget ($0.99 of $1.00)",
    ]


def test_budget_fires_at_80_then_95_once_each_and_resets_with_the_month(workspace):
    write_agents_md(workspace, "---\nbudget: {month: 10}\nnotify:\n  url: http://127.0.0.1:9/hook\n---\n")
    now = datetime(2026, 11, 20, tzinfo=dt_timezone.utc)
    _run(workspace, cost_usd=Decimal("8.10"), created_at=now)
    assert check_budget(workspace, now) == [80]
    assert check_budget(workspace, now) == []
    _run(workspace, cost_usd=Decimal("1.50"), created_at=now)
    assert check_budget(workspace, now) == [95]
    december = datetime(2026, 12, 3, tzinfo=dt_timezone.utc)
    _run(workspace, cost_usd=Decimal("9.60"), created_at=december)
    assert check_budget(workspace, december) == [95]
    texts = [json.loads(b)["text"] for b in Delivery.objects.order_by("pk").values_list("body", flat=True)]
    assert texts[0] == "💸 rank-desk has spent 80% of its monthly budget ($8.10 of $10.00)"


def test_a_budget_that_is_no_number_sets_no_alert_for_its_window_and_the_others_still_fire(workspace):
    write_agents_md(
        workspace, "---\nbudget: {day: lots, week: .nan, month: 1}\nnotify:\n  url: http://127.0.0.1:9/hook\n---\n"
    )
    now = datetime(2026, 11, 20, tzinfo=dt_timezone.utc)
    _run(workspace, cost_usd=Decimal("0.99"), created_at=now)
    assert check_budget(workspace, now) == [95]  # the month's; "lots" and NaN are no limit to cross
    assert [json.loads(d.body)["text"] for d in Delivery.objects.all()] == [
        "💸 rank-desk has spent 95% of its monthly budget ($0.99 of $1.00)"
    ]


def _gate(workspace, approvers=(), public=True):
    run = _run(workspace, status="awaiting-approval", verdict=None, headline="", finished_at=None)
    step = Step.objects.create(
        run=run,
        index=3,
        agent="publisher",
        task="Publish the draft.",
        status="awaiting-approval",
        approvers=list(approvers),
    )
    approval = Approval.objects.create(run=run, step=step, approvers=list(approvers))
    return run, step, approval


def test_a_gate_sends_a_pair_of_links_per_waiting_step(workspace, public_url):
    _hook(workspace)
    run, step, approval = _gate(workspace)
    handle_run_event(run, "awaiting-approval", approval)
    body = json.loads(Delivery.objects.get().body)
    assert body["approveUrl"].startswith("https://foldrun.example.com/decide/")
    assert body["links"] == [
        {"step": 3, "agent": "publisher", "approveUrl": body["approveUrl"], "rejectUrl": body["rejectUrl"]}
    ]


def test_without_a_public_url_the_notification_goes_out_without_links(workspace, settings):
    settings.FOLDRUN_PUBLIC_URL = None
    _hook(workspace)
    run, step, approval = _gate(workspace)
    handle_run_event(run, "awaiting-approval", approval)
    body = json.loads(Delivery.objects.get().body)
    assert body["approveUrl"] is None and body["links"] == []


def test_the_delivery_log_shows_the_links_redacted(workspace, public_url):
    _hook(workspace)
    run, step, approval = _gate(workspace)
    handle_run_event(run, "awaiting-approval", approval)
    shown = json.loads(redact_body(Delivery.objects.get().body))
    assert shown["approveUrl"] == shown["rejectUrl"] == "[redacted]"
    assert shown["links"][0]["approveUrl"] == "[redacted]"


def test_each_approver_is_mailed_links_of_their_own(workspace, public_url):
    run, step, approval = _gate(workspace, approvers=["owner@example.com"])
    handle_run_event(run, "awaiting-approval", approval)
    assert [m.to for m in send_outbox()] == [["owner@example.com"]]
    assert "approveUrl: https://foldrun.example.com/decide/" in send_outbox()[0].body


def test_an_ask_mails_its_approvers_the_question_without_links(workspace, public_url):
    run = _run(workspace, status="awaiting-approval", verdict=None, headline="", finished_at=None)
    step = Step.objects.create(run=run, index=2, agent="reader", task="t", status="awaiting-approval")
    approval = Approval.objects.create(
        run=run, step=step, kind="ask", question="Which region first?", approvers=["owner@example.com"]
    )
    handle_run_event(run, "awaiting-approval", approval)
    body = send_outbox()[0].body
    assert "Step 2 (reader) asks:\nWhich region first?" in body
    assert f"Answer it on the run page: https://foldrun.example.com/w/rank-desk/runs/{run.public_id}" in body
    assert "approveUrl" not in body
