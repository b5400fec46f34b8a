"""Mail: the account's own Resend key or the platform's sender, preferences
asked at the moment of sending, RFC 8058 one-click unsubscribe."""

from __future__ import annotations

import email
import email.policy

import httpx
import pytest
from django.core import mail

from notify.email import send_mail, send_platform_mail
from notify.links import unsubscribe_token
from notify.preferences import may_send
from vault.actions import do_set_secret

from .conftest import write_agents_md


@pytest.fixture
def own_key(account, fake_resend):
    do_set_secret(account, None, "RESEND_API_KEY", value="re_test_key_123")
    do_set_secret(account, None, "EMAIL_FROM", value="Rank Desk <desk@acme.example>")
    return fake_resend


def test_with_the_account_s_key_and_address_mail_goes_through_resend_from_that_address(account, workspace, own_key):
    result = send_mail(
        to="ops@example.com",
        subject="BAD — 3 fell",
        body="body",
        category="run-alerts",
        account=account,
        workspace=workspace,
    )
    assert result.sent is True and result.provider == "resend" and result.message == "Resend accepted it (id re_0001)."
    assert own_key.auth == ["Bearer re_test_key_123"]
    assert own_key.sent[0]["from"] == "Rank Desk <desk@acme.example>"
    assert own_key.sent[0]["to"] == ["ops@example.com"] and own_key.sent[0]["subject"] == "BAD — 3 fell"
    assert mail.outbox == []


def test_without_them_mail_falls_back_to_the_platform_sender(account, workspace, settings):
    result = send_mail(
        to="ops@example.com", subject="s", body="b", category="run-alerts", account=account, workspace=workspace
    )
    assert result.provider == "platform" and result.sent is True
    assert mail.outbox[0].from_email == settings.DEFAULT_FROM_EMAIL


def test_a_provider_refusal_is_reported_in_its_own_words(account, workspace, own_key):
    own_key.refuse = (
        403,
        "validation_error",
        "The acme.example domain is not verified. Please, add and verify your domain on https://resend.com/domains",
    )
    result = send_mail(
        to="ops@example.com", subject="s", body="b", category="run-alerts", account=account, workspace=workspace
    )
    assert result.sent is False and result.status_code == 403
    assert result.message == (
        "The acme.example domain is not verified. Please, add and verify your domain on https://resend.com/domains"
    )


def test_platform_mail_never_goes_through_the_account_s_key(account, own_key):
    result = send_platform_mail(to="new@example.com", subject="You are invited", body="b", category="invites")
    assert result.provider == "platform" and own_key.sent == [] and len(mail.outbox) == 1


def test_the_test_button_reports_the_provider_s_words(alice_api, workspace, own_key):
    write_agents_md(workspace, "---\nnotify: ops@example.com\n---\n")
    own_key.refuse = (403, "validation_error", "You can only send testing emails to your own email address.")
    answer = alice_api.post("/api/workspaces/rank-desk/notify/test")
    assert answer.json()["ok"] is False and answer.json()["destination"] == "email"
    assert answer.json()["message"] == "You can only send testing emails to your own email address."


def test_the_test_button_reports_success(alice_api, workspace, own_key):
    write_agents_md(workspace, "---\nnotify: ops@example.com\n---\n")
    answer = alice_api.post("/api/workspaces/rank-desk/notify/test")
    assert answer.json()["ok"] is True and answer.json()["message"] == "Resend accepted it (id re_0001)."
    assert own_key.sent[0]["subject"] == "✅ Test notification from foldrun for rank-desk"


# ------------------------------------------------------------ preferences


def test_the_four_locked_categories_are_always_sent(alice):
    for category in ("security", "invites", "billing", "account"):
        assert may_send(alice, category) is True


def test_run_alerts_can_be_off_for_one_workspace_and_on_for_the_rest(alice_api, alice, workspace, account):
    from accounts.models import Workspace

    other = Workspace.objects.create(account=account, name="seo-desk")
    answer = alice_api.patch(
        "/api/me/notifications", {"category": "run-alerts", "enabled": False, "workspace": "seo-desk"}, format="json"
    )
    assert answer.status_code == 200
    assert may_send(alice, "run-alerts", other) is False
    assert may_send(alice, "run-alerts", workspace) is True
    entry = next(c for c in answer.json()["categories"] if c["category"] == "run-alerts")
    assert entry["workspaces"] == [
        {"workspace": "rank-desk", "enabled": True},
        {"workspace": "seo-desk", "enabled": False},
    ]


def test_the_page_data_shows_locked_categories_on_with_the_reason(alice_api):
    categories = alice_api.get("/api/me/notifications").json()["categories"]
    assert [c["category"] for c in categories] == [
        "security",
        "invites",
        "billing",
        "account",
        "run-alerts",
        "approvals",
        "low-balance",
        "product-updates",
    ]
    security = categories[0]
    assert security["locked"] is True and security["enabled"] is True
    assert security["reason"] == (
        "Always on: this is how you get back into the account and how you hear that something you rely on has stopped."
    )


def test_a_locked_category_cannot_be_turned_off(alice_api):
    answer = alice_api.patch("/api/me/notifications", {"category": "security", "enabled": False}, format="json")
    assert answer.status_code == 400 and answer.json()["code"] == "locked"


def test_an_unknown_category_is_refused_naming_the_field(alice_api):
    answer = alice_api.patch("/api/me/notifications", {"category": "spam", "enabled": False}, format="json")
    assert answer.status_code == 400 and answer.json()["message"].startswith("category must be one of security")


def test_a_viewer_may_change_his_own_mail_choices(bob_api, bob):
    answer = bob_api.patch("/api/me/notifications", {"category": "product-updates", "enabled": False}, format="json")
    assert answer.status_code == 200 and may_send(bob, "product-updates") is False


def test_another_account_s_workspace_is_a_404_in_my_choices(charlie_api, workspace):
    answer = charlie_api.patch(
        "/api/me/notifications", {"category": "run-alerts", "enabled": False, "workspace": "rank-desk"}, format="json"
    )
    assert answer.status_code == 404 and answer.json()["message"] == "Not found."


def test_a_turned_off_category_is_not_sent(alice, account, workspace):
    alice_api_choice = may_send(alice, "low-balance")
    assert alice_api_choice is True
    from notify.preferences import do_set_preference

    do_set_preference("alice@example.com", "low-balance", False)
    result = send_platform_mail(to="alice@example.com", subject="Credits low", body="b", category="low-balance")
    assert result.sent is False and result.skipped is True and mail.outbox == []


# ------------------------------------------------------------ unsubscribe


def _parsed(message) -> email.message.EmailMessage:
    return email.message_from_bytes(message.message().as_bytes(), policy=email.policy.default)


def test_an_optional_mail_carries_rfc_8058_headers_and_a_stop_link(account, workspace, public_url):
    send_mail(to="ops@example.com", subject="s", body="b", category="run-alerts", account=account, workspace=workspace)
    parsed = _parsed(mail.outbox[0])
    assert parsed["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    link = parsed["List-Unsubscribe"].strip().strip("<>")
    assert link.startswith("https://foldrun.example.com/api/unsubscribe?token=")
    assert f"Stop run alerts from rank-desk: {link}" in parsed.get_content()


def test_a_locked_mail_carries_no_unsubscribe(account, public_url):
    send_platform_mail(to="a@example.com", subject="Reset", body="b", category="security")
    assert "List-Unsubscribe" not in _parsed(mail.outbox[0])


def test_without_a_public_url_mail_goes_without_unsubscribe_links(account, workspace, settings):
    settings.FOLDRUN_PUBLIC_URL = None
    send_mail(to="ops@example.com", subject="s", body="b", category="run-alerts", account=account, workspace=workspace)
    assert "List-Unsubscribe" not in _parsed(mail.outbox[0]) and "Stop " not in mail.outbox[0].body


def test_the_one_click_post_unsubscribes_an_address_with_no_account(live_server, settings, workspace):
    settings.FOLDRUN_PUBLIC_URL = live_server.url
    send_mail(
        to="shared-inbox@example.com",
        subject="s",
        body="b",
        category="run-alerts",
        account=workspace.account,
        workspace=workspace,
    )
    parsed = _parsed(mail.outbox[0])
    link = parsed["List-Unsubscribe"].strip().strip("<>")
    # The way a mail client does it (RFC 8058): a POST of the one-click body, no cookie, no login.
    answer = httpx.post(
        link,
        content=parsed["List-Unsubscribe-Post"].encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert answer.status_code == 200
    assert may_send("shared-inbox@example.com", "run-alerts", workspace) is False
    again = send_mail(
        to="shared-inbox@example.com",
        subject="s",
        body="b",
        category="run-alerts",
        account=workspace.account,
        workspace=workspace,
    )
    assert again.skipped is True and len(mail.outbox) == 1


def test_opening_the_link_asks_first_and_changes_nothing(client, workspace):
    token = unsubscribe_token("ops@example.com", "run-alerts", workspace.public_id)
    page = client.get("/api/unsubscribe", {"token": token})
    assert page.status_code == 200
    assert "Stop run alerts from rank-desk to <strong>ops@example.com</strong>?" in page.content.decode()
    assert may_send("ops@example.com", "run-alerts", workspace) is True


def test_a_tampered_unsubscribe_token_says_so_and_changes_nothing(client, workspace):
    token = unsubscribe_token("ops@example.com", "run-alerts", workspace.public_id)
    answer = client.post(
        "/api/unsubscribe?token=" + token[:-2] + "xx",
        "List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    assert answer.status_code == 400
    assert "This unsubscribe link is not valid" in answer.content.decode()
    assert may_send("ops@example.com", "run-alerts", workspace) is True


def test_an_unsubscribe_token_works_for_180_days(client, workspace):
    import time

    token = unsubscribe_token("ops@example.com", "product-updates", now=time.time() - 181 * 86400)
    answer = client.post("/api/unsubscribe?token=" + token)
    assert answer.status_code == 400 and "has expired" in answer.content.decode()


def test_a_choice_made_by_unsubscribing_shows_on_the_profile_and_is_turned_back_on_there(
    client, alice_api, alice, workspace
):
    token = unsubscribe_token("alice@example.com", "approvals", workspace.public_id)
    client.post(
        "/api/unsubscribe?token=" + token,
        "List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    entry = next(c for c in alice_api.get("/api/me/notifications").json()["categories"] if c["category"] == "approvals")
    assert entry["workspaces"] == [{"workspace": "rank-desk", "enabled": False, "via": "unsubscribe"}]
    alice_api.patch(
        "/api/me/notifications", {"category": "approvals", "enabled": True, "workspace": "rank-desk"}, format="json"
    )
    assert may_send(alice, "approvals", workspace) is True


def test_a_refused_notification_mail_is_recorded_in_the_provider_s_words(account, workspace, own_key, client, alice):
    from notify.models import MailSend

    own_key.refuse = (422, "validation_error", "Invalid `to` field.")
    send_mail(
        to="ops@example.com",
        subject="BAD — 3 fell",
        body="b",
        category="run-alerts",
        account=account,
        workspace=workspace,
    )
    row = MailSend.objects.get()
    assert (row.sent, row.provider, row.message, row.status_code) == (False, "resend", "Invalid `to` field.", 422)
    client.force_login(alice)
    page = client.get("/w/rank-desk/notifications/").content.decode()
    assert "refused by resend: Invalid `to` field." in page
