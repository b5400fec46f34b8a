"""Library files and their revisions.

Every write — a push, a deploy, a dashboard edit, a run writing memory or
state, a rollback, a gallery update — is one Changeset holding a Revision per
file it touched. A scope is a workspace or the account library; changesets
are numbered 1, 2, 3… within their scope, and reading a scope "at N" means,
for each path, its newest revision at or below N.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.models import Account, Workspace
from foldrun.ids import public_id_field


def scope_key_for(account: Account, workspace: Workspace | None) -> str:
    return f"ws:{workspace.pk}" if workspace is not None else f"lib:{account.pk}"


class ChangeKind(models.TextChoices):
    PUSH = "push"
    DEPLOY = "deploy"
    EDIT = "edit"
    ROLLBACK = "rollback"
    RUN = "run"
    GALLERY = "gallery"


class Changeset(models.Model):
    public_id = public_id_field("rev")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="changesets")
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="changesets")
    scope_key = models.CharField(max_length=40, db_index=True)
    number = models.PositiveIntegerField()
    kind = models.CharField(max_length=12, choices=ChangeKind.choices)
    message = models.TextField(blank=True)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    run_public_id = models.CharField(max_length=40, blank=True, help_text="the run that wrote it, if a run did")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["scope_key", "number"], name="changeset_number_unique_in_scope")]
        ordering = ["-number"]

    def __str__(self) -> str:
        return f"{self.scope_key} #{self.number}"

    @property
    def who(self) -> str:
        if self.run_public_id:
            return self.run_public_id
        return self.author.email if self.author else "foldrun"


class LibraryFile(models.Model):
    """The head of one path in one scope; its history is its revisions."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="library_files")
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="files")
    scope_key = models.CharField(max_length=40)
    path = models.CharField(max_length=500)
    head = models.ForeignKey("Revision", null=True, on_delete=models.SET_NULL, related_name="+")
    deleted = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["scope_key", "path"], name="one_file_per_path_in_scope")]
        ordering = ["path"]

    def __str__(self) -> str:
        return f"{self.scope_key}:{self.path}"


class Revision(models.Model):
    """One file as one changeset left it. Append-only."""

    public_id = public_id_field("frv")
    file = models.ForeignKey(LibraryFile, on_delete=models.CASCADE, related_name="revisions")
    changeset = models.ForeignKey(Changeset, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField(help_text="the changeset's number, copied for ordering")
    content = models.TextField(blank=True)
    sha256 = models.CharField(max_length=64)
    size = models.PositiveIntegerField(default=0)
    deleted = models.BooleanField(default=False)
    # "utf-8": `content` is the text. "base64": `content` holds the bytes of a
    # binary file, base64-encoded — only storage/ may hold those.
    encoding = models.CharField(max_length=8, default="utf-8")
    # Set when the content was copied from the gallery shelf: which tool, and
    # the gallery's hash of this file at the time. An unedited copy keeps
    # following the gallery; an edited one is the account's. A later write
    # of the same path carries both forward, so an edit is seen as
    # sha256 != gallery_sha256 rather than forgetting where the file came from.
    gallery_tool = models.CharField(max_length=100, blank=True)
    gallery_sha256 = models.CharField(max_length=64, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["file", "number"], name="one_revision_per_file_per_changeset")]
        ordering = ["-number"]

    def __str__(self) -> str:
        return f"{self.file.path}@{self.number}"
