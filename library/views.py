"""The library API — for a workspace (`/api/workspaces/<ws>/…`) and for the
account library (`/api/library/…`): here push, deploy and check, and what
the API modules share (the scope, the number parameters, the desk's JSON
parser, a refused write's answer); files, history, rollback, revisions and
diffs are views_files.py; the library overview and the gallery shelf are
views_gallery.py.

Views are thin: they find the scope through `ScopedAPIView` (another
account's workspace is a 404), require a write role for changes, and call
actions/services.
"""

from __future__ import annotations

import json
import re
from typing import Callable

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import exceptions, status
from rest_framework.parsers import BaseParser
from rest_framework.response import Response

from accounts.access import ScopedAPIView
from accounts.browsers import browser_versions
from accounts.models import Workspace
from foldrun.api import ApiError
from foldrun.openapi import QueryBooleanField, error, errors
from foldrun.parsers import check_depth
from foldrun.contract import Desk, Finding, check, platform_from_versions
from foldrun.contract.findings import sort_findings

from . import serializers as s
from .actions.checks import check_files, generated_hashes
from .actions.pushes import check_and_write
from .actions.writes import WriteRefused
from .models import ChangeKind
from .services import beneath, desk_for_scope, head_number


# OpenAPI: what each route takes and answers (the views build plain dicts); foldrun.openapi.AutoSchema adds
# the refusals every view has (401, 403, 404, 400/413/415 for a body).
WRITE_ERRORS = {
    **errors(422),
    409: error(
        409,
        "A file would land where the desk has a folder, or inside a path "
        "that is a file (`details.findings`, code path.clash).",
    ),
}


def number_parameter(name: str, what: str, minimum: int = 0, maximum: int | None = None) -> OpenApiParameter:
    return OpenApiParameter(
        name,
        {"type": "integer", "minimum": minimum, "maximum": maximum or MAX_NUMBER},
        OpenApiParameter.QUERY,
        required=False,
        description=what,
    )


def server_platform() -> dict[str, int]:
    """What this install's browsers are, for `check`'s platform context (a
    pinned user_agent: of another Chrome major warns)."""
    return platform_from_versions(browser_versions())


def refused(exc: WriteRefused) -> ApiError:
    # A path that clashes with the desk's files (a file where it has a folder) is a conflict with the desk's
    # state, not a fault of the files: 409. Any other refusal is about the files themselves: 422.
    errors_found = [f for f in exc.findings if f.level == "error"]
    clash = bool(errors_found) and all(f.code == "path.clash" for f in errors_found)
    return ApiError(
        exc.message,
        code=exc.code,
        status_code=409 if clash else 422,
        details={"findings": s.findings_list(exc.findings)},
    )


def not_found_error() -> ApiError:
    return ApiError("Not found.", code="not_found", status_code=404)


# The largest revision number (a PositiveIntegerField) and page number a
# query may name: past it a number cannot be a row or an offset the database
# takes (a page past 2**63 was an overflow and a 500).
MAX_NUMBER = 2**31 - 1
_NUMBER_WORDS = {"page": "a page number", "page_size": "a page size"}
AT_PARAM = number_parameter(
    "at", "a revision number: read the scope as that revision left it (the head when absent; 0 is before the first)"
)
PAST_HEAD = error(404, "No such workspace, or `at` is past the head revision.")
RAW_PARAM = OpenApiParameter(
    "raw",
    OpenApiTypes.BOOL,
    OpenApiParameter.QUERY,
    required=False,
    description="true: the file's bytes as the body (text/plain, or application/octet-stream "
    "for a binary file), not JSON",
)


def query_flag(request, name: str) -> bool:
    """A boolean query parameter (true, false, 1 or 0); 400 naming it otherwise."""
    raw = request.query_params.get(name)
    if raw is None:
        return False
    try:
        return QueryBooleanField().to_internal_value(raw)
    except exceptions.ValidationError:
        raise ApiError(
            f"The `{name}` parameter must be true or false (or 1 or 0), not {raw[:40]!r}.",
            code="invalid",
            details={"parameter": name},
        ) from None


def query_number(
    request, name: str, *, required: bool = False, minimum: int = 0, maximum: int = MAX_NUMBER
) -> int | None:
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
            code="invalid",
            details={"parameter": name},
        )
    if value > maximum:
        raise ApiError(
            f"The `{name}` parameter must be {what} of at most {maximum:,}, not {shown}.",
            code="invalid",
            details={"parameter": name},
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
                code="too_large",
                status_code=413,
            )
        check_depth(data)  # nested past what the parser recurses through: a 400 naming the limit, not a 500
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
            raise not_found_error()
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

    @extend_schema(request=s.PushSerializer, responses={201: s.WriteResultOut, **WRITE_ERRORS})
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
                account=account,
                workspace=workspace,
                raw_files=body.raw_files(),
                raw_deletes=data["delete"],
                kind=ChangeKind.DEPLOY if self.deploy else ChangeKind.PUSH,
                message=data["message"],
                author=request.user,
                prune=data["prune"],
                deploy_check=deploy_check,
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
        findings = sort_findings(
            findings
            + check(
                Desk(files=files, library=desk.library, gallery=desk.gallery), mode=mode, platform=server_platform()
            )
        )
        errors = sum(1 for f in findings if f.level == "error")
        return Response(
            {
                "ok": errors == 0,
                "errors": errors,
                "warnings": len(findings) - errors,
                "findings": s.findings_list(findings),
            }
        )
