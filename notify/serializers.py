"""API shapes of deliveries and attempts. Approve/reject links are redacted:
every role can read the log, and those links decide without a login."""
from __future__ import annotations

import json

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from .actions import redact_body
from .models import Attempt, Delivery


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
        fields = ["id", "event", "status", "runId", "attemptsMade", "nextAttemptAt", "createdAt", "finishedAt",
                  "body", "attempts"]

    @extend_schema_field(OpenApiTypes.OBJECT)
    def get_body(self, obj: Delivery):
        text = redact_body(obj.body)
        try:
            return json.loads(text)
        except ValueError:
            return text
