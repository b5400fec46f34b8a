"""Notify API: deliveries, redelivery, the test send, my mail choices, and
the no-login unsubscribe endpoint (RFC 8058)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response

from accounts.access import ScopedAPIView
from accounts.models import Workspace
from foldrun.api import ApiError, NotFound
from foldrun.openapi import error, errors, validated

from . import actions
from .links import LinkError, read_unsubscribe_token
from .models import Delivery
from .preferences import ALL, LOCKED, LOCKED_REASON, PER_WORKSPACE, STOP_WORDS, do_set_preference, preferences_for
from . import serializers as s
from .serializers import AttemptSerializer, DeliverySerializer

PAGE_SIZE = 50


class DeliveriesView(ScopedAPIView):
    @extend_schema(
        parameters=[s.DeliveriesQuerySerializer],
        responses=s.DeliveryListSerializer,
        description="Outbound webhook deliveries, newest first; ?failed=1 for the failed ones.",
    )
    def get(self, request, ws: str):
        workspace = self.get_workspace(ws)
        query = validated(s.DeliveriesQuerySerializer, request.query_params.dict())
        rows = Delivery.objects.filter(workspace=workspace).prefetch_related("attempts")
        if query["failed"]:
            rows = rows.filter(status="failed")
        elif query.get("status"):
            rows = rows.filter(status=query["status"])
        return Response({"deliveries": DeliverySerializer(rows[:PAGE_SIZE], many=True).data})


class DeliveryView(ScopedAPIView):
    @extend_schema(responses=DeliverySerializer)
    def get(self, request, ws: str, delivery_id: str):
        workspace = self.get_workspace(ws)
        delivery = Delivery.objects.filter(workspace=workspace, public_id=delivery_id).first()
        if delivery is None:
            raise NotFound()
        return Response(DeliverySerializer(delivery).data)


class RedeliverView(ScopedAPIView):
    @extend_schema(
        request=None,
        responses={200: s.RedeliveredSerializer, **errors(409)},
        description="One attempt now: the same id and body, signed afresh; 409 while one is under way "
        "or still pending.",
    )
    def post(self, request, ws: str, delivery_id: str):
        workspace = self.get_workspace(ws)
        self.require_write()
        delivery = actions.check_redeliver(workspace, delivery_id)
        attempt = actions.do_redeliver(delivery)
        delivery.refresh_from_db()
        return Response({"delivery": DeliverySerializer(delivery).data, "attempt": AttemptSerializer(attempt).data})


class TestSendView(ScopedAPIView):
    @extend_schema(
        request=None,
        responses={200: s.TestSendSerializer, 409: error(409, "The workspace has no notify: destination.")},
        description="Send one real message to the saved destination and report what came back.",
    )
    def post(self, request, ws: str):
        workspace = self.get_workspace(ws)
        self.require_write()
        return Response(actions.do_send_test(workspace))


class MyNotificationsView(ScopedAPIView):
    """A person's own mail choices. Any member may change their own — it is
    their inbox, not the account's data."""

    def _answer(self, request):
        workspaces = Workspace.objects.filter(account=self.account).order_by("name")
        return Response({"email": request.user.email, "categories": preferences_for(request.user.email, workspaces)})

    @extend_schema(responses=s.MyNotificationsSerializer)
    def get(self, request):
        return self._answer(request)

    @extend_schema(
        request=s.PREFERENCE_IN,
        responses={200: s.MyNotificationsSerializer, 404: error(404, "No such workspace.")},
        description='{"category": "run-alerts", "enabled": false, "workspace": "seo-desk"}. A per-workspace category '
        'without `workspace` (or with null or "") is chosen for every workspace; any other category is '
        "one choice for every workspace and takes no `workspace` at all, not even null (a 400).",
    )
    def patch(self, request):
        data = request.data if isinstance(request.data, dict) else {}
        category = data.get("category")
        if category not in ALL:
            raise ApiError(f"category must be one of {', '.join(ALL)}.", code="invalid", details={"field": "category"})
        if category in LOCKED:
            raise ApiError(
                f"{category} cannot be turned off. {LOCKED_REASON}", code="locked", details={"field": "category"}
            )
        enabled = data.get("enabled")
        if not isinstance(enabled, bool):
            raise ApiError("enabled must be true or false.", code="invalid", details={"field": "enabled"})
        if data.get("workspace") is not None and not isinstance(data["workspace"], str):
            raise ApiError("workspace: give a workspace's name.", code="invalid", details={"field": "workspace"})
        workspace = None
        if "workspace" in data and category not in PER_WORKSPACE:
            # Even null or "": the schema's account-wide choice has no workspace field, so neither does this.
            raise ApiError(
                f"{category} is one choice for every workspace; leave out workspace.",
                code="invalid",
                details={"field": "workspace"},
            )
        if data.get("workspace"):
            workspace = self.get_workspace(str(data["workspace"]))
        # The shape the schema documents, once the sentences above have named what is wrong.
        validated(
            s.WorkspacePreferenceInSerializer if category in PER_WORKSPACE else s.AccountPreferenceInSerializer,
            {k: v for k, v in data.items() if k != "workspace" or v},
        )
        if not request.user.email:
            raise ApiError("Your login has no email address to choose mail for.", code="no_email")
        do_set_preference(
            request.user.email, category, enabled, workspace, via="cli" if data.get("via") == "cli" else "profile"
        )
        return self._answer(request)


@csrf_exempt  # a mail client's one-click POST carries no cookie and no CSRF token (RFC 8058)
@never_cache
def unsubscribe(request: HttpRequest) -> HttpResponse:
    """GET shows what the link would stop and asks; POST stops it. No login."""
    token = request.GET.get("token") or request.POST.get("token") or ""
    try:
        claim = read_unsubscribe_token(token)
    except LinkError as exc:
        return render(request, "notify/unsubscribe.html", {"error": exc.message, "reason": exc.reason}, status=400)
    workspace = Workspace.objects.filter(public_id=claim.workspace_id).first() if claim.workspace_id else None
    if claim.workspace_id and workspace is None:
        return render(
            request,
            "notify/unsubscribe.html",
            {"error": "The workspace this link is for no longer exists. Nothing was changed."},
            status=400,
        )
    if claim.category in LOCKED or claim.category not in ALL:
        return render(
            request,
            "notify/unsubscribe.html",
            {"error": "This kind of mail cannot be turned off. Nothing was changed."},
            status=400,
        )
    words = STOP_WORDS.get(claim.category, claim.category)
    context = {"email": claim.email, "words": words, "workspace": workspace, "token": token}
    if request.method == "POST":
        do_set_preference(claim.email, claim.category, False, workspace, via="unsubscribe")
        return render(request, "notify/unsubscribe.html", {**context, "done": True})
    if request.method not in ("GET", "HEAD"):
        return HttpResponse(status=405)
    return render(request, "notify/unsubscribe.html", context)
