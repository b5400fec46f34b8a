"""The runs API: start, list, read, decide, resume, cancel, download; the Tool
Test button; schedules; inbound webhooks. Thin: actions do the work."""
from __future__ import annotations

import json

from django.http import HttpResponse
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import ScopedAPIView
from accounts.models import Workspace
from foldrun.api import ApiError, NotFound
from foldrun.contract.model import find_flow
from foldrun.parsers import _not_text

from . import actions
from .models import Run, RunStatus, Trigger
from .serializers import ArtifactSerializer, RunDetailSerializer, RunSerializer, ScheduleSerializer
from .host import vault_lookup
from .tooltest import run_tool_test
from .triggers import schedules_of, signature_ok

PAGE_SIZE = 50


def _truthy(value) -> bool:
    return value in (True, 1, "1", "true", "True", "yes")


class RunsView(ScopedAPIView):
    """GET: the workspace's runs (filters: flow, status, verdict, kind, test). POST: start one."""

    def get(self, request, ws: str):
        workspace = self.get_workspace(ws)
        runs = Run.objects.filter(workspace=workspace).select_related("workspace", "created_by")
        flow = request.query_params.get("flow")
        if flow:
            runs = runs.filter(name=flow)
        for field in ("status", "verdict", "kind", "trigger"):
            value = request.query_params.get(field)
            if value:
                runs = runs.filter(**{field: value})
        if request.query_params.get("test") is not None:
            runs = runs.filter(is_test=_truthy(request.query_params["test"]))
        try:
            limit = max(1, min(int(request.query_params.get("limit", PAGE_SIZE)), 500))
        except ValueError:
            raise ApiError("limit: must be a whole number.", code="invalid") from None
        return Response({"runs": RunSerializer(runs[:limit], many=True).data})

    def post(self, request, ws: str):
        workspace = self.get_workspace(ws)
        self.require_write()
        data = request.data if isinstance(request.data, dict) else {}
        trigger = data.get("trigger") or Trigger.API
        if trigger not in (Trigger.API, Trigger.CLI, Trigger.MANUAL):
            raise ApiError("trigger: must be api, cli or manual.", code="invalid")
        run = actions.check_start_run(
            workspace=workspace, user=request.user, flow=data.get("flow"), agent=data.get("agent"),
            task=data.get("task"), inputs=data.get("inputs"), is_test=_truthy(data.get("test")), trigger=trigger)
        return Response(RunSerializer(run).data, status=201)


class ScopedRunView(ScopedAPIView):
    def get_run(self, ws: str, run_id: str) -> Run:
        workspace = self.get_workspace(ws)
        run = Run.objects.filter(workspace=workspace, public_id=run_id).select_related("workspace").first()
        if run is None:
            raise NotFound()
        return run


class RunView(ScopedRunView):
    def get(self, request, ws: str, run_id: str):
        run = self.get_run(ws, run_id)
        return Response(RunDetailSerializer(run).data)


class DecideView(ScopedRunView):
    """POST …/runs/<id>/steps/<n>/approve|reject (an `ask:` takes {"answer": …})."""

    decision = "approve"

    def post(self, request, ws: str, run_id: str, index: int):
        run = self.get_run(ws, run_id)
        answer = request.data.get("answer") if isinstance(request.data, dict) else None
        approval = actions.check_decide(run=run, index=index, decision=self.decision, membership=self.membership,
                                        answer=answer)
        return Response({"id": approval.public_id, "step": index, "state": approval.state,
                         "decided_by": approval.decided_by_label, "decided_at": approval.decided_at})


class ApproveView(DecideView):
    decision = "approve"


class RejectView(DecideView):
    decision = "reject"


class EventView(ScopedRunView):
    def post(self, request, ws: str, run_id: str, name: str):
        run = self.get_run(ws, run_id)
        self.require_write()
        step = actions.do_receive_event(run, name, request.data if request.data else None)
        return Response({"run": run.public_id, "step": step.index, "event": name, "received_at": step.event_received_at})


class CancelView(ScopedRunView):
    def post(self, request, ws: str, run_id: str):
        run = self.get_run(ws, run_id)
        self.require_write()
        run = actions.do_cancel_run(run, user=request.user)
        return Response(RunSerializer(run).data)


class ArtifactsView(ScopedRunView):
    def get(self, request, ws: str, run_id: str):
        run = self.get_run(ws, run_id)
        return Response({"artifacts": ArtifactSerializer(run.artifacts.all(), many=True).data})


class ArtifactView(ScopedRunView):
    def get(self, request, ws: str, run_id: str, artifact_id: str):
        run = self.get_run(ws, run_id)
        artifact = run.artifacts.filter(public_id=artifact_id).first()
        if artifact is None:
            raise NotFound()
        response = HttpResponse(bytes(artifact.content), content_type="application/octet-stream")
        response["Content-Disposition"] = f'attachment; filename="{artifact.path.rsplit("/", 1)[-1]}"'
        return response


class SchedulesView(ScopedAPIView):
    """Each scheduled flow and its next fire time (the Triggers page reads this)."""

    def get(self, request, ws: str):
        workspace = self.get_workspace(ws)
        return Response({"schedules": ScheduleSerializer(schedules_of(workspace), many=True).data})


class ToolTestView(ScopedAPIView):
    """POST /api/workspaces/<ws>/tools/<tool>/test {"arguments": {…}, "agent"?, "operation"?}: no model call."""

    def post(self, request, ws: str, tool: str):
        workspace = self.get_workspace(ws)
        self.require_write()
        data = request.data if isinstance(request.data, dict) else {}
        arguments = data.get("arguments", {})
        if not isinstance(arguments, dict):
            raise ApiError("arguments: must be an object of the tool's arguments.", code="invalid")
        answer = run_tool_test(workspace, tool, arguments, agent=data.get("agent"), operation=data.get("operation"),
                               is_test=_truthy(data.get("test")))
        return Response(answer)


class HookView(APIView):
    """POST /api/hooks/<ws>/<flow>: an inbound webhook starts the flow with the body as its input.

    `ws` is the workspace's public id (`ws_…`): names are unique only inside an
    account. A flow takes webhooks only when its file has `webhook:`.
    """

    authentication_classes: list = []
    permission_classes = [AllowAny]

    def post(self, request, ws: str, flow: str):
        workspace = Workspace.objects.filter(public_id=ws).first()
        if workspace is None:
            raise NotFound()
        raw = request.body
        desk = actions.desk_at(workspace, None)
        found = find_flow(desk, flow)
        if found is None or not isinstance(found.webhook, dict):
            raise NotFound()
        config = found.webhook
        if str(config.get("signature") or "").lower() == "hmac":
            name = str(config.get("secret") or "")
            secret = vault_lookup(workspace, [name]).get(name, ("", ""))[0] if name else ""
            if not signature_ok(raw, request.headers.get("x-signature"), secret):
                raise ApiError("The x-signature header is missing or wrong; nothing was started.",
                               code="bad_signature", status_code=401)
        delivery = (request.headers.get("X-Foldrun-Delivery") or "").strip()[:100]
        earlier = actions.earlier_delivery(workspace, flow, delivery)
        if earlier is not None:
            return _duplicate(earlier)
        try:
            body = json.loads(raw) if raw else {}
        except ValueError:
            body = raw.decode("utf-8", "replace")
        where = _not_text(body)
        if where is not None:
            # \u0000 and a lone surrogate are legal JSON but no database column takes them (jsonb refuses
            # them): the API parser's sentence, before anything is started.
            raise ApiError(f"{where}: text may not hold a NUL character or a lone surrogate; nothing was started.",
                           code="invalid", details={"field": where})
        inputs = body if isinstance(body, dict) else {"body": body}
        try:
            run = actions.check_start_run(workspace=workspace, flow=flow, inputs=inputs, trigger=Trigger.WEBHOOK,
                                          delivery_id=delivery)
        except actions.DuplicateDelivery as duplicate:  # a simultaneous request with the same id won
            return _duplicate(duplicate.run)
        return Response({"run": run.public_id, "status": run.status, "duplicate": False}, status=202)


def _duplicate(run: Run) -> Response:
    """The answer to a delivery id seen before (per flow, per day): the run it started, nothing new."""
    return Response({"run": run.public_id, "status": run.status, "duplicate": True}, status=200)


__all__ = ["RunsView", "RunView", "ApproveView", "RejectView", "EventView", "CancelView", "ArtifactsView",
           "ArtifactView", "SchedulesView", "ToolTestView", "HookView", "RunStatus"]
