"""The runs API: start, list, read, decide, resume, cancel, download; the Tool
Test button; schedules; inbound webhooks. Thin: actions do the work."""

from __future__ import annotations

import json

from django.db import IntegrityError, transaction
from django.http import HttpResponse
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.access import ScopedAPIView
from accounts.models import Workspace
from foldrun.api import ApiError, NotFound
from foldrun.openapi import error, errors, validated
from foldrun.contract.model import find_flow
from foldrun.parsers import check_depth, not_text

from . import actions
from .hook_signing import Refusal, scheme_of, verify
from .idempotency import KEY_HEADER, REPLAYED_HEADER, check_idempotency_key, do_start_once, request_hash
from .models import HookReceipt, Run, RunStatus, Trigger
from . import serializers as s
from .serializers import ArtifactSerializer, RunDetailSerializer, RunSerializer, ScheduleSerializer
from .paging import page_link, refuse_offsets, run_with_summaries, runs_page
from .host import vault_lookup
from .scratch import check_scratch_file, do_clear_scratch, scratch_of
from .tooltest import run_tool_test
from .triggers import schedules_of


class RunsView(ScopedAPIView):
    """GET: the workspace's runs a page at a time (runs.paging: a cursor, filters by flow, status, verdict, kind,
    trigger, test and time). POST: start one."""

    @extend_schema(
        parameters=[s.RunsQuerySerializer],
        responses={200: s.RunListSerializer, **errors(400)},
        description="The workspace's runs, newest first, a page at a time: follow `next` (the same filters, and "
        "`before`, a cursor for this workspace only) until it is null.",
    )
    def get(self, request, ws: str):
        workspace = self.get_workspace(ws)
        refuse_offsets(request)
        query = validated(s.RunsQuerySerializer, request.query_params.dict())
        page = runs_page(workspace, query)
        return Response(
            {
                "runs": RunSerializer(page.rows, many=True).data,
                "next": page_link(request, "before", page.cursor) if page.more else None,
            }
        )

    @extend_schema(
        request=s.RUN_START,
        parameters=[s.IDEMPOTENCY_KEY],
        responses={
            201: RunSerializer,
            400: error(
                400,
                "The request is malformed, the flow has errors (`message` says the first), or the "
                "Idempotency-Key is empty, longer than 255 characters or not printable ASCII.",
            ),
            404: error(404, "No such workspace, flow or agent."),
            409: error(
                409, "The workspace has spent its budget (or, rarely, an Idempotency-Key's run was being removed)."
            ),
            422: error(422, "This Idempotency-Key was used within 24 hours with another body (`details.key`)."),
        },
        description=(
            "Start a flow (`flow`, `inputs`) or one agent ad hoc (`agent`, `task`). With an `Idempotency-Key` "
            "header a retry starts nothing new: it answers the run the key started."
        ),
    )
    def post(self, request, ws: str):
        workspace = self.get_workspace(ws)
        self.require_write()
        key = check_idempotency_key(request.headers.get(KEY_HEADER))
        data = request.data if isinstance(request.data, dict) else None
        if data is not None and bool(data.get("flow")) == bool(data.get("agent")):
            raise ApiError("Give either flow (a flow's name) or agent (with task) to run.", code="invalid")
        shape = s.RunFlowInSerializer if data is not None and data.get("flow") else s.RunAgentInSerializer
        body = validated(shape, data)

        def start() -> Run:
            return actions.check_start_run(
                workspace=workspace,
                user=request.user,
                flow=body.get("flow"),
                agent=body.get("agent"),
                task=body.get("task"),
                inputs=body.get("inputs"),
                is_test=body["test"],
                trigger=body["trigger"],
            )

        if key is None:
            return Response(RunSerializer(start()).data, status=201)
        run, replayed = do_start_once(
            workspace,
            key,
            request_hash("POST runs", data),
            start,
            kept=lambda run: {"run": run},
            found=lambda row: row.run,
        )
        # The same answer as the first (a payment API's replay), with the run as it is now and a header saying so.
        answer = Response(RunSerializer(run).data, status=201)
        if replayed:
            answer[REPLAYED_HEADER] = "true"
        return answer


class ScopedRunView(ScopedAPIView):
    def get_run(self, ws: str, run_id: str) -> Run:
        workspace = self.get_workspace(ws)
        run = Run.objects.filter(workspace=workspace, public_id=run_id).select_related("workspace").first()
        if run is None:
            raise NotFound()
        return run


class RunView(ScopedRunView):
    @extend_schema(
        responses=RunDetailSerializer,
        description="One run with its steps' summaries, approvals and artifacts; its trace is paged at "
        "`…/runs/{run_id}/trace`, and `…/runs/{run_id}/status` is the light answer to poll.",
    )
    def get(self, request, ws: str, run_id: str):
        run = self.get_run(ws, run_id)
        return Response(RunDetailSerializer(run_with_summaries(run)).data)


class DecideView(ScopedRunView):
    """POST …/runs/<id>/steps/<n>/approve|reject (an `ask:` takes {"answer": …})."""

    decision = "approve"

    @extend_schema(
        request=s.DecisionInSerializer,
        responses={
            200: s.DecisionSerializer,
            400: error(400, "The body is malformed, or the step asked a question and `answer` is missing."),
            403: error(403, "Your role may not decide, or the flow names other approvers."),
            409: error(409, "The step is not waiting for a decision, was already decided, or the decision expired."),
        },
        parameters=[
            OpenApiParameter("index", OpenApiTypes.INT, OpenApiParameter.PATH, description="the step's number, from 1")
        ],
    )
    def post(self, request, ws: str, run_id: str, index: int):
        run = self.get_run(ws, run_id)
        answer = validated(s.DecisionInSerializer, request.data).get("answer")
        approval = actions.check_decide(
            run=run, index=index, decision=self.decision, membership=self.membership, answer=answer
        )
        return Response(
            {
                "id": approval.public_id,
                "step": index,
                "state": approval.state,
                "decided_by": approval.decided_by_label,
                "decided_at": approval.decided_at,
            }
        )


class ApproveView(DecideView):
    decision = "approve"


class RejectView(DecideView):
    decision = "reject"


class EventView(ScopedRunView):
    @extend_schema(
        request=OpenApiTypes.OBJECT,
        responses={200: s.EventReceivedSerializer, **errors(409)},
        description="Deliver event `name` to the run's step waiting for it (`wait: event`); the body, if any, "
        "is the event's data. 409 when no step waits for it or the run has finished.",
    )
    def post(self, request, ws: str, run_id: str, name: str):
        run = self.get_run(ws, run_id)
        self.require_write()
        step = actions.do_receive_event(run, name, request.data if request.data else None)
        return Response(
            {"run": run.public_id, "step": step.index, "event": name, "received_at": step.event_received_at}
        )


class CancelView(ScopedRunView):
    @extend_schema(
        request=None,
        responses={200: RunSerializer, **errors(409)},
        description="Cancel the run; 409 when it has already finished.",
    )
    def post(self, request, ws: str, run_id: str):
        run = self.get_run(ws, run_id)
        self.require_write()
        run = actions.do_cancel_run(run, user=request.user)
        return Response(RunSerializer(run).data)


class ArtifactsView(ScopedRunView):
    @extend_schema(responses=s.ArtifactListSerializer)
    def get(self, request, ws: str, run_id: str):
        run = self.get_run(ws, run_id)
        return Response({"artifacts": ArtifactSerializer(run.artifacts.all(), many=True).data})


class ArtifactView(ScopedRunView):
    @extend_schema(
        responses={
            (200, "application/octet-stream"): OpenApiResponse(
                OpenApiTypes.BINARY, description="The artifact's bytes, as an attachment named for its path."
            )
        }
    )
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

    @extend_schema(responses=s.ScheduleListSerializer)
    def get(self, request, ws: str):
        workspace = self.get_workspace(ws)
        return Response({"schedules": ScheduleSerializer(schedules_of(workspace), many=True).data})


class ToolTestView(ScopedAPIView):
    """POST /api/workspaces/<ws>/tools/<tool>/test {"arguments": {…}, "agent"?, "operation"?}: no model call."""

    @extend_schema(
        request=s.ToolTestInSerializer,
        responses={200: s.ToolTestOutSerializer, 404: error(404, "No such workspace, tool or operation.")},
    )
    def post(self, request, ws: str, tool: str):
        workspace = self.get_workspace(ws)
        self.require_write()
        body = validated(s.ToolTestInSerializer, request.data)
        answer = run_tool_test(
            workspace,
            tool,
            body["arguments"],
            agent=body.get("agent"),
            operation=body.get("operation"),
            is_test=body["test"],
        )
        return Response(answer)


class ScratchView(ScopedAPIView):
    """The Tool Test scratch of one tool: what its tests left in state/ and outputs/, laid out for the next."""

    @extend_schema(responses={200: s.ScratchSerializer, 404: error(404, "No such workspace.")})
    def get(self, request, ws: str, tool: str):
        return Response(s.ScratchSerializer(scratch_of(self.get_workspace(ws), tool)).data)

    @extend_schema(
        responses={200: s.ScratchClearedSerializer, 404: error(404, "No such workspace.")},
        description="Forget the scratch: the next Tool Test starts from the workspace's files alone.",
    )
    def delete(self, request, ws: str, tool: str):
        workspace = self.get_workspace(ws)
        self.require_write()
        return Response({"tool": tool, "cleared": do_clear_scratch(workspace, tool)})


class ScratchFileView(ScopedAPIView):
    @extend_schema(
        operation_id="workspaces_tools_scratch_file_retrieve",
        responses={
            (200, "application/octet-stream"): OpenApiResponse(
                OpenApiTypes.BINARY, description="The file's bytes, as an attachment named for its path."
            ),
            404: error(404, "No such workspace, or no such file in the tool's scratch."),
        },
    )
    def get(self, request, ws: str, tool: str, path: str):
        row = check_scratch_file(self.get_workspace(ws), tool, path)
        response = HttpResponse(bytes(row.content), content_type="application/octet-stream")
        response["Content-Disposition"] = content_disposition_header(True, row.path.rsplit("/", 1)[-1])
        return response


class HookView(APIView):
    """POST /api/hooks/<ws>/<flow>: an inbound webhook starts the flow with the body as its input.

    `ws` is the workspace's public id (`ws_…`): names are unique only inside an
    account. A flow takes webhooks only when its file has `webhook:`. The body is
    whatever the sender sends: a JSON object is the run's inputs, any other body
    (an array, a string, null, text that is not JSON) its `body` input.
    """

    authentication_classes: list = []
    permission_classes = [AllowAny]

    # ANY, not OBJECT: a sender's null or array starts the flow too (as its `body` input), so the schema may
    # not call it invalid.
    @extend_schema(
        request=OpenApiTypes.ANY,
        auth=[],
        responses={
            200: OpenApiResponse(
                s.HookAnswerSerializer,
                description="This X-Foldrun-Delivery id was seen before: the run it started, nothing new.",
            ),
            202: OpenApiResponse(s.HookAnswerSerializer, description="The run it started."),
            400: error(
                400,
                "The body holds a NUL character or a lone surrogate, or is JSON nested deeper than 100 "
                "levels; nothing was started.",
            ),
            401: error(
                401,
                "The flow's `signature:` scheme (hmac, standard, github, stripe) wants a signature that is "
                "missing or wrong, or a signed timestamp more than 300 s from the server's clock.",
            ),
            404: error(404, "No such workspace, or the flow takes no webhooks."),
            409: error(
                409, "The workspace has spent its budget, or this signed request was delivered before (`replayed`)."
            ),
            413: error(413),
        },
        parameters=[
            OpenApiParameter(
                "ws", OpenApiTypes.STR, OpenApiParameter.PATH, description="the workspace's public id, ws_…"
            ),
            OpenApiParameter(
                "X-Foldrun-Delivery",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="the sender's delivery id: a repeat (per flow, per day) starts nothing new",
            ),
            OpenApiParameter(
                "x-signature",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="signature: hmac — the hex HMAC-SHA256 of the body",
            ),
            OpenApiParameter(
                "X-Foldrun-Timestamp",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="signature: hmac — Unix seconds, signed by X-Foldrun-Signature",
            ),
            OpenApiParameter(
                "X-Foldrun-Signature",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description='signature: hmac — sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">',
            ),
            OpenApiParameter(
                "webhook-signature",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="signature: standard — Standard Webhooks, with webhook-id and webhook-timestamp",
            ),
            OpenApiParameter(
                "X-Hub-Signature-256",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="signature: github — GitHub's sha256=<hex HMAC of the body>",
            ),
            OpenApiParameter(
                "Stripe-Signature",
                OpenApiTypes.STR,
                OpenApiParameter.HEADER,
                description="signature: stripe — Stripe's t=<timestamp>,v1=<hex>",
            ),
        ],
    )
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
        scheme = scheme_of(config)
        name = str(config.get("secret") or "")
        secret = vault_lookup(workspace, [name]).get(name, ("", ""))[0] if name and scheme != "none" else ""
        try:
            verified = verify(scheme, secret, raw, request.headers, secret_name=name)
        except Refusal as refused:
            raise ApiError(refused.message, code=refused.code, status_code=401) from None
        delivery = (
            request.headers.get("X-Foldrun-Delivery")
            or verified.signed_id
            or request.headers.get("X-GitHub-Delivery")
            or ""
        ).strip()[:100]
        earlier = actions.earlier_delivery(workspace, flow, delivery)
        if earlier is not None:
            return _duplicate(earlier)
        inputs = _hook_inputs(raw)
        try:
            run = _start_once(workspace, flow, inputs, delivery, verified.keys)
        except actions.DuplicateDelivery as duplicate:  # a simultaneous request with the same id won
            return _duplicate(duplicate.run)
        except _Replayed:
            earlier = actions.earlier_delivery(workspace, flow, delivery)
            if earlier is not None:  # the same delivery, sent at once twice: its run is the answer
                return _duplicate(earlier)
            raise ApiError(
                "This signed request was delivered before, and a replay starts nothing; a sender "
                "that means to send the same body again signs it anew.",
                code="replayed",
                status_code=409,
            ) from None
        return Response({"run": run.public_id, "status": run.status, "duplicate": False}, status=202)


class _Replayed(Exception):
    """The request's replay key is kept already: this signed request started a run before."""


def _hook_inputs(raw: bytes) -> dict:
    """A hook's body as the run's inputs: a JSON object is them, any other body their `body`."""
    check_depth(raw, "nothing was started")
    try:
        body = json.loads(raw) if raw else {}
    except ValueError:
        body = raw.decode("utf-8", "replace")
    where = not_text(body)
    if where is not None:
        # \u0000 and a lone surrogate are legal JSON but no database column takes them (jsonb refuses
        # them): the API parser's sentence, before anything is started.
        raise ApiError(
            f"{where}: text may not hold a NUL character or a lone surrogate; nothing was started.",
            code="invalid",
            details={"field": where},
        )
    return body if isinstance(body, dict) else {"body": body}


def _start_once(workspace: Workspace, flow: str, inputs: dict, delivery: str, keys: list[str]) -> Run:
    """Start the flow; with replay keys, only if the first is not kept yet, the keys kept with the run in one
    transaction — a start refused (a budget, a broken flow) keeps nothing, so the sender's retry is not a
    replay."""
    if not keys:
        return actions.check_start_run(
            workspace=workspace, flow=flow, inputs=inputs, trigger=Trigger.WEBHOOK, delivery_id=delivery
        )
    with transaction.atomic():
        try:
            with transaction.atomic():
                receipt = HookReceipt.objects.create(workspace=workspace, flow=flow, key=keys[0])
        except IntegrityError:
            raise _Replayed() from None
        run = actions.check_start_run(
            workspace=workspace, flow=flow, inputs=inputs, trigger=Trigger.WEBHOOK, delivery_id=delivery
        )
        receipt.run = run
        receipt.save(update_fields=["run"])
        HookReceipt.objects.bulk_create(
            [HookReceipt(workspace=workspace, flow=flow, key=key, run=run) for key in keys[1:]], ignore_conflicts=True
        )
    return run


def _duplicate(run: Run) -> Response:
    """The answer to a delivery id seen before (per flow, per day): the run it started, nothing new."""
    return Response({"run": run.public_id, "status": run.status, "duplicate": True}, status=200)


__all__ = [
    "RunsView",
    "RunView",
    "ApproveView",
    "RejectView",
    "EventView",
    "CancelView",
    "ArtifactsView",
    "ArtifactView",
    "SchedulesView",
    "ToolTestView",
    "ScratchView",
    "ScratchFileView",
    "HookView",
    "RunStatus",
]
