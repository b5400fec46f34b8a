"""GET /metrics: the install's figures in the Prometheus text format, behind a token, read from the records in a
fixed number of queries, and labelled by nothing of a tenant's."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from psycopg_pool import ConnectionPool, PoolTimeout

from accounts.models import Workspace
from browsing.models import BrowserSession
from foldrun.metrics import QUERIES, pool_figures
from notify.models import Delivery
from runs.models import Run, Step, Try

TOKEN = "metrics-token-for-the-scraper-3f9a"


@pytest.fixture
def metrics_on(settings):
    settings.FOLDRUN_METRICS_TOKEN = TOKEN
    settings.FOLDRUN_METRICS_WINDOW_SECONDS = 900
    settings.FOLDRUN_BROWSER_CAPACITY = 4


def _scrape(token: str | None = TOKEN):
    headers = {"HTTP_AUTHORIZATION": f"Bearer {token}"} if token is not None else {}
    return Client().get("/metrics", **headers)


def _figures(answer) -> dict[str, dict[tuple, float]]:
    """Every sample, by its name and then its labels, as prometheus_client's own parser reads the answer."""
    figures: dict[str, dict[tuple, float]] = {}
    for family in text_string_to_metric_families(answer.content.decode()):
        for sample in family.samples:
            figures.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return figures


# One instant per test, so the figures the test's records imply are exact (a second apart is a second, not a
# second and some microseconds).
NOW: list[dt.datetime] = []


@pytest.fixture(autouse=True)
def one_instant():
    NOW[:] = [timezone.now()]


def _ago(seconds: float) -> dt.datetime:
    return NOW[0] - dt.timedelta(seconds=seconds)


def _run(workspace: Workspace, status: str, name: str = "weekly-report") -> Run:
    return Run.objects.create(account=workspace.account, workspace=workspace, name=name, status=status)


def _step(
    run: Run, index: int, status: str, *, queued: float, started: float | None = None, ended: float | None = None
):
    return Step.objects.create(
        run=run,
        index=index,
        agent="writer",
        status=status,
        queued_at=_ago(queued),
        started_at=_ago(started) if started is not None else None,
        finished_at=_ago(ended) if ended is not None else None,
        attempt=0,
    )


def _try(step: Step, n: int, status: str, *, started: float, ended: float, cost: str) -> Try:
    step.attempt = n
    step.save(update_fields=["attempt"])
    return Try.objects.create(
        step=step, n=n, status=status, started_at=_ago(started), finished_at=_ago(ended), cost_usd=Decimal(cost)
    )


def _a_day_of_work(workspace: Workspace) -> None:
    """3 completed runs, 1 failed, 1 running with 2 queued steps, 1 queued; one try lost; $0.45 spent in the
    last minute; deliveries and browser sessions."""
    for ended in (20, 30, 300):  # each step: queued, taken 3 s later, 45 s of work
        step = _step(_run(workspace, "completed"), 1, "completed", queued=ended + 48, started=ended + 45, ended=ended)
        _try(step, 1, "completed", started=ended + 45, ended=ended, cost="0.05")
    failed = _step(_run(workspace, "failed"), 1, "failed", queued=50, started=120, ended=10)
    _try(failed, 1, "lost", started=120, ended=20, cost="0.10")  # lost with its worker, run again
    _try(failed, 2, "failed", started=49, ended=10, cost="0.25")  # 1 s after it was queued again
    running = _run(workspace, "running")
    _step(running, 1, "queued", queued=30)
    _step(running, 2, "queued", queued=10)
    _run(workspace, "queued")
    for status in ("succeeded", "succeeded", "failed", "pending"):
        Delivery.objects.create(
            account=workspace.account, workspace=workspace, event="failed", body="{}", status=status
        )
    BrowserSession.objects.create(account=workspace.account, status="live", live_at=timezone.now())
    BrowserSession.objects.create(account=workspace.account, status="starting", queued_until=_ago(-60))
    BrowserSession.objects.create(account=workspace.account, status="closed")


def test_metrics_answer_404_while_no_token_is_set(db, settings):
    settings.FOLDRUN_METRICS_TOKEN = ""
    assert _scrape().status_code == 404
    assert _scrape(None).status_code == 404


def test_metrics_refuse_a_scraper_without_the_token_or_with_a_wrong_one(db, metrics_on):
    for answer in (_scrape(None), _scrape("not-the-token"), _scrape(TOKEN + "x"), _scrape("")):
        assert answer.status_code == 401
        assert answer["WWW-Authenticate"] == 'Bearer realm="metrics"'
        assert answer.content.decode() == (
            "The metrics need the install's metrics token: send Authorization: Bearer <FOLDRUN_METRICS_TOKEN>.\n"
        )
    basic = Client().get("/metrics", HTTP_AUTHORIZATION=f"Basic {TOKEN}")
    assert basic.status_code == 401


def test_metrics_with_the_token_say_what_the_records_hold(workspace, metrics_on):
    _a_day_of_work(workspace)
    answer = _scrape()
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/plain; version=0.0.4")
    assert answer["Cache-Control"] == "no-store"
    figures = _figures(answer)
    assert figures["foldrun_metrics_records_read"] == {(): 1}
    runs = {dict(labels)["status"]: value for labels, value in figures["foldrun_runs"].items()}
    assert runs == {
        "queued": 1,
        "running": 1,
        "awaiting-approval": 0,
        "waiting": 0,
        "completed": 3,
        "failed": 1,
        "cancelled": 0,
    }
    steps = {dict(labels)["status"]: value for labels, value in figures["foldrun_steps"].items()}
    assert steps == {"queued": 2, "running": 0, "awaiting-approval": 0, "waiting": 0}
    assert 30 <= figures["foldrun_oldest_queued_step_seconds"][()] < 40
    assert figures["foldrun_tries_lost"] == {(): 1}
    assert figures["foldrun_spend_last_minute_usd"][()] == pytest.approx(0.45)  # 0.05 + 0.05 + 0.10 + 0.25
    deliveries = {dict(labels)["status"]: value for labels, value in figures["foldrun_deliveries"].items()}
    assert deliveries == {"pending": 1, "succeeded": 2, "failed": 1, "skipped": 0}
    sessions = {dict(labels)["state"]: value for labels, value in figures["foldrun_browser_sessions"].items()}
    assert sessions == {"holding": 1, "queued": 1}
    assert figures["foldrun_browser_capacity"] == {(): 4}
    # Four steps ended in the window: three of 45 s, the failed one 110 s from its first start.
    duration = {dict(labels)["le"]: value for labels, value in figures["foldrun_step_duration_seconds_bucket"].items()}
    assert (duration["30.0"], duration["60.0"], duration["120.0"], duration["+Inf"]) == (0, 3, 4, 4)
    assert figures["foldrun_step_duration_seconds_gcount"] == {(): 4}
    assert figures["foldrun_step_duration_seconds_gsum"][()] == pytest.approx(3 * 45 + 110)
    # Four steps were taken from the queue: three after 3 s, the failed one's second try after 1 s.
    wait = {dict(labels)["le"]: value for labels, value in figures["foldrun_step_queue_wait_seconds_bucket"].items()}
    assert (wait["0.5"], wait["1.0"], wait["2.0"], wait["5.0"], wait["+Inf"]) == (0, 1, 1, 4, 4)


def test_a_step_queued_before_the_window_is_not_in_its_histograms(workspace, metrics_on):
    step = _step(_run(workspace, "completed"), 1, "completed", queued=2000, started=1990, ended=1900)
    _try(step, 1, "completed", started=1990, ended=1900, cost="1.00")
    figures = _figures(_scrape())
    assert figures["foldrun_step_duration_seconds_gcount"] == {(): 0}
    assert figures["foldrun_step_queue_wait_seconds_gcount"] == {(): 0}
    assert figures["foldrun_spend_last_minute_usd"] == {(): 0}
    assert figures["foldrun_runs"][(("status", "completed"),)] == 1


def test_a_scrape_whose_records_cannot_be_read_answers_200_saying_so(workspace, metrics_on, caplog):
    _a_day_of_work(workspace)
    with connection.cursor() as cursor:  # a table gone from under the scrape (the test's transaction restores it)
        cursor.execute("ALTER TABLE notify_delivery RENAME TO notify_delivery_away")
    answer = _scrape()
    assert answer.status_code == 200
    figures = _figures(answer)
    assert figures["foldrun_metrics_records_read"] == {(): 0}
    assert "foldrun_runs" not in figures
    assert "Traceback" not in answer.content.decode()
    assert "metrics: the records could not be read [incident err_" in caplog.text


def _queries_of_a_scrape() -> int:
    with CaptureQueriesContext(connection) as queries:
        assert _scrape().status_code == 200
    return len(queries.captured_queries)


def test_a_scrape_makes_as_many_queries_for_300_runs_as_for_3(workspace, metrics_on):
    _a_day_of_work(workspace)
    few = _queries_of_a_scrape()
    runs = Run.objects.bulk_create(
        Run(account=workspace.account, workspace=workspace, name=f"flow-{i % 7}", status="completed")
        for i in range(300)
    )
    steps = Step.objects.bulk_create(
        Step(run=run, index=1, agent="writer", status="completed", queued_at=_ago(100), started_at=_ago(95),
             finished_at=_ago(5), attempt=1)
        for run in runs
    )  # fmt: skip
    Try.objects.bulk_create(
        Try(step=step, n=1, status="completed", started_at=_ago(95), finished_at=_ago(5)) for step in steps
    )
    assert Run.objects.count() == 306
    assert _queries_of_a_scrape() == few == QUERIES
    assert _figures(_scrape())["foldrun_step_duration_seconds_gcount"] == {(): 304}


def test_nothing_of_an_account_labels_or_appears_in_the_metrics(account, metrics_on):
    account.name = "Initech Confidential"
    account.save()
    workspace = Workspace.objects.create(account=account, name="merger-desk")
    _a_day_of_work(workspace)
    secret_flow = _run(workspace, "completed", name="acquire-globex-quietly")
    text = _scrape().content.decode()
    for private in (account.name, workspace.name, secret_flow.name, secret_flow.public_id, "weekly-report", TOKEN):
        assert private not in text
    labels = {
        name for family in text_string_to_metric_families(text) for sample in family.samples for name in sample.labels
    }
    assert labels <= {"status", "state", "le", "pid"}


class Figures:
    """Families already made, as a collector the registry can render."""

    def __init__(self, families: list) -> None:
        self.families = families

    def collect(self) -> list:
        return self.families


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the web process's pool is PostgreSQL's")
def test_a_pool_whose_requests_waited_and_timed_out_reports_it(db):
    conninfo = connection.get_connection_params()
    pool = ConnectionPool(kwargs=conninfo, min_size=1, max_size=1, timeout=0.2, open=True)
    try:
        pool.wait()  # its one connection made, so only the request below waits
        with pool.connection():  # the pool's one connection taken: the next request waits, and gives up
            with pytest.raises(PoolTimeout):
                pool.getconn()
        registry = CollectorRegistry(auto_describe=False)
        families = list(pool_figures(pool.get_stats(), 4242))
    finally:
        pool.close()

    registry.register(Figures(families))
    text = generate_latest(registry).decode()
    figures = {
        sample.name: (sample.labels, sample.value)
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }
    assert figures["foldrun_db_pool_size"] == ({"pid": "4242"}, 1)
    assert figures["foldrun_db_pool_requests_waited"][1] == 1
    assert figures["foldrun_db_pool_requests_failed"][1] == 1
    assert figures["foldrun_db_pool_wait_seconds"][1] >= 0.2
    assert figures["foldrun_db_pool_requests_waiting"][1] == 0
