"""The runs part of the workspace page: recent runs, a Run button per flow
(its declared inputs, a test-run toggle), and the last 14 days as a chart of
runs per day by status and cost per day — in two queries whatever the number
of runs."""

from __future__ import annotations

from datetime import datetime, time, timedelta

from django.db.models import Count, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from .models import Run, RunStatus, TraceEvent
from .pages_browser import mark_runs

DAYS = 14
RECENT = 10
# The chart's colours are the page's state colours (static/foldrun.css).
STATUS_COLOURS = {
    RunStatus.COMPLETED: "#2e9b55",
    RunStatus.FAILED: "#d64541",
    RunStatus.AWAITING_APPROVAL: "#e0a526",
    RunStatus.WAITING: "#2aa1aa",
    RunStatus.RUNNING: "#3f7be6",
    RunStatus.QUEUED: "#8fb1f0",
    RunStatus.CANCELLED: "#a3abb7",
}


def chart_data(workspace, *, days: int = DAYS) -> dict:
    """{"days": [...], "series": [{"status", "colour", "counts"}], "cost": [...], "total_runs": n}."""
    today = timezone.localdate()
    first = today - timedelta(days=days - 1)
    labels = [first + timedelta(days=i) for i in range(days)]
    since = timezone.make_aware(datetime.combine(first, time.min))
    rows = (
        Run.objects.filter(workspace=workspace, created_at__gte=since)
        .annotate(day=TruncDate("created_at", tzinfo=timezone.get_current_timezone()))
        .values("day", "status")
        .annotate(n=Count("pk"), cost=Sum("cost_usd"))
        .order_by()
    )
    counts: dict[str, dict] = {}
    cost = {d: 0.0 for d in labels}
    total = 0
    for row in rows:
        counts.setdefault(row["status"], {})[row["day"]] = row["n"]
        if row["day"] in cost:
            cost[row["day"]] += float(row["cost"] or 0)
        total += row["n"]
    series = [
        {"status": str(status), "colour": colour, "counts": [counts.get(status, {}).get(d, 0) for d in labels]}
        for status, colour in STATUS_COLOURS.items()
        if status in counts
    ]
    return {
        "days": [d.strftime("%b %-d") for d in labels],
        "series": series,
        "cost": [round(cost[d], 6) for d in labels],
        "total_runs": total,
    }


def recent_runs(workspace) -> list[Run]:
    return mark_runs(
        workspace.account_id,
        with_models(
            list(
                Run.objects.filter(workspace=workspace)
                .only(
                    "public_id",
                    "name",
                    "status",
                    "verdict",
                    "headline",
                    "cost_usd",
                    "is_test",
                    "created_at",
                    "workspace_id",
                )
                .order_by("-created_at", "-pk")[:RECENT]
            )
        ),
    )


def flow_inputs(start_post) -> dict[str, str]:
    """The Run form's `input:NAME` fields as the run's inputs (blank ones keep the flow's default)."""
    return {
        key[6:]: value for key, value in start_post.items() if key.startswith("input:") and key[6:] and value.strip()
    }


def with_models(runs: list[Run]) -> list[Run]:
    """Each run gets `.models` — the models its free runs asked (one query for the page), so a run charged
    nothing says "no price known for stub-model" rather than a bare $0.0000."""
    free = [r.pk for r in runs if not r.cost_usd]
    found: dict[int, set[str]] = {}
    if free:
        for run_id, model in (
            TraceEvent.objects.filter(run_id__in=free, kind="model_request")
            .values_list("run_id", "data__model")
            .distinct()
        ):
            if model:
                found.setdefault(run_id, set()).add(str(model))
    for run in runs:
        run.models = sorted(found.get(run.pk, ()))
    return runs


def account_runs(account) -> dict:
    """The home page's part: runs waiting for a decision, and the latest runs across workspaces (two queries)."""
    fields = (
        "public_id",
        "name",
        "status",
        "verdict",
        "headline",
        "cost_usd",
        "is_test",
        "created_at",
        "workspace__name",
    )
    base = Run.objects.filter(account=account).select_related("workspace").only(*fields)
    waiting = list(base.filter(status=RunStatus.AWAITING_APPROVAL).order_by("created_at", "pk")[:10])
    latest = mark_runs(account.pk, with_models(list(base.order_by("-created_at", "-pk")[:8])))
    return {"waiting_runs": waiting, "latest_runs": latest}


def home_part(sender, membership, **kwargs) -> dict:
    """The runs part of the home page (`accounts.signals.home_parts`, connected in RunsConfig.ready)."""
    return account_runs(membership.account)


def workspace_part(sender, workspace, **kwargs) -> dict:
    """The runs part of the workspace page (`library.signals.workspace_parts`, connected in RunsConfig.ready)."""
    return {"recent_runs": recent_runs(workspace), "chart": chart_data(workspace), "has_runs": True}
