"""The sessions API: POST/GET /v1/sessions, GET/DELETE /v1/sessions/<id>. Thin: browsing.actions does the work."""

from __future__ import annotations

from pathlib import Path

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.response import Response

from accounts.access import ScopedAPIView
from foldrun.api import ApiError
from foldrun.ranged import ranged_file

from . import actions
from .errors import SessionError
from .records import record, summary
from .serializers import (
    ErrorSerializer,
    SessionCreateSerializer,
    SessionListSerializer,
    SessionSerializer,
    StopSerializer,
)

LIST_LIMIT = 200


def _refusal(exc: SessionError) -> ApiError:
    return ApiError(exc.message, code=exc.code, status_code=exc.http_status, details=exc.details or {})


def _error(text: str) -> OpenApiResponse:
    return OpenApiResponse(ErrorSerializer, description=text)


_AUTH = {401: _error("no valid API token"), 403: _error("a member who may read but not open or stop sessions")}


class SessionsView(ScopedAPIView):
    @extend_schema(
        operation_id="sessions_list",
        responses={200: SessionListSerializer, **_AUTH},
        description="The account's sessions, newest first (at most 200).",
    )
    def get(self, request):
        return Response({"sessions": [summary(s) for s in actions.list_sessions(self.account, LIST_LIMIT)]})

    @extend_schema(
        operation_id="sessions_create",
        request=SessionCreateSerializer,
        responses={
            201: OpenApiResponse(SessionSerializer, description="the session, live (or queued with queueForCapacity)"),
            400: _error("invalid_input: details.issues names each bad option"),
            **_AUTH,
            422: _error("navigation_blocked: the start URL is an address the browser may not reach"),
            429: _error("capacity_exceeded or capacity_timeout: every browser of the account is busy"),
            502: _error("start_failed: the browser did not start"),
        },
        description="Open a browser session that stays open across calls. Do not send url: use startUrl.",
    )
    def post(self, request):
        self.require_write()
        if request.data is None:  # a JSON null; no body at all is {} (every option its default)
            raise _refusal(
                SessionError(
                    "invalid_input",
                    "The session options must be a JSON object.",
                    {"issues": [{"path": "", "message": "expected an object"}]},
                )
            )
        try:
            opts = actions.check_create_session(self.account, request.data)
            session = actions.do_create_session(self.account, opts, user=request.user)
            if session.queued_until is None:
                session = actions.wait_live(session)
        except SessionError as exc:
            raise _refusal(exc) from None
        return Response(record(session, may_act=True, base=_base(request)), status=201)


class SessionView(ScopedAPIView):
    @extend_schema(
        operation_id="sessions_read",
        responses={200: SessionSerializer, **_AUTH, 404: _error("no such session in this account")},
    )
    def get(self, request, session_id: str):
        try:
            session = actions.scoped_session(self.account, session_id)
        except SessionError as exc:
            raise _refusal(exc) from None
        # The session's key (token, endpoints.cdp) only for a role that may act: a viewer reads its status.
        return Response(record(session, may_act=self.membership.can_write, base=_base(request)))

    @extend_schema(
        operation_id="sessions_stop",
        responses={
            200: OpenApiResponse(StopSerializer, description="stopped; safe to repeat (closed: false the next time)"),
            **_AUTH,
            404: _error("no such session in this account"),
        },
    )
    def delete(self, request, session_id: str):
        self.require_write()
        answer = actions.do_stop_session(
            self.account, session_id, who=f"DELETE /v1/sessions by {request.user.email}", cancels_runs=True
        )
        if not answer["deleted"]:
            raise _refusal(SessionError("not_found", f"No session {session_id[:60]} in this account."))
        if answer["closed"]:
            actions.wait_ended(actions.scoped_session(self.account, session_id))
        return Response(answer)


class SessionRecordingView(ScopedAPIView):
    @extend_schema(
        operation_id="sessions_recording",
        responses={
            (200, "video/webm"): OpenApiResponse(OpenApiTypes.BINARY, description="the session's video (WebM)"),
            **_AUTH,
            404: _error("no such session in this account, or it has no recording (yet)"),
        },
    )
    def get(self, request, session_id: str):
        try:
            session = actions.scoped_session(self.account, session_id)
        except SessionError as exc:
            raise _refusal(exc) from None
        path = Path(session.recording) if session.recording else None
        if path is None or not path.is_file():
            raise _refusal(
                SessionError(
                    "not_found",
                    f"Session {session.public_id} has no recording"
                    + (
                        " yet: it is written when the session ends."
                        if session.is_open and session.options.get("record")
                        else "."
                    ),
                )
            )
        # Byte ranges, so a player can seek in it.
        return ranged_file(request, path, "video/webm", filename=f"{session.public_id}.webm", inline=False)


def _base(request) -> str:
    return request.build_absolute_uri("/").rstrip("/")
