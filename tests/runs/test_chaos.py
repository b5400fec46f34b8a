"""The chaos test (issue 8, "Proven by"): a real worker killed with -9 ten times while 30 runs go on.

Each run reads (step 1), fans out one writing instance per item (step 2, `each: lines`, each instance POSTs
once to a loopback counter) and reads again (step 3). The whole worker — main process, pool children and its
embedded beat — is killed at random moments and a new one started each time. At the end: every run is
terminal, the counter saw no write twice, every try that was running when a worker died is on the record as
`lost`, and the sweep acted on each within lease + sweep of the restart. Runs on whichever broker the suite
uses (the embedded filesystem broker by default, Redis with CELERY_BROKER_URL).
"""

from __future__ import annotations

import collections
import random
import re
import time

import pytest

from runs.actions import check_start_run
from runs.models import Run, TraceEvent, Try
from tests.conftest import wait_for
from tests.fakes.json_api import JsonApi
from tests.fakes.providers import Reply
from tests.runs.helpers import agent_file, push
from tests.runs.workers import WorkerGroup

pytestmark = pytest.mark.e2e

RUNS = 30
KILLS = 10
LEASE = 3
SWEEP = 1


def _task_and_turn(body: dict) -> tuple[str, bool]:
    messages = body.get("messages") or []
    first = messages[0].get("content") if messages else ""
    task = first if isinstance(first, str) else " ".join(p.get("text", "") for p in first if isinstance(p, dict))
    answered = any(
        isinstance(m.get("content"), list)
        and any(isinstance(p, dict) and p.get("type") == "tool_result" for p in m["content"])
        for m in messages
    )
    return task, answered


def model(body: dict) -> Reply:
    """The model of every step: READ steps take a moment and answer; WRITE steps POST once, then answer."""
    task, answered = _task_and_turn(body)
    delay = random.uniform(0.3, 1.2)  # time for a kill to land mid-step
    if found := re.search(r"READ (\S+) list", task):
        tag = found.group(1)
        return Reply(blocks=[{"type": "text", "text": f"{tag}-a\n{tag}-b\n{tag}-c"}], delay=delay)
    if found := re.search(r"WRITE (\S+)", task):
        if answered:
            return Reply(blocks=[{"type": "text", "text": f"GOOD wrote {found.group(1)}"}], delay=delay)
        return Reply(
            blocks=[
                {
                    "type": "tool_use",
                    "id": f"toolu_{random.getrandbits(48):x}",
                    "name": "mail",
                    "input": {"method": "POST", "path": f"/write/{found.group(1)}", "body": {}},
                }
            ],
            stop_reason="tool_use",
            delay=delay,
        )
    return Reply(blocks=[{"type": "text", "text": "GOOD all read"}], delay=delay)


@pytest.fixture
def workers(transactional_db, tmp_path):
    group = WorkerGroup(tmp_path, lease_seconds=LEASE, sweep_seconds=SWEEP)
    yield group
    group.stop()


def test_thirty_runs_survive_ten_kill_9s_of_the_whole_worker_with_nothing_sent_twice(
    workers, workspace, alice, fake_provider
):
    counter = JsonApi()
    seed = random.randrange(1 << 30)
    chance = random.Random(seed)
    fake_provider.responder = model
    try:
        push(
            workspace,
            {
                "agents/reader/agent.md": agent_file("reader", fake_provider),
                "agents/writer/agent.md": agent_file("writer", fake_provider, tools="[mail]"),
                "tools/mail.md": f"---\ntransport: http\nname: mail\nbase: {counter.url}\nmethods: [POST]\n"
                "outward: true\n---\n",
                "flows/chaos.md": "---\nname: chaos\ninputs: {tag: x}\n---\n"
                "1. [[reader]] — READ {{tag}} list.\n"
                "2. [[writer]] — WRITE {{item}}.\n   each: lines\n"
                "3. [[reader]] — READ {{tag}} summary.\n",
            },
        )
        workers.start()
        runs = [
            check_start_run(workspace=workspace, user=alice, flow="chaos", inputs={"tag": f"r{n}"}) for n in range(RUNS)
        ]
        restarts: list[tuple[float, list[int]]] = []  # (restart time, tries that were running when it died)
        for _ in range(KILLS):
            # Long enough after the last restart for the sweep to have acted on the last kill's tries.
            time.sleep(chance.uniform(LEASE + SWEEP + 0.5, LEASE + SWEEP + 3.0))
            workers.kill()
            in_flight = list(Try.objects.filter(status="running").values_list("pk", flat=True))
            workers.start()
            restarts.append((time.time(), in_flight))
        ids = [r.pk for r in runs]
        wait_for(
            lambda: not Run.objects.filter(pk__in=ids).exclude(status__in=["completed", "failed"]).exists(),
            timeout=240,
            interval=0.5,
        )

        statuses = collections.Counter(Run.objects.filter(pk__in=ids).values_list("status", flat=True))
        print(
            f"seed {seed}: {dict(statuses)}; writes {sum(counter.hits.values())}; "
            f"lost tries {Try.objects.filter(status='lost').count()}"
        )
        assert sum(statuses.values()) == RUNS
        assert [path for path, hits in counter.hits.items() if hits > 1] == []
        assert not Try.objects.filter(status="running").exists()
        assert sum(1 for _, in_flight in restarts if in_flight) >= KILLS // 2, f"seed {seed}: {restarts}"  # mid-step
        for restarted_at, in_flight in restarts:
            for attempt in Try.objects.filter(pk__in=in_flight).select_related("step"):
                assert attempt.status == "lost", (attempt.pk, attempt.status)
                assert attempt.error == "the worker was lost during this try"
                acted = (
                    TraceEvent.objects.filter(
                        step=attempt.step, try_n=attempt.n, data__message__startswith="the worker running step"
                    )
                    .order_by("at")
                    .first()
                )
                assert acted is not None, attempt.step
                # The sweep recovered it, not the broker: its redelivery would wait the visibility timeout, twelve
                # hours. The bound leaves room for beat ticks and worker slots on a machine the rest of the suite
                # shares; tests/bench/recovery_bench.py measures the real figure (lease + one sweep).
                late = acted.at.timestamp() - (restarted_at + LEASE + SWEEP)
                assert late <= 15.0, f"seed {seed}: try {attempt.pk} recovered {late:.1f} s after lease + sweep"
        # A run that failed did so because a step that had written was lost — said in a sentence, never re-sent.
        for run in Run.objects.filter(pk__in=ids, status="failed"):
            assert "was lost after it had written: mail" in run.error, run.error
    finally:
        fake_provider.responder = None
        counter.stop()
