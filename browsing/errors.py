"""The one error a session action raises: a code of the spec's error codes, a sentence, optional details.

foldrun.mcp turns it into a tool failure 1:1; the REST views into the API's error body.
"""

from __future__ import annotations

from typing import Any

# The HTTP status each code answers on the REST API.
HTTP_STATUS = {
    "invalid_input": 400,
    "not_found": 404,
    "forbidden": 403,
    "navigation_blocked": 422,
    "capacity_exceeded": 429,
    "capacity_timeout": 429,
    "session_closed": 409,
    "start_failed": 502,
}


class SessionError(Exception):
    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    @property
    def http_status(self) -> int:
        return HTTP_STATUS.get(self.code, 400)
