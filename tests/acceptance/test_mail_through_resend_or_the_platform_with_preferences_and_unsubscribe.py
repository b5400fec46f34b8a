"""Issue 5, items 5, 7 and 8 (audit5): mail through the account's own Resend
key (a loopback stand-in speaking Resend's documented `POST /emails`), the
platform's fallback sender, preferences asked at the moment of sending, and
RFC 8058 one-click unsubscribe made the way a mail client makes it."""

from __future__ import annotations

import email
import email.policy
import re
import time

import httpx
import pytest
from django.core import mail

from notify.links import unsubscribe_token
from notify.models import MailSend
from notify.preferences import do_set_preference, may_send
from runs.actions import check_start_run
from tests.cli.conftest import cli, foldrun_home, signed_in_as  # noqa: F401
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.notify.conftest import send_outbox, fake_resend, public_url, write_agents_md  # noqa: F401
from tests.runs.helpers import agent_file, drive, push
from vault.actions import do_set_secret

PLATFORM_SENDER = "foldrun <hello@foldrun.io>"


@pytest.fixture
def own_key(account, fake_resend):
    do_set_secret(account, None, "RESEND_API_KEY", value="re_audit5_account_key")
    do_set_secret(account, None, "EMAIL_FROM", value="Rank Desk <desk@acme.example>")
    return fake_resend


def _finished_run(
    workspace,
    alice,
    fake,
    capture,
    reply: str = "BAD — 3 targets fell out of the top 20\ngeelong, ballarat and bendigo dropped",
):
    push(
        workspace,
        {
            "AGENTS.md": "---\nnotify:\n  email: ops@example.com\n  events: [failed, completed]\n---\n",
            "agents/reporter/agent.md": agent_file("reporter", fake),
            "flows/rankings.md": "---\nname: rankings\n---\n1. [[reporter]] — Summarise the week.\n",
        },
    )
    fake.reply_text(reply)
    with capture(execute=True):
        return drive(check_start_run(workspace=workspace, user=alice, flow="rankings"))


def test_a_run_s_mail_goes_through_resend_on_the_account_s_key_from_its_address(
    workspace, alice, fake_provider, own_key, public_url, django_capture_on_commit_callbacks
):
    run = _finished_run(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    assert run.status == "completed"
    assert send_outbox() == []  # sent by the outbox's worker task, and nothing through the platform's connection
    assert own_key.auth == ["Bearer re_audit5_account_key"]
    sent = own_key.sent[0]
    assert sent["from"] == "Rank Desk <desk@acme.example>" and sent["to"] == ["ops@example.com"]
    assert sent["subject"] == "BAD — 3 targets fell out of the top 20 — geelong, ballarat and bendigo dropped"
    assert sent["text"].startswith(f"BAD — 3 targets fell out of the top 20 · rank-desk/{run.public_id} · $0.00\n")
    assert sent["headers"]["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    link = sent["headers"]["List-Unsubscribe"]
    assert link.startswith(f"<{public_url}/api/unsubscribe?token=") and link.endswith(">")
    assert f"Stop run alerts from rank-desk: {link[1:-1]}" in sent["text"]
    row = MailSend.objects.get()
    assert (row.provider, row.sent, row.message) == ("resend", True, "Resend accepted it (id re_0001).")


def test_without_the_account_s_key_mail_comes_from_foldrun_s_own_sender(
    workspace, alice, fake_provider, fake_resend, django_capture_on_commit_callbacks
):
    _finished_run(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    assert fake_resend.sent == []
    parsed = email.message_from_bytes(send_outbox()[0].message().as_bytes(), policy=email.policy.default)
    assert str(parsed["From"]) == PLATFORM_SENDER
    assert send_outbox()[0].from_email == PLATFORM_SENDER


def test_a_key_without_email_from_still_falls_back_to_the_platform(
    workspace, account, alice, fake_provider, fake_resend, django_capture_on_commit_callbacks
):
    do_set_secret(account, None, "RESEND_API_KEY", value="re_audit5_account_key")
    _finished_run(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    assert fake_resend.sent == [] and send_outbox()[0].from_email == PLATFORM_SENDER


def test_an_invite_comes_from_the_platform_even_when_the_account_has_its_own_key(
    alice_api, own_key, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        answer = alice_api.post("/api/invites", {"email": "dora@example.com", "role": "viewer"}, format="json")
    assert answer.status_code == 201
    assert own_key.sent == []
    assert [(m.from_email, m.to) for m in send_outbox()] == [(PLATFORM_SENDER, ["dora@example.com"])]
    assert "List-Unsubscribe" not in send_outbox()[0].extra_headers  # invites cannot be turned off


def test_a_provider_refusal_is_recorded_in_its_own_words_and_the_run_goes_on(
    workspace, alice, fake_provider, own_key, django_capture_on_commit_callbacks
):
    own_key.refuse = (403, "validation_error", "You can only send testing emails to your own email address.")
    run = _finished_run(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    assert run.status == "completed"
    send_outbox()
    row = MailSend.objects.get()
    assert (row.sent, row.status_code, row.message) == (
        False,
        403,
        "You can only send testing emails to your own email address.",
    )


def test_the_test_button_reports_the_provider_s_words_through_the_cli_api(alice_api, workspace, own_key):
    write_agents_md(workspace, "---\nnotify: ops@example.com\n---\n")
    own_key.refuse = (403, "validation_error", "The acme.example domain is not verified.")
    data = alice_api.post("/api/workspaces/rank-desk/notify/test").json()
    assert (data["ok"], data["provider"], data["statusCode"], data["message"]) == (
        False,
        "resend",
        403,
        "The acme.example domain is not verified.",
    )


# ------------------------------------------------------------ preferences at send time


def test_a_run_alert_turned_off_for_the_workspace_is_not_sent_and_is_recorded_skipped(
    workspace, alice, fake_provider, fake_resend, django_capture_on_commit_callbacks
):
    do_set_preference("ops@example.com", "run-alerts", False, workspace)
    _finished_run(workspace, alice, fake_provider, django_capture_on_commit_callbacks)
    assert send_outbox() == []
    send_outbox()
    row = MailSend.objects.get()
    assert (row.sent, row.skipped, row.message) == (
        False,
        True,
        "ops@example.com has turned off run-alerts mail for rank-desk.",
    )


def test_an_approver_who_turned_approvals_off_gets_no_gate_mail(
    workspace, alice, fake_provider, public_url, django_capture_on_commit_callbacks
):
    do_set_preference("owner@example.com", "approvals", False)
    push(
        workspace,
        {
            "agents/publisher/agent.md": agent_file("publisher", fake_provider),
            "flows/gated.md": "---\nname: gated\napprovers: [owner@example.com]\n---\n1. [[publisher]] ! — Publish.\n",
        },
    )
    with django_capture_on_commit_callbacks(execute=True):
        run = drive(check_start_run(workspace=workspace, user=alice, flow="gated"))
    assert run.status == "awaiting-approval"
    assert send_outbox() == []
    send_outbox()
    assert MailSend.objects.get().skipped is True


def test_the_switch_off_notice_is_account_mail_that_cannot_be_turned_off(alice):
    assert may_send(alice, "account") is True
    with pytest.raises(ValueError):
        may_send(alice, "not-a-category")


# ------------------------------------------------------------ RFC 8058


def _mail_with_unsubscribe(workspace, to: str, category: str = "run-alerts"):
    from notify.email import send_mail

    send_mail(
        to=to, subject="BAD — 3 fell", body="b", category=category, account=workspace.account, workspace=workspace
    )
    message = email.message_from_bytes(send_outbox()[-1].message().as_bytes(), policy=email.policy.default)
    return message, str(message["List-Unsubscribe"]).strip()[1:-1]


def test_a_mail_client_s_one_click_post_unsubscribes_with_no_login_and_no_cookie(live_server, settings, workspace):
    settings.FOLDRUN_PUBLIC_URL = live_server.url
    message, link = _mail_with_unsubscribe(workspace, "shared-inbox@example.com")
    assert str(message["List-Unsubscribe-Post"]) == "List-Unsubscribe=One-Click"
    # RFC 8058 §3.2: POST to the List-Unsubscribe URI, the List-Unsubscribe-Post value as the form body.
    answer = httpx.post(
        link,
        content=str(message["List-Unsubscribe-Post"]).encode(),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
        follow_redirects=False,
    )
    assert answer.status_code == 200 and "set-cookie" not in {k.lower() for k in answer.headers}
    assert may_send("shared-inbox@example.com", "run-alerts", workspace) is False


def test_opening_the_unsubscribe_link_asks_and_changes_nothing(live_server, settings, workspace):
    settings.FOLDRUN_PUBLIC_URL = live_server.url
    _message, link = _mail_with_unsubscribe(workspace, "ops@example.com")
    for _ in range(3):  # inbox scanners open links
        page = httpx.get(link)
        assert page.status_code == 200
    assert "Stop run alerts from rank-desk to <strong>ops@example.com</strong>?" in page.text
    assert may_send("ops@example.com", "run-alerts", workspace) is True


def test_the_stop_link_at_the_bottom_is_the_same_one_click_link(account, workspace, public_url):
    message, link = _mail_with_unsubscribe(workspace, "ops@example.com", "approvals")
    assert message.get_content().rstrip().endswith(f"Stop approval requests from rank-desk: {link}")


def test_an_unsubscribe_token_names_one_address_one_category_and_one_workspace(client, account, workspace):
    from accounts.models import Workspace

    other = Workspace.objects.create(account=account, name="seo-desk")
    token = unsubscribe_token("ops@example.com", "run-alerts", workspace.public_id)
    answer = client.post(
        f"/api/unsubscribe?token={token}",
        "List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    assert answer.status_code == 200
    assert may_send("ops@example.com", "run-alerts", workspace) is False
    assert may_send("ops@example.com", "run-alerts", other) is True
    assert may_send("ops@example.com", "approvals", workspace) is True
    assert may_send("someone-else@example.com", "run-alerts", workspace) is True


def test_an_unsubscribe_token_works_179_days_and_not_181(client, workspace):
    day = 86400
    fresh = unsubscribe_token("a@example.com", "product-updates", now=time.time() - 179 * day)
    stale = unsubscribe_token("b@example.com", "product-updates", now=time.time() - 181 * day)
    assert client.post(f"/api/unsubscribe?token={fresh}").status_code == 200
    refused = client.post(f"/api/unsubscribe?token={stale}")
    assert refused.status_code == 400
    assert "This unsubscribe link has expired. Nothing was changed" in refused.content.decode()
    assert (may_send("a@example.com", "product-updates"), may_send("b@example.com", "product-updates")) == (False, True)


def test_an_unsubscribe_token_for_a_locked_category_changes_nothing(client):
    token = unsubscribe_token("a@example.com", "security")
    answer = client.post(f"/api/unsubscribe?token={token}")
    assert answer.status_code == 400
    assert may_send("a@example.com", "security") is True


def test_an_unsubscribe_token_from_a_rotated_key_is_refused(client, settings, workspace):
    token = unsubscribe_token("a@example.com", "run-alerts", workspace.public_id)
    settings.FOLDRUN_LINK_KEY = "rotated-link-key-audit5"
    answer = client.post(f"/api/unsubscribe?token={token}")
    assert answer.status_code == 400 and "This unsubscribe link is not valid" in answer.content.decode()


def test_every_optional_category_carries_the_headers_and_no_locked_one_does(account, workspace, public_url):
    from notify.email import send_platform_mail

    for category in ("run-alerts", "approvals", "low-balance", "product-updates"):
        send_platform_mail(to="a@example.com", subject=category, body="b", category=category)
    for category in ("security", "invites", "billing", "account"):
        send_platform_mail(to="a@example.com", subject=category, body="b", category=category)
    carried = {
        m.subject: ("List-Unsubscribe" in m.extra_headers, m.extra_headers.get("List-Unsubscribe-Post"))
        for m in send_outbox()
    }
    assert carried == {
        "run-alerts": (True, "List-Unsubscribe=One-Click"),
        "approvals": (True, "List-Unsubscribe=One-Click"),
        "low-balance": (True, "List-Unsubscribe=One-Click"),
        "product-updates": (True, "List-Unsubscribe=One-Click"),
        "security": (False, None),
        "invites": (False, None),
        "billing": (False, None),
        "account": (False, None),
    }


def test_a_choice_made_by_unsubscribing_shows_on_the_profile_page_and_is_turned_back_on_there(client, alice, workspace):
    token = unsubscribe_token("alice@example.com", "run-alerts", workspace.public_id)
    client.post(
        f"/api/unsubscribe?token={token}",
        "List-Unsubscribe=One-Click",
        content_type="application/x-www-form-urlencoded",
    )
    client.force_login(alice)
    page = client.get("/profile/notifications/").content.decode()
    # What a reader sees: the workspace, then why it is off (the note is set in its own muted span).
    assert re.search(r"rank-desk\s*<span[^>]*>\(unsubscribed from a mail\)</span>", page)
    client.post("/profile/notifications/", {"category": "run-alerts", "workspace": "rank-desk", "enabled": "on"})
    assert may_send("alice@example.com", "run-alerts", workspace) is True


def test_foldrun_notify_test_prints_the_provider_s_own_words(cli, signed_in_as, alice, workspace, own_key):
    write_agents_md(workspace, "---\nnotify: ops@example.com\n---\n")
    own_key.refuse = (403, "validation_error", "You can only send testing emails to your own email address.")
    signed_in_as(alice)
    result = cli("notify", "test", "--to", "rank-desk")
    assert result.code == 1
    assert result.out == (
        "Not delivered to ops@example.com: You can only send testing emails to your own email address.\n"
    )
    own_key.refuse = None
    accepted = cli("notify", "test", "--to", "rank-desk")
    assert (accepted.code, accepted.out) == (0, "Sent to ops@example.com: Resend accepted it (id re_0001).\n")
