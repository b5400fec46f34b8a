"""One run, read light: its status (what `foldrun run --wait` polls) and its trace, a page of events at a time."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema

from foldrun.openapi import errors, validated
from rest_framework.response import Response

from . import serializers as s
from .paging import page_link, trace_page
from .views import ScopedRunView


class RunStatusView(ScopedRunView):
    @extend_schema(
        operation_id="workspaces_runs_status_retrieve",  # one run's state, not a list (foldrun.openapi's guess)
        responses=s.RunStateSerializer,
        description="The run's status, verdict and headline, without its steps or trace: one row, the answer to "
        "poll while waiting on a run.",
    )
    def get(self, request, ws: str, run_id: str):
        return Response(s.RunStateSerializer(self.get_run(ws, run_id)).data)


class RunTraceView(ScopedRunView):
    @extend_schema(
        parameters=[s.TraceQuerySerializer],
        responses={200: s.TracePageSerializer, **errors(400)},
        description="The run's trace, oldest first, at most 500 events a page: follow `next` while it is there; "
        "to follow a run that is still going, ask again later with `after` set to the last page's `cursor`.",
    )
    def get(self, request, ws: str, run_id: str):
        run = self.get_run(ws, run_id)
        query = validated(s.TraceQuerySerializer, request.query_params.dict())
        page = trace_page(run, query.get("after"), query["limit"])
        return Response(
            {
                "run": run.public_id,
                "status": run.status,
                "events": s.TraceSerializer(page.rows, many=True).data,
                "next": page_link(request, "after", page.cursor) if page.more else None,
                "cursor": page.cursor,
            }
        )
