"""Django admin for notification records (platform staff). Attempts are read-only."""

from django.contrib import admin

from .models import Attempt, Delivery, Endpoint, MailSend, Mark, OutgoingMail, Preference


class AttemptInline(admin.TabularInline):
    model = Attempt
    extra = 0
    fields = ("number", "redelivery", "ok", "lost", "status_code", "duration_ms", "error", "started_at")
    readonly_fields = fields
    can_delete = False


@admin.register(Delivery)
class DeliveryAdmin(admin.ModelAdmin):
    list_display = (
        "public_id",
        "workspace",
        "account",
        "event",
        "status",
        "attempts_made",
        "next_attempt_at",
        "created_at",
    )
    list_filter = ("status", "event", "created_at")
    search_fields = ("public_id", "run_public_id", "workspace__name", "account__name", "account__public_id")
    search_help_text = "Search by delivery id (dlv_…), run id, workspace or account."
    list_select_related = ("workspace", "account")
    date_hierarchy = "created_at"
    # The body can carry approve/reject links: shown, not editable.
    readonly_fields = (
        "public_id",
        "account",
        "workspace",
        "event",
        "run_public_id",
        "body",
        "attempts_made",
        "created_at",
        "finished_at",
        "endpoint_fingerprint",
    )
    inlines = [AttemptInline]


@admin.register(Endpoint)
class EndpointAdmin(admin.ModelAdmin):
    list_display = ("workspace", "failing_since", "disabled_at", "owner_mailed_at", "last_success_at")
    list_select_related = ("workspace",)
    search_fields = ("workspace__name",)
    readonly_fields = ("fingerprint",)


@admin.register(Preference)
class PreferenceAdmin(admin.ModelAdmin):
    list_display = ("email", "category", "workspace", "enabled", "via", "updated_at")
    list_filter = ("category", "enabled", "via")
    search_fields = ("email",)


@admin.register(Mark)
class MarkAdmin(admin.ModelAdmin):
    list_display = ("workspace", "event", "key", "created_at")
    list_select_related = ("workspace",)


@admin.register(MailSend)
class MailSendAdmin(admin.ModelAdmin):
    list_display = ("created_at", "to", "category", "provider", "sent", "skipped", "message")
    list_filter = ("category", "sent", "provider")
    search_fields = ("to", "message")
    readonly_fields = [f.name for f in MailSend._meta.fields]


@admin.register(OutgoingMail)
class OutgoingMailAdmin(admin.ModelAdmin):
    """The mail outbox: what is waiting, how many tries, and the last answer. Bodies are not shown (approve and
    reject links decide without a login); they are cleared once a mail is finished."""

    list_display = ("public_id", "created_at", "to", "category", "status", "tries", "next_try_at", "message")
    list_filter = ("status", "category")
    search_fields = ("public_id", "to", "message")
    date_hierarchy = "created_at"
    exclude = ("body",)
    readonly_fields = [f.name for f in OutgoingMail._meta.fields if f.name != "body"]
