"""API shapes for runs. Public ids only; never a secret (traces never hold one)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from foldrun.openapi import QueryBooleanField, StrictBooleanField, StrictCharField

from .cache_use import run_cache
from .idempotency import KEY_HEADER, MAX_KEY, REPLAYED_HEADER
from .paging import TRACE_PAGE_MAX
from .models import (
    Approval,
    ApprovalState,
    Artifact,
    Run,
    RunKind,
    RunStatus,
    Schedule,
    Step,
    TraceEvent,
    Trigger,
    Try,
    Verdict,
)


class TrySerializer(serializers.ModelSerializer):
    class Meta:
        model = Try
        fields = [
            "n",
            "status",
            "error",
            "cost_usd",
            "tokens_in",
            "tokens_out",
            "seconds",
            "started_at",
            "finished_at",
            "image",
            "pod_line",
        ]


class TraceSerializer(serializers.ModelSerializer):
    # Joined into the page's one query (runs.paging.trace_page), never loaded per event.
    step = serializers.CharField(
        source="step_public_id", allow_null=True, help_text="the step it belongs to, stp_…; null for the run's own"
    )

    class Meta:
        model = TraceEvent
        fields = ["step", "try_n", "kind", "data", "at"]


class ApprovalSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id")
    step = serializers.IntegerField(source="step.index")

    class Meta:
        model = Approval
        fields = [
            "id",
            "step",
            "kind",
            "state",
            "question",
            "answer",
            "approvers",
            "decided_by_label",
            "decided_at",
            "created_at",
            "expires_at",
        ]


class StepImageSerializer(serializers.Serializer):
    """Where the step's browser ran (spec "Slim steps and a lost pod"): `{variant: "slim", pod: true}` when its
    browse calls rendered in the account's browser pod, `{variant: "full", pod: false}` with a browser inside it."""

    variant = serializers.ChoiceField(choices=["slim", "full"])
    pod = serializers.BooleanField()


def step_image(tries: list) -> dict | None:
    """The step's image from its last try that browsed; None when no try did."""
    image = next((t.image for t in reversed(tries) if t.image), "")
    return {"variant": image, "pod": image == "slim"} if image else None


class StepSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id")
    tries = TrySerializer(many=True, read_only=True)
    image = serializers.SerializerMethodField()

    @extend_schema_field(StepImageSerializer(allow_null=True))
    def get_image(self, obj: Step) -> dict | None:
        return step_image(list(obj.tries.all()))

    class Meta:
        model = Step
        fields = [
            "id",
            "index",
            "instance",
            "label",
            "item",
            "agent",
            "task",
            "status",
            "attempt",
            "output",
            "error",
            "approvers",
            "wait_event",
            "wrote",
            "limits_line",
            "cost_usd",
            "tokens_in",
            "tokens_out",
            "started_at",
            "finished_at",
            "tries",
            "image",
        ]


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
        fields = [
            "id",
            "workspace",
            "kind",
            "name",
            "trigger",
            "status",
            "verdict",
            "headline",
            "summary",
            "error",
            "cost_usd",
            "tokens_in",
            "tokens_out",
            "budget_usd",
            "is_test",
            "changeset_number",
            "inputs",
            "created_by",
            "created_at",
            "started_at",
            "finished_at",
        ]

    def get_created_by(self, obj: Run) -> str | None:
        return obj.created_by.email if obj.created_by_id else None

    def get_inputs(self, obj: Run) -> dict:
        return {k: v for k, v in (obj.inputs or {}).items() if k != "__flow__"}


class RunCacheSerializer(serializers.Serializer):
    """What the provider's prompt cache did for the run, summed over its model requests."""

    prompt_tokens = serializers.IntegerField(help_text="every input token the run's model requests carried")
    cache_read_tokens = serializers.IntegerField(help_text="of those, read from the provider's cache")
    cache_write_tokens = serializers.IntegerField(help_text="of those, written to it")
    hit_rate = serializers.FloatField(allow_null=True, help_text="cache_read_tokens / prompt_tokens; null for none")
    saved_usd = serializers.DecimalField(
        max_digits=14, decimal_places=6, help_text="what the same requests would have cost uncached, less their cost"
    )


class RunDetailSerializer(RunSerializer):
    """One run: its steps' summaries (with their tries), approvals and artifacts — not its trace, which is paged at
    `GET …/runs/{run_id}/trace`."""

    steps = StepSerializer(many=True, read_only=True)
    approvals = ApprovalSerializer(many=True, read_only=True)
    artifacts = ArtifactSerializer(many=True, read_only=True)
    cache = serializers.SerializerMethodField()

    class Meta(RunSerializer.Meta):
        fields = RunSerializer.Meta.fields + ["steps", "approvals", "artifacts", "cache"]

    @extend_schema_field(RunCacheSerializer)
    def get_cache(self, obj: Run) -> dict:
        return run_cache(obj).as_dict()


class RunStateSerializer(serializers.ModelSerializer):
    """The light answer to poll while waiting on a run: its state, never its steps or trace."""

    id = serializers.CharField(source="public_id")

    class Meta:
        model = Run
        fields = [
            "id",
            "status",
            "status_reason",
            "verdict",
            "headline",
            "error",
            "cost_usd",
            "started_at",
            "finished_at",
        ]


class ScheduleSerializer(serializers.ModelSerializer):
    class Meta:
        model = Schedule
        fields = ["flow", "cron", "timezone", "next_fire_at", "last_fired_at", "quarantined_at"]


# ---------------------------------------------------------------- the API's request bodies, queries and answers
# Each body and query is read through the serializer that documents it (foldrun.openapi.validated).


class _RunStartCommon(serializers.Serializer):
    inputs = serializers.DictField(required=False, allow_null=True, help_text="the flow's inputs: names to values")
    test = StrictBooleanField(required=False, default=False, help_text="a test run: nothing outward is sent")
    trigger = serializers.ChoiceField(
        choices=[Trigger.API, Trigger.CLI, Trigger.MANUAL], default=Trigger.API, required=False
    )


class RunFlowInSerializer(_RunStartCommon):
    flow = StrictCharField(max_length=200, help_text="the flow's name (flows/<flow>.md)")


class RunAgentInSerializer(_RunStartCommon):
    agent = StrictCharField(max_length=200, help_text="one agent, run ad hoc with `task`")
    task = StrictCharField(
        max_length=20000,
        regex_pattern=r"\S",
        pattern_message="say what the agent should do.",
        help_text="what the agent should do",
    )


RUN_START = PolymorphicProxySerializer(
    component_name="RunStart", serializers=[RunFlowInSerializer, RunAgentInSerializer], resource_type_field_name=None
)


# POST …/runs's Idempotency-Key header (runs/idempotency.py).
IDEMPOTENCY_KEY = OpenApiParameter(
    KEY_HEADER,
    # what check_idempotency_key accepts: printable ASCII, not only spaces, at most MAX_KEY
    {"type": "string", "minLength": 1, "maxLength": MAX_KEY, "pattern": "^[ -~]*[!-~][ -~]*$"},
    OpenApiParameter.HEADER,
    description=(
        "Optional; 1 to 255 printable ASCII characters, the workspace's own. For 24 hours the same key and the same "
        f"body answer the run the first request started (201 again, with `{REPLAYED_HEADER}: true`, and the run as "
        "it is now); the same key with another body is a 422 naming the key. A start that was refused keeps no key."
    ),
)


class RunsQuerySerializer(serializers.Serializer):
    flow = serializers.CharField(required=False, help_text="only this flow's runs")
    status = serializers.ChoiceField(choices=RunStatus.choices, required=False)
    verdict = serializers.ChoiceField(choices=Verdict.choices, required=False)
    kind = serializers.ChoiceField(choices=RunKind.choices, required=False)
    trigger = serializers.ChoiceField(choices=Trigger.choices, required=False)
    test = QueryBooleanField(
        required=False, allow_null=True, default=None, help_text="true: test runs only; false: real runs only"
    )
    created_after = serializers.DateTimeField(
        required=False, help_text="only runs created at or after this time (ISO 8601)"
    )
    created_before = serializers.DateTimeField(
        required=False, help_text="only runs created before this time (ISO 8601)"
    )
    before = serializers.CharField(
        required=False,
        max_length=500,
        help_text="a cursor from an earlier page's `next`: the runs after that page (older ones). Opaque; valid "
        "only in the workspace that gave it",
    )
    limit = serializers.IntegerField(required=False, min_value=1, max_value=500, default=50)


class RunListSerializer(serializers.Serializer):
    runs = RunSerializer(many=True, help_text="newest first, by when each was created (then by id)")
    next = serializers.URLField(
        allow_null=True, help_text="the next (older) page with the same filters; null on the last page"
    )


class TraceQuerySerializer(serializers.Serializer):
    after = serializers.CharField(
        required=False,
        max_length=500,
        help_text="a cursor from an earlier page (`cursor`): the events written after it. Opaque; valid only for "
        "the run that gave it",
    )
    limit = serializers.IntegerField(required=False, min_value=1, max_value=TRACE_PAGE_MAX, default=TRACE_PAGE_MAX)


class TracePageSerializer(serializers.Serializer):
    run = serializers.CharField(help_text="the run, run_…")
    status = serializers.ChoiceField(choices=RunStatus.choices, help_text="the run's status when the page was read")
    events = TraceSerializer(many=True, help_text="oldest first, at most `limit` (500)")
    next = serializers.URLField(allow_null=True, help_text="the next page, when more events were already written")
    cursor = serializers.CharField(
        allow_null=True,
        help_text="where this page ends: pass it as `after` to read what follows, now or later (null: no event yet)",
    )


class DecisionInSerializer(serializers.Serializer):
    answer = StrictCharField(
        required=False,
        allow_blank=True,
        allow_null=True,
        max_length=20000,
        help_text="the answer to a step's ask: (required to approve one)",
    )


class DecisionSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="the approval, apr_…")
    step = serializers.IntegerField()
    state = serializers.ChoiceField(choices=ApprovalState.choices)
    decided_by = serializers.CharField()
    decided_at = serializers.DateTimeField(allow_null=True)


class EventReceivedSerializer(serializers.Serializer):
    run = serializers.CharField()
    step = serializers.IntegerField()
    event = serializers.CharField()
    received_at = serializers.DateTimeField(allow_null=True)


class ArtifactListSerializer(serializers.Serializer):
    artifacts = ArtifactSerializer(many=True)


class ScheduleListSerializer(serializers.Serializer):
    schedules = ScheduleSerializer(many=True)


class ToolTestInSerializer(serializers.Serializer):
    arguments = serializers.DictField(required=False, default=dict, help_text="the tool's arguments")
    agent = StrictCharField(
        required=False, allow_null=True, max_length=200, help_text="the agent whose view of the tool to test"
    )
    operation = StrictCharField(
        required=False, allow_null=True, max_length=200, help_text="one operation of a tool that has several"
    )
    test = StrictBooleanField(required=False, default=False)


class ScratchKeptSerializer(serializers.Serializer):
    files = serializers.IntegerField(help_text="files the tool's scratch keeps after this call")
    bytes = serializers.IntegerField(help_text="their size in all")
    limit = serializers.IntegerField(help_text="the most a tool's scratch keeps, in bytes")
    note = serializers.CharField(required=False, help_text="when the call left more than fits: what was not kept")


class ToolTestOutSerializer(serializers.Serializer):
    tool = serializers.CharField()
    ok = serializers.BooleanField()
    result = serializers.JSONField(required=False, help_text="what the tool answered")
    seconds = serializers.FloatField()
    trace = serializers.ListField(child=serializers.DictField(), help_text="what the call did, step by step")
    scratch = ScratchKeptSerializer(
        required=False, help_text="what the tool's Tool Test scratch keeps for the next test (its state/ and outputs/)"
    )


class ScratchFileSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="where it sits in the sandbox: state/… or outputs/…")
    size = serializers.IntegerField()
    updated_at = serializers.DateTimeField()


class ScratchSerializer(serializers.Serializer):
    tool = serializers.CharField()
    files = ScratchFileSerializer(many=True)
    bytes = serializers.IntegerField(help_text="the files' size in all")
    limit = serializers.IntegerField(help_text="the most a tool's scratch keeps, in bytes")


class ScratchClearedSerializer(serializers.Serializer):
    tool = serializers.CharField()
    cleared = serializers.IntegerField(help_text="files forgotten")


class HookAnswerSerializer(serializers.Serializer):
    run = serializers.CharField(help_text="the run the delivery started, run_…")
    status = serializers.ChoiceField(choices=RunStatus.choices)
    duplicate = serializers.BooleanField(help_text="true: this delivery id was seen before; nothing new started")
