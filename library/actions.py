"""Writes to library files. Every write is one Changeset (see models).

`do_write_files` is the single door: pushes, deploys, dashboard edits, runs
writing memory/state, rollbacks and gallery updates all come through it.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max

from accounts.models import Account, Workspace

from .models import Changeset, LibraryFile, Revision, scope_key_for


@dataclass(frozen=True)
class FileWrite:
    """One file to write; `content=None` deletes it."""

    path: str
    content: str | None
    gallery_tool: str = ""
    gallery_sha256: str = ""


def sha256_text(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def do_write_files(
    *,
    account: Account,
    workspace: Workspace | None,
    writes: list[FileWrite],
    kind: str,
    message: str = "",
    author=None,
    run_public_id: str = "",
) -> Changeset | None:
    """Write `writes` as one changeset, all or nothing.

    Preconditions: paths are normalised and every content was validated by
    the caller (the file contract). Unchanged files are skipped; when nothing
    changes, nothing is written and None is returned.
    """
    scope_key = scope_key_for(account, workspace)
    with transaction.atomic():
        # Serialise writers of one scope so changeset numbers never collide.
        if workspace is not None:
            Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
        else:
            Account.objects.select_for_update().filter(pk=account.pk).first()
        heads = {
            f.path: f
            for f in LibraryFile.objects.select_related("head").filter(
                scope_key=scope_key, path__in=[w.path for w in writes]
            )
        }
        changes: list[tuple[FileWrite, LibraryFile | None]] = []
        for write in writes:
            head = heads.get(write.path)
            live = head is not None and not head.deleted
            if write.content is None:
                if live:
                    changes.append((write, head))
                continue
            if live and head.head is not None and head.head.sha256 == sha256_text(write.content) and (
                head.head.gallery_sha256 == write.gallery_sha256 or not write.gallery_tool
            ):
                continue
            changes.append((write, head))
        if not changes:
            return None
        last = Changeset.objects.filter(scope_key=scope_key).aggregate(n=Max("number"))["n"] or 0
        changeset = Changeset.objects.create(
            account=account,
            workspace=workspace,
            scope_key=scope_key,
            number=last + 1,
            kind=kind,
            message=message,
            author=author,
            run_public_id=run_public_id,
        )
        for write, head in changes:
            if head is None:
                head = LibraryFile.objects.create(
                    account=account, workspace=workspace, scope_key=scope_key, path=write.path
                )
            content = write.content or ""
            revision = Revision.objects.create(
                file=head,
                changeset=changeset,
                number=changeset.number,
                content=content,
                sha256=sha256_text(content),
                size=len(content.encode("utf-8")),
                deleted=write.content is None,
                gallery_tool=write.gallery_tool,
                gallery_sha256=write.gallery_sha256,
            )
            head.head = revision
            head.deleted = write.content is None
            head.save(update_fields=["head", "deleted"])
        return changeset


def files_at(account: Account, workspace: Workspace | None, number: int | None = None) -> dict[str, Revision]:
    """The live files of a scope at changeset `number` (the head when None)."""
    scope_key = scope_key_for(account, workspace)
    if number is None:
        files = LibraryFile.objects.select_related("head").filter(scope_key=scope_key, deleted=False)
        return {f.path: f.head for f in files if f.head is not None}
    result: dict[str, Revision] = {}
    revisions = (
        Revision.objects.filter(file__scope_key=scope_key, number__lte=number)
        .select_related("file")
        .order_by("file_id", "-number")
    )
    seen: set[int] = set()
    for revision in revisions:
        if revision.file_id in seen:
            continue
        seen.add(revision.file_id)
        if not revision.deleted:
            result[revision.file.path] = revision
    return result
