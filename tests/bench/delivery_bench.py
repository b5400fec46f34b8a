"""Webhook deliveries per second through a real Celery worker to a loopback
receiver, against a bare httpx POST loop to the same receiver in the same
run (target: at least half); and the time one beat sweep takes over 10,000
pending attempts.

A script, not a pytest test:

    FOLDRUN_DATA_DIR=$(mktemp -d) .venv/bin/python tests/bench/delivery_bench.py [--deliveries 300] [--pending 10000]

It builds a throwaway test database (SQLite, or PostgreSQL when DATABASE_URL
says so) and uses the configured broker (filesystem, or Redis when
CELERY_BROKER_URL says so).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.test")

import django  # noqa: E402

django.setup()

import httpx  # noqa: E402
from django.db import connection  # noqa: E402
from tests.bench.worker import start_worker  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--deliveries", type=int, default=300)
    parser.add_argument("--pending", type=int, default=10000)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tests"))
    from tests.notify.conftest import Receiver

    receiver = Receiver()
    worker = None
    try:
        from accounts.models import Account, Workspace
        from library.actions.writes import FileWrite, do_write_files
        from notify.actions import do_record_delivery, due_delivery_ids
        from notify.models import Delivery
        from notify.tasks import sweep_due_deliveries

        account = Account.objects.create(name="Bench")
        workspace = Workspace.objects.create(account=account, name="bench-desk")
        do_write_files(
            account=account,
            workspace=workspace,
            kind="push",
            writes=[FileWrite("AGENTS.md", f"---\nnotify:\n  url: {receiver.url}\n---\n")],
        )
        body = '{"text": "BAD \u2014 3 targets fell out of the top 20 \u00b7 bench-desk/run_x \u00b7 $1.01"}'

        # Bare: one shared httpx client, a plain loop.
        with httpx.Client() as client:
            started = time.perf_counter()
            for _ in range(args.deliveries):
                client.post(receiver.url, content=body.encode(), headers={"Content-Type": "application/json"})
            bare = args.deliveries / (time.perf_counter() - started)
        receiver.requests.clear()

        # Record them first (each queues its first attempt), then time the
        # worker alone from the moment it is ready: the rate a worker drains.
        started = time.perf_counter()
        for _ in range(args.deliveries):
            do_record_delivery(workspace, "failed", body)
        recorded = time.perf_counter() - started
        worker = start_worker(args.concurrency, Path(os.environ.get("FOLDRUN_DATA_DIR", "/tmp")) / "bench-worker.log")
        started = time.perf_counter()
        while Delivery.objects.filter(status="succeeded").count() < args.deliveries:
            if time.perf_counter() - started > 300:
                raise SystemExit("deliveries did not finish in 5 minutes")
            time.sleep(0.05)
        through = args.deliveries / (time.perf_counter() - started)
        worker.terminate()
        worker.wait(timeout=30)
        worker = None
        assert len(receiver.requests) == args.deliveries, len(receiver.requests)

        print(f"{connection.vendor}, broker {os.environ.get('CELERY_BROKER_URL', 'filesystem://')}")
        print(f"bare httpx loop            {bare:8.0f} POSTs/s")
        print(
            f"through the worker (c={args.concurrency})    {through:8.0f} deliveries/s  "
            f"({through / bare:.0%} of bare; target ≥ 50%); recording them took {recorded:.2f} s "
            f"({args.deliveries / recorded:.0f}/s)"
        )

        # The sweep over N due, unheld attempts (no worker: they stay queued).
        Delivery.objects.all().delete()
        from django.utils import timezone

        now = timezone.now()
        Delivery.objects.bulk_create(
            [
                Delivery(account=account, workspace=workspace, event="failed", body=body, next_attempt_at=now)
                for _ in range(args.pending)
            ],
            batch_size=2000,
        )
        started = time.perf_counter()
        found = len(due_delivery_ids())
        query = time.perf_counter() - started
        started = time.perf_counter()
        # The sweep records lost attempts, then hands whatever is due to one drain (a message, not one per row).
        due = sweep_due_deliveries()
        sweep = time.perf_counter() - started
        print(
            f"sweep over {args.pending} pending: query {query * 1000:.0f} ms ({found} due), "
            f"whole sweep {sweep:.2f} s ({due} due, handed to one drain)"
        )
    finally:
        if worker is not None:
            worker.kill()
        receiver.close()
        try:
            from foldrun.celery import app

            with app.connection_for_write() as conn:
                conn.default_channel.queue_purge(os.environ["FOLDRUN_TEST_QUEUE"])
        except Exception:
            pass
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
