"""One webhook POST, guarded: no redirects, 8 seconds in all, and no
loopback/private/link-local destination unless the install opts in.

The address check happens at connect time on the address actually
connected to: the host name is resolved once, every address is checked,
and the request goes to that checked address (Host header and TLS server
name kept), so a name that resolves to 127.0.0.1 — or re-resolves between a
check and a connect — cannot slip through.

No database here: a laptop install calls `post_once` directly (one attempt,
the same headers, no log).
"""
from __future__ import annotations

import ipaddress
import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import httpcore
import httpx
import logging

# httpx logs every request's URL at INFO; a webhook URL can be a credential
# (a Slack incoming-webhook URL is one), so it must never reach a log.
logging.getLogger("httpx").setLevel(logging.WARNING)

ATTEMPT_TIMEOUT_SECONDS = 8.0
RESPONSE_EXCERPT_CHARS = 500

# Read at most this much of an answer: a 2 MB body costs us nothing.
MAX_READ_BYTES = 64 * 1024

_client_lock = threading.Lock()
_client: httpx.Client | None = None

# The end of the current attempt (time.monotonic()), per thread: httpx's
# timeouts are per socket operation, so a receiver that trickles its headers
# a byte a second would otherwise hold an attempt for as long as it likes.
_deadline = threading.local()


def _left(timeout: float | None, exc: type[Exception]) -> float | None:
    """`timeout` capped at what is left of this thread's attempt."""
    end = getattr(_deadline, "at", None)
    if end is None:
        return timeout
    left = end - time.monotonic()
    if left <= 0:
        raise exc("the attempt took longer than 8 seconds")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket whose every read and write ends by the attempt's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context, server_hostname: str | None = None, timeout: float | None = None):
        return _DeadlineStream(self._inner.start_tls(ssl_context, server_hostname,
                                                     _left(timeout, httpcore.ConnectTimeout)))

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore.SyncBackend):
    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        return _DeadlineStream(super().connect_tcp(host, port, _left(timeout, httpcore.ConnectTimeout),
                                                   local_address, socket_options))


def _shared_client() -> httpx.Client:
    # One client per process: a fresh one per request costs ~30 ms of TLS setup.
    global _client
    with _client_lock:
        if _client is None:
            limits = httpx.Limits(max_connections=50, max_keepalive_connections=20)
            transport = httpx.HTTPTransport(trust_env=False, limits=limits)
            # The same pool httpx would build, on sockets that keep the attempt's deadline.
            transport._pool = httpcore.ConnectionPool(
                ssl_context=httpx.create_ssl_context(trust_env=False),
                max_connections=limits.max_connections,
                max_keepalive_connections=limits.max_keepalive_connections,
                keepalive_expiry=limits.keepalive_expiry,
                network_backend=_DeadlineBackend(),
            )
            _client = httpx.Client(
                follow_redirects=False,
                trust_env=False,
                timeout=httpx.Timeout(ATTEMPT_TIMEOUT_SECONDS),
                transport=transport,
            )
        return _client


@dataclass
class Outcome:
    ok: bool
    status_code: int | None
    duration_ms: int
    excerpt: str
    error: str


class RefusedDestination(Exception):
    """The URL may not be posted to; the message says why."""


def _allow_private() -> bool:
    try:
        from django.conf import settings
    except ImportError:  # a laptop CLI without Django: the user's own machine
        return True
    if not settings.configured:
        # A laptop run with no server settings: the user's own machine, their own receiver.
        return True
    return bool(getattr(settings, "FOLDRUN_ALLOW_PRIVATE_URLS", False))


def _is_public(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not (
        ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_reserved
        or ip.is_unspecified or (isinstance(ip, ipaddress.IPv4Address) and ip in ipaddress.ip_network("100.64.0.0/10"))
    )


class ResolveTimeout(Exception):
    """The name did not resolve within the attempt's 8 seconds."""


_resolver_lock = threading.Lock()
_resolver: ThreadPoolExecutor | None = None
_resolver_pid = 0


def _resolve(host: str, port: int) -> list:
    """getaddrinfo, within what is left of the attempt's 8 seconds: a resolver
    that hangs cannot hold an attempt (the lookup thread is left to finish)."""
    global _resolver, _resolver_pid
    with _resolver_lock:
        if _resolver is None or _resolver_pid != os.getpid():
            _resolver = ThreadPoolExecutor(max_workers=8, thread_name_prefix="notify-dns")
            _resolver_pid = os.getpid()
        future = _resolver.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        return future.result(timeout=_left(ATTEMPT_TIMEOUT_SECONDS, ResolveTimeout))
    except FutureTimeout:
        raise ResolveTimeout() from None


def resolve_checked(url: str) -> tuple[str, str, int]:
    """(scheme, address to connect to, port) for `url`, or RefusedDestination."""
    try:
        parts = urlsplit(url)
        hostname, port = parts.hostname, parts.port
    except ValueError as exc:  # "Invalid IPv6 URL", "Port out of range 0-65535": no URL in the words
        raise RefusedDestination(f"the webhook URL is not a valid URL ({exc}).") from None
    if parts.scheme not in ("http", "https") or not hostname:
        raise RefusedDestination("the webhook URL must start with http:// or https:// and name a host.")
    port = port or (443 if parts.scheme == "https" else 80)
    try:
        infos = _resolve(hostname, port)
    except socket.gaierror as exc:
        raise RefusedDestination(f"the webhook host could not be resolved ({exc.strerror}).") from None
    except UnicodeError:  # an empty or over-long label: the IDNA codec refuses it
        raise RefusedDestination("the webhook host is not a valid host name.") from None
    addresses = [info[4][0] for info in infos]
    if not _allow_private():
        for address in addresses:
            if not _is_public(address):
                raise RefusedDestination(
                    "the webhook URL resolves to a loopback, private or link-local address, which foldrun does not post to."
                )
    return parts.scheme, addresses[0], port


def post_once(url: str, body: bytes, headers: dict[str, str]) -> Outcome:
    """POST `body` to `url` once and say what happened. Never raises for the
    receiver's faults: they are the outcome."""
    started = time.monotonic()

    def elapsed() -> int:
        return int((time.monotonic() - started) * 1000)

    _deadline.at = started + ATTEMPT_TIMEOUT_SECONDS
    try:
        scheme, address, port = resolve_checked(url)
    except RefusedDestination as exc:
        _deadline.at = None
        return Outcome(False, None, elapsed(), "", str(exc))
    except ResolveTimeout:
        _deadline.at = None
        return Outcome(False, None, elapsed(), "", f"timed out after {ATTEMPT_TIMEOUT_SECONDS:g} seconds "
                                                   "resolving the webhook's host name")
    parts = urlsplit(url)
    host_literal = f"[{address}]" if ":" in address else address
    default_port = 443 if scheme == "https" else 80
    netloc = host_literal if port == default_port else f"{host_literal}:{port}"
    pinned = urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))
    send_headers = dict(headers)
    send_headers["Host"] = parts.netloc.rsplit("@", 1)[-1]
    extensions = {"sni_hostname": parts.hostname} if scheme == "https" else {}
    client = _shared_client()
    deadline = started + ATTEMPT_TIMEOUT_SECONDS
    _deadline.at = deadline
    try:
        request = client.build_request("POST", pinned, content=body, headers=send_headers, extensions=extensions)
        response = client.send(request, stream=True)
        try:
            data = bytearray()
            for chunk in response.iter_bytes():
                data.extend(chunk)
                if len(data) >= MAX_READ_BYTES:
                    break
                if time.monotonic() > deadline:
                    raise httpx.ReadTimeout("the answer took longer than 8 seconds")
        finally:
            response.close()
    except httpx.TimeoutException:
        return Outcome(False, None, elapsed(), "", f"timed out after {ATTEMPT_TIMEOUT_SECONDS:g} seconds")
    except httpx.HTTPError as exc:
        return Outcome(False, None, elapsed(), "", _error_words(exc, (url, pinned, parts.path)))
    finally:
        _deadline.at = None
    text = bytes(data[: RESPONSE_EXCERPT_CHARS * 4]).decode("utf-8", errors="replace")[:RESPONSE_EXCERPT_CHARS]
    status = response.status_code
    ok = 200 <= status < 300
    error = "" if ok else (
        f"answered {status} with a redirect, which foldrun does not follow" if 300 <= status < 400
        else f"answered {status}"
    )
    return Outcome(ok, status, elapsed(), text, error)


def _error_words(exc: Exception, hide: tuple[str, ...] = ()) -> str:
    """The transport's words, with the URL taken out: it can be a credential."""
    words = str(exc) or type(exc).__name__
    for secret in sorted((h for h in hide if h and h != "/"), key=len, reverse=True):
        words = words.replace(secret, "[url]")
    return f"{type(exc).__name__}: {words}"[:500]
