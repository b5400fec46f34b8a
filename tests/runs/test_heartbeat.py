"""The process's one heartbeat thread (foldrun/leases.py `_Beater`): every live lease renewed by it, each on its
own interval; a lease another holder took turns lost while the others keep theirs; a stopped lease is renewed
no more; a forked child (a Celery prefork worker) renews its leases from a beater of its own."""

from __future__ import annotations

import os
import select
import threading
import time
import warnings

import pytest
from django.db import connection, transaction

from foldrun import leases
from runs.models import Run, Step
from tests.conftest import wait_for

pytestmark = pytest.mark.django_db(transaction=True)  # the heartbeat thread reads the rows on its own connection


@pytest.fixture
def steps(workspace):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", plan=[])

    def make(n: int) -> list[Step]:
        return [Step.objects.create(run=run, index=i + 1, agent="reader", status="running") for i in range(n)]

    return make


@pytest.fixture
def renewals(monkeypatch):
    """Which thread renewed which row (the real renew, watched)."""
    seen: list[tuple[int, int]] = []
    real = leases.renew

    def watched(model, pk, holder):
        seen.append((pk, threading.get_ident()))
        return real(model, pk, holder)

    monkeypatch.setattr(leases, "renew", watched)
    return seen


def _until(step: Step):
    return Step.objects.values_list("lease_until", flat=True).get(pk=step.pk)


def _claimed(step: Step) -> str:
    holder = leases.new_holder()
    assert leases.claim(Step, step.pk, holder)
    return holder


def test_two_live_leases_are_both_renewed_by_one_thread_and_entering_starts_none(steps, renewals):
    first, second = steps(2)
    holders = [_claimed(first), _claimed(second)]
    taken = [_until(first), _until(second)]
    with leases.Heartbeat(Step, first.pk, holders[0], interval=0.1) as a:
        threads = threading.active_count()
        with leases.Heartbeat(Step, second.pk, holders[1], interval=0.15) as b:
            assert threading.active_count() == threads  # the second lease started no thread of its own
            wait_for(
                lambda: (
                    {pk for pk, _ in renewals} >= {first.pk, second.pk}
                    and _until(first) > taken[0]
                    and _until(second) > taken[1]
                ),
                timeout=10,
                interval=0.05,
            )
            assert not a.lost and not b.lost
    renewers = {ident for _, ident in renewals}
    assert len(renewers) == 1 and renewers != {threading.get_ident()}
    assert [t.name for t in threading.enumerate() if t.ident in renewers] == ["lease-heartbeat"]


def test_each_lease_is_renewed_on_its_own_interval(steps, renewals):
    fast, slow = steps(2)
    with (
        leases.Heartbeat(Step, fast.pk, _claimed(fast), interval=0.1),
        leases.Heartbeat(Step, slow.pk, _claimed(slow), interval=0.6),
    ):
        time.sleep(1.3)
    counts = {pk: sum(1 for seen, _ in renewals if seen == pk) for pk in (fast.pk, slow.pk)}
    assert counts[slow.pk] in (1, 2, 3) and counts[fast.pk] >= 6, counts


def test_a_lease_another_holder_took_turns_lost_and_the_others_are_still_renewed(steps, renewals):
    taken_over, kept = steps(2)
    with (
        leases.Heartbeat(Step, taken_over.pk, _claimed(taken_over), interval=0.1) as lost,
        leases.Heartbeat(Step, kept.pk, _claimed(kept), interval=0.1) as held,
    ):
        Step.objects.filter(pk=taken_over.pk).update(lease_holder="the-sweep")
        wait_for(lambda: lost.lost, timeout=5, interval=0.05)
        with pytest.raises(leases.LeaseLost):
            lost.check()
        after = len(renewals)
        wait_for(lambda: sum(1 for pk, _ in renewals[after:] if pk == kept.pk) >= 2, timeout=5, interval=0.05)
        assert all(pk != taken_over.pk for pk, _ in renewals[after + 1 :])  # a lost lease is renewed no more
        held.check()
    assert Step.objects.get(pk=taken_over.pk).lease_holder == "the-sweep"


def test_a_stopped_lease_is_renewed_no_more(steps, renewals):
    step, other = steps(2)
    beat = leases.Heartbeat(Step, step.pk, _claimed(step), interval=0.1)
    with beat, leases.Heartbeat(Step, other.pk, _claimed(other), interval=0.1):
        wait_for(lambda: any(pk == step.pk for pk, _ in renewals), timeout=5, interval=0.05)
        beat.stop()
        stopped_at, count = _until(step), len(renewals)
        time.sleep(0.5)  # five of its intervals; the other lease is renewed meanwhile
        assert _until(step) == stopped_at
        assert all(pk == other.pk for pk, _ in renewals[count:]) and len(renewals) > count


def test_a_lease_past_its_time_is_lost_even_while_the_thread_is_held_up(steps, monkeypatch, settings):
    # One renew stuck on the database holds the thread up; the other lease still reads lost once its time is
    # out, without waiting for the thread.
    settings.FOLDRUN_LEASE_SECONDS = 1
    stuck, waiting = steps(2)
    release = threading.Event()
    real = leases.renew

    def renew(model, pk, holder):
        if pk == stuck.pk:
            release.wait(10)
        return real(model, pk, holder)

    monkeypatch.setattr(leases, "renew", renew)
    try:
        with (
            leases.Heartbeat(Step, stuck.pk, _claimed(stuck), interval=0.05),
            leases.Heartbeat(Step, waiting.pk, _claimed(waiting), interval=0.3) as other,
        ):
            started = time.monotonic()
            wait_for(lambda: other.lost, timeout=5, interval=0.02)
            assert 0.9 <= time.monotonic() - started < 2.5
            release.set()
    finally:
        release.set()


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a renew's lock wait is bounded on PostgreSQL")
def test_a_row_locked_by_another_transaction_holds_up_no_other_leases_renewals(steps, renewals):
    stuck, other = steps(2)
    locked, release = threading.Event(), threading.Event()

    def hold_the_row() -> None:  # another transaction (the sweep's, say) keeps the row locked for a while
        try:
            with transaction.atomic():
                Step.objects.select_for_update().get(pk=stuck.pk)
                locked.set()
                release.wait(10)
        finally:
            connection.close()

    holder = threading.Thread(target=hold_the_row)
    with (
        leases.Heartbeat(Step, stuck.pk, _claimed(stuck), interval=0.1) as blocked,
        leases.Heartbeat(Step, other.pk, _claimed(other), interval=0.2) as held,
    ):
        holder.start()
        try:
            assert locked.wait(5)
            before, count = _until(other), len(renewals)
            time.sleep(1.5)
            assert _until(other) > before  # renewed while the beater's renews of the locked row kept failing
            assert sum(1 for pk, _ in renewals[count:] if pk == other.pk) >= 4
        finally:
            release.set()
            holder.join(10)
        assert not blocked.lost and not held.lost  # a renew that waited too long is no loss


def _child_renews(step_pk: int, holder: str, write: int) -> None:
    """In the forked child: take the lease in a heartbeat, say whose beater renews it."""
    code = 1
    try:
        inherited = leases._BEATER
        with leases.Heartbeat(Step, step_pk, holder, interval=0.1):
            beater = leases._BEATER
            time.sleep(1.0)  # ten intervals: the parent watches the row's expiry move on
        ok = beater is not inherited and beater.pid == os.getpid() and beater._thread.is_alive()
        os.write(write, b"ok" if ok else b"wrong beater")
        code = 0
    finally:
        os._exit(code)


def test_a_forked_child_renews_its_leases_from_a_beater_of_its_own(steps):
    parents, childs = steps(2)
    with leases.Heartbeat(Step, parents.pk, _claimed(parents), interval=0.1):
        parent_beater = leases._BEATER
        assert parent_beater is not None and parent_beater.pid == os.getpid()
        holder = _claimed(childs)
        taken = _until(childs)
        read, write = os.pipe()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # fork() of a process with threads
            pid = os.fork()
        if pid == 0:
            _child_renews(childs.pk, holder, write)
        os.close(write)
        try:
            wait_for(lambda: _until(childs) > taken, timeout=10, interval=0.05)  # the child renewed its row
            assert select.select([read], [], [], 10)[0]
            assert os.read(read, 100) == b"ok"
        finally:
            os.close(read)
            _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert leases._BEATER is parent_beater and parent_beater._thread.is_alive()  # the parent's is its own
