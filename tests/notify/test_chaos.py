"""Issue 8's chaos proof for webhooks: 200 deliveries to a receiver that
fails and then recovers, while the whole worker process group (the worker,
its pool children and its embedded beat) is killed with -9 several times and
started again. Leases are 2 seconds and the sweep runs every second, so it
is over in a couple of minutes, on whichever broker the suite runs (the
embedded filesystem broker, or Redis in CI).

At the end: every delivery succeeded; the receiver never saw one attempt of
one delivery twice; every attempt it saw is in the log under the same
number, and every attempt the log has that it did not see is one the log
calls lost ("the worker was lost during this attempt") — a worker killed
after writing the claim and before its bytes left; each delivery's attempts
are numbered 1, 2, … with no gap; and each retry went out within seconds of
its due time, though its worker had died meanwhile.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from django.db import transaction

from notify.actions import do_record_delivery
from notify.models import Attempt, Delivery
from tests.conftest import wait_for

from .conftest import receiver, write_agents_md  # noqa: F401

REPO = Path(__file__).resolve().parents[2]
DELIVERIES = 200
KILLS_WHILE_FAILING = 3
LEASE_SECONDS = 2

SETTINGS = """from foldrun.settings.test import *  # noqa: F401,F403
from foldrun.settings.test import CELERY_BEAT_SCHEDULE

# Only notify's sweep fires, every second (the install's entry, only quicker).
CELERY_BEAT_SCHEDULE = {"notify-sweep-due-deliveries": dict(CELERY_BEAT_SCHEDULE["notify-sweep-due-deliveries"],
                                                            schedule=1.0)}
"""


class Workers:
    """One worker with its embedded beat, in its own process group, so a
    kill takes all of it at once — as an OOM killer or a lost machine does."""

    def __init__(self, tmp_path: Path) -> None:
        from django.db import connection

        (tmp_path / "chaos_settings.py").write_text(SETTINGS)
        self.tmp_path = tmp_path
        self.env = dict(os.environ)
        self.env.update(
            {
                "FOLDRUN_TEST_DB_NAME": connection.settings_dict["NAME"],
                "DJANGO_SETTINGS_MODULE": "chaos_settings",
                "PYTHONPATH": os.pathsep.join([str(tmp_path), str(REPO)]),
                "FOLDRUN_LEASE_SECONDS": str(LEASE_SECONDS),
                "FOLDRUN_SWEEP_SECONDS": "1",
            }
        )
        self.process: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> None:
        self.starts += 1
        log_path = self.tmp_path / f"worker-{self.starts}.log"
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "foldrun",
                "worker",
                "-B",
                "-s",
                str(self.tmp_path / f"beat-schedule-{self.starts}"),
                "-l",
                "info",
                "--concurrency",
                "2",
                "--without-mingle",
                "--without-gossip",
                "--without-heartbeat",
                "-Q",
                self.env["FOLDRUN_TEST_QUEUE"],
            ],
            env=self.env,
            stdout=open(log_path, "wb"),
            stderr=subprocess.STDOUT,
            cwd=REPO,
            start_new_session=True,
        )
        wait_for(lambda: b"ready." in log_path.read_bytes() or self.process.poll() is not None, timeout=60)
        assert self.process.poll() is None, log_path.read_text(errors="replace")[-3000:]

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.kill()


@pytest.mark.e2e
def test_200_deliveries_through_a_worker_killed_again_and_again_lose_nothing_and_send_nothing_twice(
    transactional_db, workspace, receiver, tmp_path
):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    # Failing, and slow enough that a kill always finds attempts in flight.
    receiver.answers = [(500, b"down for maintenance", 0.3)]
    workers = Workers(tmp_path)
    workers.start()
    try:
        with transaction.atomic():
            ids = {
                do_record_delivery(workspace, "failed", json.dumps({"text": f"delivery {n}"})).public_id
                for n in range(DELIVERIES)
            }
        for _ in range(KILLS_WHILE_FAILING):
            seen = len(receiver.requests)
            wait_for(lambda s=seen: len(receiver.requests) > s, timeout=60)  # an attempt is in flight now
            workers.kill()
            workers.start()
        # Every delivery has made its first attempt (answered, or lost with its worker).
        wait_for(lambda: not Delivery.objects.filter(attempts_made=0).exists(), timeout=90)
        receiver.answers = [(200, b"ok", 0.0)]  # the receiver recovers
        due = dict(Delivery.objects.values_list("public_id", "next_attempt_at"))
        # The retries wait a minute in their rows; the worker dies meanwhile and a new one starts.
        workers.kill()
        workers.start()
        wait_for(lambda: Delivery.objects.filter(status="succeeded").count() == DELIVERIES, timeout=180)
        time.sleep(3.0)  # several more sweeps: none sends anything again
    finally:
        workers.stop()

    received = [
        (r["headers"]["X-Foldrun-Delivery"], int(r["headers"]["X-Foldrun-Attempt"]), r["at"]) for r in receiver.requests
    ]
    seen = Counter((dlv, number) for dlv, number, _at in received)
    assert [key for key, count in seen.items() if count > 1] == []  # none sent twice
    logged = {
        (dlv, number): lost
        for dlv, number, lost in Attempt.objects.values_list("delivery__public_id", "number", "lost")
    }
    assert {dlv for dlv, _n in logged} == ids
    assert set(seen) <= set(logged)  # everything the receiver got is on the log, under its number
    unseen = set(logged) - set(seen)
    assert all(logged[key] for key in unseen)  # what it did not get, the log calls lost
    lost = Attempt.objects.filter(lost=True)
    assert lost.count() >= KILLS_WHILE_FAILING  # each kill found attempts in flight
    assert set(lost.values_list("error", flat=True)) == {"the worker was lost during this attempt"}
    for delivery in Delivery.objects.all():
        numbers = list(delivery.attempts.values_list("number", flat=True))
        assert numbers == list(range(1, delivery.attempts_made + 1))  # the next attempt carries the next number
        assert delivery.attempts.filter(ok=True).count() == 1 and delivery.status == "succeeded"
    accepted = Counter(
        dlv
        for dlv, number, _at in received
        if Attempt.objects.filter(delivery__public_id=dlv, number=number, ok=True).exists()
    )
    assert set(accepted.values()) == {1}
    # Each retry went out within seconds of its due time, though the worker that scheduled it was dead.
    late = [at - due[dlv].timestamp() for dlv, number, at in received if number == 2 and due[dlv]]
    assert late and max(late) < 10.0, sorted(late)[-5:]
