"""The lease primitive (foldrun/leases.py): one holder at a time, renewed while alive, lost when it stops."""

from __future__ import annotations

import datetime as dt
import time

import pytest
from django.test import override_settings
from django.utils import timezone

from foldrun import leases
from runs.models import Run, Step


@pytest.fixture
def step(workspace):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", plan=[])
    return Step.objects.create(run=run, index=1, agent="reader", status="running")


def test_a_holder_id_names_no_host_or_process():
    import os
    import socket

    holder = leases.new_holder()
    assert socket.gethostname() not in holder and str(os.getpid()) not in holder
    assert holder != leases.new_holder()


def test_only_one_of_two_claimants_takes_a_free_row(step):
    first, second = leases.new_holder(), leases.new_holder()
    assert leases.claim(Step, step.pk, first) is True
    assert leases.claim(Step, step.pk, second) is False
    step.refresh_from_db()
    assert step.lease_holder == first
    assert step.lease_until > timezone.now() + dt.timedelta(seconds=leases.lease_seconds() - 5)


def test_a_live_lease_is_kept_and_an_expired_one_can_be_taken_over(step):
    first, second = leases.new_holder(), leases.new_holder()
    assert leases.claim(Step, step.pk, first)
    later = timezone.now() + dt.timedelta(seconds=leases.lease_seconds() + 1)
    assert list(leases.expired(Step)) == []
    assert list(leases.expired(Step, now=later)) == [step]
    assert leases.claim(Step, step.pk, second, now=later) is True
    assert leases.renew(Step, step.pk, first) is False  # the first holder finds it lost
    assert leases.renew(Step, step.pk, second) is True


def test_a_claim_honours_its_conditions(step):
    assert leases.claim(Step, step.pk, leases.new_holder(), status="queued") is False
    assert leases.claim(Step.objects.filter(status="running"), step.pk, leases.new_holder()) is True


def test_release_frees_the_row_only_for_its_holder(step):
    first = leases.new_holder()
    leases.claim(Step, step.pk, first)
    leases.release(Step, step.pk, "someone-else")
    assert Step.objects.get(pk=step.pk).lease_holder == first
    leases.release(Step, step.pk, first)
    step.refresh_from_db()
    assert (step.lease_holder, step.lease_until) == ("", None)


@pytest.mark.django_db(transaction=True)
@override_settings(FOLDRUN_LEASE_SECONDS=1)
def test_a_heartbeat_keeps_the_lease_and_notices_when_another_holder_takes_it(workspace):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", plan=[])
    step = Step.objects.create(run=run, index=1, agent="reader", status="running")
    holder = leases.new_holder()
    assert leases.claim(Step, step.pk, holder)
    with leases.Heartbeat(Step, step.pk, holder) as beat:
        time.sleep(2.5)  # longer than the lease: only the heartbeat keeps it
        assert not leases.expired(Step).filter(pk=step.pk).exists()
        beat.check()
        Step.objects.filter(pk=step.pk).update(lease_holder="the-sweep")
        deadline = time.monotonic() + 5
        while not beat.lost and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(leases.LeaseLost):
            beat.check()


def test_the_lease_length_is_the_setting():
    with override_settings(FOLDRUN_LEASE_SECONDS=7):
        assert leases.LEASE_SECONDS == 7
