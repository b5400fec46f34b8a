"""`foldrun notify test`, `foldrun notifications`, `foldrun webhooks …` against a live server."""

from __future__ import annotations

import pytest

from notify.actions import do_record_delivery, perform_attempt
from notify.preferences import may_send
from tests.cli.conftest import cli, foldrun_home, signed_in_as  # noqa: F401

from .conftest import write_agents_md

pytestmark = pytest.mark.django_db(transaction=True)


def test_notify_test_reports_what_the_receiver_said(cli, signed_in_as, alice, workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(410, b"gone: this hook was deleted", 0.0)]
    signed_in_as(alice)
    result = cli("notify", "test", "--to", "rank-desk")
    assert result.code == 1
    assert result.out == (
        "Not delivered to webhook: The receiver did not accept it: answered 410. It said: gone: this hook was deleted\n"
    )


def test_notify_test_for_another_account_s_workspace_is_not_found(cli, signed_in_as, charlie, workspace):
    signed_in_as(charlie)
    result = cli("notify", "test", "--to", "rank-desk")
    assert (result.code, result.err) == (
        1,
        "There is no workspace called rank-desk in this account; this token sees none yet; "
        "`foldrun workspaces create NAME` makes one.\n",
    )


def test_notifications_lists_categories_and_set_turns_one_off_for_a_workspace(cli, signed_in_as, alice, workspace):
    signed_in_as(alice)
    listing = cli("notifications")
    assert listing.code == 0
    assert listing.lines[1].split()[:3] == ["security", "on", "(locked)"]
    changed = cli("notifications", "set", "run-alerts", "off", "--to", "rank-desk")
    assert changed.code == 0 and changed.out == "run-alerts mail is off for rank-desk.\n"
    assert may_send(alice, "run-alerts", workspace) is False
    locked = cli("notifications", "set", "security", "off")
    assert locked.code != 0 and "security cannot be turned off." in locked.err


def test_webhooks_deliveries_and_redeliver(cli, signed_in_as, alice, workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(500, b"", 0.0), (200, b"ok", 0.0)]
    delivery = do_record_delivery(workspace, "failed", "{}")
    perform_attempt(delivery.pk)
    delivery.refresh_from_db()
    delivery.status, delivery.next_attempt_at = "failed", None
    delivery.save()
    signed_in_as(alice)
    listing = cli("webhooks", "deliveries", "--to", "rank-desk", "--failed")
    assert listing.code == 0 and delivery.public_id in listing.out and "500" in listing.out
    again = cli("webhooks", "redeliver", delivery.public_id, "--to", "rank-desk")
    assert again.code == 0 and again.out == f"Redelivered {delivery.public_id}: the receiver answered 200.\n"
