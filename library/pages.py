"""Server-rendered pages over library files: a file with its history and
diffs, a revision's diffs, and the edits and rollbacks of one file — in a
workspace and in the account library — with what the other page modules
share. The workspace page is pages_workspace.py; the Library page and the
gallery buttons are pages_library.py.

Every page needs a signed-in member; a workspace is found through
`accounts.access.workspace_for_user`, so another account's workspace is a
404 exactly like a missing one. Writes (an edit, a rollback, the gallery
update) need a write role; a viewer's POST is a 403.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.access import current_membership, workspace_for_user
from accounts.models import Membership, Workspace
from foldrun.gallery import gallery_files

from .actions.pushes import do_edit_file, do_rollback
from .actions.writes import WriteRefused
from .models import Changeset, LibraryFile, Revision, scope_key_for


def membership_for(request: HttpRequest) -> Membership:
    membership = current_membership(request)
    if membership is None:
        raise Http404
    return membership


def require_write(membership: Membership) -> None:
    if not membership.can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")


def _int_or_none(value: str | None) -> int | None:
    if value is None or value == "":
        return None
    try:
        number = int(value)
    except ValueError:
        raise Http404 from None
    if number < 0:
        raise Http404
    return number


# ---------------------------------------------------------------- diffs


@dataclass
class DiffLine:
    kind: str  # add | del | hunk | meta | same
    text: str


def diff_lines(old: str, new: str, old_label: str, new_label: str) -> list[DiffLine]:
    """A unified diff as classed lines for the template."""
    lines: list[DiffLine] = []
    for raw in difflib.unified_diff(
        old.splitlines(), new.splitlines(), fromfile=old_label, tofile=new_label, lineterm="", n=3
    ):
        if raw.startswith("+++") or raw.startswith("---"):
            kind = "meta"
        elif raw.startswith("@@"):
            kind = "hunk"
        elif raw.startswith("+"):
            kind = "add"
        elif raw.startswith("-"):
            kind = "del"
        else:
            kind = "same"
        lines.append(DiffLine(kind, raw))
    return lines


# ---------------------------------------------------------------- one scope's files


def _history(scope_key: str, path: str) -> list[Revision]:
    return list(
        Revision.objects.filter(file__scope_key=scope_key, file__path=path)
        .select_related("changeset", "changeset__author")
        .order_by("-number")
    )


def _at(history: list[Revision], number: int | None) -> Revision | None:
    """The file's revision as changeset `number` left it (newest when None)."""
    for revision in history:
        if number is None or revision.number <= number:
            return revision
    return None


def _content_at(history: list[Revision], number: int) -> str:
    revision = _at(history, number)
    return "" if revision is None or revision.deleted else revision.content


def _file_context(request: HttpRequest, scope_key: str, path: str, label: str) -> dict[str, Any]:
    history = _history(scope_key, path)
    if not history:
        raise Http404
    at = _int_or_none(request.GET.get("at"))
    revision = _at(history, at)
    if revision is None:
        raise Http404
    context: dict[str, Any] = {
        "path": path,
        "history": history,
        "revision": revision,
        "at": at,
        "head": history[0],
        "numbers": [r.number for r in history],
    }
    a, b = _int_or_none(request.GET.get("from")), _int_or_none(request.GET.get("to"))
    if a is not None or b is not None:
        a = a if a is not None else (history[1].number if len(history) > 1 else 0)
        b = b if b is not None else history[0].number
        context["diff_from"], context["diff_to"] = a, b
        context["diff"] = diff_lines(
            _content_at(history, a), _content_at(history, b), f"{label}{path} @{a}", f"{label}{path} @{b}"
        )
    # Each revision's diff against the one before it, for the history links.
    for i, item in enumerate(history):
        item.previous_number = history[i + 1].number if i + 1 < len(history) else None  # type: ignore[attr-defined]
    return context


def _changeset_context(changeset: Changeset, label: str) -> dict[str, Any]:
    files = []
    for revision in changeset.revisions.select_related("file").order_by("file__path"):
        before = (
            Revision.objects.filter(file_id=revision.file_id, number__lt=revision.number).order_by("-number").first()
        )
        old = "" if before is None or before.deleted else before.content
        new = "" if revision.deleted else revision.content
        status = "deleted" if revision.deleted else ("added" if before is None or before.deleted else "changed")
        files.append(
            {
                "path": revision.file.path,
                "status": status,
                "revision": revision,
                "diff": diff_lines(
                    old,
                    new,
                    f"{label}{revision.file.path} @{before.number if before else 0}",
                    f"{label}{revision.file.path} @{revision.number}",
                ),
            }
        )
    return {"changeset": changeset, "files": files}


def _refused_draft(request: HttpRequest, base_url: str) -> str | None:
    """The text of an edit that was just refused, so the form can offer it back once."""
    draft = request.session.get("foldrun_refused_edit")
    if draft and draft.get("path") == base_url:
        del request.session["foldrun_refused_edit"]
        return draft["content"]
    return None


# ---------------------------------------------------------------- pages: workspace


def page_workspace(request: HttpRequest, ws: str) -> tuple[Membership, Workspace, bool]:
    membership = membership_for(request)
    workspace, can_write = workspace_for_user(membership, ws)
    return membership, workspace, can_write


@login_required
def workspace_file(request: HttpRequest, ws: str, path: str) -> HttpResponse:
    membership, workspace, can_write = page_workspace(request, ws)
    context = _file_context(request, scope_key_for(workspace.account, workspace), path, f"{workspace.name}/")
    base_url = f"/w/{workspace.name}/files/{path}"
    context.update(
        {
            "section": "workspace",
            "workspace": workspace,
            "can_write": can_write,
            "scope": "workspace",
            "base_url": base_url,
            "edit_url": f"/w/{workspace.name}/edit/{path}",
            "rollback_url": f"/w/{workspace.name}/rollback/{path}",
            "draft": _refused_draft(request, base_url),
        }
    )
    return render(request, "library/file.html", context)


def _edit(request: HttpRequest, membership: Membership, workspace: Workspace | None, path: str, base_url: str) -> None:
    """A dashboard edit of one text file (kind "edit"), validated like a push.
    The outcome goes to messages; a refused text is kept for the form once."""
    require_write(membership)
    content = request.POST.get("content")
    if content is None:
        messages.error(request, "content: the edit form sent no text.")
        return
    content = content.replace("\r\n", "\n")
    try:
        result = do_edit_file(
            account=membership.account,
            workspace=workspace,
            path=path,
            content=content,
            author=request.user,
            message=(request.POST.get("message") or "").strip(),
        )
    except WriteRefused as refused:
        messages.error(request, refused.message)
        for finding in refused.findings[1:]:
            messages.error(request, finding.format())
        request.session["foldrun_refused_edit"] = {"path": base_url, "content": content}
        return
    if result.changeset is None:
        messages.info(request, f"{path} is unchanged; nothing was written.")
    else:
        messages.success(request, f"Saved {path} as revision #{result.changeset.number}.")


def _rollback(request: HttpRequest, membership: Membership, workspace: Workspace | None, path: str) -> None:
    require_write(membership)
    to = _int_or_none(request.POST.get("to"))
    history = _history(scope_key_for(membership.account, workspace), path)
    if to is None or not history or to not in {r.number for r in history}:
        raise Http404
    try:
        result = do_rollback(account=membership.account, workspace=workspace, path=path, to=to, author=request.user)
    except WriteRefused as refused:
        messages.error(request, refused.message)
        return
    if result.changeset is None:
        messages.info(request, f"{path} is already as revision #{to} left it.")
    else:
        messages.success(request, f"Rolled {path} back to revision #{to}, as revision #{result.changeset.number}.")


@login_required
@require_POST
def workspace_edit(request: HttpRequest, ws: str, path: str) -> HttpResponse:
    membership, workspace, _ = page_workspace(request, ws)
    base_url = f"/w/{workspace.name}/files/{path}"
    if not LibraryFile.objects.filter(scope_key=scope_key_for(workspace.account, workspace), path=path).exists():
        raise Http404
    _edit(request, membership, workspace, path, base_url)
    return redirect(base_url)


@login_required
@require_POST
def workspace_rollback(request: HttpRequest, ws: str, path: str) -> HttpResponse:
    membership, workspace, _ = page_workspace(request, ws)
    _rollback(request, membership, workspace, path)
    return redirect(f"/w/{workspace.name}/files/{path}")


@login_required
@require_POST
def library_edit(request: HttpRequest, path: str) -> HttpResponse:
    membership = membership_for(request)
    if not LibraryFile.objects.filter(scope_key=scope_key_for(membership.account, None), path=path).exists():
        raise Http404
    _edit(request, membership, None, path, f"/library/files/{path}")
    return redirect(f"/library/files/{path}")


@login_required
@require_POST
def library_rollback(request: HttpRequest, path: str) -> HttpResponse:
    membership = membership_for(request)
    _rollback(request, membership, None, path)
    return redirect(f"/library/files/{path}")


@login_required
def workspace_revision(request: HttpRequest, ws: str, number: int) -> HttpResponse:
    membership, workspace, can_write = page_workspace(request, ws)
    changeset = Changeset.objects.select_related("author").filter(workspace=workspace, number=number).first()
    if changeset is None:
        raise Http404
    context = _changeset_context(changeset, f"{workspace.name}/")
    context.update({"section": "workspace", "workspace": workspace, "scope": "workspace"})
    return render(request, "library/revision.html", context)


# ---------------------------------------------------------------- pages: library


@login_required
def library_file(request: HttpRequest, path: str) -> HttpResponse:
    membership = membership_for(request)
    scope_key = scope_key_for(membership.account, None)
    if not LibraryFile.objects.filter(scope_key=scope_key, path=path).exists():
        shelf = gallery_files()
        if path in shelf:  # a shelf file the account has no copy of: shown read-only
            return render(
                request,
                "library/file.html",
                {
                    "section": "library",
                    "scope": "gallery",
                    "path": path,
                    "gallery_text": shelf[path],
                },
            )
        raise Http404
    context = _file_context(request, scope_key, path, "library/")
    base_url = f"/library/files/{path}"
    context.update(
        {
            "section": "library",
            "scope": "library",
            "can_write": membership.can_write,
            "base_url": base_url,
            "edit_url": f"/library/edit/{path}",
            "rollback_url": f"/library/rollback/{path}",
            "draft": _refused_draft(request, base_url),
        }
    )
    return render(request, "library/file.html", context)


@login_required
def library_revision(request: HttpRequest, number: int) -> HttpResponse:
    membership = membership_for(request)
    changeset = (
        Changeset.objects.select_related("author")
        .filter(scope_key=scope_key_for(membership.account, None), number=number)
        .first()
    )
    if changeset is None:
        raise Http404
    context = _changeset_context(changeset, "library/")
    context.update({"section": "library", "scope": "library"})
    return render(request, "library/revision.html", context)
