"""Issue 5 (audit5): every name spec/notifications.md quotes — headers,
fields, events, categories, settings, CLI verbs, API paths, page titles and
sentences — asserted word for word against what the code does."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.urls import resolve
from django.utils import timezone

from notify.actions import (
    REDACTED,
    do_record_delivery,
    perform_attempt,
    redact_body,
    run_payload,
)
from notify.models import Delivery, Endpoint
from notify.preferences import CATEGORIES
from notify.signing import delivery_headers
from tests.cli.conftest import cli, foldrun_home, signed_in_as  # noqa: F401
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.notify.conftest import send_outbox, public_url, receiver, write_agents_md  # noqa: F401
from tests.runs.helpers import agent_file

# The spec's tables, as the spec writes them.
SPEC_EVENTS = ["failed", "completed", "blocked", "awaiting-approval", "quarantined", "sla", "budget", "test"]
SPEC_CATEGORIES = [
    ("security", "password resets, email confirmations, a login moved, an account made for you", "no"),
    ("invites", "an invitation to join an account", "no"),
    ("billing", "a payment failed, and the grace before runs stop", "no"),
    ("account", "a notification webhook switched off after days of failures; a close request", "no"),
    (
        "run-alerts",
        "a workspace's `notify:` email: failed, completed, blocked, quarantined, `sla`, `budget`",
        "yes — per workspace",
    ),
    ("approvals", "a run waiting for you, with approve and reject links", "yes — per workspace"),
    ("low-balance", "credits below the warning level", "yes"),
    ("product-updates", "what changed in foldrun", "yes"),
]
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


def test_the_event_names_are_the_spec_s():
    from foldrun.contract.rules.notify import DEFAULT_EVENTS, EVENTS, FOLLOWS_FAILED

    assert list(EVENTS) + ["test"] == SPEC_EVENTS
    assert DEFAULT_EVENTS == ("failed", "awaiting-approval")
    assert set(FOLLOWS_FAILED) == {"blocked", "quarantined", "sla", "budget"}


def test_the_headers_are_named_as_the_spec_names_them():
    unsigned = delivery_headers(delivery_id="dlv_x", event="failed", attempt=2, body=b"{}", timestamp=1)
    signed = delivery_headers(delivery_id="dlv_x", event="failed", attempt=2, body=b"{}", timestamp=1, secrets=[b"k"])
    assert {"X-Foldrun-Delivery": "dlv_x", "X-Foldrun-Event": "failed", "X-Foldrun-Attempt": "2"}.items() <= (
        unsigned.items()
    )
    assert set(signed) - set(unsigned) == {
        "X-Foldrun-Timestamp",
        "X-Foldrun-Signature",
        "x-signature",
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
    }
    assert re.fullmatch(r"sha256=[0-9a-f]{64}", signed["X-Foldrun-Signature"])
    assert re.fullmatch(r"[0-9a-f]{64}", signed["x-signature"])


def test_the_categories_are_the_spec_s_table_word_for_word():
    assert [
        (c, what, ("yes — per workspace" if per_ws else "yes") if optional else "no")
        for c, what, optional, per_ws in CATEGORIES
    ] == SPEC_CATEGORIES


def test_the_body_fields_are_the_spec_s_in_its_order(workspace):
    from runs.models import Run

    run = Run.objects.create(
        account=workspace.account,
        workspace=workspace,
        name="rankings",
        status="completed",
        headline="BAD — 3 targets fell out of the top 20",
    )
    links = [{"step": 3, "agent": "publisher", "approveUrl": "a", "rejectUrl": "r"}]
    payload = run_payload(run, "awaiting-approval", links)
    assert list(payload) == SPEC_FIELDS
    assert list(payload["links"][0]) == ["step", "agent", "approveUrl", "rejectUrl"]
    assert (payload["approveUrl"], payload["rejectUrl"]) == ("a", "r")  # the first pair


def test_the_log_shows_links_as_redacted_in_square_brackets():
    shown = json.loads(
        redact_body(
            json.dumps(
                {
                    "approveUrl": "https://x/decide/t",
                    "rejectUrl": "https://x/decide/u",
                    "links": [{"approveUrl": "https://x/decide/t"}],
                }
            )
        )
    )
    assert REDACTED == "[redacted]"
    assert (shown["approveUrl"], shown["rejectUrl"], shown["links"][0]["approveUrl"]) == ("[redacted]",) * 3


def test_the_settings_the_spec_names_exist_with_their_defaults():
    from foldrun.settings import base

    assert base.FOLDRUN_WEBHOOK_DISABLE_DAYS == 3
    assert hasattr(base, "FOLDRUN_PUBLIC_URL") and hasattr(base, "FOLDRUN_ALLOW_PRIVATE_URLS")
    assert base.DEFAULT_FROM_EMAIL == "foldrun <hello@foldrun.io>"


@pytest.mark.parametrize(
    "path,view",
    [
        ("/api/workspaces/rank-desk/notify/deliveries", "DeliveriesView"),
        ("/api/workspaces/rank-desk/notify/deliveries/dlv_abc/redeliver", "RedeliverView"),
        ("/api/workspaces/rank-desk/notify/test", "TestSendView"),
        ("/api/me/notifications", "MyNotificationsView"),
        ("/api/unsubscribe", "unsubscribe"),
    ],
)
def test_the_api_paths_are_the_spec_s(path, view):
    match = resolve(path)
    assert getattr(match.func, "view_class", match.func).__name__ == view


@pytest.mark.parametrize(
    "argv,func",
    [
        (["notify", "test", "--to", "rank-desk"], "cmd_notify_test"),
        (["notifications"], "cmd_notifications"),
        (["notifications", "set", "run-alerts", "off", "--to", "seo-desk"], "cmd_notifications_set"),
        (["notifications", "set", "product-updates", "on"], "cmd_notifications_set"),
        (["webhooks", "deliveries", "--to", "rank-desk"], "cmd_deliveries"),
        (["webhooks", "deliveries", "--to", "rank-desk", "--failed"], "cmd_deliveries"),
        (["webhooks", "redeliver", "dlv_abc", "--to", "rank-desk"], "cmd_redeliver"),
    ],
)
def test_the_cli_verbs_are_the_spec_s(argv, func):
    from foldrun.cli.main import build_parser

    assert build_parser().parse_args(argv).func.__name__ == func


def test_the_triggers_page_ends_with_outbound_webhook_deliveries_and_a_redeliver_button(
    client, alice, workspace, receiver
):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(500, b"", 0.0)]
    delivery = do_record_delivery(workspace, "failed", "{}")
    perform_attempt(delivery.pk)
    Delivery.objects.filter(pk=delivery.pk).update(status="failed", next_attempt_at=None)
    client.force_login(alice)
    html = client.get("/w/rank-desk/triggers/").content.decode()
    sections = re.findall(r"<h2[^>]*>([^<]+)</h2>", html)
    assert sections[-1] == "Outbound webhook deliveries"
    assert delivery.public_id in html and ">Redeliver</button>" in html and ">failed</span>" in html


def test_workspace_settings_link_to_the_page_with_the_test_button(client, alice, workspace):
    write_agents_md(workspace, "---\nnotify: ops@example.com\n---\n")
    client.force_login(alice)
    desk = client.get("/w/rank-desk/").content.decode()
    assert 'href="/w/rank-desk/notifications/"' in desk
    page = client.get("/w/rank-desk/notifications/").content.decode()
    assert ">Send a test notification</button>" in page


def test_profile_notifications_is_under_profile_and_shows_the_locked_four_with_the_reason(client, alice):
    client.force_login(alice)
    home = client.get("/").content.decode()
    assert 'href="/profile/notifications/"' in home
    page = client.get("/profile/notifications/").content.decode()
    for category in ("security", "invites", "billing", "account"):
        row = re.search(rf'<tr data-category="{category}">(.*?)</tr>', page, re.S).group(1)
        assert "checked disabled" in row and "On (locked)" in row
        assert (
            "Always on: this is how you get back into the account and how you hear that something you rely on "
            "has stopped."
        ) in row
    for category in ("run-alerts", "approvals", "low-balance", "product-updates"):
        row = re.search(rf'<tr data-category="{category}">(.*?)</tr>', page, re.S).group(1)
        assert "disabled" not in row


def test_foldrun_notifications_set_turns_run_alerts_off_for_one_workspace(cli, signed_in_as, alice, account, workspace):
    from accounts.models import Workspace
    from notify.preferences import may_send

    seo = Workspace.objects.create(account=account, name="seo-desk")
    signed_in_as(alice)
    result = cli("notifications", "set", "run-alerts", "off", "--to", "seo-desk")
    assert (result.code, result.out) == (0, "run-alerts mail is off for seo-desk.\n")
    assert (may_send(alice, "run-alerts", seo), may_send(alice, "run-alerts", workspace)) == (False, True)
    listing = cli("notifications")
    assert next(line for line in listing.lines if line.startswith("run-alerts")).split()[1:4] == ["on;", "off", "for"]


def _give_up_after(workspace, days_failing: float) -> Endpoint:
    now = timezone.now()
    delivery = do_record_delivery(workspace, "failed", "{}", now=now)
    Endpoint.objects.filter(workspace=workspace).update(failing_since=now - timedelta(days=days_failing))
    Delivery.objects.filter(pk=delivery.pk).update(attempts_made=5)
    perform_attempt(delivery.pk, now=now)
    return Endpoint.objects.get(workspace=workspace)


def test_the_switch_off_waits_for_foldrun_webhook_disable_days(
    workspace, alice, receiver, settings, django_capture_on_commit_callbacks
):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(500, b"", 0.0)]
    with django_capture_on_commit_callbacks(execute=True):
        assert _give_up_after(workspace, 2.9).disabled_at is None
    settings.FOLDRUN_WEBHOOK_DISABLE_DAYS = 2
    with django_capture_on_commit_callbacks(execute=True):
        assert _give_up_after(workspace, 2.9).disabled_at is not None
    assert [(m.subject, m.from_email, m.to) for m in send_outbox()] == [
        (
            "The notification webhook of rank-desk has been switched off",
            "foldrun <hello@foldrun.io>",
            ["alice@example.com"],
        )
    ]
    skipped = do_record_delivery(workspace, "failed", "{}")
    assert skipped.status == "skipped"


def test_the_blocked_headline_is_the_spec_s(workspace):
    from runs.models import Run

    run = Run.objects.create(
        account=workspace.account,
        workspace=workspace,
        name="rankings",
        status="completed",
        verdict="BLOCKED",
        headline="BLOCKED — refused",
    )
    assert run_payload(run, "blocked", [])["text"].split(" · ")[0] == "⛔ rankings blocked"


def test_a_laptop_run_sends_its_webhook_once_with_the_same_headers_and_no_log(cli, tmp_path, fake_provider, receiver):
    root = tmp_path / "desk"
    (root / "agents" / "reporter").mkdir(parents=True)
    (root / "flows").mkdir()
    (root / "AGENTS.md").write_text(f"---\nnotify:\n  url: {receiver.url}\n  events: [completed]\n---\n")
    (root / "agents" / "reporter" / "agent.md").write_text(agent_file("reporter", fake_provider))
    (root / "flows" / "weekly.md").write_text("---\nname: weekly\n---\n1. [[reporter]] — Report.\n")
    fake_provider.reply_text("GOOD — two pages")
    result = cli("run", "weekly", "--local", "--path", root)
    assert result.code == 0, result.err
    assert [r["headers"]["X-Foldrun-Event"] for r in receiver.requests] == ["completed"]
    assert receiver.requests[0]["headers"]["X-Foldrun-Attempt"] == "1"
