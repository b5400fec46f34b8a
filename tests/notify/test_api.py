"""The notify API: deliveries, redeliver, the test send — and tenancy on each."""

from __future__ import annotations

import json

import pytest

from notify.actions import do_record_delivery, perform_attempt
from notify.models import Delivery

from .conftest import write_agents_md

NOT_FOUND = {"code": "not_found", "message": "Not found.", "details": {}}


@pytest.fixture
def hooked(workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    return workspace


@pytest.fixture
def delivery(hooked, receiver, public_url):
    body = json.dumps(
        {
            "text": "waiting",
            "approveUrl": "https://foldrun.example.com/decide/abc",
            "rejectUrl": "https://foldrun.example.com/decide/def",
            "links": [
                {
                    "step": 3,
                    "agent": "publisher",
                    "approveUrl": "https://foldrun.example.com/decide/abc",
                    "rejectUrl": "https://foldrun.example.com/decide/def",
                }
            ],
        }
    )
    receiver.answers = [(500, b"receiver is down", 0.0)]
    d = do_record_delivery(hooked, "awaiting-approval", body, run_public_id="run_abc")
    perform_attempt(d.pk)
    Delivery.objects.filter(pk=d.pk).update(status="failed", next_attempt_at=None)
    return Delivery.objects.get(pk=d.pk)


def test_deliveries_lists_each_with_status_attempts_and_redacted_links(alice_api, delivery):
    answer = alice_api.get("/api/workspaces/rank-desk/notify/deliveries")
    assert answer.status_code == 200
    item = answer.json()["deliveries"][0]
    assert item["id"] == delivery.public_id and item["status"] == "failed" and item["event"] == "awaiting-approval"
    assert item["attempts"][0]["statusCode"] == 500 and item["attempts"][0]["response"] == "receiver is down"
    assert item["body"]["approveUrl"] == "[redacted]" and item["body"]["links"][0]["rejectUrl"] == "[redacted]"
    assert "decide/abc" not in answer.content.decode()


def test_failed_filters_to_the_ones_that_gave_up(alice_api, delivery, hooked):
    Delivery.objects.create(account=hooked.account, workspace=hooked, event="failed", body="{}", status="succeeded")
    answer = alice_api.get("/api/workspaces/rank-desk/notify/deliveries?failed=1")
    assert [d["id"] for d in answer.json()["deliveries"]] == [delivery.public_id]


def test_redeliver_makes_one_attempt_now_and_reports_it(alice_api, delivery, receiver):
    receiver.answers = [(200, b"thanks", 0.0)]
    answer = alice_api.post(f"/api/workspaces/rank-desk/notify/deliveries/{delivery.public_id}/redeliver")
    assert answer.status_code == 200
    assert answer.json()["attempt"]["ok"] is True and answer.json()["attempt"]["number"] == 2
    assert answer.json()["delivery"]["status"] == "succeeded"
    # The receiver still gets the real links, on a redelivery too.
    assert b"decide/abc" in receiver.requests[-1]["body"]


def test_a_pending_delivery_cannot_be_redelivered(alice_api, hooked):
    d = do_record_delivery(hooked, "failed", "{}")
    answer = alice_api.post(f"/api/workspaces/rank-desk/notify/deliveries/{d.public_id}/redeliver")
    assert answer.status_code == 409 and answer.json()["code"] == "delivery_pending"


def test_the_test_send_posts_one_real_message_and_reports_the_answer(alice_api, hooked, receiver):
    receiver.answers = [(403, b"invalid_token: this webhook was revoked", 0.0)]
    answer = alice_api.post("/api/workspaces/rank-desk/notify/test")
    data = answer.json()
    assert answer.status_code == 200 and data["destination"] == "webhook" and data["ok"] is False
    assert data["message"] == (
        "The receiver did not accept it: answered 403. It said: invalid_token: this webhook was revoked"
    )
    assert receiver.requests[0]["headers"]["X-Foldrun-Event"] == "test"


def test_the_test_send_without_a_destination_says_so(alice_api, workspace):
    answer = alice_api.post("/api/workspaces/rank-desk/notify/test")
    assert answer.status_code == 409  # the workspace's state, not a malformed request
    assert answer.json()["message"] == (
        "rank-desk has no notify: destination; add notify: to its AGENTS.md or the account's."
    )


@pytest.mark.parametrize(
    "method,path",
    [
        ("get", "/api/workspaces/rank-desk/notify/deliveries"),
        ("get", "/api/workspaces/rank-desk/notify/deliveries/{id}"),
        ("post", "/api/workspaces/rank-desk/notify/deliveries/{id}/redeliver"),
        ("post", "/api/workspaces/rank-desk/notify/test"),
    ],
)
def test_another_account_gets_the_same_404_as_a_missing_workspace(charlie_api, alice_api, delivery, method, path):
    answer = getattr(charlie_api, method)(path.format(id=delivery.public_id))
    assert answer.status_code == 404 and answer.json() == NOT_FOUND
    missing = getattr(alice_api, method)(path.replace("rank-desk", "no-such-desk").format(id=delivery.public_id))
    assert missing.json() == NOT_FOUND


def test_an_unknown_delivery_id_is_a_404(alice_api, hooked):
    answer = alice_api.get("/api/workspaces/rank-desk/notify/deliveries/dlv_nope")
    assert answer.status_code == 404 and answer.json() == NOT_FOUND


@pytest.mark.parametrize(
    "path",
    [
        "/api/workspaces/rank-desk/notify/deliveries/{id}/redeliver",
        "/api/workspaces/rank-desk/notify/test",
    ],
)
def test_a_viewer_may_read_but_not_redeliver_or_test(bob_api, delivery, receiver, path):
    assert bob_api.get("/api/workspaces/rank-desk/notify/deliveries").status_code == 200
    count = len(receiver.requests)
    answer = bob_api.post(path.format(id=delivery.public_id))
    assert answer.status_code == 403
    assert answer.json()["message"] == "Your role (viewer) can read this account but not change it."
    assert len(receiver.requests) == count


def test_an_anonymous_request_is_refused(client, delivery):
    assert client.get("/api/workspaces/rank-desk/notify/deliveries").status_code in (401, 403)


def test_an_accepted_test_send_switches_a_switched_off_endpoint_back_on(alice_api, delivery, receiver):
    from django.utils import timezone

    from notify.models import Endpoint

    Endpoint.objects.filter(workspace=delivery.workspace).update(disabled_at=timezone.now())
    receiver.answers = [(204, b"", 0.0)]
    answer = alice_api.post("/api/workspaces/rank-desk/notify/test")
    assert answer.json()["ok"] is True and answer.json()["message"] == "The receiver answered 204."
    assert Endpoint.objects.get(workspace=delivery.workspace).disabled_at is None
