"""Webhook deliveries: recorded first, attempted on the spec's backoff,
each attempt written down, headers as the spec names them."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone as dt_timezone

import pytest

from notify.actions import (
    claim,
    do_purge_old_deliveries,
    do_record_delivery,
    do_redeliver,
    due_delivery_ids,
    perform_attempt,
    recover_lost_deliveries,
)
from notify.models import Delivery, Endpoint

from .conftest import send_outbox, write_agents_md

T0 = datetime(2026, 11, 2, 9, 0, tzinfo=dt_timezone.utc)


@pytest.fixture
def hooked(workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n  events: [failed, completed]\n---\n")
    return workspace


def record_attempt(workspace, body=None, now=T0):
    return do_record_delivery(workspace, "failed", body or json.dumps({"text": "x"}), run_public_id="run_x", now=now)


def test_a_delivery_is_recorded_pending_before_its_first_attempt(hooked, receiver):
    delivery = record_attempt(hooked)
    assert delivery.public_id.startswith("dlv_")
    assert delivery.status == "pending" and delivery.next_attempt_at == T0
    assert receiver.requests == []


def test_an_attempt_carries_the_spec_headers(hooked, receiver):
    delivery = record_attempt(hooked)
    perform_attempt(delivery.pk, now=T0)
    headers = receiver.requests[0]["headers"]
    assert headers["X-Foldrun-Delivery"] == delivery.public_id
    assert headers["X-Foldrun-Event"] == "failed"
    assert headers["X-Foldrun-Attempt"] == "1"
    assert "X-Foldrun-Signature" not in headers  # no signing_secret: nothing is signed


def test_the_retries_come_1m_5m_30m_2h_6h_after_each_failure_then_it_fails(hooked, receiver):
    receiver.answers = [(503, b"down", 0.0)]
    delivery = record_attempt(hooked)
    now = T0
    gaps = []
    for number in range(1, 7):
        result = perform_attempt(delivery.pk, now=now, clock=lambda n=now: n + timedelta(seconds=2))
        assert result.attempt.number == number
        if result.next_attempt_at is None:
            break
        gaps.append(result.next_attempt_at - (now + timedelta(seconds=2)))
        # Not due a second early: a worker handed it then cannot claim it.
        assert perform_attempt(delivery.pk, now=result.next_attempt_at - timedelta(seconds=1)) is None
        now = result.next_attempt_at
    assert gaps == [
        timedelta(minutes=1),
        timedelta(minutes=5),
        timedelta(minutes=30),
        timedelta(hours=2),
        timedelta(hours=6),
    ]
    delivery.refresh_from_db()
    assert delivery.status == "failed" and delivery.attempts_made == 6
    assert [r["headers"]["X-Foldrun-Attempt"] for r in receiver.requests] == ["1", "2", "3", "4", "5", "6"]
    assert {r["headers"]["X-Foldrun-Delivery"] for r in receiver.requests} == {delivery.public_id}
    assert perform_attempt(delivery.pk, now=now + timedelta(days=1)) is None


def test_every_retry_sends_the_same_bytes(hooked, receiver):
    receiver.answers = [(500, b"", 0.0), (200, b"ok", 0.0)]
    delivery = record_attempt(hooked, body='{"text": "caf\u00e9 \u2014 same bytes"}')
    first = perform_attempt(delivery.pk, now=T0)
    perform_attempt(delivery.pk, now=first.next_attempt_at)
    assert receiver.requests[0]["body"] == receiver.requests[1]["body"] == delivery.body.encode()


def test_each_attempt_records_status_time_the_first_500_characters_and_the_error(hooked, receiver):
    receiver.answers = [(500, b"x" * (2 * 1024 * 1024), 0.0)]
    delivery = record_attempt(hooked)
    attempt = perform_attempt(delivery.pk, now=T0).attempt
    assert attempt.status_code == 500
    assert attempt.response_excerpt == "x" * 500
    assert attempt.error == "answered 500"
    assert attempt.duration_ms >= 0 and attempt.ok is False


def test_the_url_is_read_from_notify_at_each_attempt(workspace, receiver):
    write_agents_md(workspace, "---\nnotify:\n  url: http://127.0.0.1:9/typo\n---\n")
    delivery = record_attempt(workspace)
    first = perform_attempt(delivery.pk, now=T0)
    assert first.attempt.ok is False and first.attempt.status_code is None
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    second = perform_attempt(delivery.pk, now=first.next_attempt_at)
    assert second.attempt.ok is True
    assert len(receiver.requests) == 1


def test_a_redirect_is_not_followed(hooked, receiver):
    receiver.answers = [(302, b"", 0.0)]
    attempt = perform_attempt(record_attempt(hooked).pk, now=T0).attempt
    assert attempt.ok is False and attempt.status_code == 302
    assert attempt.error == "answered 302 with a redirect, which foldrun does not follow"
    assert len(receiver.requests) == 1


def test_a_loopback_destination_is_refused_unless_the_install_allows_it(hooked, receiver, settings):
    settings.FOLDRUN_ALLOW_PRIVATE_URLS = False
    attempt = perform_attempt(record_attempt(hooked).pk, now=T0).attempt
    assert attempt.ok is False
    assert attempt.error == (
        "127.0.0.1 resolves to 127.0.0.1: private, loopback, link-local and other non-public addresses cannot be called"
    )
    assert receiver.requests == []


def test_a_host_name_that_resolves_to_loopback_is_refused_too(workspace, receiver, settings):
    settings.FOLDRUN_ALLOW_PRIVATE_URLS = False
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url.replace('127.0.0.1', 'localhost')}\n---\n")
    attempt = perform_attempt(record_attempt(workspace).pk, now=T0).attempt
    assert "localhost resolves to 127.0.0.1: private, loopback" in attempt.error
    assert receiver.requests == []


def test_a_link_local_literal_is_refused(workspace, settings):
    settings.FOLDRUN_ALLOW_PRIVATE_URLS = False
    write_agents_md(workspace, "---\nnotify:\n  url: http://169.254.169.254/latest/meta-data\n---\n")
    attempt = perform_attempt(record_attempt(workspace).pk, now=T0).attempt
    assert "169.254.169.254 resolves to 169.254.169.254: private, loopback" in attempt.error


def test_two_workers_handed_the_same_due_attempt_claim_it_once(hooked):
    delivery = record_attempt(hooked)
    assert claim(delivery.pk, T0) is True
    assert claim(delivery.pk, T0) is False
    # A worker lost mid-attempt: once its lease runs out, the sweep writes that
    # attempt down as lost, and the next one is due on the retry schedule.
    assert due_delivery_ids(T0 + timedelta(seconds=30)) == []
    assert due_delivery_ids(T0 + timedelta(minutes=3)) == []
    assert recover_lost_deliveries(T0 + timedelta(minutes=3)) == 1
    assert due_delivery_ids(T0 + timedelta(minutes=4)) == [delivery.pk]


def test_a_redelivery_is_one_attempt_now_with_the_same_id_and_body(hooked, receiver):
    delivery = record_attempt(hooked)
    perform_attempt(delivery.pk, now=T0)
    attempt = do_redeliver(Delivery.objects.get(pk=delivery.pk))
    assert attempt.number == 2 and attempt.redelivery is True and attempt.ok is True
    first, second = receiver.requests
    assert first["headers"]["X-Foldrun-Delivery"] == second["headers"]["X-Foldrun-Delivery"] == delivery.public_id
    assert first["body"] == second["body"]
    assert second["headers"]["X-Foldrun-Attempt"] == "2"


def _give_up(delivery, start):
    now = start
    while True:
        result = perform_attempt(delivery.pk, now=now, clock=lambda n=now: n)
        if result.next_attempt_at is None:
            return now
        now = result.next_attempt_at


def test_an_endpoint_failing_for_three_days_is_switched_off_when_a_delivery_gives_up(
    hooked, receiver, alice, django_capture_on_commit_callbacks
):
    receiver.answers = [(500, b"", 0.0)]
    Endpoint.objects.all().delete()
    first = record_attempt(hooked, now=T0)
    perform_attempt(first.pk, now=T0)  # the first failure starts the clock
    endpoint = Endpoint.objects.get(workspace=hooked)
    assert endpoint.failing_since == T0 and endpoint.disabled_at is None
    later = T0 + timedelta(days=3)
    # A first attempt that fails does not switch it off on its own, however old the last failure.
    second = record_attempt(hooked, now=later)
    retry_at = perform_attempt(second.pk, now=later).next_attempt_at
    assert Endpoint.objects.get(workspace=hooked).disabled_at is None
    with django_capture_on_commit_callbacks(execute=True):
        end = _give_up(Delivery.objects.get(pk=second.pk), retry_at)
    endpoint.refresh_from_db()
    assert endpoint.disabled_at is not None
    assert len(send_outbox()) == 1
    assert send_outbox()[0].to == ["alice@example.com"]
    assert send_outbox()[0].subject == "The notification webhook of rank-desk has been switched off"
    skipped = record_attempt(hooked, now=end)
    assert skipped.status == "skipped" and skipped.next_attempt_at is None
    count = len(receiver.requests)
    assert perform_attempt(skipped.pk, now=end) is None and len(receiver.requests) == count


def test_an_accepted_redelivery_switches_the_endpoint_back_on(hooked, receiver):
    delivery = record_attempt(hooked)
    perform_attempt(delivery.pk, now=T0)
    Endpoint.objects.filter(workspace=hooked).update(disabled_at=T0, failing_since=T0 - timedelta(days=4))
    do_redeliver(Delivery.objects.get(pk=delivery.pk))
    endpoint = Endpoint.objects.get(workspace=hooked)
    assert endpoint.disabled_at is None and endpoint.failing_since is None
    assert record_attempt(hooked).status == "pending"


def test_changing_the_url_starts_the_endpoint_fresh(hooked, receiver):
    record_attempt(hooked)
    Endpoint.objects.filter(workspace=hooked).update(disabled_at=T0, failing_since=T0)
    write_agents_md(hooked, f"---\nnotify:\n  url: {receiver.url}?v=2\n---\n")
    assert record_attempt(hooked).status == "pending"
    endpoint = Endpoint.objects.get(workspace=hooked)
    assert endpoint.disabled_at is None and endpoint.failing_since is None


def test_the_log_is_kept_thirty_days(hooked):
    old = record_attempt(hooked, now=T0)
    Delivery.objects.filter(pk=old.pk).update(status="succeeded", created_at=T0)
    recent = record_attempt(hooked, now=T0 + timedelta(days=29))
    Delivery.objects.filter(pk=recent.pk).update(status="succeeded")
    assert do_purge_old_deliveries(now=T0 + timedelta(days=30, minutes=1)) == 1
    assert list(Delivery.objects.values_list("pk", flat=True)) == [recent.pk]


def test_a_receiver_slower_than_8_seconds_is_a_failed_attempt_and_retried(hooked, receiver):
    receiver.answers = [(200, b"too late", 10.0)]
    result = perform_attempt(record_attempt(hooked).pk, now=T0)
    assert result.attempt.ok is False and result.attempt.status_code is None
    assert result.attempt.error == "timed out after 8 seconds"
    assert 7900 <= result.attempt.duration_ms < 9500
    assert result.next_attempt_at is not None


def test_a_burst_of_deliveries_kicks_one_drain_which_sends_them_all_once(
    hooked, receiver, django_capture_on_commit_callbacks
):
    from notify.actions import drain
    from notify.models import Kick

    with django_capture_on_commit_callbacks(execute=True):
        deliveries = [do_record_delivery(hooked, "failed", json.dumps({"n": n})) for n in range(20)]
    assert list(Kick.objects.values_list("name", "pending")) == [("deliveries", True)]
    assert drain() == 20
    assert Kick.objects.get().pending is True  # a full batch of 16 asked another worker to join in
    assert sorted(r["headers"]["X-Foldrun-Delivery"] for r in receiver.requests) == sorted(
        d.public_id for d in deliveries
    )
    assert set(Delivery.objects.values_list("status", flat=True)) == {"succeeded"}


def test_the_sweep_clears_a_kick_a_lost_drain_left_behind(hooked):
    from notify.models import Kick
    from notify.tasks import sweep_due_deliveries

    Kick.objects.create(name="deliveries", pending=True)
    sweep_due_deliveries()
    assert Kick.objects.get().pending is False
