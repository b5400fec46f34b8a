"""Approve/reject links: derived tokens, a page that asks, a POST that decides once."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from notify.laptop import deliver_once
from notify.links import approval_links, approval_token
from notify.models import Delivery
from runs.models import Approval, Run, Step


@pytest.fixture
def gate(workspace):
    run = Run.objects.create(
        account=workspace.account,
        workspace=workspace,
        name="rankings",
        status="awaiting-approval",
        summary="Draft is ready.",
    )
    step = Step.objects.create(
        run=run, index=3, agent="publisher", task="Publish the draft.", status="awaiting-approval"
    )
    approval = Approval.objects.create(
        run=run, step=step, approvers=["owner@example.com"], expires_at=timezone.now() + timedelta(days=2)
    )
    return approval


def _path(url: str) -> str:
    return url.replace("https://foldrun.example.com", "")


def test_no_links_without_a_public_url(gate, settings):
    settings.FOLDRUN_PUBLIC_URL = None
    assert approval_links(gate.step.public_id, gate.expires_at) is None


def test_the_page_shows_what_is_waiting_and_a_get_decides_nothing(client, gate, public_url):
    approve, reject = approval_links(gate.step.public_id, gate.expires_at)
    page = client.get(_path(reject)).content.decode()
    assert "rankings is waiting for a decision" in page and "Publish the draft." in page
    assert "Reject step 3 (publisher)? The run will stop." in page
    gate.refresh_from_db()
    assert gate.state == "pending"


def test_a_reject_link_rejects_on_post(client, gate, public_url):
    _approve, reject = approval_links(gate.step.public_id, gate.expires_at)
    assert client.post(_path(reject)).status_code == 200
    gate.refresh_from_db()
    assert gate.state == "rejected" and gate.decided_by_label == "a link in a notification"
    assert Run.objects.get(pk=gate.run_id).status == "cancelled"


def test_a_tampered_link_says_so_and_changes_nothing(client, gate, public_url):
    approve, _ = approval_links(gate.step.public_id, gate.expires_at)
    answer = client.post(_path(approve)[:-3] + "abc")
    assert answer.status_code == 400
    assert 'data-problem="tampered"' in answer.content.decode()
    gate.refresh_from_db()
    assert gate.state == "pending"


def test_an_expired_link_says_so_and_changes_nothing(client, gate, public_url):
    token = approval_token(gate.step.public_id, "approve", timezone.now() - timedelta(seconds=1))
    answer = client.post(f"/decide/{token}")
    assert answer.status_code == 400
    assert "This link has expired. Nothing was changed; decide from the dashboard instead." in answer.content.decode()
    gate.refresh_from_db()
    assert gate.state == "pending"


def test_a_link_is_bound_to_its_step(client, gate, public_url, workspace):
    other = Step.objects.create(run=gate.run, index=4, agent="reporter", task="t")
    token = approval_token(other.public_id, "approve", timezone.now() + timedelta(days=1))
    answer = client.post(f"/decide/{token}")
    assert answer.status_code == 400
    gate.refresh_from_db()
    assert gate.state == "pending"


def test_a_key_rotation_kills_every_old_link(client, gate, public_url, settings):
    approve, _ = approval_links(gate.step.public_id, gate.expires_at)
    settings.FOLDRUN_LINK_KEY = "a-new-link-key"
    answer = client.post(_path(approve))
    assert answer.status_code == 400 and 'data-problem="tampered"' in answer.content.decode()


def test_a_forwarded_approver_link_does_not_decide_for_someone_else(client, gate, public_url, bob):
    approve, _ = approval_links(gate.step.public_id, gate.expires_at, "owner@example.com")
    client.force_login(bob)
    answer = client.post(_path(approve))
    assert answer.status_code == 403
    assert (
        "This link was sent to owner@example.com, and you are signed in as bob@example.com." in answer.content.decode()
    )
    gate.refresh_from_db()
    assert gate.state == "pending"


def test_the_token_is_derived_not_stored(gate, public_url):
    approval_links(gate.step.public_id, gate.expires_at)
    gate.refresh_from_db()
    token = _path(approval_links(gate.step.public_id, gate.expires_at)[0]).removeprefix("/decide/")
    assert token not in str(Approval.objects.values().get())


def test_a_laptop_webhook_is_one_attempt_with_the_same_headers_and_no_log(receiver):
    receiver.answers = [(500, b"down", 0.0)]
    outcome = deliver_once(receiver.url, "failed", {"text": "x"}, signing_secret="laptop-key")
    assert outcome.ok is False and outcome.status_code == 500
    assert len(receiver.requests) == 1
    headers = receiver.requests[0]["headers"]
    assert headers["X-Foldrun-Delivery"].startswith("dlv_") and headers["X-Foldrun-Attempt"] == "1"
    assert headers["X-Foldrun-Signature"].startswith("sha256=")


@pytest.mark.django_db
def test_a_laptop_delivery_keeps_no_log(receiver):
    deliver_once(receiver.url, "completed", {"text": "x"})
    assert Delivery.objects.count() == 0


def test_a_laptop_run_notifies_its_desk_s_webhook_once(receiver):
    from foldrun.contract import Desk
    from notify.laptop import local_payload, notify_local_run

    desk = Desk(files={}, library={"AGENTS.md": "---\nnotify:\n  url: ${HOOK}\n  events: [completed]\n---\n"})
    payload = local_payload(
        workspace="rank-desk",
        run_id="run_local",
        flow="rankings",
        status="completed",
        verdict="GOOD",
        headline="GOOD — fine",
        summary="",
        cost_usd=0.5,
        started_at=None,
        finished_at=None,
    )
    outcome = notify_local_run(desk, event="completed", payload=payload, secrets={"HOOK": receiver.url})
    assert outcome.ok is True and len(receiver.requests) == 1
    assert notify_local_run(desk, event="failed", payload=payload, secrets={"HOOK": receiver.url}) is None
