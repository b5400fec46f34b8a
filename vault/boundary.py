"""Where a secret's value meets the outside: filled in as the request leaves,
never before. Pure Python (no Django), so a laptop run uses the same code.

- `fill_request` fills `${NAME}` in an http tool's headers and query, host-side.
- `EgressProxy` is the loopback endpoint a `secrets: proxied` script sends
  through (`FOLDRUN_EGRESS`): it fills `${NAME}` only for a request to that
  secret's own host, refuses the rest, and takes the value back out of
  whatever the far side answers.
- `redact` replaces planted values in text bound for a trace or an output.
"""

from __future__ import annotations

import logging
import secrets as pysecrets
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from foldrun import net
from foldrun.contract.placeholders import PLACEHOLDER, fill_secrets

# httpx logs every request's full URL at INFO; a query the boundary filled
# would carry the value into the log. Its own lines stay at WARNING and up.
logging.getLogger("httpx").setLevel(logging.WARNING)

HOP_BY_HOP = {
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
    "host",
    "content-length",
    "content-encoding",
}
MIN_REDACT = 4  # shorter values would blank ordinary words


class BoundaryError(Exception):
    """A placeholder that cannot be filled here; the message names it."""


@dataclass
class Grant:
    """A secret a step was given: its value and the hosts it may go to."""

    value: str = field(repr=False)
    hosts: list[str] = field(default_factory=list)


def placeholders(text: str) -> list[str]:
    return PLACEHOLDER.findall(text or "")


def fill(text: str, values: Mapping[str, str]) -> str:
    return fill_secrets(text, values, BoundaryError)


def fill_request(
    headers: Mapping[str, str], query: Mapping[str, str], values: Mapping[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """An http tool's headers and query with `${NAME}` filled in, as the request goes out."""
    return ({k: fill(str(v), values) for k, v in headers.items()}, {k: fill(str(v), values) for k, v in query.items()})


def redact(text: str, values: Mapping[str, str]) -> str:
    """Every planted value in `text` replaced by `[NAME]`, longest first."""
    for name, value in sorted(values.items(), key=lambda item: -len(item[1] or "")):
        if value and len(value) >= MIN_REDACT:
            text = text.replace(value, f"[{name}]")
    return text


def host_allowed(host: str, patterns: Iterable[str]) -> bool:
    host = (host or "").lower().rstrip(".")
    for pattern in patterns:
        pattern = pattern.lower().split(":", 1)[0]
        if pattern.startswith("*."):
            if host.endswith(pattern[1:]) and host != pattern[2:]:
                return True
        elif host == pattern:
            return True
    return False


class EgressProxy:
    """One step's egress endpoint on 127.0.0.1. A script sends
    `METHOD $FOLDRUN_EGRESS<absolute URL>` with `${NAME}` in a header or the
    query; the proxy fills it when the URL's host is one of NAME's hosts.
    The path carries a per-step token, so no other process can use it."""

    def __init__(
        self,
        grants: Mapping[str, Grant],
        *,
        on_line: Callable[[str], None] | None = None,
        allow_private: bool | None = None,
        timeout: float = 60.0,
        http: httpx.Client | None = None,
    ) -> None:
        self.grants = dict(grants)
        self.on_line = on_line or (lambda line: None)
        self.allow_private = allow_private
        self.token = pysecrets.token_urlsafe(18)
        # foldrun.net's "egress" role: the far side's address is checked when the connection is made.
        self.http = http or net.client("egress", allow_private=allow_private)
        self.timeout = httpx.Timeout(timeout, connect=min(10.0, timeout))
        self.lines: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                proxy._handle(self)

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/{self.token}/"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    def env(self) -> dict[str, str]:
        return {"FOLDRUN_EGRESS": self.url}

    def start(self) -> "EgressProxy":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()  # the client is shared (foldrun.net's) or the caller's: left open

    def __enter__(self) -> "EgressProxy":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def _line(self, text: str) -> None:
        self.lines.append(text)
        try:
            self.on_line(text)
        except Exception:  # a trace that cannot be written must not break the request
            logging.getLogger(__name__).warning("egress: a trace line could not be written", exc_info=True)

    def _refuse(self, h: BaseHTTPRequestHandler, status: int, message: str) -> None:
        self._line(message)
        data = (message + "\n").encode()
        h.send_response(status)
        h.send_header("content-type", "text/plain; charset=utf-8")
        h.send_header("content-length", str(len(data)))
        h.send_header("x-foldrun-egress", "refused")
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(data)

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        prefix = f"/{self.token}/"
        length = int(h.headers.get("content-length") or 0)
        body = h.rfile.read(length) if length else b""
        if not h.path.startswith(prefix):
            self._refuse(h, 404, "egress: not this step's endpoint")
            return
        target = h.path[len(prefix) :]
        parts = urlsplit(target)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            self._refuse(
                h,
                400,
                "egress: send the absolute URL after FOLDRUN_EGRESS, like "
                "$FOLDRUN_EGRESS" + "https://api.example.com/v1/items",
            )
            return
        host = parts.hostname
        headers = {k: v for k, v in h.headers.items() if k.lower() not in HOP_BY_HOP}
        query = parse_qsl(parts.query, keep_blank_values=True)
        names = sorted(
            {n for v in headers.values() for n in placeholders(v)} | {n for _, v in query for n in placeholders(v)}
        )
        for name in names:
            grant = self.grants.get(name)
            if grant is None:
                self._refuse(h, 403, f"egress: refused {h.command} {host} — {name} is not a secret this step was given")
                return
            if not grant.hosts:
                self._refuse(
                    h,
                    403,
                    f"egress: refused {h.command} {host} — {name} names no host it may be sent to; "
                    "set its hosts in the vault",
                )
                return
            if not host_allowed(host, grant.hosts):
                self._refuse(
                    h, 403, f"egress: refused {h.command} {host} — {name} may only be sent to {', '.join(grant.hosts)}"
                )
                return
        values = {name: self.grants[name].value for name in names}
        filled_headers = {
            k: PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), v) for k, v in headers.items()
        }
        filled_query = urlencode(
            [(k, PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), v)) for k, v in query]
        )
        url = urlunsplit((parts.scheme, parts.netloc, parts.path or "/", filled_query, ""))
        tag = f" [{', '.join(names)}]" if names else ""
        try:
            response = self.http.request(h.command, url, headers=filled_headers, content=body, timeout=self.timeout)
        except (net.PrivateAddress, net.NoSuchHost) as exc:
            self._refuse(h, 403, f"egress: refused {h.command} {host} — {exc}")
            return
        except httpx.HTTPError as exc:
            self._refuse(h, 502, f"egress: {h.command} {host}{parts.path} failed ({type(exc).__name__}){tag}")
            return
        everything = {n: g.value for n, g in self.grants.items()}
        content = (
            redact(response.content.decode("utf-8", "replace"), everything).encode()
            if any(g.value.encode() in response.content for g in self.grants.values() if len(g.value) >= MIN_REDACT)
            else response.content
        )
        self._line(f"egress: {h.command} {host}{parts.path} → {response.status_code}{tag}")
        h.send_response(response.status_code)
        for key, value in response.headers.multi_items():
            if key.lower() not in HOP_BY_HOP:
                h.send_header(key, redact(value, everything))
        h.send_header("content-length", str(len(content)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(content)
