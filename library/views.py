"""The library API: push, deploy, files, history, revisions, diff, rollback,
check — for a workspace (`/api/workspaces/<ws>/…`) and for the account
library (`/api/library/…`) — and the gallery shelf.

Views are thin: they find the scope through `ScopedAPIView` (another
account's workspace is a 404), require a write role for changes, and call
actions/services.
"""
from __future__ import annotations

import base64
import difflib
import json
import re
from typing import Callable

from django.conf import settings
from django.http import HttpResponse
from django.utils.http import urlencode
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import exceptions, status
from rest_framework.parsers import BaseParser
from rest_framework.response import Response

from accounts.access import ScopedAPIView
from accounts.browsers import browser_versions
from accounts.models import Workspace
from foldrun.api import ApiError
from foldrun.openapi import QueryBooleanField, error, errors
from foldrun.contract import Desk, Finding, check, platform_from_versions
from foldrun.contract.findings import sort_findings

from . import serializers as s
from .actions.checks import check_files, generated_hashes
from .actions.gallery import GalleryError, do_install_gallery_tool
from .actions.pushes import check_and_write, do_edit_file, do_rollback
from .actions.writes import WriteRefused
from .models import ChangeKind, Changeset, Revision, scope_key_for
from .services import (
    beneath,
    changeset_dict,
    desk_for_scope,
    file_at,
    files_at,
    gallery_marks,
    gallery_overview,
    gallery_tool_files,
    head_number,
    history_of,
    library_overview,
    sha256_text,
)

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200

# OpenAPI: what each route takes and answers (the views build plain dicts); foldrun.openapi.AutoSchema adds
# the refusals every view has (401, 403, 404, 400/413/415 for a body).
_WRITE_ERRORS = {**errors(422), 409: error(409, "A file would land where the desk has a folder, or inside a path "
                                                  "that is a file (`details.findings`, code path.clash).")}


def _number(name: str, what: str, minimum: int = 0, maximum: int | None = None) -> OpenApiParameter:
    return OpenApiParameter(name, {"type": "integer", "minimum": minimum, "maximum": maximum or MAX_NUMBER},
                            OpenApiParameter.QUERY, required=False, description=what)


def server_platform() -> dict[str, int]:
    """What this install's browsers are, for `check`'s platform context (a
    pinned user_agent: of another Chrome major warns)."""
    return platform_from_versions(browser_versions())


def refused(exc: WriteRefused) -> ApiError:
    # A path that clashes with the desk's files (a file where it has a folder) is a conflict with the desk's
    # state, not a fault of the files: 409. Any other refusal is about the files themselves: 422.
    errors_found = [f for f in exc.findings if f.level == "error"]
    clash = bool(errors_found) and all(f.code == "path.clash" for f in errors_found)
    return ApiError(exc.message, code=exc.code, status_code=409 if clash else 422,
                    details={"findings": s.findings_list(exc.findings)})


def _not_found() -> ApiError:
    return ApiError("Not found.", code="not_found", status_code=404)


# The largest revision number (a PositiveIntegerField) and page number a
# query may name: past it a number cannot be a row or an offset the database
# takes (a page past 2**63 was an overflow and a 500).
MAX_NUMBER = 2**31 - 1
_NUMBER_WORDS = {"page": "a page number", "page_size": "a page size"}
_AT = _number("at", "a revision number: read the scope as that revision left it (the head when absent; 0 is "
                    "before the first)")
_PAST_HEAD = error(404, "No such workspace, or `at` is past the head revision.")
_RAW = OpenApiParameter("raw", OpenApiTypes.BOOL, OpenApiParameter.QUERY, required=False,
                        description="true: the file's bytes as the body (text/plain, or application/octet-stream "
                                    "for a binary file), not JSON")


def _flag(request, name: str) -> bool:
    """A boolean query parameter (true, false, 1 or 0); 400 naming it otherwise."""
    raw = request.query_params.get(name)
    if raw is None:
        return False
    try:
        return QueryBooleanField().to_internal_value(raw)
    except exceptions.ValidationError:
        raise ApiError(f"The `{name}` parameter must be true or false (or 1 or 0), not {raw[:40]!r}.",
                       code="invalid", details={"parameter": name}) from None


def _number_param(request, name: str, *, required: bool = False, minimum: int = 0,
                  maximum: int = MAX_NUMBER) -> int | None:
    """A revision (or page) number from the query string; 400 naming the parameter."""
    what = _NUMBER_WORDS.get(name, "a revision number")
    raw = request.query_params.get(name)
    if raw is None:  # `?at=` is not "absent": the schema's integer has no empty value, so it is refused below
        if required:
            raise ApiError(f"The `{name}` parameter is required: {what}.", code="invalid", details={"parameter": name})
        return None
    shown = raw if len(raw) <= 40 else raw[:39] + "…"
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < minimum or not re.fullmatch(r"[0-9]+", raw):  # not " 5" or "٣", which int() takes
        raise ApiError(
            f"The `{name}` parameter must be {what} (a whole number, {minimum} or more), not {shown!r}.",
            code="invalid", details={"parameter": name},
        )
    if value > maximum:
        raise ApiError(
            f"The `{name}` parameter must be {what} of at most {maximum:,}, not {shown}.",
            code="invalid", details={"parameter": name},
        )
    return value


class DeskJSONParser(BaseParser):
    """JSON for push, deploy and check, which carry a whole desk in one body.

    Read from the stream under FOLDRUN_MAX_PUSH_BYTES rather than Django's
    DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB, meant for forms), which DRF's own
    JSON parser enforces and which a desk of a few thousand files passes.
    """

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.FOLDRUN_MAX_PUSH_BYTES
        request = (parser_context or {}).get("request")
        length = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
        data = b"" if length > limit else stream.read(limit + 1)
        if length > limit or len(data) > limit:
            raise ApiError(
                f"The request is larger than {limit:,} bytes (FOLDRUN_MAX_PUSH_BYTES); push the desk in parts.",
                code="too_large", status_code=413,
            )
        try:
            return json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            raise exceptions.ParseError(f"JSON parse error - {exc}") from None


class ScopeView(ScopedAPIView):
    """Resolves the scope from the URL: `ws` → a workspace, absent → the library."""

    def scope(self) -> tuple:
        name = self.kwargs.get("ws")
        workspace: Workspace | None = self.get_workspace(name) if name is not None else None
        return self.account, workspace

    def head_number(self, account, workspace) -> int:
        return head_number(account, workspace)

    def existing_number(self, account, workspace, number: int | None) -> int | None:
        """`number` when the scope has reached it (0 is "before anything"); 404 otherwise."""
        if number is None:
            return None
        if number > self.head_number(account, workspace):
            raise _not_found()
        return number

    def parse(self, serializer_class, data=None):
        serializer = serializer_class(data=self.request.data if data is None else data)
        serializer.is_valid(raise_exception=True)
        return serializer


# ---------------------------------------------------------------- push, deploy


class PushView(ScopeView):
    """POST …/push or …/deploy: all files land in one changeset, or none."""

    serializer_class = s.PushSerializer  # for the OpenAPI schema
    parser_classes = [DeskJSONParser]

    deploy = False

    @extend_schema(request=s.PushSerializer, responses={201: s.WriteResultOut, **_WRITE_ERRORS})
    def post(self, request, ws: str | None = None):
        account, workspace = self.scope()
        self.require_write()
        body = self.parse(s.PushSerializer)
        data = body.validated_data
        deploy_check: Callable[[dict[str, str]], list[Finding]] | None = None
        if self.deploy:
            library, gallery = beneath(account, workspace)

            platform = server_platform()

            def run_check(files: dict[str, str]) -> list[Finding]:
                return check(Desk(files=files, library=library, gallery=gallery), mode="deploy", platform=platform)

            deploy_check = run_check

        try:
            result = check_and_write(
                account=account, workspace=workspace, raw_files=body.raw_files(), raw_deletes=data["delete"],
                kind=ChangeKind.DEPLOY if self.deploy else ChangeKind.PUSH, message=data["message"],
                author=request.user, prune=data["prune"], deploy_check=deploy_check,
            )
        except WriteRefused as exc:
            raise refused(exc) from None
        return Response(s.write_result(result), status=status.HTTP_201_CREATED)


class DeployView(PushView):
    deploy = True


class CheckView(ScopeView):
    """POST …/check: the contract over the current files, or over `files`
    (and `delete`) in the body laid on top of them; `mode: deploy` shows what
    a deploy would say. Writes nothing."""

    parser_classes = [DeskJSONParser]

    @extend_schema(request=s.CheckSerializer, responses=s.CheckResultOut)
    def post(self, request, ws: str | None = None):
        account, workspace = self.scope()
        body = self.parse(s.CheckSerializer)
        desk = desk_for_scope(account, workspace)
        raw_files = [s.RawFile(f["path"], f["content"], f["encoding"]) for f in body.validated_data["files"]]
        generated = generated_hashes(account, workspace, raw_files)
        writes, findings = check_files(raw_files, body.validated_data["delete"], generated=generated)
        files = dict(desk.files)
        for write in writes:
            if write.content is None:
                files.pop(write.path, None)
            elif write.encoding == "utf-8":
                files[write.path] = write.content
        mode = body.validated_data["mode"]
        findings = sort_findings(findings + check(Desk(files=files, library=desk.library, gallery=desk.gallery), mode=mode,
                                                  platform=server_platform()))
        errors = sum(1 for f in findings if f.level == "error")
        return Response({
            "ok": errors == 0,
            "errors": errors,
            "warnings": len(findings) - errors,
            "findings": s.findings_list(findings),
        })


# ---------------------------------------------------------------- reading


class FilesView(ScopeView):
    """GET …/files?at=N: the live files at revision N (the head by default)."""

    @extend_schema(parameters=[_AT], responses={200: s.FilesOut, 404: _PAST_HEAD})
    def get(self, request, ws: str | None = None):
        account, workspace = self.scope()
        at = self.existing_number(account, workspace, _number_param(request, "at"))
        heads = files_at(account, workspace, at, with_content=False)
        marks = gallery_marks(heads)
        results = [
            {"path": p, "sha256": r.sha256, "size": r.size, "revision": r.number, "encoding": r.encoding,
             "gallery": marks.get(p)}
            for p, r in sorted(heads.items())
        ]
        return Response({"revision": at if at is not None else self.head_number(account, workspace), "results": results})


class FileView(ScopeView):
    """GET …/files/<path>?at=N: one file's content (`raw=1`: the bytes as text/plain).
    PUT: an edit, read like a push (a file a push accepts can be edited)."""

    parser_classes = [DeskJSONParser]

    @extend_schema(parameters=[_AT, _RAW], responses={
        (200, "application/json"): s.FileOut,
        (200, "text/plain"): OpenApiResponse(OpenApiTypes.STR, description="with raw: a text file's content"),
        (200, "application/octet-stream"): OpenApiResponse(OpenApiTypes.BINARY,
                                                           description="with raw: a binary file's bytes")})
    def get(self, request, path: str, ws: str | None = None):
        account, workspace = self.scope()
        at = self.existing_number(account, workspace, _number_param(request, "at"))
        revision = file_at(account, workspace, path, at)
        if revision is None:
            raise _not_found()
        if _flag(request, "raw"):
            if revision.encoding == "base64":
                return HttpResponse(base64.b64decode(revision.content), content_type="application/octet-stream")
            return HttpResponse(revision.content, content_type="text/plain; charset=utf-8")
        changeset = revision.changeset
        mark = gallery_marks(files_at(account, workspace, at, with_content=False)).get(path) if revision.gallery_tool else None
        return Response({
            "path": path,
            "content": revision.content,
            "encoding": revision.encoding,
            "sha256": revision.sha256,
            "size": revision.size,
            "revision": changeset_dict(changeset),
            "gallery": mark,
        })

    @extend_schema(request=s.EditSerializer, responses={201: s.WriteResultOut, **_WRITE_ERRORS},
                   parameters=[OpenApiParameter("path", {"type": "string", "maxLength": 400, "pattern": s.PATH_PATTERN},
                                                OpenApiParameter.PATH, description="the file, relative to the desk")])
    def put(self, request, path: str, ws: str | None = None):
        """A dashboard-style edit of one file through the API (kind "edit")."""
        account, workspace = self.scope()
        self.require_write()
        body = self.parse(s.EditSerializer)
        try:
            result = do_edit_file(account=account, workspace=workspace, path=path,
                                  content=body.validated_data["content"], author=request.user,
                                  message=body.validated_data["message"])
        except WriteRefused as exc:
            raise refused(exc) from None
        return Response(s.write_result(result), status=status.HTTP_201_CREATED)


class HistoryView(ScopeView):
    """GET …/files/<path>/history: every revision of one file, newest first."""

    @extend_schema(responses=s.HistoryOut)
    def get(self, request, path: str, ws: str | None = None):
        account, workspace = self.scope()
        revisions = history_of(account, workspace, path)
        if not revisions and file_at(account, workspace, f"{path}/history") is not None:
            # A file that is itself called `history` (notes/history): read it.
            return FileView.as_view()(request._request, **{**self.kwargs, "path": f"{path}/history"})
        if not revisions:
            raise _not_found()
        return Response({"path": path, "results": [s.revision_dict(r, r.changeset) for r in revisions]})


class RollbackView(ScopeView):
    """POST …/files/<path>/rollback {"to": N, "message"}: N's content as a new revision."""

    serializer_class = s.RollbackSerializer  # for the OpenAPI schema

    @extend_schema(request=s.RollbackSerializer, responses={201: s.WriteResultOut, **_WRITE_ERRORS})
    def post(self, request, path: str, ws: str | None = None):
        account, workspace = self.scope()
        self.require_write()
        body = self.parse(s.RollbackSerializer).validated_data
        if not history_of(account, workspace, path):
            raise _not_found()
        self.existing_number(account, workspace, body["to"])
        try:
            result = do_rollback(account=account, workspace=workspace, path=path, to=body["to"],
                                 author=request.user, message=body["message"])
        except WriteRefused as exc:
            raise refused(exc) from None
        return Response(s.write_result(result), status=status.HTTP_201_CREATED)


class RevisionsView(ScopeView):
    """GET …/revisions?page=N&page_size=M: changesets, newest first."""

    @extend_schema(parameters=[_number("page", "the page, from 1", minimum=1),
                               _number("page_size", f"at most {MAX_PAGE_SIZE} ({PAGE_SIZE} when absent)", minimum=1,
                                       maximum=MAX_PAGE_SIZE)],
                   responses=s.RevisionsOut)
    def get(self, request, ws: str | None = None):
        account, workspace = self.scope()
        page = _number_param(request, "page", minimum=1) or 1
        size = _number_param(request, "page_size", minimum=1, maximum=MAX_PAGE_SIZE) or PAGE_SIZE
        query = Changeset.objects.filter(scope_key=scope_key_for(account, workspace)).select_related("author")
        count = query.count()
        rows = list(query.order_by("-number")[(page - 1) * size: page * size])
        counts = _file_counts(rows)
        results = [{**changeset_dict(c), "files": counts.get(c.pk, 0)} for c in rows]
        next_url = None
        if page * size < count:
            next_url = request.build_absolute_uri(request.path) + "?" + urlencode({"page": page + 1, "page_size": size})
        return Response({"count": count, "page": page, "page_size": size, "next": next_url, "results": results})


def _file_counts(changesets: list[Changeset]) -> dict[int, int]:
    from django.db.models import Count

    return dict(
        Revision.objects.filter(changeset__in=changesets).values("changeset_id").annotate(n=Count("id")).values_list("changeset_id", "n")
    )


class RevisionView(ScopeView):
    """GET …/revisions/<n>: one changeset and the files it changed."""

    @extend_schema(responses=s.RevisionOut,
                   parameters=[OpenApiParameter("number", {"type": "integer", "minimum": 0, "maximum": MAX_NUMBER},
                                                OpenApiParameter.PATH, description="the revision's number")])
    def get(self, request, number: int, ws: str | None = None):
        account, workspace = self.scope()
        changeset = Changeset.objects.filter(scope_key=scope_key_for(account, workspace), number=number).select_related("author").first()
        if changeset is None:
            raise _not_found()
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

    latest = Revision.objects.filter(file_id=OuterRef("file_id"), number__lt=number).order_by("-number").values("pk")[:1]
    rows = Revision.objects.filter(file_id__in=file_ids, number__lt=number, pk=Subquery(latest)).values_list("file_id", "deleted")
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

    @extend_schema(parameters=[
        _number("from", "the older revision (the one before `to` when absent)"),
        _number("to", "the newer revision (the head when absent)"),
        OpenApiParameter("path", OpenApiTypes.STR, OpenApiParameter.QUERY, required=False,
                         description="one file; without it, every file changed between them")],
        responses={200: s.DiffOut, 404: error(404, "A revision past the head, or a `path` with no history.")})
    def get(self, request, ws: str | None = None):
        account, workspace = self.scope()
        head = self.head_number(account, workspace)
        to = self.existing_number(account, workspace, _number_param(request, "to"))
        to = head if to is None else to
        start = self.existing_number(account, workspace, _number_param(request, "from"))
        start = max(to - 1, 0) if start is None else start
        path = request.query_params.get("path")
        if path:
            if not history_of(account, workspace, path):
                raise _not_found()
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


# ---------------------------------------------------------------- library & gallery


class LibraryOverviewView(ScopedAPIView):
    """GET /api/library: every shared file, who grants it, what overrides it."""

    @extend_schema(responses={200: s.LibraryOut})
    def get(self, request):
        return Response({"results": library_overview(self.account)})


class GalleryView(ScopedAPIView):
    """GET /api/gallery: the shelf's tools and the copies the account keeps."""

    @extend_schema(responses=s.GalleryOut, operation_id="gallery_list")
    def get(self, request):
        return Response({"results": gallery_overview(self.account)})


class GalleryToolView(ScopedAPIView):
    """GET /api/gallery/<tool>: one shelf tool with its files' content — what
    a laptop fetches to run a gallery tool as the platform would."""

    @extend_schema(responses=s.GalleryToolOut)
    def get(self, request, tool: str):
        shelf = gallery_tool_files(tool)
        if shelf is None:
            raise _not_found()
        return Response({
            "name": tool,
            "files": [
                {"path": p, "content": t, "sha256": sha256_text(t), "size": len(t.encode("utf-8"))}
                for p, t in sorted(shelf.items())
            ],
        })


class GalleryInstallView(ScopedAPIView):
    """POST /api/library/gallery/<tool>/install {"workspace"?} — and …/upgrade."""

    serializer_class = s.InstallSerializer  # for the OpenAPI schema

    upgrade = False

    @extend_schema(request=s.InstallSerializer, responses={201: s.WriteResultOut, **_WRITE_ERRORS, 409: error(409, "Upgrade: the scope keeps no copy of the tool (install it first).")})
    def post(self, request, tool: str):
        self.require_write()
        serializer = s.InstallSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        name = serializer.validated_data.get("workspace")
        workspace = self.get_workspace(name) if name else None
        try:
            result = do_install_gallery_tool(account=self.account, workspace=workspace, name=tool,
                                             author=request.user, upgrade=self.upgrade)
        except GalleryError as exc:
            raise ApiError(exc.message, code=exc.code, status_code=exc.status) from None
        except WriteRefused as exc:  # a shelf file where the scope has a folder of that name, or the reverse
            raise refused(exc) from None
        return Response(s.write_result(result), status=status.HTTP_201_CREATED)


class GalleryUpgradeView(GalleryInstallView):
    upgrade = True

