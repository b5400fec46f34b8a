"""Issue 5, "Bad input, and what it gets" (audit5): every notify endpoint
answers a bad request with a 4xx in the error shape, naming the field —
never a 500, never a change."""

from __future__ import annotations

import pytest

from notify.actions import do_record_delivery
from notify.models import Preference
from tests.notify.conftest import receiver, write_agents_md  # noqa: F401


@pytest.mark.parametrize(
    "body,field,message",
    [
        (
            [1, 2],
            "category",
            "category must be one of security, invites, billing, account, run-alerts, approvals, "
            "low-balance, product-updates.",
        ),
        ({"category": "run-alerts"}, "enabled", "enabled must be true or false."),
        ({"category": "run-alerts", "enabled": "no"}, "enabled", "enabled must be true or false."),
        (
            {"category": "low-balance", "enabled": False, "workspace": "rank-desk"},
            "workspace",
            "low-balance is one choice for every workspace; leave out workspace.",
        ),
        # Even an empty workspace: the schema's account-wide choice has no workspace field at all.
        (
            {"category": "low-balance", "enabled": False, "workspace": None},
            "workspace",
            "low-balance is one choice for every workspace; leave out workspace.",
        ),
        (
            {"category": "product-updates", "enabled": False, "workspace": ""},
            "workspace",
            "product-updates is one choice for every workspace; leave out workspace.",
        ),
        (
            {"category": "billing", "enabled": False},
            "category",
            "billing cannot be turned off. Always on: this is how you get back into the account and how you hear that "
            "something you rely on has stopped.",
        ),
    ],
)
def test_a_bad_preference_change_is_a_400_naming_the_field(alice_api, workspace, body, field, message):
    answer = alice_api.patch("/api/me/notifications", body, format="json")
    assert answer.status_code == 400
    assert answer.json()["message"] == message and answer.json()["details"] == {"field": field}
    assert Preference.objects.count() == 0


def test_a_per_workspace_choice_with_a_null_workspace_is_for_every_workspace(alice_api, alice, workspace):
    from notify.preferences import may_send

    answer = alice_api.patch(
        "/api/me/notifications", {"category": "run-alerts", "enabled": False, "workspace": None}, format="json"
    )
    assert answer.status_code == 200
    assert may_send(alice, "run-alerts", workspace) is False


def test_a_preference_for_a_missing_workspace_is_a_404(alice_api):
    answer = alice_api.patch(
        "/api/me/notifications",
        {"category": "run-alerts", "enabled": False, "workspace": "no-such-desk"},
        format="json",
    )
    assert answer.status_code == 404 and answer.json()["code"] == "not_found"
    assert Preference.objects.count() == 0


def test_a_delivery_still_on_its_schedule_cannot_be_redelivered(alice_api, workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    delivery = do_record_delivery(workspace, "failed", "{}")
    answer = alice_api.post(f"/api/workspaces/rank-desk/notify/deliveries/{delivery.public_id}/redeliver")
    assert answer.status_code == 409
    assert answer.json()["message"] == (
        f"Delivery {delivery.public_id} is still being retried on its schedule; redeliver it once it has finished."
    )
    assert receiver.requests == []


@pytest.mark.parametrize("query", ["", "?token=", "?token=" + "A" * 5000])
def test_an_unsubscribe_without_a_good_token_is_a_page_saying_so(client, db, query):
    for answer in (client.get(f"/api/unsubscribe{query}"), client.post(f"/api/unsubscribe{query}")):
        assert answer.status_code == 400
        assert "This unsubscribe link is not valid" in answer.content.decode()
    assert Preference.objects.count() == 0


def test_a_nul_in_an_unsubscribe_token_is_a_400_naming_it(client, db):
    answer = client.post("/api/unsubscribe?token=%00")
    assert answer.status_code == 400
    assert answer.json()["message"] == "The `token` parameter may not hold a NUL character."
    assert Preference.objects.count() == 0


@pytest.mark.parametrize("token", ["x", "A" * 3000, "a:b:c", "%00"])
def test_a_nonsense_decide_token_is_a_page_saying_so(client, token):
    for answer in (client.get(f"/decide/{token}"), client.post(f"/decide/{token}")):
        assert answer.status_code == 400
        assert 'data-problem="tampered"' in answer.content.decode()


def test_a_test_send_with_a_broken_notify_block_says_so(alice_api, workspace):
    write_agents_md(workspace, "---\nnotify:\n  email: not-an-address\n---\n")
    answer = alice_api.post("/api/workspaces/rank-desk/notify/test")
    assert answer.status_code == 409  # the workspace's state, not a malformed request
    assert answer.json()["message"] == (
        "rank-desk has no notify: destination; add notify: to its AGENTS.md or the account's."
    )


BAD_URLS = {
    "http://" + "a" * 70 + ".example.com/hook": "the webhook host is not a valid host name.",
    "http://a..b/hook": "the webhook host is not a valid host name.",
    "http://[::1/hook": "the webhook URL is not a valid URL (Invalid IPv6 URL).",
    "http://127.0.0.1:99999/hook": "the webhook URL is not a valid URL (Port out of range 0-65535).",
    "not a url at all": "the webhook URL must start with http:// or https:// and name a host.",
}


def test_a_webhook_url_secret_holding_a_broken_url_is_a_recorded_failed_attempt(workspace):
    from notify.actions import perform_attempt
    from vault.actions import do_set_secret

    write_agents_md(workspace, "---\nnotify:\n  url: ${HOOK_URL}\n---\n")
    errors = {}
    for url in BAD_URLS:
        do_set_secret(workspace.account, None, "HOOK_URL", value=url)
        delivery = do_record_delivery(workspace, "failed", "{}")
        errors[url] = perform_attempt(delivery.pk).attempt.error
    assert errors == BAD_URLS


def test_a_test_send_to_a_broken_url_answers_what_went_wrong_not_a_500(alice_api, workspace):
    from vault.actions import do_set_secret

    write_agents_md(workspace, "---\nnotify:\n  url: ${HOOK_URL}\n---\n")
    do_set_secret(workspace.account, None, "HOOK_URL", value="http://127.0.0.1:99999/hook")
    answer = alice_api.post("/api/workspaces/rank-desk/notify/test")
    assert answer.status_code == 200
    assert answer.json()["message"] == (
        "The receiver did not accept it: the webhook URL is not a valid URL (Port out of range 0-65535)."
    )


def test_a_literal_url_that_does_not_parse_sends_nothing_and_breaks_nothing(alice_api, workspace):
    write_agents_md(workspace, '---\nnotify:\n  url: "http://[::1/hook"\n---\n')
    answer = alice_api.post("/api/workspaces/rank-desk/notify/test")
    assert answer.status_code == 409 and answer.json()["code"] == "no_destination"


def test_check_refuses_a_url_that_cannot_be_posted_to():
    from foldrun.contract import Desk, check

    for url in ("http://[::1/hook", "http://127.0.0.1:99999/hook", "http://" + "a" * 70 + ".example.com/hook"):
        findings = check(Desk(files={"AGENTS.md": f'---\nnotify:\n  url: "{url}"\n---\n'}))
        assert [f.level for f in findings if f.code == "notify.invalid"] == ["error"]


def test_a_resolver_that_hangs_cannot_hold_an_attempt_past_8_seconds(workspace, monkeypatch):
    import socket
    import time

    from notify.actions import perform_attempt

    real = socket.getaddrinfo

    def hanging_dns(host, *args, **kwargs):  # a stand-in for a DNS server that never answers
        if host == "slow-dns.example":
            time.sleep(12)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", hanging_dns)
    write_agents_md(workspace, "---\nnotify:\n  url: http://slow-dns.example/hook\n---\n")
    started = time.monotonic()
    attempt = perform_attempt(do_record_delivery(workspace, "failed", "{}").pk).attempt
    assert time.monotonic() - started < 9.5
    assert attempt.error == "timed out after 8 seconds resolving the webhook's host name"


def test_a_refused_redelivery_reads_as_one_sentence_on_the_page(client, alice, workspace, settings):
    from notify.actions import perform_attempt
    from notify.models import Delivery

    write_agents_md(workspace, "---\nnotify:\n  url: http://localhost:9/hook\n---\n")
    delivery = do_record_delivery(workspace, "failed", "{}")
    perform_attempt(delivery.pk)
    Delivery.objects.filter(pk=delivery.pk).update(status="failed", next_attempt_at=None)
    settings.FOLDRUN_ALLOW_PRIVATE_URLS = False
    client.force_login(alice)
    page = client.post(f"/w/rank-desk/notifications/deliveries/{delivery.public_id}/redeliver", follow=True)
    assert (
        f"Redelivered {delivery.public_id}: it failed — localhost resolves to 127.0.0.1: private, loopback, "
        "link-local and other non-public addresses cannot be called.<"
    ) in page.content.decode()
