"""The network underneath the web tool — foldrun.net, under the names the web code uses.

The guard lives in foldrun.net: every connection a fetch, a crawl, a search
engine call or the browser makes is checked when it is made, on the address it
is made to, so a name that re-resolves and a redirect hop meet the same check
as the first request. What is left here is the web tool's own: `fetch_client`
(the "web" role, redirects followed hop by hop by the caller) and `scrub_url`.
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

import httpx

from foldrun import net
from foldrun.net import GuardedBackend, NoSuchHost, PrivateAddress, checked_addresses, system_resolver
from foldrun.net.proxy import GuardProxy, Refused, Upstream

__all__ = [
    "GuardProxy",
    "GuardedBackend",
    "NoSuchHost",
    "PrivateAddress",
    "Refused",
    "Upstream",
    "checked_addresses",
    "fetch_client",
    "is_forbidden",
    "page_transport",
    "scrub_url",
    "system_resolver",
]


def is_forbidden(address: str) -> bool:
    return not net.is_allowed(address)


def fetch_client(allow_private: bool) -> httpx.Client:
    """The web role's shared client: no cookie jar, no proxy from the environment, no redirect followed."""
    return net.client("web", allow_private=allow_private)


def page_transport(allow_private: bool) -> net.GuardedTransport:
    """The web role's transport, the pool under fetch_client: its plain_get reads a crawl's pages."""
    return net.transport("web", allow_private=allow_private)


def scrub_url(url: str) -> str:
    """The URL without `user:password@` — what is echoed to the model, the log and the trace."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:  # `[::1`, a port that is not one: cut the user info by hand
        scheme, sep, rest = url.partition("://")
        authority, _, tail = rest.partition("/")
        return f"{scheme}{sep}{authority.rpartition('@')[2]}" + (f"/{tail}" if "/" in rest else "")
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{port}" if port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
