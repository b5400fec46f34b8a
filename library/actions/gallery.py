"""Gallery tools in a library: install, "update to gallery version", and
unedited copies following the shelf when the platform moves on.
"""

from __future__ import annotations

import logging

from django.db import transaction

from accounts.models import Account, Workspace
from foldrun.gallery import gallery_tools

from ..models import ChangeKind, Changeset, LibraryFile, Revision, scope_key_for
from ..services import MARK_CURRENT, copy_is_unedited, copy_mark, copy_of, files_at, sha256_text, tool_paths
from .writes import FileWrite, WriteRefused, WriteResult, do_write_files, lock_scope

log = logging.getLogger(__name__)


class GalleryError(Exception):
    """A gallery request that cannot be done; `status` is the HTTP answer."""

    def __init__(self, message: str, *, code: str, status: int) -> None:
        super().__init__(message)
        self.message, self.code, self.status = message, code, status


def _gallery_writes(name: str, heads: dict[str, Revision]) -> list[FileWrite]:
    """The shelf's files of tool `name` as writes marked with their origin,
    and deletions for files of an existing copy the shelf no longer has."""

    shelf = gallery_tools()[name]
    writes = [FileWrite(p, t, gallery_tool=name, gallery_sha256=sha256_text(t)) for p, t in sorted(shelf.items())]
    writes += [FileWrite(p, None) for p in tool_paths(name, heads) if p not in shelf]
    return writes


def do_install_gallery_tool(
    *, account: Account, workspace: Workspace | None, name: str, author, upgrade: bool = False
) -> WriteResult:
    """Copy gallery tool `name` into the account library (or `workspace`), or
    with `upgrade=True` bring an existing copy to the shelf's current files —
    "update to gallery version". Kind "gallery"; the previous version stays
    one revision back. Raises GalleryError for an unknown tool (404) or an
    upgrade with no copy to upgrade (409).
    """

    if name not in gallery_tools():
        raise GalleryError("Not found.", code="not_found", status=404)
    heads = files_at(account, workspace, with_content=False)
    where = f"workspace {workspace.name}" if workspace is not None else "the account library"
    if upgrade and not copy_of(heads, name):
        raise GalleryError(
            f"{where[0].upper()}{where[1:]} keeps no copy of {name}; install it first.",
            code="not_installed",
            status=409,
        )
    verb = "Update" if upgrade else "Install"
    return do_write_files(
        account=account,
        workspace=workspace,
        writes=_gallery_writes(name, heads),
        kind=ChangeKind.GALLERY,
        message=f"{verb} {name} from the gallery" + (" (update to gallery version)" if upgrade else ""),
        author=author,
    )


def sync_gallery_copies() -> list[Changeset]:
    """Bring every unedited gallery copy, in every scope, to the shelf's
    current files. A copy any of whose files was edited is the account's and
    is never changed. Idempotent: a copy already current writes nothing.
    Run by `manage.py sync_gallery` and after every migrate (a new platform
    version).
    """

    shelf_tools = gallery_tools()
    scopes = (
        LibraryFile.objects.filter(deleted=False, head__gallery_tool__in=list(shelf_tools))
        .values_list("account_id", "workspace_id")
        .distinct()
    )
    written: list[Changeset] = []
    for account_id, workspace_id in sorted(set(scopes), key=lambda s: (s[0], s[1] or 0)):
        account = Account.objects.get(pk=account_id)
        workspace = Workspace.objects.get(pk=workspace_id) if workspace_id else None
        for name, shelf in sorted(shelf_tools.items()):
            try:
                result = _follow_gallery(account, workspace, name, shelf)
            except WriteRefused as exc:
                # A new shelf file clashes with a path the account keeps: the copy stays as it is.
                log.warning(
                    "gallery copy of %s in %s not followed: %s", name, scope_key_for(account, workspace), exc.message
                )
                continue
            if result is not None and result.changeset is not None:
                written.append(result.changeset)
    return written


def _follow_gallery(
    account: Account, workspace: Workspace | None, name: str, shelf: dict[str, str]
) -> WriteResult | None:
    """One unedited copy brought to the shelf's files; None when there is nothing to follow."""

    with transaction.atomic():
        # Decide under the scope's lock, so an edit that lands between
        # reading the copy and writing it can never be overwritten.
        lock_scope(account, workspace)
        heads = files_at(account, workspace, with_content=False)
        copy = copy_of(heads, name)
        if not copy or not copy_is_unedited(copy, name) or copy_mark(copy, shelf) == MARK_CURRENT:
            return None
        return do_write_files(
            account=account,
            workspace=workspace,
            writes=_gallery_writes(name, heads),
            kind=ChangeKind.GALLERY,
            message=f"Follow the gallery: {name} updated with the platform",
        )
