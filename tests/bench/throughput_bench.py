"""Throughput where a growing team feels it, each figure beside a baseline measured in the same run:

1. sustained one-step runs per second of one worker (concurrency 2) against the bare Celery task making the
   same streamed model call and writing one row (tests/bench/tasks.py `bench.model_call_row`) — batches of
   each, turn about, medians (target ≥ 0.5×);
2. runs started per second through the API by eight concurrent clients against one web process (gunicorn with
   one uvicorn worker, as scripts/start runs it), beside the same clients' `GET /api/me` on the same server
   (target: ≥ 3× the 35–42 starts a second measured before);
3. an `each:` over 30 items against the same 31 steps in sequence: with a model that answers after 300 ms on a
   worker at concurrency 8 (target ≤ 0.2×), and with an instant model at concurrency 2 (target ≤ 1.0×).

A script, not a pytest test:

    FOLDRUN_DATA_DIR=$(mktemp -d) DATABASE_URL=postgres://postgres@127.0.0.1:5432/foldrun_bench \\
      CELERY_BROKER_URL=redis://127.0.0.1:6379/13 .venv/bin/python tests/bench/throughput_bench.py [--batch 40]

It builds a throwaway test database, as run_overhead.py does, and prints the machine's load beside each part.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.test")

from tests.bench.run_overhead import count_queries, wait_until  # noqa: E402  (sets Django up)

from django.db import connection  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from tests.bench.worker import start_worker  # noqa: E402
from tests.fakes.providers import Reply  # noqa: E402

FINISHED = ("completed", "failed")


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def instant(_body: dict) -> Reply:
    return Reply(blocks=[{"type": "text", "text": "GOOD"}], usage=(1, 1))


def lister(items: int, delay: float):
    """A model for the fan-out flows: the listing step gets `items` lines, every other call a short answer,
    each after `delay` seconds (a model that takes its time, as real ones do)."""
    lines = "\n".join(f"item {i}" for i in range(items))

    def reply(body: dict) -> Reply:
        text = lines if "List them." in json.dumps(body) else "read"
        return Reply(blocks=[{"type": "text", "text": text}], usage=(1, 1), delay=delay)

    return reply


def sustained(workspace, account, fake, call_body: dict, batch: int, rounds: int) -> tuple[float, float]:
    """Median runs/s and bare tasks/s over `rounds` batches of each, turn about."""
    from accounts.models import Account
    from foldrun.celery import app
    from runs.actions import check_start_run
    from runs.models import Run

    fake.responder = instant
    ours, bare = [], []
    try:
        for n in range(rounds):
            tag = f"t{n}"
            start = time.monotonic()
            for i in range(batch):
                app.send_task(
                    "bench.model_call_row", args=[account.pk, f"{fake.base_url}/v1/messages", call_body, f"{tag}-{i}"]
                )
            wait_until(lambda: Account.objects.filter(name__startswith=f"{tag}-").count() >= batch, 300, 0.02)
            bare.append(batch / (time.monotonic() - start))
            start = time.monotonic()
            pks = [check_start_run(workspace=workspace, flow="one").pk for _ in range(batch)]
            wait_until(lambda: Run.objects.filter(pk__in=pks, status__in=FINISHED).count() >= batch, 300, 0.02)
            ours.append(batch / (time.monotonic() - start))
            print(f"  round {n + 1}: bare {bare[-1]:.1f}/s, one-step runs {ours[-1]:.1f}/s ({load()})")
    finally:
        fake.responder = None
    return statistics.median(ours), statistics.median(bare)


def api_starts(workspace, token: str, seconds: float, clients: int, rounds: int) -> tuple[float, float, int]:
    """(median starts/s, median GET /api/me per s, 5xx seen) from `clients` threads against one web process."""
    import httpx

    port = 18000 + os.getpid() % 1000
    env = dict(
        os.environ,
        FOLDRUN_TEST_DB_NAME=connection.settings_dict["NAME"],
        DJANGO_SETTINGS_MODULE="foldrun.settings.test",
    )
    log = open(Path(os.environ.get("FOLDRUN_DATA_DIR", "/tmp")) / "bench-web.log", "wb")
    server = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "gunicorn"),
            "foldrun.asgi:application",
            "--bind",
            f"127.0.0.1:{port}",
            "--worker-class",
            "uvicorn_worker.UvicornWorker",
            "--workers",
            "1",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_until(lambda: _answers(f"{base}/api/version"), 60, 0.2)
        headers = {"Authorization": f"Bearer {token}"}
        errors = [0]

        def hammer(method: str, path: str, body: dict | None) -> float:
            done = [0] * clients
            stop = time.monotonic() + seconds

            def client(n: int) -> None:
                with httpx.Client(base_url=base, headers=headers, timeout=30) as http:
                    while time.monotonic() < stop:
                        answer = http.request(method, path, json=body)
                        if answer.status_code >= 500:
                            errors[0] += 1
                        elif answer.status_code < 300:
                            done[n] += 1

            threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
            started = time.monotonic()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            return sum(done) / (time.monotonic() - started)

        starts, reads = [], []
        for n in range(rounds):
            starts.append(hammer("POST", f"/api/workspaces/{workspace.name}/runs", {"flow": "one"}))
            reads.append(hammer("GET", "/api/me", None))
            print(f"  round {n + 1}: {starts[-1]:.1f} starts/s, {reads[-1]:.1f} GET /api/me per s ({load()})")
        return statistics.median(starts), statistics.median(reads), errors[0]
    finally:
        server.terminate()
        server.wait(20)
        log.close()


def _answers(url: str) -> bool:
    import httpx

    try:
        return httpx.get(url, timeout=2).status_code < 500
    except httpx.HTTPError:
        return False


def fan_against_sequence(workspace, fake, delay: float, rounds: int) -> tuple[float, float]:
    """Median seconds of the `fan` flow (a listing step, then each: over 30) and of `seq31`, turn about."""
    from runs.actions import check_start_run
    from runs.models import Run

    fake.responder = lister(30, delay)
    fans, seqs = [], []
    try:
        for n in range(rounds):
            for flow, into in (("fan", fans), ("seq31", seqs)):
                start = time.monotonic()
                run = check_start_run(workspace=workspace, flow=flow)
                wait_until(lambda: Run.objects.filter(pk=run.pk, status__in=FINISHED).exists(), 600, 0.02)
                into.append(time.monotonic() - start)
                run.refresh_from_db()
                assert run.status == "completed", (flow, run.error)
            print(f"  round {n + 1}: each: over 30 {fans[-1]:.2f}s, 31 steps in sequence {seqs[-1]:.2f}s ({load()})")
    finally:
        fake.responder = None
    return statistics.median(fans), statistics.median(seqs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=40, help="runs (and bare tasks) per sustained round")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each API round")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--fan-rounds", type=int, default=3)
    parser.add_argument("--skip", action="append", default=[], choices=["sustained", "api", "fan"])
    args = parser.parse_args()
    setup_test_environment()
    named = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    from tests.fakes.providers import FakeProvider

    fake = FakeProvider().start()
    worker = None
    try:
        from accounts.models import Account, ApiToken, Membership, Role, Workspace, hash_token
        from django.contrib.auth import get_user_model
        from foldrun.celery import app
        from tests.runs.helpers import agent_file, push

        account = Account.objects.create(name="Bench")
        workspace = Workspace.objects.create(account=account, name="bench-desk")
        push(
            workspace,
            {
                "agents/a/agent.md": agent_file("a", fake, tools="[]"),
                "flows/one.md": "---\nname: one\n---\n1. [[a]] — Say GOOD.\n",
                "flows/three.md": "---\nname: three\n---\n1. [[a]] — One.\n2. [[a]] — Two.\n3. [[a]] — Say GOOD.\n",
                "flows/fan.md": "---\nname: fan\n---\n1. [[a]] — List them.\n2. [[a]] — Read {{item}}.\n   each: lines\n"
                "   max: 1000\n",
                "flows/seq31.md": "---\nname: seq31\n---\n1. [[a]] — List them.\n"
                + "".join(f"{i}. [[a]] — Step {i}.\n" for i in range(2, 32)),
            },
        )
        one_run, per_step, call_body = count_queries(workspace, fake)
        broker = app.conf.broker_url.split("://", 1)[0]
        print(
            f"database {connection.vendor}, broker {broker}; SQL: {one_run} statements for a one-step run, "
            f"{per_step:g} for each further step; {load()}"
        )
        logs = Path(os.environ.get("FOLDRUN_DATA_DIR", "/tmp"))

        if "sustained" not in args.skip:
            worker = start_worker(
                2, logs / "bench-worker.log", level="warning", settle=0.5, include=["tests.bench.tasks"]
            )
            print(f"1. sustained, one worker at concurrency 2, batches of {args.batch}:")
            ours, bare = sustained(workspace, account, fake, call_body, args.batch, args.rounds)
            print(
                f"   one-step runs {ours:.1f}/s against the bare task's {bare:.1f}/s: {ours / bare:.2f}× "
                f"(target ≥ 0.5×)"
            )
            worker.terminate()
            worker.wait(30)
            worker = None

        if "api" not in args.skip:
            user = get_user_model().objects.create_user(
                username="bench", email="bench@example.com", password="bench-password-123"
            )
            Membership.objects.create(account=account, user=user, role=Role.OWNER)
            raw = ApiToken.mint()
            ApiToken.objects.create(user=user, account=account, name="bench", token_hash=hash_token(raw), hint=raw[:8])
            print(f"2. starts through the API, {args.clients} clients, one web process (no worker takes them):")
            starts, reads, errors = api_starts(workspace, raw, args.seconds, args.clients, args.rounds)
            print(
                f"   {starts:.1f} runs started/s; the same server answers GET /api/me {reads:.1f}/s "
                f"({starts / reads:.2f}×); 5xx: {errors} (target ≥ 3× 35–42/s, i.e. ≥ 126/s)"
            )
            app.control.purge()

        if "fan" not in args.skip:
            for concurrency, delay, target in ((8, 0.3, 0.2), (2, 0.0, 1.0)):
                worker = start_worker(
                    concurrency, logs / f"bench-worker-{concurrency}.log", level="warning", settle=0.5
                )
                print(
                    f"3. each: over 30 against 31 steps in sequence, model {delay * 1000:.0f} ms, "
                    f"worker concurrency {concurrency}:"
                )
                fan, seq = fan_against_sequence(workspace, fake, delay, args.fan_rounds)
                print(f"   {fan:.2f}s against {seq:.2f}s: {fan / seq:.2f}× (target ≤ {target}×)")
                worker.terminate()
                worker.wait(30)
                worker = None
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(30)
        fake.stop()
        connection.creation.destroy_test_db(named, verbosity=0)


if __name__ == "__main__":
    main()
