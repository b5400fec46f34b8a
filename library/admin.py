"""Django admin for platform staff. Revisions are append-only: read-only here."""

from __future__ import annotations

from django.contrib import admin

from .models import Changeset, LibraryFile, Revision


class ReadOnlyRecord:
    """Records, for staff to find and read: no Add button, no saving, no deleting from a form. A mixin, so
    inlines (runs' steps and tries) take it as well as model admins."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ReadOnlyAdmin(ReadOnlyRecord, admin.ModelAdmin):
    pass


class RevisionInline(admin.TabularInline):
    model = Revision
    extra = 0
    fields = ("public_id", "file", "size", "sha256", "deleted", "gallery_tool")
    readonly_fields = fields
    show_change_link = True
    can_delete = False

    def has_add_permission(self, request, obj=None) -> bool:
        return False


@admin.register(Changeset)
class ChangesetAdmin(ReadOnlyAdmin):
    list_display = ("number", "scope", "account", "kind", "who", "message_short", "created_at")
    list_filter = ("kind", "created_at")
    search_fields = ("public_id", "message", "run_public_id", "account__name", "workspace__name", "author__email")
    list_select_related = ("account", "workspace", "author")
    inlines = [RevisionInline]
    date_hierarchy = "created_at"

    @admin.display(description="scope")
    def scope(self, obj: Changeset) -> str:
        return obj.workspace.name if obj.workspace else "library"

    @admin.display(description="message")
    def message_short(self, obj: Changeset) -> str:
        return obj.message if len(obj.message) <= 60 else obj.message[:59] + "…"


@admin.register(LibraryFile)
class LibraryFileAdmin(ReadOnlyAdmin):
    list_display = ("path", "scope", "account", "head_number", "deleted")
    list_filter = ("deleted",)
    search_fields = ("path", "account__name", "workspace__name")
    list_select_related = ("account", "workspace", "head")

    @admin.display(description="scope")
    def scope(self, obj: LibraryFile) -> str:
        return obj.workspace.name if obj.workspace else "library"

    @admin.display(description="head")
    def head_number(self, obj: LibraryFile) -> int | None:
        return obj.head.number if obj.head else None


@admin.register(Revision)
class RevisionAdmin(ReadOnlyAdmin):
    list_display = ("public_id", "path", "number", "size", "deleted", "gallery_tool", "created_at")
    list_filter = ("deleted", "changeset__kind")
    search_fields = ("public_id", "file__path", "sha256", "gallery_tool")
    list_select_related = ("file", "changeset")

    @admin.display(description="path", ordering="file__path")
    def path(self, obj: Revision) -> str:
        return obj.file.path

    @admin.display(description="written", ordering="changeset__created_at")
    def created_at(self, obj: Revision):
        return obj.changeset.created_at
