"""Django admin for run records (platform staff): find any run by its id, its workspace, its account or who
started it. Runs, their steps and trace rows are records of what happened: staff read them, never add or change
them (a run's status, verdict and cost are the engine's to write)."""

import json

from django.contrib import admin
from django.utils.html import format_html

from library.admin import ReadOnlyRecord

from .models import Approval, Artifact, Run, Schedule, Step, TraceEvent, Try


def pretty_json(value) -> str:
    """A JSON field as indented JSON in a <pre>, not Python's repr on one line."""
    return format_html(
        '<pre style="margin:0; white-space:pre-wrap">{}</pre>',
        json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str),
    )


class StepInline(ReadOnlyRecord, admin.TabularInline):
    model = Step
    extra = 0
    fields = ("index", "instance", "agent", "status", "attempt", "cost_usd", "error")
    readonly_fields = fields
    show_change_link = True


@admin.register(Run)
class RunAdmin(ReadOnlyRecord, admin.ModelAdmin):
    list_display = (
        "public_id",
        "name",
        "workspace",
        "account",
        "trigger",
        "status",
        "verdict",
        "cost_usd",
        "is_test",
        "created_at",
    )
    list_filter = ("status", "verdict", "kind", "trigger", "is_test", "created_at")
    search_fields = (
        "public_id",
        "name",
        "headline",
        "workspace__name",
        "account__name",
        "account__public_id",
        "created_by__email",
        "delivery_id",
    )
    search_help_text = "Search by run id (run_…), flow, headline, workspace, account or the email of who started it."
    list_select_related = ("workspace", "account")
    fields = (
        "public_id",
        "name",
        "kind",
        "trigger",
        "account",
        "workspace",
        "revision",
        "status",
        "status_reason",
        "verdict",
        "headline",
        "error",
        "cost_usd",
        "tokens_in",
        "tokens_out",
        "budget_usd",
        "is_test",
        "created_by",
        "created_at",
        "started_at",
        "finished_at",
        "delivery_id",
        "inputs_json",
        "plan_json",
        "summary",
    )
    readonly_fields = fields
    date_hierarchy = "created_at"
    inlines = [StepInline]

    def get_queryset(self, request):
        return (
            super().get_queryset(request).select_related("workspace", "account", "changeset__workspace", "created_by")
        )

    @admin.display(description="revision")
    def revision(self, run: Run) -> str:
        """The desk the run ran: its workspace and revision number (the changeset row's own id means nothing)."""
        workspace = run.changeset.workspace if run.changeset and run.changeset.workspace else run.workspace
        number = run.changeset.number if run.changeset else run.changeset_number
        return f"{workspace.name} revision {number}"

    @admin.display(description="inputs")
    def inputs_json(self, run: Run) -> str:
        return pretty_json(run.inputs)

    @admin.display(description="plan")
    def plan_json(self, run: Run) -> str:
        return pretty_json(run.plan)


class TryInline(ReadOnlyRecord, admin.TabularInline):
    model = Try
    extra = 0
    readonly_fields = ("n", "status", "error", "cost_usd", "tokens_in", "tokens_out", "seconds")


@admin.register(Step)
class StepAdmin(ReadOnlyRecord, admin.ModelAdmin):
    list_display = ("public_id", "run", "index", "instance", "agent", "status", "attempt", "cost_usd")
    list_filter = ("status",)
    search_fields = ("public_id", "run__public_id", "agent")
    list_select_related = ("run",)
    raw_id_fields = ("run",)
    inlines = [TryInline]


@admin.register(TraceEvent)
class TraceEventAdmin(admin.ModelAdmin):
    list_display = ("run", "step", "kind", "at")
    list_filter = ("kind",)
    search_fields = ("run__public_id",)
    list_select_related = ("run", "step", "step__run")
    raw_id_fields = ("run", "step")

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # append-only


@admin.register(Approval)
class ApprovalAdmin(admin.ModelAdmin):
    list_display = ("public_id", "run", "step", "kind", "state", "decided_by_label", "decided_at", "created_at")
    list_filter = ("state", "kind")
    search_fields = ("public_id", "run__public_id", "decided_by_label", "question")
    list_select_related = ("run", "step", "step__run")
    raw_id_fields = ("run", "step", "decided_by")


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ("public_id", "run", "path", "size", "created_at")
    search_fields = ("public_id", "run__public_id", "path")
    list_select_related = ("run",)
    raw_id_fields = ("run", "step")
    exclude = ("content",)  # bytes: downloaded from the Run page, not shown in a form

    def get_queryset(self, request):
        return super().get_queryset(request).defer("content")


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    list_display = ("workspace", "flow", "cron", "timezone", "next_fire_at", "last_fired_at")
    search_fields = ("flow", "workspace__name")
    list_select_related = ("workspace",)
