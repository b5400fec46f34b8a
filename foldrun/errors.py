"""The API's error: a stable code, a sentence for people, optional details.

Apart from foldrun.api (which re-exports it beside the exception handler) so
that the request parsers can raise it: foldrun.api imports DRF's views, which
read the REST_FRAMEWORK setting that names the parsers.
"""

from __future__ import annotations

from typing import Any

from rest_framework import exceptions, status


class ApiError(exceptions.APIException):
    """An error with a stable code, a sentence for people and optional details."""

    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "bad_request"

    def __init__(
        self, message: str, *, code: str | None = None, status_code: int | None = None, details: Any = None
    ) -> None:
        super().__init__(detail=message, code=code or self.default_code)
        self.code = code or self.default_code
        self.message = message
        self.details = details if details is not None else {}
        if status_code is not None:
            self.status_code = status_code


class NotFound(ApiError):
    status_code = status.HTTP_404_NOT_FOUND
    default_code = "not_found"

    def __init__(self, message: str = "Not found.") -> None:
        super().__init__(message)


NOT_FOUND_MESSAGE = "Not found."
