"""Django admin for run records (platform staff). Trace rows are read-only."""
from django.contrib import admin

from .models import Approval, Artifact, Run, Schedule, Step, TraceEvent, Try


class StepInline(admin.TabularInline):
    model = Step
    extra = 0
    fields = ("index", "instance", "agent", "status", "attempt", "error")
    readonly_fields = fields
    show_change_link = True


@admin.register(Run)
class RunAdmin(admin.ModelAdmin):
    list_display = ("public_id", "workspace", "name", "trigger", "status", "verdict", "cost_usd", "is_test", "created_at")
    list_filter = ("status", "verdict", "kind", "trigger", "is_test")
    search_fields = ("public_id", "name", "headline")
    readonly_fields = ("public_id", "created_at", "started_at", "finished_at")
    inlines = [StepInline]


class TryInline(admin.TabularInline):
    model = Try
    extra = 0
    readonly_fields = ("n", "status", "error", "cost_usd", "tokens_in", "tokens_out", "seconds")


@admin.register(Step)
class StepAdmin(admin.ModelAdmin):
    list_display = ("public_id", "run", "index", "instance", "agent", "status", "attempt")
    list_filter = ("status",)
    search_fields = ("public_id", "run__public_id", "agent")
    inlines = [TryInline]


@admin.register(TraceEvent)
class TraceEventAdmin(admin.ModelAdmin):
    list_display = ("run", "step", "kind", "at")
    list_filter = ("kind",)

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # append-only


@admin.register(Approval)
class ApprovalAdmin(admin.ModelAdmin):
    list_display = ("public_id", "run", "step", "kind", "state", "decided_by_label", "decided_at")
    list_filter = ("state", "kind")


@admin.register(Artifact)
class ArtifactAdmin(admin.ModelAdmin):
    list_display = ("public_id", "run", "path", "size")


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    list_display = ("workspace", "flow", "cron", "timezone", "next_fire_at", "last_fired_at")
