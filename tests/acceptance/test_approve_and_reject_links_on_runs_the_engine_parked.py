"""Issue 5, item 6 (audit5): approve and reject links, on runs the engine
started and parked itself.

A GET shows and asks; a POST (through the page's own form, CSRF enforced as
a browser meets it) decides once; every other use of either link is refused
with a page that says why; the token expires with `approve_within:` (else a
week), is bound to an approver's address when the mail went to one, dies
with a key rotation, and is never shown in the delivery log.
"""

from __future__ import annotations

import json
import re
import time
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from notify.links import LinkError, read_approval_token
from notify.models import Delivery
from runs.actions import check_start_run
from runs.models import Run
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.notify.conftest import send_outbox, public_url, receiver  # noqa: F401
from tests.runs.helpers import agent_file, drive, push

APPROVER = "owner@example.com"


def _gate_desk(workspace, fake, receiver, *, flow_head: str = "", notify: str | None = None) -> None:
    push(
        workspace,
        {
            "AGENTS.md": notify or f"---\nnotify:\n  url: {receiver.url}\n---\n",
            "agents/reporter/agent.md": agent_file("reporter", fake),
            "agents/publisher/agent.md": agent_file("publisher", fake),
            "flows/rankings.md": f"---\nname: rankings\n{flow_head}---\n1. [[reporter]] — Draft it.\n"
            "2. [[publisher]] ! — Publish the draft.\n",
        },
    )


def _parked(workspace, alice, fake, capture) -> Run:
    fake.reply_text("draft ready")
    with capture(execute=True):
        run = drive(check_start_run(workspace=workspace, user=alice, flow="rankings"))
    assert run.status == "awaiting-approval"
    return run


def _links_of(message) -> dict[str, str]:
    return dict(re.findall(r"^\s+(approveUrl|rejectUrl): (\S+)$", message.body, re.M))


def _token(url: str) -> str:
    return url.rsplit("/decide/", 1)[1]


def test_links_expire_with_approve_within(
    workspace, alice, fake_provider, receiver, public_url, django_capture_on_commit_callbacks
):
    _gate_desk(workspace, fake_provider, receiver, flow_head="approve_within: 2d\n")
    before = time.time()
    _parked(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    body = json.loads(Delivery.objects.get(event="awaiting-approval").body)
    claim = read_approval_token(_token(body["approveUrl"]))
    assert before + 2 * 86400 - 5 <= claim.expires <= time.time() + 2 * 86400 + 5
    with pytest.raises(LinkError) as expired:
        read_approval_token(_token(body["approveUrl"]), now=claim.expires + 1)
    assert expired.value.reason == "expired"


def test_without_approve_within_links_last_a_week(
    workspace, alice, fake_provider, receiver, public_url, django_capture_on_commit_callbacks
):
    _gate_desk(workspace, fake_provider, receiver)
    before = time.time()
    _parked(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    body = json.loads(Delivery.objects.get(event="awaiting-approval").body)
    claim = read_approval_token(_token(body["rejectUrl"]))
    assert before + 7 * 86400 - 5 <= claim.expires <= time.time() + 7 * 86400 + 5


def test_the_get_asks_and_the_page_s_own_form_decides_once(
    workspace, alice, fake_provider, receiver, public_url, django_capture_on_commit_callbacks
):
    _gate_desk(workspace, fake_provider, receiver, flow_head=f"approvers: [{APPROVER}]\n")
    run = _parked(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    links = _links_of(next(m for m in send_outbox() if m.to == [APPROVER]))
    browser = Client(enforce_csrf_checks=True)
    approve = links["approveUrl"].removeprefix(public_url)
    reject = links["rejectUrl"].removeprefix(public_url)
    for _ in range(3):  # link checkers open it again and again
        page = browser.get(approve)
        assert page.status_code == 200
    html = page.content.decode()
    assert "rankings is waiting for a decision" in html and "Approve step 2 (publisher)? The run will go on." in html
    assert Run.objects.get(pk=run.pk).status == "awaiting-approval"
    csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)
    with django_capture_on_commit_callbacks(execute=True):
        decided = browser.post(approve, {"csrfmiddlewaretoken": csrf, "decision": "approve"})
    assert decided.status_code == 200
    assert f"step 2 (publisher) was approved by {APPROVER}." in decided.content.decode()
    assert Run.objects.get(pk=run.pk).approvals.get().state == "approved"
    again = browser.post(approve, {"csrfmiddlewaretoken": csrf})
    other = browser.post(reject, {"csrfmiddlewaretoken": csrf})
    for answer in (again, other):
        assert answer.status_code == 409
        assert f"This link has been used: step 2 was already approved by {APPROVER}. Nothing was changed." in (
            answer.content.decode()
        )
    assert Run.objects.get(pk=run.pk).approvals.get().state == "approved"


def test_a_reject_link_rejects_and_the_approve_link_is_spent_with_it(
    workspace, alice, fake_provider, receiver, public_url, client, django_capture_on_commit_callbacks
):
    _gate_desk(workspace, fake_provider, receiver)
    run = _parked(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    body = json.loads(Delivery.objects.get(event="awaiting-approval").body)
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(body["rejectUrl"].removeprefix(public_url)).status_code == 200
    run.refresh_from_db()
    assert run.status == "cancelled"
    spent = client.post(body["approveUrl"].removeprefix(public_url))
    assert spent.status_code == 409 and 'data-problem="spent"' in spent.content.decode()
    assert Run.objects.get(pk=run.pk).status == "cancelled"


def test_an_approver_s_links_are_bound_to_their_address_and_the_destination_s_are_not(
    workspace, alice, fake_provider, receiver, public_url, django_capture_on_commit_callbacks
):
    _gate_desk(
        workspace,
        fake_provider,
        receiver,
        flow_head=f"approvers: [{APPROVER}]\n",
        notify="---\nnotify:\n  email: ops@example.com\n---\n",
    )
    _parked(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    by_address = {m.to[0]: _links_of(m) for m in send_outbox()}
    assert sorted(by_address) == ["ops@example.com", APPROVER]
    assert read_approval_token(_token(by_address[APPROVER]["approveUrl"])).approver == APPROVER
    assert read_approval_token(_token(by_address["ops@example.com"]["approveUrl"])).approver == ""


def test_a_forwarded_approver_link_decides_nothing_for_someone_signed_in_as_another(
    workspace, alice, bob, fake_provider, receiver, public_url, client, django_capture_on_commit_callbacks
):
    _gate_desk(workspace, fake_provider, receiver, flow_head=f"approvers: [{APPROVER}]\n")
    run = _parked(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    approve = _links_of(next(m for m in send_outbox() if m.to == [APPROVER]))["approveUrl"].removeprefix(public_url)
    client.force_login(bob)
    answer = client.post(approve)
    assert answer.status_code == 403
    assert f"This link was sent to {APPROVER}, and you are signed in as bob@example.com." in answer.content.decode()
    assert Run.objects.get(pk=run.pk).approvals.get().state == "pending"


def test_a_tampered_link_says_so_and_changes_nothing(
    workspace, alice, fake_provider, receiver, public_url, client, django_capture_on_commit_callbacks
):
    _gate_desk(workspace, fake_provider, receiver)
    run = _parked(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    approve = json.loads(Delivery.objects.get(event="awaiting-approval").body)["approveUrl"].removeprefix(public_url)
    head, _sep, sig = approve.rpartition(":")
    answer = client.post(f"{head}:{'A' if sig[0] != 'A' else 'B'}{sig[1:]}")
    assert answer.status_code == 400
    assert "This link is not valid" in answer.content.decode() and "Nothing was changed." in answer.content.decode()
    assert Run.objects.get(pk=run.pk).approvals.get().state == "pending"


def test_a_key_rotation_kills_every_old_link(
    workspace, alice, fake_provider, receiver, public_url, client, settings, django_capture_on_commit_callbacks
):
    _gate_desk(workspace, fake_provider, receiver)
    run = _parked(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    body = json.loads(Delivery.objects.get(event="awaiting-approval").body)
    settings.FOLDRUN_LINK_KEY = "rotated-link-key-audit5"
    for url in (body["approveUrl"], body["rejectUrl"]):
        answer = client.post(url.removeprefix(public_url))
        assert answer.status_code == 400 and 'data-problem="tampered"' in answer.content.decode()
    assert Run.objects.get(pk=run.pk).approvals.get().state == "pending"


def test_an_expired_approval_is_refused_even_on_a_post(
    workspace, alice, fake_provider, receiver, public_url, client, django_capture_on_commit_callbacks
):
    _gate_desk(workspace, fake_provider, receiver, flow_head="approve_within: 1h\n")
    run = _parked(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    body = json.loads(Delivery.objects.get(event="awaiting-approval").body)
    Run.objects.get(pk=run.pk).approvals.update(expires_at=timezone.now() - timedelta(seconds=1))
    answer = client.post(body["approveUrl"].removeprefix(public_url))
    assert answer.status_code == 409 and "Nothing was changed." in answer.content.decode()
    assert Run.objects.get(pk=run.pk).approvals.get().state == "pending"


def test_no_links_without_a_public_url(
    workspace, alice, fake_provider, receiver, settings, django_capture_on_commit_callbacks
):
    settings.FOLDRUN_PUBLIC_URL = None
    _gate_desk(workspace, fake_provider, receiver, flow_head=f"approvers: [{APPROVER}]\n")
    _parked(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    body = json.loads(Delivery.objects.get(event="awaiting-approval").body)
    assert (body["approveUrl"], body["rejectUrl"], body["links"]) == (None, None, [])
    assert all("/decide/" not in m.body for m in send_outbox())
    assert [m.to for m in send_outbox()] == [[APPROVER]]  # the approver still hears of it


def test_the_log_shows_links_redacted_and_the_receiver_gets_them(
    workspace, alice, fake_provider, receiver, public_url, alice_api, bob_api, django_capture_on_commit_callbacks
):
    from notify.actions import perform_attempt

    _gate_desk(workspace, fake_provider, receiver)
    _parked(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    delivery = Delivery.objects.get(event="awaiting-approval")
    perform_attempt(delivery.pk)
    sent = json.loads(receiver.requests[0]["body"])
    assert sent["approveUrl"].startswith(f"{public_url}/decide/")
    for api in (alice_api, bob_api):
        answer = api.get("/api/workspaces/rank-desk/notify/deliveries")
        shown = answer.json()["deliveries"][0]["body"]
        assert (shown["approveUrl"], shown["rejectUrl"]) == ("[redacted]", "[redacted]")
        assert shown["links"] == [
            {"step": 2, "agent": "publisher", "approveUrl": "[redacted]", "rejectUrl": "[redacted]"}
        ]
        assert "/decide/" not in answer.content.decode()


def test_a_wait_event_park_gets_no_link(
    workspace, alice, fake_provider, receiver, public_url, django_capture_on_commit_callbacks
):
    push(
        workspace,
        {
            "AGENTS.md": f"---\nnotify:\n  url: {receiver.url}\n  events: [failed, awaiting-approval, completed]\n---\n",
            "agents/signer/agent.md": agent_file("signer", fake_provider),
            "flows/signed.md": "---\nname: signed\n---\n1. [[signer]] — Continue after sign-off.\n"
            "   wait: event signed-off\n",
        },
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = drive(check_start_run(workspace=workspace, user=alice, flow="signed"))
    assert run.status == "waiting"
    assert all("/decide/" not in d.body for d in Delivery.objects.all())
    assert all("/decide/" not in m.body for m in send_outbox())
