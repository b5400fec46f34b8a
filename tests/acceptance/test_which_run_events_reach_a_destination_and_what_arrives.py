"""Issue 5, items 1 and 2 (audit5): which events reach a destination and what
arrives, on runs the runs engine created and ended through its own actions
(`check_start_run`, `drive`, the schedule tick) — not hand-made rows."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest
from django.utils import timezone

from foldrun.contract import Desk, check
from notify.models import Delivery
from runs.actions import check_start_run
from runs.models import Run
from runs.triggers import fire_due_schedules, run_chores
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.notify.conftest import send_outbox, receiver  # noqa: F401
from tests.runs.helpers import agent_file, drive, push

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


@pytest.fixture
def desk(workspace, fake_provider, receiver):
    def make(
        events: str | None = None,
        *,
        flow_head: str = "",
        steps: str = "1. [[reporter]] — Report.\n",
        agents_md_extra: str = "",
    ) -> None:
        block = f"notify:\n  url: {receiver.url}\n" + (f"  events: {events}\n" if events else "")
        push(
            workspace,
            {
                "AGENTS.md": f"---\n{agents_md_extra}{block}---\n",
                "agents/reporter/agent.md": agent_file("reporter", fake_provider),
                "flows/rankings.md": f"---\nname: rankings\n{flow_head}---\n{steps}",
            },
        )

    return make


def _run(workspace, alice, capture, **kw) -> Run:
    with capture(execute=True):
        return drive(check_start_run(workspace=workspace, user=alice, **kw))


def _events() -> list[str]:
    return list(Delivery.objects.order_by("pk").values_list("event", flat=True))


def test_by_default_a_failure_is_sent_and_a_completion_is_not(
    workspace, alice, desk, fake_provider, django_capture_on_commit_callbacks
):
    desk(steps="1. [[reporter]] — Report.\n   verify: reply ^GOOD\n")
    fake_provider.reply_text("GOOD — all fine")
    assert _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings").status == "completed"
    fake_provider.reply_text("BAD — not fine")
    failed = _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    assert failed.status == "failed"
    assert _events() == ["failed"]
    body = json.loads(Delivery.objects.get().body)
    assert list(body) == SPEC_FIELDS
    assert (body["runId"], body["status"], body["flow"]) == (failed.public_id, "failed", "rankings")
    assert body["text"].startswith("rankings failed: step 1 (reporter) failed: verify: reply ^GOOD")


def test_completed_is_opt_in_and_carries_every_spec_field(
    workspace, alice, desk, fake_provider, django_capture_on_commit_callbacks
):
    desk("[completed]")
    fake_provider.reply_text("BAD — 3 targets fell out of the top 20\ngeelong, ballarat and bendigo dropped")
    run = _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    body = json.loads(Delivery.objects.get(event="completed").body)
    assert list(body) == SPEC_FIELDS
    assert body["text"] == f"BAD — 3 targets fell out of the top 20 · rank-desk/{run.public_id} · $0.00"
    assert (body["workspace"], body["runId"], body["flow"], body["status"], body["verdict"]) == (
        "rank-desk",
        run.public_id,
        "rankings",
        "completed",
        "BAD",
    )
    assert body["summary"] == "geelong, ballarat and bendigo dropped"
    assert body["costUsd"] == round(float(Run.objects.get(pk=run.pk).cost_usd), 4)
    assert body["startedAt"].endswith("Z") and body["finishedAt"].endswith("Z")
    assert (body["approveUrl"], body["rejectUrl"], body["links"]) == (None, None, [])


def test_verdict_is_null_when_the_summary_leads_with_none(
    workspace, alice, desk, fake_provider, django_capture_on_commit_callbacks
):
    desk("[completed]")
    fake_provider.reply_text("Three targets moved this week.")
    _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    assert json.loads(Delivery.objects.get().body)["verdict"] is None


@pytest.mark.parametrize("word", ["GOOD", "BAD", "QUIET"])
def test_each_verdict_word_is_carried(workspace, alice, desk, fake_provider, django_capture_on_commit_callbacks, word):
    desk("[completed]")
    fake_provider.reply_text(f"{word} — this week")
    _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    assert json.loads(Delivery.objects.get().body)["verdict"] == word


def test_a_blocked_run_is_its_own_event_following_failed(
    workspace, alice, desk, fake_provider, django_capture_on_commit_callbacks
):
    desk("[failed]")
    fake_provider.reply_text("BLOCKED — the publisher saw a broken page and refused to push")
    run = _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    assert (run.status, run.verdict) == ("completed", "BLOCKED")
    assert _events() == ["blocked"]
    body = json.loads(Delivery.objects.get().body)
    assert body["text"] == f"⛔ rankings blocked · rank-desk/{run.public_id} · $0.00"
    assert (body["verdict"], body["status"]) == ("BLOCKED", "completed")


def test_a_completed_only_list_does_not_hear_a_blocked_run_and_blocked_alone_hears_only_that(
    workspace, alice, desk, fake_provider, django_capture_on_commit_callbacks
):
    desk("[completed]")
    fake_provider.reply_text("BLOCKED — refused")
    _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    assert _events() == []
    desk("[blocked]", steps="1. [[reporter]] — Report.\n   verify: reply ^(GOOD|BLOCKED)\n")
    fake_provider.reply_text("BAD — failed verify")
    _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    fake_provider.reply_text("BLOCKED — refused again")
    _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    assert _events() == ["blocked"]


def test_an_adhoc_completion_sends_nothing_but_its_failure_does(
    workspace, alice, desk, fake_provider, django_capture_on_commit_callbacks
):
    desk("[failed, completed]")
    fake_provider.reply_text("GOOD — done")
    done = _run(workspace, alice, django_capture_on_commit_callbacks, agent="reporter", task="Say hi.")
    assert (done.kind, done.status) == ("adhoc", "completed")
    fake_provider.reply_status(401)
    failed = _run(workspace, alice, django_capture_on_commit_callbacks, agent="reporter", task="Say hi.")
    assert failed.status == "failed"
    assert [(d.event, d.run_public_id) for d in Delivery.objects.all()] == [("failed", failed.public_id)]


def test_a_gate_parks_and_sends_awaiting_approval_by_default(
    workspace, alice, desk, fake_provider, public_url_settings, django_capture_on_commit_callbacks
):
    desk(steps="1. [[reporter]] ! — Publish.\n")
    run = _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    assert run.status == "awaiting-approval"
    assert _events() == ["awaiting-approval"]


@pytest.fixture
def public_url_settings(settings):
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example.com"


def test_quarantined_is_sent_once_and_again_only_after_the_flow_succeeds(
    workspace, alice, desk, fake_provider, django_capture_on_commit_callbacks
):
    desk(
        flow_head='schedule: "0 7 * * *"\ndisable_after: 2\n',
        steps="1. [[reporter]] — Report.\n   verify: reply ^GOOD\n",
    )
    fire_due_schedules()
    for reply in ("BAD one", "BAD two", "BAD three"):
        fake_provider.reply_text(reply)
        _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    assert _events() == ["failed", "failed", "quarantined", "failed"]
    fake_provider.reply_text("GOOD back")
    _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    for reply in ("BAD four", "BAD five"):
        fake_provider.reply_text(reply)
        _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    assert _events() == ["failed", "failed", "quarantined", "failed", "failed", "failed", "quarantined"]
    body = json.loads(Delivery.objects.filter(event="quarantined").first().body)
    assert list(body) == SPEC_FIELDS and body["flow"] == "rankings"


def test_sla_is_sent_once_for_a_run_past_its_sla(
    workspace, alice, desk, fake_provider, public_url_settings, django_capture_on_commit_callbacks
):
    desk(flow_head="sla: 1h\n", steps="1. [[reporter]] ! — Publish.\n")
    run = _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    later = timezone.now() + dt.timedelta(hours=1, minutes=1)
    with django_capture_on_commit_callbacks(execute=True):
        run_chores(timezone.now() + dt.timedelta(minutes=30))
        run_chores(later)
        run_chores(later + dt.timedelta(minutes=5))
    assert _events() == ["awaiting-approval", "sla"]
    assert json.loads(Delivery.objects.get(event="sla").body)["runId"] == run.public_id


def test_budget_is_sent_at_80_and_95_percent_of_the_window_once_each(
    workspace, alice, desk, fake_provider, django_capture_on_commit_callbacks
):
    desk("[failed]", agents_md_extra="budget: {day: 10}\n")
    for cost, reply in (
        (Decimal("8.10"), "GOOD a"),
        (Decimal("0"), "GOOD b"),
        (Decimal("1.40"), "GOOD c"),
        (Decimal("0"), "GOOD d"),
    ):
        fake_provider.reply_text(reply)
        run = _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
        # The spend lands on the run as the engine saw it; here it is set to cross the marks.
        Run.objects.filter(pk=run.pk).update(cost_usd=cost)
    fake_provider.reply_text("GOOD e")
    _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    texts = [json.loads(d.body)["text"] for d in Delivery.objects.filter(event="budget").order_by("pk")]
    assert texts == [
        "💸 rank-desk has spent 80% of its daily budget ($8.10 of $10.00)",
        "💸 rank-desk has spent 95% of its daily budget ($9.50 of $10.00)",
    ]


def test_a_workspace_block_replaces_the_account_s_whole(
    workspace, alice, fake_provider, receiver, django_capture_on_commit_callbacks
):
    from library.actions.writes import FileWrite, do_write_files

    do_write_files(
        account=workspace.account,
        workspace=None,
        kind="push",
        writes=[FileWrite("AGENTS.md", "---\nnotify:\n  email: ops@example.com\n  events: [failed, completed]\n---\n")],
    )
    push(
        workspace,
        {
            "agents/reporter/agent.md": agent_file("reporter", fake_provider),
            "flows/rankings.md": "---\nname: rankings\n---\n1. [[reporter]] — Report.\n",
        },
    )
    fake_provider.reply_text("GOOD — inherited")
    _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    assert [m.to for m in send_outbox()] == [["ops@example.com"]]
    push(workspace, {"AGENTS.md": f"---\nnotify: {receiver.url}\n---\n"})
    fake_provider.reply_text("GOOD — replaced")
    _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    assert len(send_outbox()) == 1 and _events() == []  # no email, and completed is not a default


def test_check_refuses_a_bad_destination_or_an_unknown_event():
    def findings(agents_md: str) -> list[str]:
        return [f.message for f in check(Desk(files={"AGENTS.md": agents_md})) if f.code == "notify.invalid"]

    assert findings("---\nnotify:\n  email: ops@example.com\n  events: [failed, finished]\n---\n") == [
        "notify: unknown event 'finished'; the events are failed, completed, blocked, awaiting-approval, "
        "quarantined, sla, budget."
    ]
    assert findings("---\nnotify:\n  url: ftp://example.com/x\n---\n") == [
        "notify: url 'ftp://example.com/x' is neither a secret name (like ${SLACK_WEBHOOK_URL}) nor an http:// or "
        "https:// URL."
    ]
    assert findings("---\nnotify: [ops@example.com]\n---\n") == [
        "notify: must be an email address, a webhook URL, or a block with email: or url: and events:."
    ]
    assert findings("---\nnotify:\n  events: [failed]\n---\n") == ["notify: names no destination; add email: or url:."]
    for good in (
        "notify: ops@example.com",
        "notify: ${SLACK_WEBHOOK_URL}",
        "notify:\n  url: ${OPS_WEBHOOK_URL}\n  signing_secret: OPS_WEBHOOK_SIGNING_KEY",
        "notify:\n  email: ops@example.com\n  events: [failed, awaiting-approval, completed]",
    ):
        assert findings(f"---\n{good}\n---\n") == []


def test_the_server_s_check_and_deploy_refuse_an_unknown_event(alice_api, workspace):
    files = [{"path": "AGENTS.md", "content": "---\nnotify:\n  email: ops@example.com\n  events: [finished]\n---\n"}]
    checked = alice_api.post("/api/workspaces/rank-desk/check", {"files": files}, format="json").json()
    assert checked["ok"] is False
    assert "notify: unknown event 'finished'" in json.dumps(checked)
    deployed = alice_api.post(
        "/api/workspaces/rank-desk/deploy", {"message": "bad notify", "files": files}, format="json"
    )
    assert deployed.status_code == 422
    assert "notify: unknown event 'finished'" in json.dumps(deployed.json())


def test_the_engine_s_own_quarantined_event_is_heard_once(
    workspace, alice, desk, fake_provider, django_capture_on_commit_callbacks
):
    from runs.signals import emit

    desk(steps="1. [[reporter]] — Report.\n   verify: reply ^GOOD\n")
    fake_provider.reply_text("BAD — down")
    run = _run(workspace, alice, django_capture_on_commit_callbacks, flow="rankings")
    emit(run, "quarantined")
    emit(run, "quarantined")
    assert _events() == ["failed", "quarantined"]
