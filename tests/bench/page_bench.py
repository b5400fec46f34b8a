"""Benchmark: the dashboard's two biggest pages — the Run page of a 100-step
run and the runs list of a workspace with 10,000 runs — time and SQL queries
per page, each against the same page at a tenth of the size in the same run
(the baseline). Target: the queries do not grow with the number of steps or
runs (the list shows a fixed page of 50; the Run page loads steps, tries,
approvals, trace and artifacts in one query each).

    FOLDRUN_DATA_DIR=$(mktemp -d) .venv/bin/python tests/bench/page_bench.py [--steps 100] [--runs 10000] [--repeat 5]

It builds a throwaway test database (SQLite, or PostgreSQL when DATABASE_URL
says so). Not a pytest test; tests/runs/test_page_bench.py runs it small.
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
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402

AGENT = "---\nname: writer\ndescription: Writes.\ntools: [read]\n---\nWrite.\n"
FLOW = "---\nname: weekly\n---\n1. [[writer]] — Write.\n"


def make_run(workspace, steps: int):
    """A finished run of `steps` steps (every fifth an `each:` fan-out of three), each with two tries,
    six trace events per try, a decided approval on every tenth, an artifact per step."""
    from datetime import timedelta
    from decimal import Decimal

    from django.utils import timezone

    from runs.models import Approval, Artifact, Run, Step, TraceEvent, Try

    start = timezone.now() - timedelta(hours=1)
    run = Run.objects.create(
        account=workspace.account,
        workspace=workspace,
        name="weekly",
        status="completed",
        verdict="GOOD",
        started_at=start,
        finished_at=start + timedelta(seconds=steps * 10),
        cost_usd=Decimal("0.0130"),
        headline="GOOD done",
    )
    made = []
    for i in range(1, steps + 1):
        made.append(
            Step(
                run=run,
                index=i,
                agent="writer",
                task=f"Do part {i}.",
                status="completed",
                output=f"part {i} done",
                cost_usd=Decimal("0.0001"),
                tokens_in=100,
                tokens_out=20,
                started_at=start + timedelta(seconds=i * 10),
                finished_at=start + timedelta(seconds=i * 10 + 8),
            )
        )
    Step.objects.bulk_create(made)
    rows = list(Step.objects.filter(run=run).order_by("index"))
    tries, events, approvals, artifacts = [], [], [], []
    for step in rows:
        at = step.started_at
        for n in (1, 2):
            tries.append(
                Try(
                    step=step,
                    n=n,
                    status="failed" if n == 1 else "completed",
                    seconds=4,
                    started_at=at + timedelta(seconds=4 * (n - 1)),
                    finished_at=at + timedelta(seconds=4 * n),
                )
            )
            events += [
                TraceEvent(run=run, step=step, try_n=n, kind="limit", data={"line": "limits: calls 0/300"}),
                TraceEvent(
                    run=run,
                    step=step,
                    try_n=n,
                    kind="model_request",
                    data={
                        "model": "claude-sonnet-4-5",
                        "stop_reason": "tool_use",
                        "input_tokens": 50,
                        "output_tokens": 10,
                        "seconds": 0.4,
                    },
                ),
                TraceEvent(
                    run=run,
                    step=step,
                    try_n=n,
                    kind="tool_call",
                    data={"id": "t1", "name": "read", "input": {"path": "knowledge/a.md"}},
                ),
                TraceEvent(
                    run=run,
                    step=step,
                    try_n=n,
                    kind="tool_result",
                    data={"id": "t1", "name": "read", "error": False, "seconds": 0.01, "content": "# A\n" * 40},
                ),
                TraceEvent(
                    run=run,
                    step=step,
                    try_n=n,
                    kind="model_request",
                    data={
                        "model": "claude-sonnet-4-5",
                        "stop_reason": "end_turn",
                        "input_tokens": 50,
                        "output_tokens": 10,
                        "seconds": 0.3,
                    },
                ),
                TraceEvent(run=run, step=step, try_n=n, kind="limit", data={"line": "limits: calls 1/300"}),
            ]
        if step.index % 10 == 0:
            approvals.append(
                Approval(
                    run=run,
                    step=step,
                    state="approved",
                    decided_by_label="alice@example.com",
                    created_at=at,
                    decided_at=at + timedelta(seconds=2),
                )
            )
        artifacts.append(
            Artifact(run=run, step=step, path=f"outputs/part-{step.index}.md", content=b"x" * 100, size=100)
        )
    Try.objects.bulk_create(tries)
    TraceEvent.objects.bulk_create(events)
    Approval.objects.bulk_create(approvals)
    Artifact.objects.bulk_create(artifacts)
    return run


def make_runs(workspace, total: int) -> None:
    from runs.models import Run

    statuses = ["completed", "failed", "completed", "cancelled", "awaiting-approval"]
    Run.objects.bulk_create(
        [
            Run(
                account=workspace.account,
                workspace=workspace,
                name=f"flow-{i % 7}",
                status=statuses[i % 5],
                verdict="GOOD" if i % 5 == 0 else None,
                headline=f"run {i}",
            )
            for i in range(total)
        ],
        batch_size=2000,
    )


def measure(client, url: str, repeat: int) -> tuple[float, int, int]:
    """(median ms, SQL queries, bytes) of GET url, after one warm-up."""
    assert client.get(url).status_code == 200, url
    times, queries, size = [], 0, 0
    for _ in range(repeat):
        with CaptureQueriesContext(connection) as captured:
            started = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - started) * 1000)
        queries, size = len(captured.captured_queries), len(response.content)
    return statistics.median(times), queries, size


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--runs", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        from django.contrib.auth import get_user_model
        from django.test import Client

        from accounts.models import Account, Membership, Workspace
        from library.actions.writes import FileWrite, do_write_files

        user = get_user_model().objects.create_user("alice", "alice@example.com", "pw")
        account = Account.objects.create(name="Bench")
        Membership.objects.create(account=account, user=user, role="owner")
        big, small = (Workspace.objects.create(account=account, name=n) for n in ("big-desk", "small-desk"))
        for ws in (big, small):
            do_write_files(
                account=account,
                workspace=ws,
                kind="push",
                writes=[FileWrite("agents/writer/agent.md", AGENT), FileWrite("flows/weekly.md", FLOW)],
            )
        client = Client()
        client.force_login(user)
        base_steps = max(args.steps // 10, 1)
        base_runs = max(args.runs // 10, 1)
        small_run, big_run = make_run(small, base_steps), make_run(big, args.steps)
        make_runs(small, base_runs)
        make_runs(big, args.runs)
        figures = {
            f"Run page, {base_steps} steps": measure(client, f"/w/small-desk/runs/{small_run.public_id}", args.repeat),
            f"Run page, {args.steps} steps": measure(client, f"/w/big-desk/runs/{big_run.public_id}", args.repeat),
            f"runs list, {base_runs + 1} runs": measure(client, "/w/small-desk/runs/", args.repeat),
            f"runs list, {args.runs + 1} runs": measure(client, "/w/big-desk/runs/", args.repeat),
        }
        print(f"page bench on {connection.vendor} ({args.repeat} requests each, median)")
        for name, (ms, queries, size) in figures.items():
            print(f"  {name:<26} {ms:8.1f} ms  {queries:3d} queries  {size / 1024:7.1f} KiB")
        (s_ms, s_q, _), (b_ms, b_q, _), (l_ms, l_q, _), (L_ms, L_q, _) = figures.values()
        print(
            f"  Run page: {b_ms / s_ms:.2f}× the time and {b_q - s_q:+d} queries at {args.steps // base_steps}× the "
            f"steps (target: +0 queries)"
        )
        print(
            f"  runs list: {L_ms / l_ms:.2f}× the time and {L_q - l_q:+d} queries at {args.runs // base_runs}× the "
            f"runs (target: +0 queries; 50 runs a page)"
        )
        return 0 if (b_q == s_q and L_q == l_q) else 1
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    sys.exit(main())
