"""`GET /metrics`: what the install is doing, in the Prometheus text format, for an operator's scraper.

Behind a token: `Authorization: Bearer <FOLDRUN_METRICS_TOKEN>`; with no token set the address answers 404, as
if it did not exist. A missing or wrong token is a 401 (compared in constant time). Nothing here is labelled by
an account, a workspace, a flow or a run: the figures are the install's, so a scrape leaks no tenant's names.

Why from the database and not from counters in memory: the web server runs several worker processes and the
Celery workers are processes of their own, so a counter kept in one process would count a fraction of the work
(prometheus_client's multiprocess mode needs a shared folder on every machine). What a run, a step, a try, a
delivery or a browser session does is already a row; the collector reads those rows at scrape time in a fixed
number of queries (`QUERIES`), each bounded by an index, whatever the number of runs.

The one figure that is per process is the database pool's (psycopg_pool's public `get_stats()`): a scrape
reads the pool of the web process that answered it, labelled with that process's id.
"""

from __future__ import annotations

import datetime as dt
import hmac
import logging
import os
from collections.abc import Iterable, Iterator
from decimal import Decimal

from django.conf import settings
from django.db import connection
from django.db.models import Count, F, Min, Q, Sum
from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.views.decorators.http import require_GET
from prometheus_client import CONTENT_TYPE_PLAIN_0_0_4, CollectorRegistry, generate_latest
from prometheus_client.core import GaugeHistogramMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from browsing.actions import install_capacity
from browsing.models import BrowserSession, SessionStatus
from foldrun import incidents
from notify.models import Delivery, DeliveryStatus
from runs.models import Run, RunStatus, Step, StepStatus, Try

log = logging.getLogger(__name__)

# The queries one scrape makes (tests/ops/test_metrics.py holds it to this, at 3 runs and at 300).
QUERIES = 7
# The steps still on their way: the queue depth and what is being worked on.
ACTIVE_STEPS = [StepStatus.QUEUED, StepStatus.RUNNING, StepStatus.AWAITING_APPROVAL, StepStatus.WAITING]
# Seconds. A step takes from a second (a plain reply) to an hour (a long browse); the wait for a worker from
# milliseconds (a worker free) to minutes (a backlog).
STEP_SECONDS_BUCKETS = (1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600)
QUEUE_WAIT_BUCKETS = (0.1, 0.5, 1, 2, 5, 10, 30, 60, 300, 900)
SPEND_WINDOW = dt.timedelta(seconds=60)


def _gauge(name: str, doc: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value)


def _by(name: str, doc: str, label: str, counts: dict[str, int], known: Iterable[str]) -> GaugeMetricFamily:
    """A gauge per value of `label`, every known value present (0 when there is none), so a series never vanishes."""
    family = GaugeMetricFamily(name, doc, labels=[label])
    for value in known:
        family.add_metric([value], counts.get(value, 0))
    return family


def _histogram(name: str, doc: str, seconds: list[float], bounds: tuple[float, ...]) -> GaugeHistogramMetricFamily:
    """The recent window's figures as a gauge histogram: cumulative buckets that may go down as the window moves."""
    buckets = [(str(float(bound)), sum(1 for s in seconds if s <= bound)) for bound in bounds]
    buckets.append(("+Inf", len(seconds)))
    return GaugeHistogramMetricFamily(name, doc, buckets=buckets, gsum_value=sum(seconds))


class RecordsCollector(Collector):
    """The install's figures, read from its records at scrape time (QUERIES queries, whatever the history)."""

    def __init__(self, now: dt.datetime | None = None) -> None:
        self.now = now

    def collect(self) -> Iterator[GaugeMetricFamily | GaugeHistogramMetricFamily]:
        now = self.now or timezone.now()
        window = int(settings.FOLDRUN_METRICS_WINDOW_SECONDS)
        try:
            families = list(self._records(now, window))
        except Exception:  # noqa: BLE001 - a scrape never answers 5xx: that the records could not be read is the figure
            incidents.record(log, "metrics: the records could not be read")
            families = []
        yield _gauge(
            "foldrun_metrics_records_read",
            "1 when this scrape read the database's records, 0 when it could not (the other figures are missing)",
            1 if families else 0,
        )
        yield _gauge("foldrun_metrics_window_seconds", "the window the recent figures cover", window)
        yield from families
        yield from _pool()

    def _records(self, now: dt.datetime, window: int) -> Iterator[GaugeMetricFamily | GaugeHistogramMetricFamily]:
        since = now - dt.timedelta(seconds=window)
        # 1. Runs by status: the finished ones only grow (until retention prunes them), the others come and go.
        runs = dict(Run.objects.order_by().values_list("status").annotate(n=Count("pk")))
        yield _by("foldrun_runs", "runs kept, by status", "status", runs, RunStatus.values)
        # 2. The steps on their way (the queue depth) and the oldest one waiting for a worker.
        steps = list(
            Step.objects.filter(status__in=ACTIVE_STEPS)
            .order_by()
            .values_list("status")
            .annotate(n=Count("pk"), oldest=Min("queued_at"))
        )
        yield _by(
            "foldrun_steps", "steps not yet finished, by status", "status", {s: n for s, n, _ in steps}, ACTIVE_STEPS
        )
        oldest = next((when for status, _, when in steps if status == StepStatus.QUEUED and when), None)
        yield _gauge(
            "foldrun_oldest_queued_step_seconds",
            "how long the step longest in the queue has waited for a worker (0 when none waits)",
            max(0.0, (now - oldest).total_seconds()) if oldest else 0,
        )
        # 3. The recent steps (queued within the window: Step.queued_at is indexed) with their current try.
        recent = (
            Try.objects.filter(step__queued_at__gte=since, n=F("step__attempt"))
            .order_by()
            .values_list("step__queued_at", "started_at", "step__status", "step__started_at", "step__finished_at")
        )
        waits: list[float] = []
        durations: list[float] = []
        for queued_at, try_started, status, step_started, step_finished in recent:
            if try_started >= queued_at:  # a try started before its step's last queueing is the previous one's
                waits.append((try_started - queued_at).total_seconds())
            if status in (StepStatus.COMPLETED, StepStatus.FAILED) and step_started and step_finished:
                durations.append(max(0.0, (step_finished - step_started).total_seconds()))
        yield _histogram(
            "foldrun_step_duration_seconds",
            "steps of the window that ended (completed or failed): from their first start to their end",
            durations,
            STEP_SECONDS_BUCKETS,
        )
        yield _histogram(
            "foldrun_step_queue_wait_seconds",
            "steps of the window that started: from being queued to a worker taking them",
            waits,
            QUEUE_WAIT_BUCKETS,
        )
        # 4. Tries lost with their worker (the recovery sweep's and a lost browser pod's), as kept.
        lost = Try.objects.filter(status="lost").count()
        yield _gauge("foldrun_tries_lost", "tries lost with their worker, kept on the record", lost)
        # 5. What the tries of the window that ended in the last minute cost.
        spent = Try.objects.filter(step__queued_at__gte=since, finished_at__gte=now - SPEND_WINDOW).aggregate(
            usd=Sum("cost_usd")
        )["usd"] or Decimal("0")
        yield _gauge(
            "foldrun_spend_last_minute_usd", "what the tries that ended in the last minute cost, in USD", float(spent)
        )
        # 6. Webhook deliveries by outcome (purged after 30 days).
        deliveries = dict(Delivery.objects.order_by().values_list("status").annotate(n=Count("pk")))
        yield _by(
            "foldrun_deliveries", "webhook deliveries kept, by outcome", "status", deliveries, DeliveryStatus.values
        )
        # 7. Browser sessions: those holding one of the install's browsers, those queued for one.
        sessions = BrowserSession.objects.filter(status__in=[SessionStatus.STARTING, SessionStatus.LIVE]).aggregate(
            holding=Count("pk", filter=Q(queued_until__isnull=True)),
            queued=Count("pk", filter=Q(queued_until__isnull=False)),
        )
        yield _by(
            "foldrun_browser_sessions",
            "open browser sessions: holding a browser, or queued for one",
            "state",
            sessions,
            ("holding", "queued"),
        )
        yield _gauge("foldrun_browser_capacity", "the browsers this install keeps open at once", install_capacity())


def _pool() -> Iterator[GaugeMetricFamily]:
    """This web process's database pool, when the database has one (PostgreSQL under the web server: a worker
    or beat keeps its one connection, and SQLite has none)."""
    pool = connection.pool if connection.vendor == "postgresql" else None  # Django's own pool, when configured
    if pool is not None:
        yield from pool_figures(pool.get_stats(), os.getpid())


def pool_figures(stats: dict[str, int], pid: int) -> Iterator[GaugeMetricFamily]:
    """A psycopg pool's public get_stats() as gauges, labelled with the process's id: each web process has a pool
    of its own, and the counters run from that process's start (a new pid is a new series, not a reset)."""
    figures = (
        ("foldrun_db_pool_size", "connections this process's pool holds", stats.get("pool_size", 0)),
        ("foldrun_db_pool_available", "of them, idle", stats.get("pool_available", 0)),
        ("foldrun_db_pool_requests_waiting", "requests waiting for a connection now", stats.get("requests_waiting", 0)),
        (
            "foldrun_db_pool_requests_waited",
            "requests that had to wait for a connection, since the process started",
            stats.get("requests_queued", 0),
        ),
        (
            "foldrun_db_pool_wait_seconds",
            "the time requests spent waiting for a connection, in all, since the process started",
            stats.get("requests_wait_ms", 0) / 1000,
        ),
        (
            "foldrun_db_pool_requests_failed",
            "requests that got no connection (timed out waiting, or the queue was full), since the process started",
            stats.get("requests_errors", 0),
        ),
    )
    for name, doc, value in figures:
        family = GaugeMetricFamily(name, doc, labels=["pid"])
        family.add_metric([str(pid)], value)
        yield family


def _token_matches(request: HttpRequest, token: str) -> bool:
    scheme, _, given = request.headers.get("Authorization", "").partition(" ")
    return scheme.lower() == "bearer" and hmac.compare_digest(given.strip().encode(), token.encode())


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    token = settings.FOLDRUN_METRICS_TOKEN
    if not token:  # metrics are off: the address does not exist
        return HttpResponse("Not found.\n", status=404, content_type="text/plain; charset=utf-8")
    if not _token_matches(request, token):
        return HttpResponse(
            "The metrics need the install's metrics token: send Authorization: Bearer <FOLDRUN_METRICS_TOKEN>.\n",
            status=401,
            content_type="text/plain; charset=utf-8",
            headers={"WWW-Authenticate": 'Bearer realm="metrics"'},
        )
    registry = CollectorRegistry(auto_describe=False)
    registry.register(RecordsCollector())
    response = HttpResponse(generate_latest(registry), content_type=CONTENT_TYPE_PLAIN_0_0_4)
    response["Cache-Control"] = "no-store"
    return response
