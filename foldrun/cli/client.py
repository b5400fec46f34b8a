"""The CLI's HTTP client: one httpx.Client, JSON in and out, one-sentence errors.

Every failure becomes an `ApiFailure` whose `message` is a sentence fit to
print as-is: the server's own `message` field when it sent one, "Could not
reach <url>: …" when the connection failed. The bearer token is only ever
put in the Authorization header — never in a message, a URL or a repr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterator
from urllib.parse import quote, urlsplit

import foldrun

if TYPE_CHECKING:
    import httpx

# Seconds to wait for an answer (a connection gets CONNECT_TIMEOUT of them). Plain numbers, and httpx is
# imported only when a client is made: `foldrun --help` and `check` never pay for it.
DEFAULT_TIMEOUT = 30.0
# A push carries a whole desk in one request; give the server time to check it.
LONG_TIMEOUT = 300.0
CONNECT_TIMEOUT = 10.0


class CliError(Exception):
    """A failure the CLI reports as one sentence on stderr, exiting `exit_code` — or, under `--json`, as
    `{"error": {...}}` on stdout (`as_json`). `code` is a stable word for scripts; `details` what the
    failure was about: `what` was not found (workspace, run, file, revision…), its `name`, `where` it was
    looked for and the valid `choices`, when the CLI knows them."""

    exit_code = 1
    status: int | None = None

    def __init__(self, message: str, *, exit_code: int | None = None, code: str = "", details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.details = details if details is not None else {}
        if exit_code is not None:
            self.exit_code = exit_code

    def as_json(self) -> dict[str, Any]:
        shown: dict[str, Any] = {"code": self.code or "error", "message": self.message}
        if self.status is not None:
            shown["status"] = self.status
        if isinstance(self.details, dict):
            shown.update({k: v for k, v in self.details.items() if k not in shown})
        elif self.details:
            shown["details"] = self.details
        return shown


class ApiFailure(CliError):
    """A request that did not succeed; `message` is one sentence for people."""

    def __init__(self, message: str, *, status: int | None = None, code: str = "", details: Any = None) -> None:
        super().__init__(message, code=code, details=details)
        self.status = status


class NotSignedIn(ApiFailure):
    def __init__(self, message: str = "You are not signed in; run `foldrun login` first.") -> None:
        super().__init__(message, code="not_signed_in")


def quote_path(path: str) -> str:
    """A desk path as a URL path: each segment escaped, the slashes kept."""
    return "/".join(quote(part, safe="") for part in path.split("/"))


def results(data: Any) -> list:
    """A listing answer as a list: servers send a bare array or `{"results": [...]}`."""
    if isinstance(data, dict) and isinstance(data.get("results"), list):
        return data["results"]
    if isinstance(data, list):
        return data
    raise ApiFailure("The server's answer was not a list.")


def _timeout(seconds: float | None) -> httpx.Timeout:
    import httpx

    seconds = seconds or DEFAULT_TIMEOUT
    return httpx.Timeout(seconds, connect=min(CONNECT_TIMEOUT, seconds))


def _sentence(text: str) -> str:
    text = " ".join(str(text).split())
    return text if text.endswith((".", "!", "?")) else text + "."


class ApiClient:
    """JSON over HTTP to a foldrun server.

    `path` may be `/api/workspaces`, `/workspaces` or `workspaces`: all mean
    `<url>/api/workspaces`. Methods return the parsed JSON (None for an empty
    body) or raise `ApiFailure`.
    """

    def __init__(self, url: str, token: str | None = None, *, transport: httpx.BaseTransport | None = None) -> None:
        import httpx  # slow to import (a third of a second): only a command that talks to a server pays for it

        self.url = url.rstrip("/")
        headers = {"Accept": "application/json", "User-Agent": f"foldrun-cli/{foldrun.__version__}"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self._client = httpx.Client(
            base_url=self.url, headers=headers, timeout=_timeout(None), transport=transport, follow_redirects=False
        )

    def __repr__(self) -> str:
        return f"ApiClient({self.url!r})"

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> "ApiClient":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    @staticmethod
    def api_path(path: str) -> str:
        if path.startswith("/api/"):
            return path
        return "/api/" + path.lstrip("/")

    def request(
        self, method: str, path: str, *, json: Any = None, params: dict | None = None, timeout: float | None = None
    ) -> Any:
        """`timeout`: seconds to wait for the answer (DEFAULT_TIMEOUT when not given)."""
        url = self.api_path(path)
        return self._parse(self._send(method, url, json=json, params=params, timeout=timeout), method, url)

    def post_once(self, path: str, json: Any, key: str) -> tuple[Any, bool]:
        """POST with an Idempotency-Key: the answer, and whether the server says it is a replay of an earlier
        request with the key (what that one started, nothing new)."""
        url = self.api_path(path)
        response = self._send("POST", url, json=json, headers={"Idempotency-Key": key})
        return self._parse(response, "POST", url), response.headers.get("Idempotent-Replayed") == "true"

    def _send(
        self,
        method: str,
        url: str,
        *,
        json: Any = None,
        params: dict | None = None,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
    ) -> httpx.Response:
        import httpx

        clean_params = {k: v for k, v in (params or {}).items() if v is not None}
        try:
            return self._client.request(
                method, url, json=json, params=clean_params or None, timeout=_timeout(timeout), headers=headers
            )
        except httpx.TimeoutException:
            raise ApiFailure(f"{self.url} did not answer in time ({method} {url}).") from None
        except httpx.TransportError as exc:
            reason = str(exc) or "the connection failed"
            raise ApiFailure(_sentence(f"Could not reach {self.url}: {reason}"), code="unreachable") from None

    def _parse(self, response: httpx.Response, method: str, url: str) -> Any:
        body: Any = None
        if response.content:
            try:
                body = response.json()
            except ValueError:
                body = None
        if response.is_success:
            if body is None and response.content:
                # A non-JSON success (plain file content): hand back the text.
                return response.text
            return body
        if isinstance(body, dict) and body.get("message"):
            raise ApiFailure(
                _sentence(body["message"]),
                status=response.status_code,
                code=str(body.get("code") or ""),
                details=body.get("details"),
            )
        if isinstance(body, dict) and body.get("detail"):
            raise ApiFailure(_sentence(body["detail"]), status=response.status_code)
        reason = response.reason_phrase or "error"
        raise ApiFailure(
            f"The server answered {response.status_code} {reason} to {method} {url}.",
            status=response.status_code,
        )

    def get(self, path: str, *, params: dict | None = None) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, json: Any = None, *, params: dict | None = None, timeout: float | None = None) -> Any:
        return self.request("POST", path, json=json, params=params, timeout=timeout)

    def put(self, path: str, json: Any = None) -> Any:
        return self.request("PUT", path, json=json)

    def patch(self, path: str, json: Any = None) -> Any:
        return self.request("PATCH", path, json=json)

    def delete(self, path: str, *, params: dict | None = None) -> Any:
        return self.request("DELETE", path, params=params)

    def list(self, path: str, *, params: dict | None = None) -> list:
        """Every item of a listing, following `next` links when it is paginated."""
        return list(self.iter_list(path, params=params))

    def iter_list(self, path: str, *, params: dict | None = None) -> Iterator[Any]:
        data = self.get(path, params=params)
        yield from results(data)
        seen = 0
        while isinstance(data, dict) and data.get("next") and seen < 1000:
            seen += 1
            # Follow only the path and query: the link may name the host as the
            # server sees itself (behind a proxy), and the token goes nowhere else.
            parts = urlsplit(str(data["next"]))
            data = self.get(parts.path + (f"?{parts.query}" if parts.query else ""))
            yield from results(data)
