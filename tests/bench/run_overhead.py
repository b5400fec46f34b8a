"""The platform's overhead per step: N one-step runs through a real Celery
worker against an instant loopback model server, against a bare Celery task
making the same model call to the same server on the same broker, measured in
the same run (target: at most 2×); 1-, 10- and 50-step runs per step against a
DBOS workflow of the same steps (target: at most 1.0×); and a fan-out of M
instances against M sequential steps' time.

"The same model call" is the call a step makes, made as tests/bench/peer_call.py
says: the body a one-step run sent (taken from the stand-in's record), streamed
as a step's is (`"stream": true`; an unstreamed call would cost a peer ~0.9 ms
less CPU), through the same guarded `net.client("model")`, the SSE stream read
to its end with httpx `stream()` + `iter_lines()` and the text taken from its
content_block_delta events. The bare Celery task (tests/bench/tasks.py) then
writes that text to a row the bench polls for; the DBOS step returns it to its
workflow. Neither does any of foldrun's work around the call.

A script, not a pytest test:

    FOLDRUN_DATA_DIR=$(mktemp -d) .venv/bin/python tests/bench/run_overhead.py [--runs 200] [--fanout 100] [--show-sql]

It builds a throwaway test database (SQLite, or PostgreSQL when DATABASE_URL
says so) and uses the configured broker (filesystem, or Redis when
CELERY_BROKER_URL says so). Both sides are timed the same way: from the
moment the work is asked for until this process sees its effect in the
database (told by a NOTIFY on PostgreSQL, polled every 2 ms elsewhere: see
`Ends`), so the ratio compares like with like. And both
are measured turn about — ten rounds of bare tasks and one-step runs, a foldrun
run then a DBOS workflow of the same length — because this machine's speed
drifts by a third from one minute to the next, and a peer measured all before
or all after foldrun took that drift into the ratio.

Besides the figures the target is about, it prints which processes spend the CPU
of a bare task and of a one-step run (this one, the worker's main and pool
processes, PostgreSQL's backends, Redis), where a step's time
goes (from the rows' own timestamps, and this process's clock at the request
and at the poll that saw the run completed, so the parts add up to the total)
and how many SQL queries a run makes, counted once in this process with
Celery eager.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.test")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from tests.bench.peer_call import streamed_text  # noqa: E402
from tests.bench.worker import start_worker  # noqa: E402
from tests.fakes.providers import Reply  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402


def wait_until(predicate, timeout: float, every: float = 0.002) -> float:
    """Poll until `predicate` holds; returns this process's wall clock (time.time()) at the poll that saw it."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(every)
    return time.time()


class Ends:
    """How the benchmark sees a piece of work end: a run reaching completed or failed (`run:<pk>`), the bare task
    writing its row (`account:<name>`).

    On PostgreSQL a trigger the benchmark puts on its throwaway database's run and account tables sends a NOTIFY
    when either happens, and this process waits on LISTEN: it learns of the commit when the server sends it, and
    spends nothing while it waits. Polling every 2 ms took CPU from the two cores the worker and the database run
    on — ~40 queries during a 10-step run, against none while a DBOS workflow ran in this thread — and added up to
    2 ms to whatever it timed. Elsewhere (SQLite) it polls as before."""

    CHANNEL = "foldrun_bench_ends"

    def __init__(self) -> None:
        self.seen: set[str] = set()
        self.listener = None
        if connection.vendor != "postgresql":
            return
        import psycopg

        from accounts.models import Account
        from runs.models import Run

        q = connection.ops.quote_name
        with connection.cursor() as cursor:
            cursor.execute(f"""
                CREATE OR REPLACE FUNCTION foldrun_bench_ended() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                  IF TG_ARGV[0] = 'run' THEN
                    PERFORM pg_notify('{self.CHANNEL}', 'run:' || NEW.id);
                  ELSE
                    PERFORM pg_notify('{self.CHANNEL}', 'account:' || NEW.name);
                  END IF;
                  RETURN NULL;
                END $$""")
            cursor.execute(f"""CREATE TRIGGER foldrun_bench_run_ended AFTER UPDATE OF status ON {q(Run._meta.db_table)}
                FOR EACH ROW WHEN (NEW.status IN ('completed', 'failed') AND OLD.status IS DISTINCT FROM NEW.status)
                EXECUTE FUNCTION foldrun_bench_ended('run')""")
            cursor.execute(f"""CREATE TRIGGER foldrun_bench_account_named AFTER UPDATE OF name ON
                {q(Account._meta.db_table)} FOR EACH ROW EXECUTE FUNCTION foldrun_bench_ended('account')""")
        settings = connection.settings_dict
        self.listener = psycopg.connect(
            host=settings["HOST"],
            port=settings["PORT"] or 5432,
            user=settings["USER"],
            password=settings.get("PASSWORD") or None,
            dbname=settings["NAME"],
            autocommit=True,
        )
        self.listener.execute(f"LISTEN {self.CHANNEL}")

    def wait(self, key: str, predicate, timeout: float, every: float = 0.002) -> float:
        """Wait until `key` is notified (or, polling, `predicate` holds); returns this process's wall clock then."""
        if self.listener is None:
            return wait_until(predicate, timeout, every)
        deadline = time.monotonic() + timeout
        while key not in self.seen:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SystemExit(f"timed out waiting for {key}")
            for note in self.listener.notifies(timeout=left, stop_after=1):
                self.seen.add(note.payload)
        # Told by the trigger, which fires only as the row changes so and is delivered only once that commits: no
        # query here (one would fall inside the caller's timing).
        self.seen.discard(key)
        return time.time()


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def count_queries(workspace, fake, show: bool = False) -> tuple[int, float, dict]:
    """SQL queries for a one-step run, and for each further step, start to finish (Celery eager, in this
    process); and the body the one-step run's model request carried, for the peers to send. `show`: print the
    one-step run's statements (the start of each), numbered, to see which a change added or took away."""
    from foldrun.celery import app
    from runs.actions import check_start_run
    from runs.models import Run

    counts, bodies = [], []
    logging.getLogger("celery.app.trace").setLevel(logging.WARNING)  # no line per eager task
    app.conf.task_always_eager = True
    try:
        # A first one-step run warms this process's caches (the desk at the revision), as a worker's are.
        for flow, replies in (("one", 1), ("one", 1), ("three", 3)):
            for _ in range(replies):
                fake.reply_text("GOOD", usage=(1, 1))
            with CaptureQueriesContext(connection) as ctx:
                run = check_start_run(workspace=workspace, flow=flow)
            assert Run.objects.get(pk=run.pk).status == "completed", Run.objects.get(pk=run.pk).error
            counts.append(len(ctx.captured_queries))
            bodies.append(fake.requests[-1].body)
            if show and len(counts) == 2:
                for n, query in enumerate(ctx.captured_queries, 1):
                    print(f"  {n:2}. {query['sql'][:160]}")
    finally:
        app.conf.task_always_eager = False
    assert bodies[1].get("stream") is True, "a step's model call is streamed, and so the peers' are"
    return counts[1], (counts[2] - counts[1]) / 2, bodies[1]


def foldrun_run_seconds(workspace, steps: int, ends: Ends) -> float:
    """Seconds per step of one N-step run (one instant model call each) through the real worker, from the
    request until this process sees the run ended."""
    from runs.actions import check_start_run
    from runs.models import Run

    start = time.monotonic()
    run = check_start_run(workspace=workspace, flow=f"seq{steps}")
    ends.wait(f"run:{run.pk}", lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).exists(), 300)
    return (time.monotonic() - start) / steps


@contextlib.contextmanager
def dbos_workflow(fake, call_body: dict):
    """A DBOS workflow of N steps on this PostgreSQL server (its own system database), launched once: yields a
    function giving the seconds per step of one N-step workflow, or None without dbos or PostgreSQL.

    Each DBOS step makes the call a foldrun step makes and nothing else: tests/bench/peer_call.py's
    `streamed_text` — the step's body streamed through the guarded `net.client("model")` to the same stand-in,
    the SSE stream read to its end — and returns the text, which DBOS checkpoints as the step's output."""
    try:
        from dbos import DBOS
    except ImportError:
        yield None
        return
    if connection.vendor != "postgresql":
        yield None
        return
    settings = connection.settings_dict
    url = (
        f"postgresql://{settings['USER']}:{settings.get('PASSWORD') or ''}@{settings['HOST']}:"
        f"{settings['PORT'] or 5432}/{settings['NAME']}_dbos"
    )
    # A fresh system database each run, as foldrun's test database is: workflows an earlier run left there made
    # DBOS's steps 2-3× slower than on an empty one, and a peer must not pay for another run's rows.
    import psycopg

    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{settings["NAME"]}_dbos"')
    DBOS(config={"name": "foldrun-bench", "system_database_url": url, "log_level": "WARNING"})
    endpoint = f"{fake.base_url}/v1/messages"

    # A workflow called directly runs in the calling thread, its steps with it; net.client("model") is one
    # httpx.Client per process (thread-safe, made under a lock), so DBOS needs no client of its own.
    @DBOS.step()
    def call(n: int) -> str:
        return streamed_text(endpoint, call_body)

    @DBOS.workflow()
    def workflow(steps: int) -> int:
        return sum(1 for n in range(steps) if call(n))

    def per_step(steps: int) -> float:
        start = time.monotonic()
        workflow(steps)
        return (time.monotonic() - start) / steps

    DBOS.launch()
    try:
        yield per_step
    finally:
        DBOS.destroy()
        with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{settings["NAME"]}_dbos" WITH (FORCE)')


class MachineCpu:
    """CPU time every process doing the work spent: this one (the model stand-in's threads, DBOS's workflow),
    the worker's (main and pool), PostgreSQL's and Redis's — read from each thread's /proc/<pid>/task/*/schedstat,
    in nanoseconds. Wall time on this 2-core machine moves by a third from minute to minute with what its
    neighbours do; the CPU a step costs moves far less, so it is printed beside the wall-clock figures. The
    processes are listed once (`track`), so a snapshot reads a few dozen small files and nothing else."""

    GROUPS = ("this process", "worker main", "worker pool", "PostgreSQL", "Redis")

    def __init__(self) -> None:
        self.pids: list[int] = []
        self.group: dict[int, str] = {}  # pid -> which of GROUPS it is

    def track(self, worker_pid: int, databases: list[str]) -> None:
        """This process, the worker's, Redis, PostgreSQL's WAL writer and its backends serving `databases` (not
        another program's, such as a test suite's): call it once both sides have opened their connections."""
        pids = {os.getpid(), worker_pid}
        self.group = {os.getpid(): "this process", worker_pid: "worker main"}
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                status = (entry / "status").read_text()
                words = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").split()
            except OSError:
                continue
            name = status.split("\n", 1)[0].split(":", 1)[1].strip()
            parent = next((int(line.split()[1]) for line in status.splitlines() if line.startswith("PPid:")), 0)
            serving = name == "postgres" and (any(db in words for db in databases) or "walwriter" in words)
            if serving or name == "redis-server" or parent == worker_pid:
                pids.add(int(entry.name))
                self.group[int(entry.name)] = (
                    "PostgreSQL" if serving else "Redis" if name == "redis-server" else "worker pool"
                )
        self.pids = sorted(pids)

    def now(self) -> int:
        return sum(self.by_group().values())

    def by_group(self) -> dict[str, int]:
        """Nanoseconds of CPU so far, summed by GROUPS."""
        totals = dict.fromkeys(self.GROUPS, 0)
        for pid in self.pids:
            try:
                tasks = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for task in tasks:
                try:
                    with open(f"/proc/{pid}/task/{task}/schedstat") as f:
                        totals[self.group[pid]] += int(f.read().split()[0])
                except (OSError, ValueError, IndexError):
                    continue
        return totals


def sequential_beside_dbos(
    workspace, fake, call_body: dict, repeats: dict[int, int], ends: Ends, cpu: MachineCpu, worker_pid: int
) -> dict[int, tuple]:
    """For each run length N: p50 seconds per step of an N-step foldrun run and of an N-step DBOS workflow
    (None without DBOS), measured turn about — one foldrun run, then one workflow, `repeats[N]` times — so that
    a change in the machine's speed during the benchmark weighs on both sides alike; and the CPU seconds per
    step every process spent on each side (MachineCpu), summed over the repeats."""
    out: dict[int, tuple] = {}
    # Every call of this phase gets the same instant reply, on both sides.
    fake.responder = lambda _body: Reply(blocks=[{"type": "text", "text": "GOOD"}], usage=(1, 1))
    try:
        with dbos_workflow(fake, call_body) as peer:
            # Each side once before the CPU is counted, so that every connection either opens is in place.
            foldrun_run_seconds(workspace, 1, ends)
            if peer is not None:
                peer(1)
            name = connection.settings_dict["NAME"]
            cpu.track(worker_pid, [name, f"{name}_dbos"])
            for steps, count in repeats.items():
                ours, theirs = [], []
                our_cpu = their_cpu = 0
                for _ in range(count):
                    before = cpu.now()
                    ours.append(foldrun_run_seconds(workspace, steps, ends))
                    between = cpu.now()
                    our_cpu += between - before
                    if peer is not None:
                        theirs.append(peer(steps))
                        their_cpu += cpu.now() - between
                out[steps] = (
                    statistics.median(ours),
                    statistics.median(theirs) if theirs else None,
                    our_cpu / 1e9 / (count * steps),
                    their_cpu / 1e9 / (count * steps) if theirs else None,
                )
    finally:
        fake.responder = None
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--bare", type=int, default=100)
    parser.add_argument("--fanout", type=int, default=100)
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=10, help="turns of bare tasks and one-step runs")
    parser.add_argument("--seq-repeats", type=int, default=10, help="10-step runs (and workflows) measured")
    parser.add_argument("--show-sql", action="store_true", help="print the statements a one-step run makes")
    args = parser.parse_args()
    setup_test_environment()
    named = connection.settings_dict["NAME"]
    connection.creation.create_test_db(verbosity=0, autoclobber=True)
    from tests.fakes.providers import FakeProvider

    fake = FakeProvider().start()
    worker = ends = None
    try:
        from accounts.models import Account, Workspace
        from foldrun.celery import app
        from runs.actions import check_start_run
        from runs.models import Run, Try
        from tests.runs.helpers import agent_file, push

        account = Account.objects.create(name="Bench")
        workspace = Workspace.objects.create(account=account, name="bench-desk")
        push(
            workspace,
            {
                "agents/a/agent.md": agent_file("a", fake, tools="[]"),
                "flows/one.md": "---\nname: one\n---\n1. [[a]] — Say GOOD.\n",
                "flows/three.md": "---\nname: three\n---\n1. [[a]] — One.\n2. [[a]] — Two.\n3. [[a]] — Say GOOD.\n",
                "flows/fan.md": "---\nname: fan\n---\n1. [[a]] — List.\n2. [[a]] — Read {{item}}.\n   each: lines\n   max: 1000\n",
                **{
                    f"flows/seq{n}.md": f"---\nname: seq{n}\n---\n"
                    + "".join(f"{i}. [[a]] — Step {i}.\n" for i in range(1, n + 1))
                    for n in (1, 10, 50)
                },
            },
        )
        per_run_queries, per_step_queries, call_body = count_queries(workspace, fake, args.show_sql)
        ends = Ends()
        worker = start_worker(
            args.concurrency,
            Path(os.environ.get("FOLDRUN_DATA_DIR", "/tmp")) / "bench-worker.log",
            level="warning",
            settle=0.5,
            include=["tests.bench.tasks"],
        )
        broker = app.conf.broker_url.split("://", 1)[0]
        print(
            f"database {connection.vendor}, broker {broker}, worker concurrency {args.concurrency}, "
            f"load average {os.getloadavg()[0]:.2f}"
        )

        def bare_round_trips(count: int, tag: str) -> list[float]:
            # A task making the same instant model call to the same stub (the step's body, streamed) and
            # writing its reply to a row we wait for (the same broker, the same worker, the same polling):
            # tests/bench/tasks.py.
            times: list[float] = []
            fake.responder = lambda _body: Reply(blocks=[{"type": "text", "text": "GOOD"}], usage=(1, 1))
            try:
                for n in range(count):
                    start = time.monotonic()
                    app.send_task(
                        "bench.model_call", args=[account.pk, f"{fake.base_url}/v1/messages", call_body, f"{tag}-{n}"]
                    )
                    ends.wait(
                        f"account:GOOD-{tag}-{n}",
                        lambda: Account.objects.filter(pk=account.pk, name=f"GOOD-{tag}-{n}").exists(),
                        30,
                    )
                    times.append(time.monotonic() - start)
            finally:
                fake.responder = None
            return times

        # One-step runs, one after another: the platform's own time per step. Measured in rounds, turn about
        # with the bare task's round trips, so a change in the machine's speed during the benchmark weighs on
        # both sides alike.
        bare: list[float] = []
        per_run: list[float] = []
        phases: dict[str, list[float]] = {
            "start (request to queued)": [],
            "queue (queued to claimed)": [],
            "step (claimed to step saved)": [],
            "finish (step saved to run done)": [],
            "seen (run done to noticed here)": [],
            "total (request to noticed here)": [],
        }

        def one_step_runs(count: int) -> list[tuple]:
            """`count` one-step runs, one after another, timed; what each part took is read afterwards
            (`read_phases`), so that those reads are not among the runs' CPU."""
            for _ in range(count):
                fake.reply_text("GOOD", usage=(1, 1))
            seen = []
            for _ in range(count):
                start_wall, start = time.time(), time.monotonic()
                run = check_start_run(workspace=workspace, flow="one")
                queued_wall = time.time()
                seen_wall = ends.wait(
                    f"run:{run.pk}", lambda: Run.objects.filter(pk=run.pk, status="completed").exists(), 60
                )
                per_run.append(time.monotonic() - start)
                seen.append((run, start_wall, queued_wall, seen_wall))
            return seen

        def read_phases(seen: list[tuple]) -> None:
            for run, start_wall, queued_wall, seen_wall in seen:
                run.refresh_from_db()
                assert run.status == "completed", run.error
                attempt = Try.objects.get(step__run=run)
                phases["start (request to queued)"].append(queued_wall - start_wall)
                phases["queue (queued to claimed)"].append(attempt.started_at.timestamp() - queued_wall)
                phases["step (claimed to step saved)"].append(
                    (attempt.finished_at - attempt.started_at).total_seconds()
                )
                phases["finish (step saved to run done)"].append(
                    (run.finished_at - attempt.finished_at).total_seconds()
                )
                # Whatever the worker does after it stamps the run's finished_at (the rest of that transaction,
                # its commit) lands here, with the delivery of its NOTIFY (or the poll's own delay); the five parts
                # add up to the total exactly, run by run (one machine, one clock).
                phases["seen (run done to noticed here)"].append(seen_wall - run.finished_at.timestamp())
                phases["total (request to noticed here)"].append(seen_wall - start_wall)

        rounds = max(1, min(args.rounds, args.runs, args.bare))
        # Which process spends the CPU of each side, counted from the second round on (the first opens every
        # connection and warms every cache): where a one-step run's cost above the bare task's lies.
        split, spent = MachineCpu(), {"bare": Counter(), "one": Counter()}
        done = {"bare": 0, "one": 0}
        for n in range(rounds):
            if n == 1:
                split.track(worker.pid, [connection.settings_dict["NAME"]])
            count = args.bare * (n + 1) // rounds - args.bare * n // rounds
            before = split.by_group() if n else None
            bare += bare_round_trips(count, f"r{n}")
            between = split.by_group() if n else None
            runs = args.runs * (n + 1) // rounds - args.runs * n // rounds
            seen = one_step_runs(runs)
            if n:
                after = split.by_group()
                spent["bare"].update({g: between[g] - before[g] for g in split.GROUPS})
                spent["one"].update({g: after[g] - between[g] for g in split.GROUPS})
                done["bare"], done["one"] = done["bare"] + count, done["one"] + runs
            read_phases(seen)

        bare_p50 = statistics.median(bare)
        step_p50 = statistics.median(per_run)
        print(
            f"bare Celery task making the same model call ({len(bare)}): p50 {ms(bare_p50)}, p95 {ms(pct(bare, 0.95))}"
        )
        print(
            f"one-step run ({len(per_run)}): p50 {ms(step_p50)} per step, p95 {ms(pct(per_run, 0.95))}, "
            f"{1 / statistics.mean(per_run):.1f} steps/s sequentially"
        )
        print(f"ratio to the bare task (p50/p50): {step_p50 / bare_p50:.2f}× (target ≤ 2×)")
        print("where a step's time goes (p50 of each part; the p50s of the parts need not sum to the total's):")
        for name, values in phases.items():
            print(f"  {name:34} {ms(statistics.median(values))}")
        print(
            f"SQL queries: {per_run_queries} for a one-step run from start to finish, {per_step_queries:g} for each "
            f"further step (target ≤ 8)"
        )
        if done["bare"] and done["one"]:
            print("CPU per piece of work, by process (ms; this process starts the work and serves the model stand-in):")
            print(f"  {'':16}" + "".join(f"{g:>13}" for g in (*split.GROUPS, "total")))
            for side, label in (("bare", "bare task"), ("one", "one-step run")):
                each = [spent[side][g] / 1e6 / done[side] for g in split.GROUPS]
                print(f"  {label:16}" + "".join(f"{v:13.2f}" for v in (*each, sum(each))))

        # 1-, 10- and 50-step runs, per step, turn about with a DBOS workflow of the same steps.
        lengths = {1: args.seq_repeats * 2, 10: args.seq_repeats, 50: max(2, args.seq_repeats // 3)}
        sequential = sequential_beside_dbos(workspace, fake, call_body, lengths, ends, MachineCpu(), worker.pid)
        print("per step, p50, one instant model call each (lease and heartbeat included; foldrun and DBOS turn about):")
        for n, (ours, peer, _, _) in sequential.items():
            beside = f"; DBOS workflow {ms(peer)} ({ours / peer:.2f}× DBOS)" if peer else ""
            print(
                f"  {n:2}-step run ×{lengths[n]}: foldrun {ms(ours)} ({ours / bare_p50:.1f}× a bare Celery task)"
                f"{beside}"
            )
        print(
            "CPU per step, every process doing the work (this one with the model stand-in, the worker, PostgreSQL, "
            "Redis):"
        )
        for n, (_, _, our_cpu, their_cpu) in sequential.items():
            beside = f"; DBOS workflow {ms(their_cpu)} ({our_cpu / their_cpu:.2f}× DBOS)" if their_cpu else ""
            print(f"  {n:2}-step run: foldrun {ms(our_cpu)}{beside}")
        if any(peer is None for _, peer, _, _ in sequential.values()):
            print("  (DBOS: needs PostgreSQL and `pip install -r tests/bench/requirements.txt`)")
        print("targets: a sequential step at most 1.0× DBOS's; a one-step run at most 2× the bare task")

        # A fan-out of M instances against M sequential steps.
        fake.reply_text("\n".join(f"item {i}" for i in range(args.fanout)), usage=(1, 1))
        for _ in range(args.fanout):
            fake.reply_text("read", usage=(1, 1))
        start = time.monotonic()
        run = check_start_run(workspace=workspace, flow="fan")
        # Polled every 20 ms: the figure is seconds, and a tighter loop here would take the workers' CPU.
        ends.wait(
            f"run:{run.pk}",
            lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).exists(),
            600,
            0.02,
        )
        fan_time = time.monotonic() - start
        run.refresh_from_db()
        done = run.steps.filter(instance__isnull=False, status="completed").count()
        one_by_one = step_p50 * (args.fanout + 1)
        print(f"fan-out run {run.status}: {done} of {args.fanout} instances completed")
        print(
            f"fan-out of {args.fanout} (plus the step that lists them): {fan_time:.2f}s, against {one_by_one:.2f}s for "
            f"{args.fanout + 1} sequential steps ({fan_time / one_by_one:.2f}×)"
        )
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(20)
        fake.stop()
        # The throwaway database goes with the run (each run makes its own): runs left one behind each, with its
        # thousands of rows, until the disk filled.
        if ends is not None and ends.listener is not None:
            ends.listener.close()
        connection.creation.destroy_test_db(named, verbosity=0)


if __name__ == "__main__":
    main()
