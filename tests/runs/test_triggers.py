"""Triggers (inbound webhooks, schedules), the workspace budget, and vault secrets on the trace."""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
from decimal import Decimal

import pytest
from rest_framework.test import APIClient

from runs.actions import check_start_run
from runs.models import Run, Schedule, TraceEvent
from runs.triggers import fire_due_schedules, next_fire
from tests.runs.helpers import agent_file, drive, push
from vault.actions import do_set_secret


@pytest.fixture
def hooked(workspace, fake_provider):
    push(
        workspace,
        {
            "agents/intake/agent.md": agent_file("intake", fake_provider),
            "flows/intake.md": "---\nname: intake\nwebhook: {signature: hmac, secret: INBOUND_KEY}\n---\n"
            "1. [[intake]] — Handle {{order}}.\n",
            "flows/open.md": "---\nname: open\nwebhook: {}\n---\n1. [[intake]] — Handle {{inputs}}.\n",
            "flows/private.md": "---\nname: private\n---\n1. [[intake]] — No hooks here.\n",
        },
    )
    do_set_secret(workspace.account, workspace, "INBOUND_KEY", value="inbound-secret")
    return workspace


def hook(workspace, flow: str, body: bytes, **headers):
    return APIClient().post(
        f"/api/hooks/{workspace.public_id}/{flow}", data=body, content_type="application/json", **headers
    )


def sign(body: bytes, secret: str = "inbound-secret") -> str:
    return hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def test_a_signed_webhook_starts_the_flow_with_the_body_as_its_input(hooked):
    body = json.dumps({"order": "A-17"}).encode()
    answer = hook(hooked, "intake", body, HTTP_X_SIGNATURE=sign(body))
    assert answer.status_code == 202
    run = Run.objects.get(public_id=answer.json()["run"])
    assert (run.trigger, run.inputs["order"]) == ("webhook", "A-17")


def test_a_missing_or_wrong_signature_is_refused_with_401_and_nothing_starts(hooked):
    body = b'{"order": "A-17"}'
    assert hook(hooked, "intake", body).status_code == 401
    wrong = hook(hooked, "intake", body, HTTP_X_SIGNATURE=sign(body, "guess"))
    assert wrong.status_code == 401
    assert wrong.json()["message"] == "The x-signature header is missing or wrong; nothing was started."
    assert Run.objects.count() == 0


def test_a_repeated_delivery_id_within_a_day_starts_no_second_run(hooked):
    body = b'{"order": "A-17"}'
    first = hook(hooked, "intake", body, HTTP_X_SIGNATURE=sign(body), HTTP_X_FOLDRUN_DELIVERY="dlv_1")
    second = hook(hooked, "intake", body, HTTP_X_SIGNATURE=sign(body), HTTP_X_FOLDRUN_DELIVERY="dlv_1")
    assert second.status_code == 200
    assert (second.json()["run"], second.json()["duplicate"]) == (first.json()["run"], True)
    assert Run.objects.count() == 1


def test_a_flow_without_webhook_takes_no_hooks_and_an_unknown_workspace_is_404(hooked):
    assert hook(hooked, "private", b"{}").status_code == 404
    assert (
        APIClient().post("/api/hooks/ws_nothing/intake", data=b"{}", content_type="application/json").status_code == 404
    )


def test_an_unsigned_webhook_flow_accepts_a_plain_body(hooked):
    answer = hook(hooked, "open", b"not json")
    assert answer.status_code == 202
    assert Run.objects.get(public_id=answer.json()["run"]).inputs["body"] == "not json"


def test_a_webhook_body_that_is_not_an_object_is_the_flows_body_input_null_included(hooked):
    # The schema documents the hook's body as any JSON, so null and an array are accepted, not refused.
    for raw, body in ((b"null", None), (b"[1, 2]", [1, 2])):
        answer = hook(hooked, "open", raw)
        assert answer.status_code == 202
        assert Run.objects.get(public_id=answer.json()["run"]).inputs["body"] == body


def test_a_schedule_fires_once_when_due_in_the_flows_timezone(workspace, fake_provider):
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider),
            "flows/daily.md": '---\nname: daily\nschedule: "0 7 * * *"\ntimezone: Australia/Sydney\n---\n'
            "1. [[a]] — Go.\n",
        },
    )
    noon_utc = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.timezone.utc)
    assert next_fire("0 7 * * *", "Australia/Sydney", noon_utc) == dt.datetime(
        2026, 6, 1, 21, 0, tzinfo=dt.timezone.utc
    )
    fire_due_schedules(noon_utc - dt.timedelta(days=1))
    Schedule.objects.filter(workspace=workspace).update(next_fire_at=noon_utc - dt.timedelta(minutes=1))
    assert fire_due_schedules(noon_utc) == 1
    assert fire_due_schedules(noon_utc) == 0
    run = Run.objects.get()
    assert (run.name, run.trigger) == ("daily", "schedule")
    assert Schedule.objects.get().next_fire_at == dt.datetime(2026, 6, 1, 21, 0, tzinfo=dt.timezone.utc)


def test_a_spent_workspace_budget_refuses_new_runs_until_the_window_turns(workspace, alice, fake_provider):
    push(
        workspace,
        {
            "AGENTS.md": "---\nbudget: {month: 10}\n---\n",
            "agents/a/agent.md": agent_file("a", fake_provider),
            "flows/f.md": "---\nname: f\n---\n1. [[a]] — Go.\n",
        },
    )
    Run.objects.create(account=workspace.account, workspace=workspace, name="f", cost_usd=Decimal("10.5"))
    from foldrun.api import ApiError

    with pytest.raises(ApiError) as refused:
        check_start_run(workspace=workspace, user=alice, flow="f")
    assert refused.value.message == (
        "workspace rank-desk has spent $10.50 of its $10.00 monthly budget; new runs are refused until the month turns."
    )


def test_the_trace_says_which_vault_each_secret_came_from(workspace, alice, fake_provider):
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider, tools="[read]", extra="secrets: [WS_KEY, ACC_KEY]\n"),
            "flows/f.md": "---\nname: f\n---\n1. [[a]] — Go.\n",
        },
    )
    do_set_secret(workspace.account, workspace, "WS_KEY", value="ws-value-1")
    do_set_secret(workspace.account, None, "ACC_KEY", value="acc-value-1")
    fake_provider.reply_text("GOOD")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="f"))
    secrets = {e.data["name"]: e.data["store"] for e in TraceEvent.objects.filter(run=run, kind="secret")}
    assert secrets == {"WS_KEY": "workspace vault", "ACC_KEY": "account vault"}
    assert "ws-value-1" not in json.dumps([e.data for e in TraceEvent.objects.filter(run=run)])


def test_a_secret_in_no_vault_fails_the_step_naming_it(workspace, alice, fake_provider):
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider, extra="secrets: [NOPE_KEY]\n"),
            "flows/f.md": "---\nname: f\n---\n1. [[a]] — Go.\n",
        },
    )
    run = drive(check_start_run(workspace=workspace, user=alice, flow="f"))
    assert run.status == "failed"
    assert run.steps.get().error == "secret NOPE_KEY is not in the vault (neither the workspace's nor the account's)"


def test_disable_after_quarantines_the_schedule_and_a_success_forgets_it(workspace, alice, fake_provider):
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider),
            "flows/daily.md": '---\nname: daily\nschedule: "0 7 * * *"\ndisable_after: 2\n---\n'
            "1. [[a]] — Go.\n   verify: reply ^GOOD\n",
        },
    )
    fire_due_schedules()
    for reply in ("BAD one", "BAD two"):
        fake_provider.reply_text(reply)
        drive(check_start_run(workspace=workspace, user=alice, flow="daily"))
    assert Schedule.objects.get().quarantined_at is not None
    fake_provider.reply_text("GOOD back")
    drive(check_start_run(workspace=workspace, user=alice, flow="daily"))
    assert Schedule.objects.get().quarantined_at is None


def test_an_http_tool_on_a_test_run_with_an_outward_tool_in_the_step_gets_no_real_secret(fake_provider):
    from tests.fakes.json_api import JsonApi
    from tests.runs.test_tool_files import step as engine_step
    from foldrun.engine.local import LocalHost
    from tests.runs.engine_helpers import SECRETS, agent_md

    receiver = JsonApi()
    try:
        files = {
            "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[crm, poster]"),
            "tools/crm.md": f"---\ntransport: http\nname: crm\nbase: {receiver.url}\n"
            "headers: {Authorization: 'Bearer ${CRM_TOKEN}'}\n---\n",
            "tools/poster.md": "---\ntransport: script\nname: poster\noutward: true\n---\n```python\nprint(1)\n```\n",
        }
        fake_provider.reply_tool_use("crm", {"path": "/read"})
        fake_provider.reply_text("QUIET")
        engine_step(files, LocalHost({**SECRETS, "CRM_TOKEN": "real-crm"}), is_test=True)
        assert receiver.requests[0]["headers"]["Authorization"] == "Bearer TEST_MODE_WITHHELD"
    finally:
        receiver.server.shutdown()


def test_the_beat_tick_sweeps_sandboxes_a_lost_worker_left_behind(db):
    import os
    import tempfile
    import time as clock
    from pathlib import Path

    from runs.triggers import sweep_sandboxes

    folder = Path("/dev/shm/foldrun-sandboxes")
    folder.mkdir(mode=0o700, exist_ok=True)
    old = Path(tempfile.mkdtemp(prefix="foldrun-step-", dir=folder))
    fresh = Path(tempfile.mkdtemp(prefix="foldrun-step-", dir=folder))
    two_days_ago = clock.time() - 2 * 86400
    os.utime(old, (two_days_ago, two_days_ago))
    sweep_sandboxes()
    assert (old.exists(), fresh.exists()) == (False, True)
    fresh.rmdir()
