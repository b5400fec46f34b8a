"""The one lease primitive: who holds a piece of work, until when.

Every claimed piece of work (a step try, a delivery attempt, a key probe, an
outgoing mail) is a row with two fields, `lease_holder` and `lease_until`.
A worker takes the row with one atomic UPDATE that succeeds only when nobody
holds it (or the holder's lease ran out), renews it from a heartbeat thread
while the work runs, and checks it still holds the row before it commits a
result. Liveness is the expiry in the database and nothing else: a holder is
never judged by its host name or process id, so a live holder on another
machine keeps its work, and a dead one loses it after `LEASE_SECONDS`.

The recovery sweep reads `expired(model)` and takes each row over with
`claim` (an expired lease is claimable), so two sweeps never act on one row.

    holder = new_holder()
    if claim(Step, pk, holder, status="running"):
        with Heartbeat(Step, pk, holder) as beat:
            ... work ...
            beat.check()          # LeaseLost: another holder took the row; commit nothing
"""
from __future__ import annotations

import datetime as dt
import logging
import secrets
import threading
from typing import Any

from django.conf import settings
from django.db import connection, models
from django.db.models import Q
from django.utils import timezone

log = logging.getLogger(__name__)

DEFAULT_LEASE_SECONDS = 30


class Leased(models.Model):
    """The two lease fields of a claimed row, for a model to inherit: which claim holds it and until when (indexed:
    the recovery sweeps read `expired`)."""

    lease_holder = models.CharField(max_length=64, blank=True, db_index=True)
    lease_until = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        abstract = True


class LeaseLost(Exception):
    """Another holder took the row (or the lease ran out unrenewed): stop and commit nothing."""


def lease_seconds() -> int:
    """`FOLDRUN_LEASE_SECONDS` (settings; validated at start-up). Read each time, so tests may override it."""
    return int(getattr(settings, "FOLDRUN_LEASE_SECONDS", DEFAULT_LEASE_SECONDS))


def __getattr__(name: str) -> Any:
    # `leases.LEASE_SECONDS` reads the setting when asked, not once at import.
    if name == "LEASE_SECONDS":
        return lease_seconds()
    raise AttributeError(name)


def new_holder() -> str:
    """A random id for ONE claim. Never a host name or pid: those say nothing about liveness."""
    return secrets.token_hex(16)


def _manager(qs_or_model: Any) -> models.QuerySet:
    if isinstance(qs_or_model, models.QuerySet):
        return qs_or_model
    return qs_or_model._default_manager.all()


def claim(qs_or_model: Any, pk: Any, holder: str, *, now: dt.datetime | None = None, **where: Any) -> bool:
    """Take row `pk` for `holder` when nobody holds it or its lease has expired (and `where` matches).

    One atomic UPDATE: of two claimants racing for the row exactly one gets True.
    """
    now = now or timezone.now()
    taken = (_manager(qs_or_model).filter(pk=pk, **where)
             .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
             .update(lease_holder=holder, lease_until=now + dt.timedelta(seconds=lease_seconds())))
    return taken == 1


def _rows(model: Any, pk: Any) -> tuple[models.QuerySet, int]:
    """Row `pk`, or — additive, for a batch one claim took together (a worker's
    batch of webhook deliveries) — every row of a list/tuple of pks."""
    if isinstance(pk, (list, tuple, set, frozenset)):
        pks = set(pk)
        return _manager(model).filter(pk__in=pks), len(pks)
    return _manager(model).filter(pk=pk), 1


def renew(model: Any, pk: Any, holder: str) -> bool:
    """Push the lease on by `LEASE_SECONDS` if `holder` still holds the row (every row, for a list of
    pks). False: the lease is lost (on at least one of them)."""
    until = timezone.now() + dt.timedelta(seconds=lease_seconds())
    rows, count = _rows(model, pk)
    return rows.filter(lease_holder=holder).update(lease_until=until) == count


def release(model: Any, pk: Any, holder: str) -> None:
    """Let go of the row (or rows) if still ours (a row another holder took is left alone)."""
    _rows(model, pk)[0].filter(lease_holder=holder).update(lease_holder="", lease_until=None)


def holds(model: Any, pk: Any, holder: str) -> bool:
    """Does `holder` hold the row now? (Inside a transaction holding the row's lock this is the commit check.)"""
    return _manager(model).filter(pk=pk, lease_holder=holder).exists()


def expired(model: Any, now: dt.datetime | None = None) -> models.QuerySet:
    """Rows whose lease ran out unrenewed: their holder is gone (what the recovery sweep acts on)."""
    return _manager(model).filter(lease_until__lt=now or timezone.now())


class Heartbeat:
    """Renew a lease every third of `LEASE_SECONDS` from a daemon thread while the work runs.

    `lost` turns True once a renew finds another holder on the row, or once the lease would have run out
    without a successful renew (the database unreachable for that long: another holder may have it by now).
    A database error on one renew is not a loss; the next tick tries again.
    """

    def __init__(self, model: Any, pk: Any, holder: str, *, interval: float | None = None) -> None:
        self.model = model
        self.pk = pk
        self.holder = holder
        self.interval = interval if interval is not None else max(lease_seconds() / 3, 0.05)
        self.lost = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._good_until = timezone.now() + dt.timedelta(seconds=lease_seconds())

    def __enter__(self) -> "Heartbeat":
        self._thread = threading.Thread(target=self._beat, name="lease-heartbeat", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=max(self.interval * 2, 5))

    def check(self) -> None:
        """Raise LeaseLost if the lease is gone. Call before committing results."""
        if not self.lost and timezone.now() >= self._good_until:
            self.lost = True
        if self.lost:
            raise LeaseLost(f"the lease on {getattr(self.model, '__name__', self.model)} {self.pk} was lost")

    def _beat(self) -> None:
        try:
            while not self._stop.wait(self.interval):
                try:
                    if renew(self.model, self.pk, self.holder):
                        self._good_until = timezone.now() + dt.timedelta(seconds=lease_seconds())
                    else:
                        self.lost = True
                        return
                except Exception:  # noqa: BLE001 - the database away for a moment: try again next tick
                    log.warning("renewing the lease on %s %s failed; trying again", self.model, self.pk,
                                exc_info=True)
                    connection.close()
                if timezone.now() >= self._good_until:
                    self.lost = True
                    return
        finally:
            connection.close()  # this thread's own connection
