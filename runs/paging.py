"""The runs API's pages: the runs list by cursor, newest first, and one run's trace by event.

Both cursors are opaque to clients and signed (django.core.signing) with a salt that names the workspace (the
list) or the run (the trace) they were given for: a cursor from another workspace or run, or one edited by hand,
fails its signature and is a 400 with a sentence — it never selects a row, and every query below is scoped to the
requester's workspace or run whatever the cursor says. Each page is a keyset query (`created_at, public_id` for
runs; the event's key for the trace), so its cost follows the page, not the history before it. Signed, not
encrypted: a cursor's payload (a time and a run id, or an event's row key) can be read, never forged.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.core import signing
from django.db.models import F, Prefetch, Q, prefetch_related_objects
from django.utils.dateparse import parse_datetime
from rest_framework.request import Request

from accounts.models import Workspace
from foldrun.api import ApiError

from .models import Approval, Artifact, Run, Step, TraceEvent

TRACE_PAGE_MAX = 500  # events in one trace page, at most (the bound; `limit` may ask for fewer)
_RUNS_SALT = "foldrun.runs.list.cursor"
_TRACE_SALT = "foldrun.runs.trace.cursor"


@dataclass
class Page:
    """One page of rows; `cursor` is where it ends, `more` says whether rows were known to follow it."""

    rows: list
    cursor: str | None
    more: bool


def _refused(field: str, what: str, fresh: str) -> ApiError:
    return ApiError(
        f"{field}: this cursor is not one {what} gave (it belongs to another, or was changed); {fresh}.",
        code="invalid",
        details={"field": field},
    )


def page_link(request: Request, field: str, cursor: str | None) -> str | None:
    """This request's URL with `field` set to `cursor`: the next page, with the same filters and limit."""
    if cursor is None:
        return None
    params = request.query_params.copy()
    params[field] = cursor
    return request.build_absolute_uri(request.path) + "?" + params.urlencode()


def refuse_offsets(request: Request) -> None:
    """`offset` and `page` were once ignored without a word; now they are a sentence that says how to page."""
    for field in ("offset", "page"):
        if field in request.query_params:
            raise ApiError(
                f"{field}: the runs list pages by cursor, not by {field}; follow the answer's `next` link "
                "(or pass its `before`).",
                code="invalid",
                details={"field": field},
            )


def run_with_summaries(run: Run) -> Run:
    """The run with what its detail answer shows loaded in one query each — steps, their tries, approvals (with
    their step), artifacts (without their bytes) — so the answer's cost does not follow the run's length."""
    steps = Step.objects.prefetch_related("tries")
    approvals = Approval.objects.select_related("step")
    artifacts = Artifact.objects.defer("content")
    prefetch_related_objects(
        [run],
        "created_by",
        Prefetch("steps", queryset=steps),
        Prefetch("approvals", queryset=approvals),
        Prefetch("artifacts", queryset=artifacts),
    )
    return run


# ---------------------------------------------------------------------------------------------------- the runs list


def run_cursor(workspace: Workspace, run: Run) -> str:
    return signing.dumps(
        {"at": run.created_at.isoformat(), "id": run.public_id}, salt=f"{_RUNS_SALT}:{workspace.public_id}"
    )


def read_run_cursor(workspace: Workspace, cursor: str) -> tuple[datetime, str]:
    """The (created_at, public_id) position a runs-list cursor names, or a 400 when this workspace did not give it."""
    refused = _refused("before", "this workspace's runs list", "start again from the first page, without before")
    try:
        position = signing.loads(cursor, salt=f"{_RUNS_SALT}:{workspace.public_id}")
    except signing.BadSignature:
        raise refused from None
    at = parse_datetime(position.get("at", "")) if isinstance(position, dict) else None
    run_id = position.get("id") if isinstance(position, dict) else None
    if at is None or not isinstance(run_id, str):
        raise refused
    return at, run_id


def runs_page(workspace: Workspace, query: dict[str, Any]) -> Page:
    """A page of the workspace's runs, newest first by (created_at, public_id), after the `before` cursor."""
    runs = (
        Run.objects.filter(workspace=workspace)
        .select_related("workspace", "created_by")
        .order_by("-created_at", "-public_id")
    )
    if query.get("flow"):
        runs = runs.filter(name=query["flow"])
    for field in ("status", "verdict", "kind", "trigger"):
        if query.get(field):
            runs = runs.filter(**{field: query[field]})
    if query.get("test") is not None:
        runs = runs.filter(is_test=query["test"])
    if query.get("created_after"):
        runs = runs.filter(created_at__gte=query["created_after"])
    if query.get("created_before"):
        runs = runs.filter(created_at__lt=query["created_before"])
    if query.get("before"):
        at, run_id = read_run_cursor(workspace, query["before"])
        runs = runs.filter(Q(created_at__lt=at) | Q(created_at=at, public_id__lt=run_id))
    limit = query["limit"]
    rows = list(runs[: limit + 1])  # one more than the page: whether another page follows, in the same query
    more = len(rows) > limit
    rows = rows[:limit]
    return Page(rows=rows, cursor=run_cursor(workspace, rows[-1]) if more else None, more=more)


# ------------------------------------------------------------------------------------------------------- the trace


def trace_cursor(run: Run, event_key: int) -> str:
    return signing.dumps({"e": event_key}, salt=f"{_TRACE_SALT}:{run.public_id}")


def read_trace_cursor(run: Run, cursor: str) -> int:
    """The event a trace cursor names, or a 400 when this run's trace did not give it."""
    refused = _refused("after", "this run's trace", "start again from its first page, without after")
    try:
        position = signing.loads(cursor, salt=f"{_TRACE_SALT}:{run.public_id}")
    except signing.BadSignature:
        raise refused from None
    key = position.get("e") if isinstance(position, dict) else None
    if not isinstance(key, int) or isinstance(key, bool):
        raise refused
    return key


def trace_page(run: Run, after: str | None, limit: int) -> Page:
    """Up to `limit` of the run's trace events after the `after` cursor, oldest first, each with its step's public
    id joined in the same query (one query for the page, however long the run). The cursor of the last page is
    where to poll from for events written later; with no event yet it is the one given (or none)."""
    events = TraceEvent.objects.filter(run=run).annotate(step_public_id=F("step__public_id")).order_by("pk")
    if after:
        events = events.filter(pk__gt=read_trace_cursor(run, after))
    rows = list(events[: limit + 1])
    more = len(rows) > limit
    rows = rows[:limit]
    cursor = trace_cursor(run, rows[-1].pk) if rows else after
    return Page(rows=rows, cursor=cursor, more=more)
