"""The dashboard pages: a workspace's Notifications (test button, outbound
deliveries with Redeliver) and Profile → Notifications."""

from __future__ import annotations

import pytest

from notify.actions import do_record_delivery, perform_attempt
from notify.preferences import may_send

from .conftest import write_agents_md


@pytest.fixture
def failed_delivery(workspace, receiver, public_url):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(500, b"nope", 0.0)]
    delivery = do_record_delivery(
        workspace,
        "awaiting-approval",
        '{"text": "t", "approveUrl": "https://foldrun.example.com/decide/SECRETLINK", "rejectUrl": null, "links": []}',
    )
    perform_attempt(delivery.pk)
    delivery.refresh_from_db()
    delivery.status, delivery.next_attempt_at = "failed", None
    delivery.save()
    return delivery


def test_the_page_ends_with_outbound_webhook_deliveries_and_redacts_links(client, alice, failed_delivery):
    client.force_login(alice)
    page = client.get("/w/rank-desk/notifications/").content.decode()
    assert "Outbound webhook deliveries" in page and failed_delivery.public_id in page
    assert "[redacted]" in page and "SECRETLINK" not in page
    assert ">Redeliver</button>" in page and ">Send a test notification</button>" in page


def test_the_redeliver_button_makes_one_attempt(client, alice, failed_delivery, receiver):
    receiver.answers = [(200, b"ok", 0.0)]
    client.force_login(alice)
    answer = client.post(f"/w/rank-desk/notifications/deliveries/{failed_delivery.public_id}/redeliver", follow=True)
    assert f"Redelivered {failed_delivery.public_id}: the receiver answered 200." in answer.content.decode()
    assert b"SECRETLINK" in receiver.requests[-1]["body"]


def test_the_test_button_shows_what_came_back(client, alice, failed_delivery, receiver):
    receiver.answers = [(404, b"no_service", 0.0)]
    client.force_login(alice)
    page = client.post("/w/rank-desk/notifications/test", follow=True).content.decode()
    assert "Not delivered. The receiver did not accept it: answered 404. It said: no_service" in page


def test_a_viewer_sees_the_log_but_no_buttons_and_cannot_post(client, bob, failed_delivery):
    client.force_login(bob)
    page = client.get("/w/rank-desk/notifications/").content.decode()
    assert failed_delivery.public_id in page and ">Redeliver</button>" not in page
    assert client.post("/w/rank-desk/notifications/test").status_code == 403
    assert (
        client.post(f"/w/rank-desk/notifications/deliveries/{failed_delivery.public_id}/redeliver").status_code == 403
    )


def test_another_account_gets_404_on_every_page(client, charlie, failed_delivery):
    client.force_login(charlie)
    assert client.get("/w/rank-desk/notifications/").status_code == 404
    assert client.post("/w/rank-desk/notifications/test").status_code == 404
    assert (
        client.post(f"/w/rank-desk/notifications/deliveries/{failed_delivery.public_id}/redeliver").status_code == 404
    )


def test_profile_notifications_shows_locked_categories_with_the_reason(client, alice):
    client.force_login(alice)
    page = client.get("/profile/notifications/").content.decode()
    assert page.count("On (locked)") == 4
    assert "this is how you get back into the account and how you hear that something you rely on has stopped" in page


def test_profile_notifications_turns_a_category_off_for_one_workspace(client, alice, workspace):
    client.force_login(alice)
    client.post("/profile/notifications/", {"category": "run-alerts", "workspace": "rank-desk"})
    assert may_send(alice, "run-alerts", workspace) is False
    client.post("/profile/notifications/", {"category": "run-alerts", "workspace": "rank-desk", "enabled": "on"})
    assert may_send(alice, "run-alerts", workspace) is True


def test_profile_notifications_needs_a_login(client):
    assert client.get("/profile/notifications/").status_code == 302
