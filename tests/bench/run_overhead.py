"""The platform's overhead per step: N one-step runs through a real Celery
worker against an instant loopback model server, against a bare Celery no-op
task round trip on the same broker measured in the same run (target: at most
5×); and a fan-out of M instances against M sequential steps' time.

A script, not a pytest test:

    FOLDRUN_DATA_DIR=$(mktemp -d) .venv/bin/python tests/bench/run_overhead.py [--runs 200] [--fanout 100]

It builds a throwaway test database (SQLite, or PostgreSQL when DATABASE_URL
says so) and uses the configured broker (filesystem, or Redis when
CELERY_BROKER_URL says so).
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.test")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402


def start_worker(concurrency: int, log_path: Path) -> subprocess.Popen:
    env = dict(os.environ)
    env["FOLDRUN_TEST_DB_NAME"] = connection.settings_dict["NAME"]
    env["DJANGO_SETTINGS_MODULE"] = "foldrun.settings.test"
    log = open(log_path, "wb")
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "foldrun", "worker", "-l", "warning", "--concurrency",
         str(concurrency), "--without-mingle", "--without-gossip", "--without-heartbeat",
         "-Q", env["FOLDRUN_TEST_QUEUE"]],
        env=env, stdout=log, stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while b"ready" not in log_path.read_bytes() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(0.5)
    return process


def wait_until(predicate, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.002)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--fanout", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    setup_test_environment()
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    from tests.fakes.providers import FakeProvider

    fake = FakeProvider().start()
    worker = None
    try:
        from accounts.models import Account, Workspace
        from foldrun.celery import app
        from runs.actions import check_start_run
        from runs.models import Run
        from tests.runs.helpers import agent_file, push

        account = Account.objects.create(name="Bench")
        workspace = Workspace.objects.create(account=account, name="bench-desk")
        push(workspace, {
            "agents/a/agent.md": agent_file("a", fake, tools="[]"),
            "flows/one.md": "---\nname: one\n---\n1. [[a]] — Say GOOD.\n",
            "flows/fan.md": "---\nname: fan\n---\n1. [[a]] — List.\n2. [[a]] — Read {{item}}.\n   each: lines\n   max: 1000\n",
        })
        worker = start_worker(args.concurrency, Path(os.environ.get("FOLDRUN_DATA_DIR", "/tmp")) / "bench-worker.log")

        # Bare: a no-op task whose effect we wait for (the same broker, the same worker).
        bare: list[float] = []
        for n in range(50):
            start = time.monotonic()
            app.send_task("foldrun.tests.rename_account", args=[account.pk, f"bench-{n}"])
            wait_until(lambda: Account.objects.filter(pk=account.pk, name=f"bench-{n}").exists(), 30)
            bare.append(time.monotonic() - start)
        bare_p50 = statistics.median(bare)

        # One-step runs, one after another: the platform's own time per step.
        for _ in range(args.runs):
            fake.reply_text("GOOD", usage=(1, 1))
        per_run: list[float] = []
        for _ in range(args.runs):
            start = time.monotonic()
            run = check_start_run(workspace=workspace, flow="one")
            wait_until(lambda: Run.objects.filter(pk=run.pk, status="completed").exists(), 60)
            per_run.append(time.monotonic() - start)
        step_p50 = statistics.median(per_run)
        print(f"bare Celery round trip: p50 {bare_p50 * 1000:.1f} ms")
        print(f"one-step run: p50 {step_p50 * 1000:.1f} ms per step, {1 / statistics.mean(per_run):.1f} steps/s "
              f"sequentially; ratio to a bare round trip {step_p50 / bare_p50:.1f}× (target ≤ 5×)")

        # A fan-out of M instances against M sequential steps.
        fake.reply_text("\n".join(f"item {i}" for i in range(args.fanout)), usage=(1, 1))
        for _ in range(args.fanout):
            fake.reply_text("read", usage=(1, 1))
        start = time.monotonic()
        run = check_start_run(workspace=workspace, flow="fan")
        wait_until(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).exists(), 600)
        fan_time = time.monotonic() - start
        run.refresh_from_db()
        print(f"fan-out run {run.status}: {run.steps.filter(instance__isnull=False, status='completed').count()} instances completed")
        sequential = step_p50 * (args.fanout + 1)
        print(f"fan-out of {args.fanout}: {fan_time:.2f}s, against {sequential:.2f}s for {args.fanout + 1} sequential "
              f"steps ({fan_time / sequential:.2f}×)")
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(20)
        fake.stop()


if __name__ == "__main__":
    main()
