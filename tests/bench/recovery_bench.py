"""Seconds from a worker's death to the re-run's start, against the target: lease + one sweep.

A script, not a pytest test:

    FOLDRUN_DATA_DIR=$(mktemp -d) .venv/bin/python tests/bench/recovery_bench.py [--kills 5] [--lease 30] [--sweep 5]

A real worker (with its embedded beat) runs a one-step read-only flow whose model answer takes longer than the
bench waits; the whole worker process group is killed with -9 mid-step and a new one started at once. The
figure is the time from the kill to the start of the step's second try (its `started_at`), printed beside
`FOLDRUN_LEASE_SECONDS + FOLDRUN_SWEEP_SECONDS` (about 35 s with the defaults) and the ratio to it.
It builds a throwaway test database (SQLite, or PostgreSQL when DATABASE_URL says so) and uses the configured
broker (filesystem, or Redis when CELERY_BROKER_URL says so).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.test")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--lease", type=int, default=30)
    parser.add_argument("--sweep", type=int, default=5)
    args = parser.parse_args()
    setup_test_environment()
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    from accounts.models import Account, Workspace
    from foldrun.celery import app
    from runs.actions import check_start_run
    from runs.models import Run, Try
    from tests.fakes.providers import FakeProvider
    from tests.runs.helpers import agent_file, push
    from tests.runs.workers import WorkerGroup

    fake = FakeProvider().start()
    logs = Path(os.environ.get("FOLDRUN_DATA_DIR", "/tmp")) / "recovery-bench"
    logs.mkdir(parents=True, exist_ok=True)
    workers = WorkerGroup(logs, lease_seconds=args.lease, sweep_seconds=args.sweep)
    figures: list[float] = []
    try:
        account = Account.objects.create(name="Bench")
        workspace = Workspace.objects.create(account=account, name="bench-desk")
        push(
            workspace,
            {
                "agents/a/agent.md": agent_file("a", fake, tools="[]"),
                "flows/one.md": "---\nname: one\n---\n1. [[a]] — Read.\n",
            },
        )
        workers.start()
        broker = app.conf.broker_url.split("://", 1)[0]
        print(f"database {connection.vendor}, broker {broker}, lease {args.lease} s, sweep every {args.sweep} s")
        for n in range(args.kills):
            fake.reply_text("never answered", delay=args.lease * 4)
            fake.reply_text("GOOD second try")
            run = check_start_run(workspace=workspace, flow="one")
            deadline = time.monotonic() + 60
            while not Try.objects.filter(step__run=run, n=1).exists():
                if time.monotonic() > deadline:
                    raise SystemExit("the step never started")
                time.sleep(0.05)
            time.sleep(0.5)  # mid-step: the model request is out
            killed = time.time()
            workers.kill()
            workers.start()
            deadline = time.monotonic() + args.lease * 4 + 60
            while not Try.objects.filter(step__run=run, n=2).exists():
                if time.monotonic() > deadline:
                    raise SystemExit("the step was never run again")
                time.sleep(0.05)
            second = Try.objects.get(step__run=run, n=2)
            figures.append(second.started_at.timestamp() - killed)
            print(f"  kill {n + 1}: re-run started {figures[-1]:.1f} s after the worker died")
            while not Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).exists():
                time.sleep(0.05)
        target = args.lease + args.sweep
        p50 = statistics.median(figures)
        print(
            f"worker death to re-run start ({len(figures)} kills): p50 {p50:.1f} s, max {max(figures):.1f} s; "
            f"target lease + one sweep = {target} s; ratio {max(figures) / target:.2f}× (max/target)"
        )
    finally:
        workers.stop()
        fake.stop()


if __name__ == "__main__":
    main()
