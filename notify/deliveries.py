"""Webhook deliveries: recorded first, attempted by workers that hold each
delivery's lease (foldrun/leases.py) while they post, recorded, retried on
the spec's backoff, and recovered by the beat sweep when a worker is lost
(notify/sweep.py); the endpoint each goes to is notify/endpoints.py.

A delivery's next attempt is a time in its row (`next_attempt_at`), never a
countdown message a dead worker could take with it: the sweep, every
FOLDRUN_SWEEP_SECONDS, queues a drain whenever something is due.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Callable

from django.db import transaction
from django.utils import timezone

from accounts.models import Workspace
from foldrun import leases
from foldrun.contract.rules.notify import NotifyConfig

from . import kicks
from .config import notify_config_for, webhook_url
from .destination import destination as _destination, post as _post
from .endpoints import endpoint_state, maybe_switch_off
from .models import MAX_ATTEMPTS, RETRY_DELAYS, Attempt, Delivery, DeliveryStatus, Endpoint, Kick
from .webhook import Outcome

log = logging.getLogger(__name__)

DRAIN_TASK = "notify.drain_deliveries"


def do_record_delivery(
    workspace: Workspace,
    event: str,
    body: str,
    *,
    run_public_id: str = "",
    now: datetime | None = None,
    config: NotifyConfig | None | object = ...,
) -> Delivery:
    """Record a webhook delivery before its first attempt and queue that attempt.

    A delivery to a switched-off endpoint is recorded `skipped` and not tried. `config`: the workspace's
    notify: as the caller (events.dispatch) already read it; read here when not given.
    """
    now = now or timezone.now()
    if config is ...:
        config = notify_config_for(workspace)
    url = webhook_url(workspace, config) if config is not None else None
    with transaction.atomic():
        endpoint = endpoint_state(workspace, url)
        skipped = endpoint is not None and endpoint.disabled_at is not None
        delivery = Delivery.objects.create(
            account=workspace.account,
            workspace=workspace,
            event=event,
            run_public_id=run_public_id,
            body=body,
            status=DeliveryStatus.SKIPPED if skipped else DeliveryStatus.PENDING,
            next_attempt_at=None if skipped else now,
            finished_at=now if skipped else None,
            endpoint_fingerprint=endpoint.fingerprint if endpoint else "",
        )
        if not skipped:
            transaction.on_commit(kick_drain)
    return delivery


KICK = "deliveries"
# See that a drain of due deliveries is on its way (kicks.kicker).
kick_drain = kicks.kicker(KICK, DRAIN_TASK)


def drain(max_seconds: float = 30.0) -> int:
    """Attempt due deliveries in batches until none is left (or for
    `max_seconds`, then hand on to a fresh drain). Returns how many."""
    Kick.objects.filter(name=KICK).update(pending=False)
    started = time.monotonic()
    done = 0
    while True:
        results = perform_batch([], fill=True)
        done += len(results)
        if not results:
            return done
        if len(results) == BATCH or time.monotonic() - started > max_seconds:
            # More is waiting: let another worker process join in (or take over).
            kick_drain()
        if time.monotonic() - started > max_seconds:
            return done


def claim(delivery_pk: int, now: datetime, holder: str | None = None) -> bool:
    """Take a due delivery's lease for one attempt; False when another worker
    holds it, it is not due, or it is finished. One conditional update, so two
    workers handed the same delivery send it once."""
    return leases.claim(
        Delivery,
        delivery_pk,
        holder or leases.new_holder(),
        now=now,
        status=DeliveryStatus.PENDING,
        next_attempt_at__lte=now,
        lease_holder="",
    )


def _due(now: datetime):
    """Pending, due, and held by nobody. A row whose lease merely ran out is
    not due: its holder died with an attempt in flight that the receiver may
    have got, so the sweep writes that attempt down as lost first (and the
    next one carries the next number) — taking it straight over would send
    the same attempt number twice."""
    return Delivery.objects.filter(
        status=DeliveryStatus.PENDING, next_attempt_at__lte=now, lease_holder="", lease_until__isnull=True
    )


# A worker takes up to this many due deliveries at once and posts them in
# parallel: the per-attempt cost of the task, the queries and the commits is
# shared, and one slow receiver holds up no more than one round of 8 s.
BATCH = 16


def _claim_many(pks: list[int], now: datetime, fill: bool, holder: str) -> list[Delivery]:
    """Claim `pks` (those still due) and, with `fill`, other due deliveries
    up to BATCH, all under one lease holder (foldrun/leases.py): conditional
    updates, so what this worker got is exactly what carries its holder id."""
    lease = {"lease_holder": holder, "lease_until": now + timedelta(seconds=leases.lease_seconds())}
    if not pks:
        # A drain: the oldest due ones nobody holds; rows another drain is
        # claiming right now are skipped rather than waited for.
        with transaction.atomic():
            pks_due = list(
                _due(now)
                .select_for_update(skip_locked=True)
                .order_by("next_attempt_at")
                .values_list("pk", flat=True)[:BATCH]
            )
            if pks_due:
                _due(now).filter(pk__in=pks_due).update(**lease)
        return list(Delivery.objects.select_related("workspace", "workspace__account").filter(lease_holder=holder))
    own = _due(now).filter(pk__in=pks).update(**lease)
    if not own:
        # Another worker's batch took it (or it is not due): every other due
        # delivery has its own task or the sweep, so this one stops here.
        return []
    if fill and len(pks) < BATCH:
        others = list(
            _due(now).exclude(pk__in=pks).order_by("next_attempt_at").values_list("pk", flat=True)[: BATCH - len(pks)]
        )
        if others:
            _due(now).filter(pk__in=others).update(**lease)
    return list(Delivery.objects.select_related("workspace", "workspace__account").filter(lease_holder=holder))


@dataclass
class AttemptResult:
    attempt: Attempt
    next_attempt_at: datetime | None
    gave_up: bool


@dataclass
class _Sent:
    delivery: Delivery
    number: int
    outcome: Outcome
    url: str | None
    started: datetime
    finished: datetime
    redelivery: bool = False


def perform_attempt(
    delivery_pk: int, *, now: datetime | None = None, clock: Callable[[], datetime] | None = None
) -> AttemptResult | None:
    """Claim a due delivery, make its next attempt and record it.

    None when it was not claimable (not due, held, or done). `clock` gives
    the time the attempt finished (the retry delay counts from it).
    """
    results = perform_batch([delivery_pk], now=now, clock=clock, fill=False)
    return results[0] if results else None


def perform_batch(
    pks: list[int], *, now: datetime | None = None, clock: Callable[[], datetime] | None = None, fill: bool = True
) -> list[AttemptResult]:
    """Claim due deliveries (`pks`, topped up to BATCH with other due ones
    when `fill`), post them in parallel and record every attempt.

    The batch's lease is renewed by a heartbeat while the POSTs run; a batch
    that lost it (the sweep judged this worker dead and took the rows) posts
    nothing more and records nothing: the sweep has written those attempts
    down as lost."""
    now = now or timezone.now()
    holder = leases.new_holder()
    deliveries = _claim_many(pks, now, fill, holder)
    if not deliveries:
        return []
    held = [d.pk for d in deliveries]
    with leases.Heartbeat(Delivery, held, holder) as beat:
        destinations: dict[int, tuple[str | None, list[bytes], Outcome | None]] = {}
        for delivery in deliveries:
            if delivery.workspace_id not in destinations:
                destinations[delivery.workspace_id] = _destination(delivery.workspace, now)

        def send(delivery: Delivery) -> _Sent | None:
            try:
                beat.check()  # never post for a lease another holder may have taken
            except leases.LeaseLost:
                return None
            url, secrets, refused = destinations[delivery.workspace_id]
            number = delivery.attempts_made + 1
            outcome = refused if refused is not None else _post(delivery, number, url, secrets)
            return _Sent(delivery, number, outcome, url if refused is None else None, now, now)

        if len(deliveries) == 1:
            sent = [send(deliveries[0])]
        else:
            sent = list(_pool().map(send, deliveries))
        try:
            beat.check()
        except leases.LeaseLost:
            log.warning("a delivery batch lost its lease while posting; recording nothing")
            return []
    done = [item for item in sent if item is not None]
    if not done:
        return []
    # One finishing time for the batch (the slowest attempt's end): retries
    # count from it, and rows that share it are updated together.
    finished = clock() if clock else now + timedelta(milliseconds=max(i.outcome.duration_ms for i in done))
    for item in done:
        item.finished = finished
    return _record_many(done, holder)


_pool_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_executor_pid = 0


def _pool() -> ThreadPoolExecutor:
    """One thread pool per process (made after a prefork worker forks)."""
    global _executor, _executor_pid
    with _pool_lock:
        if _executor is None or _executor_pid != os.getpid():
            _executor = ThreadPoolExecutor(max_workers=BATCH, thread_name_prefix="notify-post")
            _executor_pid = os.getpid()
        return _executor


def record_attempt(
    delivery_pk: int,
    number: int,
    outcome: Outcome,
    url: str | None,
    *,
    started: datetime,
    finished: datetime,
    redelivery: bool,
    holder: str,
) -> AttemptResult | None:
    delivery = Delivery.objects.select_related("workspace").get(pk=delivery_pk)
    results = _record_many([_Sent(delivery, number, outcome, url, started, finished, redelivery)], holder)
    return results[0] if results else None


def _record_many(items: list[_Sent], holder: str) -> list[AttemptResult]:
    """Write the attempts down and set what comes next, in one transaction —
    for the rows `holder` still holds. A row whose lease another holder took
    meanwhile is left alone: that holder (the sweep) records it."""
    with transaction.atomic():
        still = set(
            Delivery.objects.select_for_update()
            .filter(pk__in=[i.delivery.pk for i in items], lease_holder=holder)
            .values_list("pk", flat=True)
        )
        items = [i for i in items if i.delivery.pk in still]
        results: list[AttemptResult] = []
        rows = []
        for item in items:
            d = item.delivery
            next_at: datetime | None = None
            gave_up = False
            d.attempts_made, d.lease_until, d.lease_holder = item.number, None, ""
            if item.outcome.ok:
                d.status, d.next_attempt_at, d.finished_at = DeliveryStatus.SUCCEEDED, None, item.finished
            elif item.redelivery:
                d.status, d.next_attempt_at, d.finished_at = DeliveryStatus.FAILED, None, item.finished
            elif item.number >= MAX_ATTEMPTS:
                d.status, d.next_attempt_at, d.finished_at = DeliveryStatus.FAILED, None, item.finished
                gave_up = True
            else:
                # The retry is a time in the row, not a countdown message: the
                # beat sweep (every few seconds) sends it when it is due, so a
                # worker lost meanwhile takes nothing with it.
                next_at = item.finished + timedelta(seconds=RETRY_DELAYS[item.number - 1])
                d.next_attempt_at = next_at
            rows.append(
                Attempt(
                    delivery_id=d.pk,
                    number=item.number,
                    redelivery=item.redelivery,
                    started_at=item.started,
                    status_code=item.outcome.status_code,
                    duration_ms=item.outcome.duration_ms,
                    response_excerpt=item.outcome.excerpt[:500],
                    error=item.outcome.error[:500],
                    ok=item.outcome.ok,
                )
            )
            results.append(AttemptResult(rows[-1], next_at, gave_up))
        if not items:
            return []
        Attempt.objects.bulk_create(rows)
        # Rows that end the same way share one UPDATE (a batch is mostly one group).
        fields = ["attempts_made", "lease_until", "lease_holder", "status", "next_attempt_at", "finished_at"]
        groups_by_values: dict[tuple, list[int]] = {}
        for item in items:
            values = tuple(getattr(item.delivery, f) for f in fields)
            groups_by_values.setdefault(values, []).append(item.delivery.pk)
        for values, pks in groups_by_values.items():
            Delivery.objects.filter(pk__in=pks).update(**dict(zip(fields, values)))
        # The endpoint, once per workspace and URL in this batch.
        groups: dict[tuple[int, str], list[tuple[_Sent, AttemptResult]]] = {}
        for item, result in zip(items, results):
            if item.url:
                groups.setdefault((item.delivery.workspace_id, item.url), []).append((item, result))
        for (_ws, url), members in groups.items():
            workspace = members[0][0].delivery.workspace
            endpoint = endpoint_state(workspace, url)
            accepted = [i for i, _r in members if i.outcome.ok]
            if accepted:
                if endpoint.failing_since is not None or endpoint.disabled_at is not None:
                    # The first accepted attempt (a redelivery or a test too) switches it back on.
                    Endpoint.objects.filter(pk=endpoint.pk).update(
                        failing_since=None,
                        disabled_at=None,
                        owner_mailed_at=None,
                        last_success_at=max(i.finished for i in accepted),
                    )
                continue
            if endpoint.failing_since is None:
                first = min(i.started for i, _r in members)
                Endpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=True).update(failing_since=first)
            gave_up = [i for i, r in members if r.gave_up]
            if gave_up:
                maybe_switch_off(endpoint.pk, workspace, max(i.finished for i in gave_up))
    return results


def due_delivery_ids(now: datetime | None = None, limit: int = 20000) -> list[int]:
    """Pending deliveries whose attempt is due and that nobody holds."""
    now = now or timezone.now()
    return list(_due(now).order_by("next_attempt_at").values_list("pk", flat=True)[:limit])
