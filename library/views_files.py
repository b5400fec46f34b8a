"""The library API over one scope's files: the files at a revision, one
file (read, or edited like a push), its history and rollback, the
revisions, and diffs between two revisions."""

from __future__ import annotations

import base64
import difflib

from django.http import HttpResponse
from django.utils.http import urlencode
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.response import Response

from foldrun.openapi import error

from . import serializers as s
from .actions.pushes import do_edit_file, do_rollback
from .actions.writes import WriteRefused
from .models import Changeset, Revision, scope_key_for
from .services import changeset_dict, file_at, files_at, gallery_marks, history_of
from .views import (
    AT_PARAM,
    PAST_HEAD,
    RAW_PARAM,
    WRITE_ERRORS,
    MAX_NUMBER,
    DeskJSONParser,
    ScopeView,
    query_flag,
    not_found_error,
    number_parameter,
    query_number,
    refused,
)

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200


# A file's path in the URL, as a push takes one (never empty, at most 400 characters, the contract's segments):
# what the schema promises is what the server accepts, so a fuzzer's "valid" path is one a file can have.
FILE_PATH_PARAM = OpenApiParameter(
    "path",
    {"type": "string", "minLength": 1, "maxLength": 400, "pattern": s.PATH_PATTERN},
    OpenApiParameter.PATH,
    description="the file, relative to the desk",
)


# ---------------------------------------------------------------- reading
class FilesView(ScopeView):
    """GET …/files?at=N: the live files at revision N (the head by default)."""

    @extend_schema(parameters=[AT_PARAM], responses={200: s.FilesOut, 404: PAST_HEAD})
    def get(self, request, ws: str | None = None):
        account, workspace = self.scope()
        at = self.existing_number(account, workspace, query_number(request, "at"))
        heads = files_at(account, workspace, at, with_content=False)
        marks = gallery_marks(heads)
        results = [
            {
                "path": p,
                "sha256": r.sha256,
                "size": r.size,
                "revision": r.number,
                "encoding": r.encoding,
                "gallery": marks.get(p),
            }
            for p, r in sorted(heads.items())
        ]
        return Response(
            {"revision": at if at is not None else self.head_number(account, workspace), "results": results}
        )


class FileView(ScopeView):
    """GET …/files/<path>?at=N: one file's content (`raw=1`: the bytes as text/plain).
    PUT: an edit, read like a push (a file a push accepts can be edited)."""

    parser_classes = [DeskJSONParser]

    @extend_schema(
        parameters=[FILE_PATH_PARAM, AT_PARAM, RAW_PARAM],
        responses={
            (200, "application/json"): s.FileOut,
            (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="with raw: a text file's content"),
            (200, "application/octet-stream"): OpenApiResponse(
                OpenApiTypes.BINARY, description="with raw: a binary file's bytes"
            ),
        },
    )
    def get(self, request, path: str, ws: str | None = None):
        account, workspace = self.scope()
        at = self.existing_number(account, workspace, query_number(request, "at"))
        revision = file_at(account, workspace, path, at)
        if revision is None:
            raise not_found_error()
        if query_flag(request, "raw"):
            if revision.encoding == "base64":
                return HttpResponse(base64.b64decode(revision.content), content_type="application/octet-stream")
            return HttpResponse(revision.content, content_type="text/plain; charset=utf-8")
        changeset = revision.changeset
        mark = (
            gallery_marks(files_at(account, workspace, at, with_content=False)).get(path)
            if revision.gallery_tool
            else None
        )
        return Response(
            {
                "path": path,
                "content": revision.content,
                "encoding": revision.encoding,
                "sha256": revision.sha256,
                "size": revision.size,
                "revision": changeset_dict(changeset),
                "gallery": mark,
            }
        )

    @extend_schema(
        request=s.EditSerializer, responses={201: s.WriteResultOut, **WRITE_ERRORS}, parameters=[FILE_PATH_PARAM]
    )
    def put(self, request, path: str, ws: str | None = None):
        """A dashboard-style edit of one file through the API (kind "edit")."""
        account, workspace = self.scope()
        self.require_write()
        body = self.parse(s.EditSerializer)
        try:
            result = do_edit_file(
                account=account,
                workspace=workspace,
                path=path,
                content=body.validated_data["content"],
                author=request.user,
                message=body.validated_data["message"],
            )
        except WriteRefused as exc:
            raise refused(exc) from None
        return Response(s.write_result(result), status=status.HTTP_201_CREATED)


class HistoryView(ScopeView):
    """GET …/files/<path>/history: every revision of one file, newest first."""

    @extend_schema(parameters=[FILE_PATH_PARAM], responses=s.HistoryOut)
    def get(self, request, path: str, ws: str | None = None):
        account, workspace = self.scope()
        revisions = history_of(account, workspace, path)
        if not revisions and file_at(account, workspace, f"{path}/history") is not None:
            # A file that is itself called `history` (notes/history): read it.
            return FileView.as_view()(request._request, **{**self.kwargs, "path": f"{path}/history"})
        if not revisions:
            raise not_found_error()
        return Response({"path": path, "results": [s.revision_dict(r, r.changeset) for r in revisions]})


class RollbackView(ScopeView):
    """POST …/files/<path>/rollback {"to": N, "message"}: N's content as a new revision."""

    serializer_class = s.RollbackSerializer  # for the OpenAPI schema

    @extend_schema(
        parameters=[FILE_PATH_PARAM], request=s.RollbackSerializer, responses={201: s.WriteResultOut, **WRITE_ERRORS}
    )
    def post(self, request, path: str, ws: str | None = None):
        account, workspace = self.scope()
        self.require_write()
        body = self.parse(s.RollbackSerializer).validated_data
        if not history_of(account, workspace, path):
            raise not_found_error()
        self.existing_number(account, workspace, body["to"])
        try:
            result = do_rollback(
                account=account,
                workspace=workspace,
                path=path,
                to=body["to"],
                author=request.user,
                message=body["message"],
            )
        except WriteRefused as exc:
            raise refused(exc) from None
        return Response(s.write_result(result), status=status.HTTP_201_CREATED)


class RevisionsView(ScopeView):
    """GET …/revisions?page=N&page_size=M: changesets, newest first."""

    @extend_schema(
        parameters=[
            number_parameter("page", "the page, from 1", minimum=1),
            number_parameter(
                "page_size", f"at most {MAX_PAGE_SIZE} ({PAGE_SIZE} when absent)", minimum=1, maximum=MAX_PAGE_SIZE
            ),
        ],
        responses=s.RevisionsOut,
    )
    def get(self, request, ws: str | None = None):
        account, workspace = self.scope()
        page = query_number(request, "page", minimum=1) or 1
        size = query_number(request, "page_size", minimum=1, maximum=MAX_PAGE_SIZE) or PAGE_SIZE
        query = Changeset.objects.filter(scope_key=scope_key_for(account, workspace)).select_related("author")
        count = query.count()
        rows = list(query.order_by("-number")[(page - 1) * size : page * size])
        counts = _file_counts(rows)
        results = [{**changeset_dict(c), "files": counts.get(c.pk, 0)} for c in rows]
        next_url = None
        if page * size < count:
            next_url = request.build_absolute_uri(request.path) + "?" + urlencode({"page": page + 1, "page_size": size})
        return Response({"count": count, "page": page, "page_size": size, "next": next_url, "results": results})


def _file_counts(changesets: list[Changeset]) -> dict[int, int]:
    from django.db.models import Count

    return dict(
        Revision.objects.filter(changeset__in=changesets)
        .values("changeset_id")
        .annotate(n=Count("id"))
        .values_list("changeset_id", "n")
    )


class RevisionView(ScopeView):
    """GET …/revisions/<n>: one changeset and the files it changed."""

    @extend_schema(
        responses=s.RevisionOut,
        parameters=[
            OpenApiParameter(
                "number",
                {"type": "integer", "minimum": 0, "maximum": MAX_NUMBER},
                OpenApiParameter.PATH,
                description="the revision's number",
            )
        ],
    )
    def get(self, request, number: int, ws: str | None = None):
        account, workspace = self.scope()
        changeset = (
            Changeset.objects.filter(scope_key=scope_key_for(account, workspace), number=number)
            .select_related("author")
            .first()
        )
        if changeset is None:
            raise not_found_error()
        revisions = list(changeset.revisions.select_related("file").defer("content").order_by("file__path"))
        before = _live_before([r.file_id for r in revisions], number)
        changed = [
            {
                "path": r.file.path,
                "action": "deleted" if r.deleted else ("modified" if before.get(r.file_id) else "added"),
                "sha256": r.sha256,
                "size": r.size,
            }
            for r in revisions
        ]
        return Response({"revision": changeset_dict(changeset), "changed": changed})


def _live_before(file_ids: list[int], number: int) -> dict[int, bool]:
    """For each file, whether it was live just before changeset `number`."""
    from django.db.models import OuterRef, Subquery

    latest = (
        Revision.objects.filter(file_id=OuterRef("file_id"), number__lt=number).order_by("-number").values("pk")[:1]
    )
    rows = Revision.objects.filter(file_id__in=file_ids, number__lt=number, pk=Subquery(latest)).values_list(
        "file_id", "deleted"
    )
    return {file_id: not deleted for file_id, deleted in rows}


def _text_of(revision: Revision | None) -> str | None:
    if revision is None:
        return None
    if revision.encoding == "base64":
        return None
    return revision.content


def unified(path: str, old: Revision | None, new: Revision | None, a: int, b: int) -> str:
    """A unified diff of one file between revisions a and b."""
    if (old is not None and old.encoding == "base64") or (new is not None and new.encoding == "base64"):
        return f"Binary files {path}@{a} and {path}@{b} differ\n"
    lines = difflib.unified_diff(
        (_text_of(old) or "").splitlines(keepends=True),
        (_text_of(new) or "").splitlines(keepends=True),
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null",
    )
    out = []
    for line in lines:
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


class DiffView(ScopeView):
    """GET …/diff?path=P&from=N&to=M (to: the head by default; from: the
    revision before `to`). Without `path`: every file changed between them."""

    @extend_schema(
        parameters=[
            number_parameter("from", "the older revision (the one before `to` when absent)"),
            number_parameter("to", "the newer revision (the head when absent)"),
            OpenApiParameter(
                "path",
                OpenApiTypes.STR,
                OpenApiParameter.QUERY,
                required=False,
                description="one file; without it, every file changed between them",
            ),
        ],
        responses={200: s.DiffOut, 404: error(404, "A revision past the head, or a `path` with no history.")},
    )
    def get(self, request, ws: str | None = None):
        account, workspace = self.scope()
        head = self.head_number(account, workspace)
        to = self.existing_number(account, workspace, query_number(request, "to"))
        to = head if to is None else to
        start = self.existing_number(account, workspace, query_number(request, "from"))
        start = max(to - 1, 0) if start is None else start
        path = request.query_params.get("path")
        if path:
            if not history_of(account, workspace, path):
                raise not_found_error()
            old = file_at(account, workspace, path, start)
            new = file_at(account, workspace, path, to)
            return Response({"path": path, "from": start, "to": to, "diff": unified(path, old, new, start, to)})
        old_files, new_files = files_at(account, workspace, start), files_at(account, workspace, to)
        files = []
        for p in sorted(set(old_files) | set(new_files)):
            old, new = old_files.get(p), new_files.get(p)
            if old is not None and new is not None and old.sha256 == new.sha256 and old.encoding == new.encoding:
                continue
            action = "added" if old is None else ("deleted" if new is None else "modified")
            files.append({"path": p, "action": action, "diff": unified(p, old, new, start, to)})
        return Response({"from": start, "to": to, "files": files})
