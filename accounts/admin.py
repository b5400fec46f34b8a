"""Django admin for platform staff. A token's hash is never shown, only its hint."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count

from .models import Account, ApiToken, BrowserPodLine, Invite, Membership, Profile, Workspace

# The admin says whose it is (the default reads "Django administration").
admin.site.site_header = "foldrun admin"
admin.site.site_title = "foldrun admin"
admin.site.index_title = "Platform records"


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    fields = ("user", "role", "created_at")
    readonly_fields = ("created_at",)
    raw_id_fields = ("user",)


class WorkspaceInline(admin.TabularInline):
    model = Workspace
    extra = 0
    fields = ("name", "description", "created_at")
    readonly_fields = ("created_at",)
    show_change_link = True


@admin.register(Account)
class AccountAdmin(admin.ModelAdmin):
    list_display = ("name", "public_id", "member_count", "workspace_count", "credits_usd", "created_at")
    search_fields = ("name", "public_id", "memberships__user__email", "workspaces__name")
    # Credits change through runs and top-ups (accounts.credits), never by hand-typed balances.
    readonly_fields = ("public_id", "created_at", "credits_usd", "low_balance_warned_at")
    inlines = [MembershipInline, WorkspaceInline]
    date_hierarchy = "created_at"
    list_filter = ("created_at",)
    search_help_text = "Search by account name, id (acc_…), or a member's email."

    def get_queryset(self, request):
        # Counted in the list's one query, not two more per row.
        return (
            super()
            .get_queryset(request)
            .annotate(n_members=Count("memberships", distinct=True), n_workspaces=Count("workspaces", distinct=True))
        )

    @admin.display(description="members", ordering="n_members")
    def member_count(self, obj: Account) -> int:
        return obj.n_members

    @admin.display(description="workspaces", ordering="n_workspaces")
    def workspace_count(self, obj: Account) -> int:
        return obj.n_workspaces


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ("user_email", "account", "role", "created_at")
    list_filter = ("role",)
    search_fields = ("user__email", "account__name", "public_id")
    list_select_related = ("user", "account")
    raw_id_fields = ("user", "account")
    readonly_fields = ("public_id", "created_at")

    @admin.display(description="email", ordering="user__email")
    def user_email(self, obj: Membership) -> str:
        return obj.user.email


@admin.register(Workspace)
class WorkspaceAdmin(admin.ModelAdmin):
    list_display = ("name", "account", "public_id", "created_at")
    list_filter = ("created_at",)
    search_fields = ("name", "public_id", "account__name")
    list_select_related = ("account",)
    raw_id_fields = ("account",)
    readonly_fields = ("public_id", "created_at")


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ("user", "display_name", "timezone", "current_account")
    search_fields = ("user__email", "display_name")
    list_select_related = ("user", "current_account")
    raw_id_fields = ("user", "current_account")


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    # token_hash is deliberately absent from every list, form and search.
    list_display = ("name", "hint_shown", "user", "account", "created_at", "last_used_at", "expires_at", "revoked_at")
    list_filter = ("revoked_at", "created_at")
    search_fields = ("name", "hint", "public_id", "user__email", "account__name")
    list_select_related = ("user", "account")
    fields = (
        "public_id",
        "name",
        "hint_shown",
        "user",
        "account",
        "created_at",
        "last_used_at",
        "expires_at",
        "revoked_at",
    )
    readonly_fields = ("public_id", "hint_shown", "user", "account", "created_at", "last_used_at")
    exclude = ("token_hash", "hint")
    actions = ["revoke"]

    @admin.display(description="starts with")
    def hint_shown(self, obj: ApiToken) -> str:
        return f"{obj.hint}…"

    def has_add_permission(self, request) -> bool:
        # A token is minted by its owner (dashboard or CLI), so that only they see the value.
        return False

    @admin.action(description="Revoke the selected tokens")
    def revoke(self, request, queryset) -> None:
        from django.utils import timezone

        queryset.filter(revoked_at__isnull=True).update(revoked_at=timezone.now())


@admin.register(Invite)
class InviteAdmin(admin.ModelAdmin):
    list_display = ("email", "account", "role", "invited_by", "created_at", "expires_at", "accepted_at")
    list_filter = ("role", "accepted_at")
    search_fields = ("email", "account__name", "public_id")
    list_select_related = ("account", "invited_by")
    exclude = ("token_hash",)
    readonly_fields = ("public_id", "invited_by", "created_at", "accepted_at")
    raw_id_fields = ("account",)

    def has_add_permission(self, request) -> bool:
        return False  # invites are sent from the dashboard or the API, which mail the link


@admin.register(BrowserPodLine)
class BrowserPodLineAdmin(admin.ModelAdmin):
    """A reaped browser pod's seconds and bytes: read-only, the ledger's own record."""

    list_display = ("account", "pod", "seconds", "bytes", "created_at")
    raw_id_fields = ("account",)
    readonly_fields = ("account", "pod", "seconds", "bytes", "created_at")
