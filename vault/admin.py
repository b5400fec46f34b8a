"""Staff see which secrets and logins exist and the key probe's record — never a value or a password."""

from django.contrib import admin

from vault.models import ProviderCheck, Secret, SiteLogin


@admin.register(Secret)
class SecretAdmin(admin.ModelAdmin):
    list_display = ("name", "account", "workspace", "kind", "key_id", "updated_at")
    list_filter = ("kind",)
    search_fields = ("name", "account__name", "workspace__name")
    list_select_related = ("account", "workspace")
    fields = (
        "public_id",
        "account",
        "workspace",
        "name",
        "kind",
        "hosts",
        "key_id",
        "expires_at",
        "refreshable",
        "created_by",
        "created_at",
        "updated_by",
        "updated_at",
    )
    readonly_fields = fields

    def has_add_permission(self, request):
        return False


@admin.register(ProviderCheck)
class ProviderCheckAdmin(admin.ModelAdmin):
    list_display = ("endpoint", "key_name", "key_scope", "account", "verdict", "checked_at")
    list_filter = ("verdict",)
    list_select_related = ("account",)
    readonly_fields = [f.name for f in ProviderCheck._meta.fields]


@admin.register(SiteLogin)
class SiteLoginAdmin(admin.ModelAdmin):
    list_display = ("host", "namespace", "username", "account", "key_id", "updated_at")
    search_fields = ("host", "username", "account__name")
    list_select_related = ("account",)
    fields = (
        "public_id",
        "account",
        "host",
        "namespace",
        "username",
        "key_id",
        "created_by",
        "created_at",
        "updated_at",
    )  # never the sealed password
    readonly_fields = fields

    def has_add_permission(self, request):
        return False
