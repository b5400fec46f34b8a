"""API shapes for runs. Public ids only; never a secret (traces never hold one)."""
from __future__ import annotations

from rest_framework import serializers

from .models import Approval, Artifact, Run, Schedule, Step, TraceEvent, Try


class TrySerializer(serializers.ModelSerializer):
    class Meta:
        model = Try
        fields = ["n", "status", "error", "cost_usd", "tokens_in", "tokens_out", "seconds", "started_at", "finished_at"]


class TraceSerializer(serializers.ModelSerializer):
    step = serializers.SerializerMethodField()

    class Meta:
        model = TraceEvent
        fields = ["step", "try_n", "kind", "data", "at"]

    def get_step(self, obj: TraceEvent) -> str | None:
        return obj.step.public_id if obj.step_id else None


class ApprovalSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id")
    step = serializers.IntegerField(source="step.index")

    class Meta:
        model = Approval
        fields = ["id", "step", "kind", "state", "question", "answer", "approvers", "decided_by_label", "decided_at",
                  "created_at", "expires_at"]


class StepSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id")
    tries = TrySerializer(many=True, read_only=True)

    class Meta:
        model = Step
        fields = ["id", "index", "instance", "label", "item", "agent", "task", "status", "attempt", "output", "error",
                  "approvers", "wait_event", "wrote", "limits_line", "cost_usd", "tokens_in", "tokens_out",
                  "started_at", "finished_at", "tries"]


class ArtifactSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id")

    class Meta:
        model = Artifact
        fields = ["id", "path", "size", "sha256", "created_at"]


class RunSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id")
    workspace = serializers.CharField(source="workspace.name")
    created_by = serializers.SerializerMethodField()
    inputs = serializers.SerializerMethodField()

    class Meta:
        model = Run
        fields = ["id", "workspace", "kind", "name", "trigger", "status", "verdict", "headline", "summary", "error",
                  "cost_usd", "tokens_in", "tokens_out", "budget_usd", "is_test", "changeset_number", "inputs",
                  "created_by", "created_at", "started_at", "finished_at"]

    def get_created_by(self, obj: Run) -> str | None:
        return obj.created_by.email if obj.created_by_id else None

    def get_inputs(self, obj: Run) -> dict:
        return {k: v for k, v in (obj.inputs or {}).items() if k != "__flow__"}


class RunDetailSerializer(RunSerializer):
    steps = StepSerializer(many=True, read_only=True)
    trace = TraceSerializer(many=True, read_only=True)
    approvals = ApprovalSerializer(many=True, read_only=True)
    artifacts = ArtifactSerializer(many=True, read_only=True)

    class Meta(RunSerializer.Meta):
        fields = RunSerializer.Meta.fields + ["steps", "trace", "approvals", "artifacts"]


class ScheduleSerializer(serializers.ModelSerializer):
    class Meta:
        model = Schedule
        fields = ["flow", "cron", "timezone", "next_fire_at", "last_fired_at", "quarantined_at"]
