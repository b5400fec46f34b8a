"""The one lease primitive: who holds a piece of work, until when.

Every claimed piece of work (a step try, a delivery attempt, a key probe, an
outgoing mail) is a row with two fields, `lease_holder` and `lease_until`.
A worker takes the row with one atomic UPDATE that succeeds only when nobody
holds it (or the holder's lease ran out), renews it from the process's one
heartbeat thread while the work runs, and checks it still holds the row before
it commits a result. Liveness is the expiry in the database and nothing else:
a holder is never judged by its host name or process id, so a live holder on
another machine keeps its work, and a dead one loses it after `LEASE_SECONDS`.

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
import math
import os
import secrets
import threading
import time
from typing import Any

from django.conf import settings
from django.db import Error as DatabaseDriverError
from django.db import connection, models, transaction
from django.db.models import Q
from django.utils import timezone

from foldrun.databases import wait_for_locks_at_most

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
    taken = (
        _manager(qs_or_model)
        .filter(pk=pk, **where)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .update(lease_holder=holder, lease_until=now + dt.timedelta(seconds=lease_seconds()))
    )
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
    """Keep a lease while the work runs: renewed every `interval` (a third of `LEASE_SECONDS` unless given),
    counted from entering, by the process's one heartbeat thread (`_Beater`) until `stop()` or the end of the
    `with`. Entering and leaving start and join no thread: a fast step pays for neither.

    `lost` turns True once a renew finds another holder on the row, or once the lease would have run out
    without a successful renew (the database unreachable for that long: another holder may have it by now).
    A database error on one renew is not a loss; the next renewal tries again. Running out is judged whenever
    `lost` is read (and by `check()`), not only by the heartbeat thread: a renew of another lease stuck on the
    database cannot keep this one looking held past its time.
    """

    def __init__(self, model: Any, pk: Any, holder: str, *, interval: float | None = None) -> None:
        self.model = model
        self.pk = pk
        self.holder = holder
        self.interval = interval if interval is not None else max(lease_seconds() / 3, 0.05)
        self._lost = False
        self._good_until = time.monotonic() + lease_seconds()  # monotonic: a wall-clock step moves no lease
        self._due = math.inf  # when the beater renews next (set on entering, then after each renew)

    @property
    def lost(self) -> bool:
        if not self._lost and time.monotonic() >= self._good_until:
            self._lost = True  # for good: a later renew does not make work judged lost held again
        return self._lost

    @lost.setter
    def lost(self, value: bool) -> None:
        self._lost = value

    def __enter__(self) -> "Heartbeat":
        _beater().add(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def stop(self) -> None:
        """Renew no more: once this returns the row is not renewed again (a renew of it under way is waited
        for, as long as the old per-lease thread's join was)."""
        beater = _BEATER
        if beater is not None and beater.pid == os.getpid():
            beater.remove(self, timeout=max(self.interval * 2, 5))

    def check(self) -> None:
        """Raise LeaseLost if the lease is gone. Call before committing results."""
        if self.lost:
            raise LeaseLost(f"the lease on {getattr(self.model, '__name__', self.model)} {self.pk} was lost")


class _Beater:
    """The process's one heartbeat thread, serving every live lease: it sleeps until the earliest renewal is
    due, renews each due lease on its own database connection (closed on an error, and whenever no lease is
    live, so an idle process keeps none), and drops a lease once it is lost.

    Renewals are made one after another, so one stuck on the database must not cost the others: their
    judgement never waits for the thread (`Heartbeat.lost` reads the clock itself, and a lease found past its
    good-until when its turn comes is marked lost without a renew), and on PostgreSQL a renew waits at most
    half its lease's interval for a row lock another transaction holds (a failed renew, tried again at the next
    one), so the others' renewals are not held up past their own time by it."""

    def __init__(self) -> None:
        self.pid = os.getpid()
        self._cond = threading.Condition(threading.Lock())
        self._live: set[Heartbeat] = set()
        # When the thread next looks by itself: inf while it sleeps with nothing live, -inf while it is
        # awake (it looks again before sleeping). `add` wakes it only for a renewal due before then.
        self._wake_at = -math.inf
        self._renewing: Heartbeat | None = None
        self._connected = False
        self._thread = threading.Thread(target=self._run, name="lease-heartbeat", daemon=True)
        self._thread.start()

    def add(self, beat: Heartbeat) -> None:
        with self._cond:
            beat._due = time.monotonic() + beat.interval
            self._live.add(beat)
            if beat._due < self._wake_at:
                self._cond.notify()

    def remove(self, beat: Heartbeat, timeout: float) -> None:
        with self._cond:
            self._live.discard(beat)
            if self._renewing is beat and threading.current_thread() is not self._thread:
                self._cond.wait_for(lambda: self._renewing is not beat, timeout)
            if not self._live and self._connected:
                self._cond.notify()  # the last live lease: close the connection now, not at its next renewal

    def _run(self) -> None:
        while True:
            try:
                due = self._wait_for_due()
                if due is None:
                    _close()  # nothing live: the process keeps no connection for leases it does not hold
                    continue
                for beat in due:
                    self._renew(beat)
            except Exception:  # noqa: BLE001 - the one thread every lease of the process needs must not end
                log.exception("the lease heartbeat thread failed; going on")

    def _wait_for_due(self) -> list[Heartbeat] | None:
        """The leases due for renewal now, earliest first (sleeping until there are some); None to say the
        connection should be closed, nothing being live."""
        with self._cond:
            while True:
                if not self._live:
                    if self._connected:
                        self._connected, self._wake_at = False, -math.inf
                        return None
                    self._wake_at = math.inf
                    self._cond.wait()
                    continue
                now = time.monotonic()
                head = min(beat._due for beat in self._live)
                if head <= now:
                    self._wake_at = -math.inf
                    return sorted((beat for beat in self._live if beat._due <= now), key=lambda beat: beat._due)
                self._wake_at = head
                self._cond.wait(head - now)

    def _renew(self, beat: Heartbeat) -> None:
        with self._cond:
            if beat not in self._live:
                return  # stopped since
            self._renewing = beat
            self._connected = True
        keep = False
        try:
            keep = self._renew_one(beat)
        finally:
            with self._cond:
                self._renewing = None
                if not keep:
                    self._live.discard(beat)
                self._cond.notify_all()  # a stop() waiting for this renew

    def _renew_one(self, beat: Heartbeat) -> bool:
        """Renew one lease; False once it is lost (it is renewed no more)."""
        started = time.monotonic()
        if beat.lost:  # ran out unrenewed while the thread was held up (the database, another lease's renew)
            return False
        try:
            if not _renew_waiting_at_most(beat.interval / 2, beat):
                beat.lost = True  # another holder has the row
                return False
            beat._good_until = started + lease_seconds()  # from before the renew: never past the row's own
        except Exception:  # noqa: BLE001 - the database away for a moment: try again at the next renewal
            log.warning("renewing the lease on %s %s failed; trying again", beat.model, beat.pk, exc_info=True)
            _close()
        beat._due = started + beat.interval
        return not beat.lost


def _renew_waiting_at_most(seconds: float, beat: Heartbeat) -> bool:
    """`renew`, giving up (an error) after `seconds` waiting on a row lock, on PostgreSQL; SQLite's one writer
    waits its busy timeout."""
    with transaction.atomic():
        wait_for_locks_at_most(seconds)
        return renew(beat.model, beat.pk, beat.holder)


def _close() -> None:
    """Close the heartbeat thread's connection; one the server already dropped may fail to close, and is gone."""
    try:
        connection.close()
    except DatabaseDriverError:  # Django's wrapping of the driver's: InterfaceError (closed) or DatabaseError
        log.warning("closing the lease heartbeat's connection failed", exc_info=True)


_BEATER: _Beater | None = None
_BEATER_LOCK = threading.Lock()


def _beater() -> _Beater:
    """This process's beater, started by its first lease. A forked child (a Celery prefork worker) has the
    parent's `_BEATER` but not its thread: the pid says whose it is, and the child starts its own."""
    global _BEATER
    beater = _BEATER
    if beater is None or beater.pid != os.getpid():
        with _BEATER_LOCK:
            beater = _BEATER
            if beater is None or beater.pid != os.getpid():
                beater = _BEATER = _Beater()
    return beater


def _after_fork_in_child() -> None:
    # A lock some parent thread held at the fork stays held in the child, where nobody will release it.
    global _BEATER, _BEATER_LOCK
    _BEATER, _BEATER_LOCK = None, threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)
