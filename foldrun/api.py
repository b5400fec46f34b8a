"""The API's error shape and the scoped base every API view stands on.

Errors are JSON `{code, message, details}`. Another account's object answers
exactly like a missing one: the 404 body never says which it was.
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig, ValidationError as DjangoValidationError
from django.http import Http404
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from .errors import NOT_FOUND_MESSAGE, ApiError, NotFound  # noqa: F401 - the API's names for them

log = logging.getLogger(__name__)


def _first_message(detail: Any) -> str:
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    if isinstance(detail, dict) and detail:
        key, value = next(iter(detail.items()))
        inner = _first_message(value)
        return inner if key == "non_field_errors" else f"{key}: {inner}"
    return str(detail)


def exception_handler(exc: Exception, context: dict) -> Response | None:
    if isinstance(exc, ApiError):
        return Response(
            {"code": exc.code, "message": exc.message, "details": exc.details},
            status=exc.status_code,
        )
    if isinstance(exc, RequestDataTooBig):
        # Django's cap on a parsed body (DATA_UPLOAD_MAX_MEMORY_SIZE): the client sent too much, not a bug of ours.
        return Response(
            {
                "code": "too_large",
                "message": f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,} bytes; send less in one request.",
                "details": {},
            },
            status=413,
        )
    if isinstance(exc, (Http404, exceptions.NotFound)):
        # One body for "missing" and "someone else's": nothing to tell them apart.
        return Response({"code": "not_found", "message": NOT_FOUND_MESSAGE, "details": {}}, status=404)
    if isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(detail=exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    if isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None:
        # A bug of ours: log it whole, show the person one sentence, no traceback.
        view = context.get("view")
        log.exception("unhandled error in %s", type(view).__name__ if view else "an API view", exc_info=exc)
        return Response(
            {"code": "server_error", "message": "Something went wrong on our side; it has been logged.", "details": {}},
            status=500,
        )
    if isinstance(exc, exceptions.ValidationError):
        body = {"code": "invalid", "message": _first_message(exc.detail), "details": exc.detail}
    else:
        codes = exc.get_codes() if isinstance(exc, exceptions.APIException) else "error"
        body = {
            "code": codes if isinstance(codes, str) else "error",
            "message": _first_message(getattr(exc, "detail", str(exc))),
            "details": {},
        }
    response.data = body
    return response


@csrf_exempt  # a POST to no route is the API's JSON 404, not Django's CSRF page (the API takes no form posts)
def api_not_found(request, *args, **kwargs):
    """An address under /api/ that no route matches: the API's 404 body, not the site's HTML page.

    Catching every /api/ address also catches the ones APPEND_SLASH used to
    redirect (`/api/schema`), so those still redirect here.
    """
    from django.http import HttpResponsePermanentRedirect, JsonResponse
    from django.urls import Resolver404, resolve

    if not request.path.endswith("/"):
        try:
            if resolve(request.path + "/").func is not api_not_found:
                return HttpResponsePermanentRedirect(request.path + "/")
        except Resolver404:
            pass
    return JsonResponse({"code": "not_found", "message": NOT_FOUND_MESSAGE, "details": {}}, status=404)
