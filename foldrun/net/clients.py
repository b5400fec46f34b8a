"""Clients by role, each with its deadline, shared per process.

A new httpx client costs ~30 ms (its TLS context), so each (role, deadline,
switch) gets one, kept until the host changes the policy. None keeps a
cookie jar (one tenant's cookies never ride on another's call), none reads
a proxy from the environment (a proxy would connect for us, and the guard
would check the proxy instead of the far side), none follows a redirect
unless the caller asks — and a followed hop meets the guard at its own connect.
"""

from __future__ import annotations

import http.cookiejar
import logging
import threading
from dataclasses import dataclass

import httpx

from . import guard
from .malformed import port_problem, refusal
from .transport import GuardedBackend, GuardedTransport

# httpx logs every request's URL at INFO; a user-named URL can be a credential
# (a Slack incoming-webhook URL, a query the boundary filled), so it must never reach a log.
logging.getLogger("httpx").setLevel(logging.WARNING)


@dataclass(frozen=True)
class Role:
    timeout: float  # seconds per connect/read/write
    connect: float  # seconds to connect
    deadline: float | None  # seconds for the whole request, body included; None: per operation only


ROLES: dict[str, Role] = {
    "webhook": Role(timeout=8.0, connect=8.0, deadline=8.0),  # notify deliveries
    "model": Role(timeout=300.0, connect=15.0, deadline=None),  # model providers (streams run long)
    "http_tool": Role(timeout=300.0, connect=15.0, deadline=None),  # http tool files, openapi documents
    "oauth": Role(timeout=20.0, connect=10.0, deadline=30.0),  # OAuth token endpoints
    "egress": Role(timeout=60.0, connect=10.0, deadline=None),  # the secrets: proxied endpoint
    "web": Role(timeout=30.0, connect=10.0, deadline=None),  # web fetch/crawl/search and its vendors
}


def _no_cookies() -> http.cookiejar.CookieJar:
    """A jar that accepts no cookie: a shared client must not carry one call's (one tenant's) cookies to the next.

    A CookieJar, not an httpx.Cookies subclass: httpx copies a Cookies it is given into a plain one, but
    keeps a CookieJar as it is, policy and all.
    """
    return http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))


class GuardedClient(httpx.Client):
    """An httpx client whose every URL it cannot read is the guard's sentence (foldrun.net.malformed),
    an httpx.HTTPError like every other failure of a call, never httpx.InvalidURL."""

    def __init__(self, *args, allow_private: bool | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.allow_private = allow_private

    def build_request(self, method: str, url, **kwargs) -> httpx.Request:  # type: ignore[override]
        try:
            request = super().build_request(method, url, **kwargs)
        except (httpx.InvalidURL, UnicodeError):  # UnicodeError: an IDNA label the codec refuses
            raise refusal(str(url), allow_private=self.allow_private) from None
        bad_port = port_problem(request.url.port, request.url.host)
        if bad_port is not None:
            raise bad_port
        return request


_clients: dict[tuple, httpx.Client] = {}
_transports: dict[tuple, GuardedTransport] = {}
_lock = threading.Lock()


def client(role: str, *, deadline: float | None = None, allow_private: bool | None = None) -> httpx.Client:
    """The shared client for `role`. `deadline` overrides the role's whole-request
    deadline; `allow_private` None follows the install's policy at each connect."""
    spec = ROLES.get(role)
    if spec is None:
        raise ValueError(f"{role!r} is not a network role; the roles are {', '.join(ROLES)}")
    whole = spec.deadline if deadline is None else float(deadline)
    key = (role, whole, allow_private)
    with _lock:
        made = _clients.get(key)
        if made is None or made.is_closed:
            per_operation = min(spec.timeout, whole) if whole else spec.timeout
            transport = GuardedTransport(GuardedBackend(allow_private=allow_private), deadline_seconds=whole)
            made = GuardedClient(
                transport=transport,
                trust_env=False,
                allow_private=allow_private,
                follow_redirects=False,
                cookies=_no_cookies(),
                timeout=httpx.Timeout(per_operation, connect=min(spec.connect, per_operation)),
            )
            _clients[key] = made
            _transports[key] = transport
        return made


def transport(role: str, *, deadline: float | None = None, allow_private: bool | None = None) -> GuardedTransport:
    """The transport under `client(role, …)` — the same pool, so the same guard at every connect — for
    GuardedTransport.plain_get, a GET without the client layer's per-request cost (a crawl's pages)."""
    spec = ROLES.get(role)
    whole = (spec.deadline if deadline is None else float(deadline)) if spec is not None else None
    while True:
        client(role, deadline=deadline, allow_private=allow_private)  # made (or kept) with its transport
        with _lock:
            found = _transports.get((role, whole, allow_private))
        if found is not None:  # None only when a policy change forgot the clients in between
            return found


def transport_of(made: httpx.Client) -> GuardedTransport | None:
    """The guarded transport under `made` when it is one of the shared clients here (None for any other client):
    a caller handed a client can take GuardedTransport.plain's path onto the same pool, and so the same guard."""
    with _lock:
        for key, each in _clients.items():
            if each is made:
                return _transports.get(key)
    return None


def _forget_clients() -> None:
    with _lock:
        old = list(_clients.values())
        _clients.clear()
        _transports.clear()
    for each in old:
        try:
            each.close()
        except Exception:  # a client mid-request in another thread closes on its own
            pass


guard.on_configure(_forget_clients)
