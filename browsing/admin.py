from django.contrib import admin

from .models import BrowserSession


@admin.register(BrowserSession)
class BrowserSessionAdmin(admin.ModelAdmin):
    list_display = ("public_id", "account", "status", "end_reason", "created_at", "closed_at")
    list_filter = ("status", "end_reason")
    search_fields = ("public_id",)
    readonly_fields = ("public_id", "cdp_endpoint", "lease_holder", "lease_until", "sealed_headers")
