"""API shapes of deliveries and attempts. Approve/reject links are redacted:
every role can read the log, and those links decide without a login."""

from __future__ import annotations

import json

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from foldrun.openapi import QueryBooleanField, StrictBooleanField, StrictCharField

from .actions import redact_body
from .models import Attempt, Category, Delivery, DeliveryStatus
from .preferences import LOCKED, PER_WORKSPACE


class AttemptSerializer(serializers.ModelSerializer):
    statusCode = serializers.IntegerField(source="status_code", allow_null=True)
    durationMs = serializers.IntegerField(source="duration_ms")
    response = serializers.CharField(source="response_excerpt")
    startedAt = serializers.DateTimeField(source="started_at")

    class Meta:
        model = Attempt
        fields = ["number", "redelivery", "ok", "lost", "statusCode", "durationMs", "response", "error", "startedAt"]


class DeliverySerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id")
    runId = serializers.CharField(source="run_public_id")
    attemptsMade = serializers.IntegerField(source="attempts_made")
    nextAttemptAt = serializers.DateTimeField(source="next_attempt_at", allow_null=True)
    createdAt = serializers.DateTimeField(source="created_at")
    finishedAt = serializers.DateTimeField(source="finished_at", allow_null=True)
    body = serializers.SerializerMethodField()
    attempts = AttemptSerializer(many=True, read_only=True)

    class Meta:
        model = Delivery
        fields = [
            "id",
            "event",
            "status",
            "runId",
            "attemptsMade",
            "nextAttemptAt",
            "createdAt",
            "finishedAt",
            "body",
            "attempts",
        ]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_body(self, obj: Delivery):
        text = redact_body(obj.body)
        try:
            return json.loads(text)
        except ValueError:
            return text


# ---------------------------------------------------------------- OpenAPI: the notify API's own shapes


class DeliveryListSerializer(serializers.Serializer):
    deliveries = DeliverySerializer(many=True, help_text="newest first, at most 50")


class DeliveriesQuerySerializer(serializers.Serializer):
    failed = QueryBooleanField(required=False, default=False, help_text="true: only deliveries that failed")
    status = serializers.ChoiceField(choices=DeliveryStatus.choices, required=False)


class RedeliveredSerializer(serializers.Serializer):
    delivery = DeliverySerializer()
    attempt = AttemptSerializer()


class TestSendSerializer(serializers.Serializer):
    workspace = serializers.CharField()
    destination = serializers.ChoiceField(choices=["webhook", "email"])
    ok = serializers.BooleanField(help_text="whether the destination took it")
    message = serializers.CharField(allow_null=True, help_text="what came back, in a sentence")
    statusCode = serializers.IntegerField(allow_null=True, required=False)
    deliveryId = serializers.CharField(required=False, help_text="webhook: the delivery, dlv_…")
    durationMs = serializers.IntegerField(required=False)
    response = serializers.CharField(required=False, allow_blank=True)
    to = serializers.CharField(required=False, help_text="email: the address")
    provider = serializers.CharField(required=False, allow_null=True)
    messageId = serializers.CharField(required=False, allow_null=True)


class WorkspaceChoiceSerializer(serializers.Serializer):
    workspace = serializers.CharField()
    enabled = serializers.BooleanField()
    via = serializers.CharField(required=False)


class CategoryChoiceSerializer(serializers.Serializer):
    category = serializers.ChoiceField(choices=Category.choices)
    what = serializers.CharField()
    enabled = serializers.BooleanField()
    locked = serializers.BooleanField(help_text="true: this mail cannot be turned off")
    reason = serializers.CharField(allow_null=True)
    perWorkspace = serializers.BooleanField()
    via = serializers.CharField(required=False, help_text='"unsubscribe" when a mail\'s link turned it off')
    workspaces = WorkspaceChoiceSerializer(many=True, required=False)


class MyNotificationsSerializer(serializers.Serializer):
    email = serializers.EmailField()
    categories = CategoryChoiceSerializer(many=True)


class _PreferenceIn(serializers.Serializer):
    enabled = StrictBooleanField()
    via = serializers.ChoiceField(choices=["profile", "cli"], required=False, default="profile")


class AccountPreferenceInSerializer(_PreferenceIn):
    """A category that is one choice for every workspace (a `workspace` is refused)."""

    openapi_closed = "is not a field of this choice; a category for every workspace takes no workspace."
    # Only the categories a person may turn off: security, invites, billing and account mail stay on (a 400).
    category = serializers.ChoiceField(
        choices=[c for c in Category.values if c not in LOCKED and c not in PER_WORKSPACE]
    )


class WorkspacePreferenceInSerializer(_PreferenceIn):
    """A category chosen per workspace: for one `workspace`, or for all when it is absent."""

    category = serializers.ChoiceField(choices=[c for c in Category.values if c in PER_WORKSPACE and c not in LOCKED])
    workspace = StrictCharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=63,
        help_text="one workspace; every workspace when absent",
    )


PREFERENCE_IN = PolymorphicProxySerializer(
    component_name="PreferenceIn",
    serializers=[AccountPreferenceInSerializer, WorkspacePreferenceInSerializer],
    resource_type_field_name=None,
)
