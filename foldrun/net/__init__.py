"""foldrun.net — the one place that opens outgoing connections to an address a user named.

    from foldrun import net
    net.client("webhook", deadline=8).post(url, content=body)

Every client here connects through a guard that checks, at connect time, the
address actually connected to (foldrun.net.address.is_allowed): a literal, a
number, an embedded IPv4, a name that resolves — or re-resolves — somewhere
private, and a redirect hop there are all refused with one sentence
(PrivateAddress), unless the host opted in with `configure(allow_private=True)`.
Pure Python (no Django): the laptop CLI uses the same module.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .address import embedded, is_allowed, literal
from .clients import ROLES, client, transport, transport_of
from .errors import describe
from .guard import (
    SENTENCE,
    NoSuchHost,
    Policy,
    PrivateAddress,
    ResolveTimeout,
    Resolver,
    allows_private,
    checked_addresses,
    configure,
    connect_addresses,
    policy,
    restore,
    system_resolver,
)
from .malformed import MalformedURL, refusal, unreadable
from .transport import GuardedBackend, GuardedTransport
from .wire import read_head

__all__ = [
    "ROLES",
    "SENTENCE",
    "GuardedBackend",
    "GuardedTransport",
    "MalformedURL",
    "NoSuchHost",
    "Policy",
    "PrivateAddress",
    "ResolveTimeout",
    "Resolver",
    "allows_private",
    "check_url",
    "checked_addresses",
    "client",
    "configure",
    "connect_addresses",
    "describe",
    "embedded",
    "is_allowed",
    "literal",
    "policy",
    "read_head",
    "refusal",
    "restore",
    "system_resolver",
    "transport",
    "transport_of",
    "unreadable",
]


def check_url(url: str) -> list[str]:
    """A check before any connect, for a sentence at save time (a token endpoint, a webhook URL).

    It does not replace the connect-time check — a name may answer differently later — it only
    lets a form say so early. Returns the checked addresses ([] when the install allows private).
    Raises ValueError for a URL that is not http(s), PrivateAddress / NoSuchHost for its host.
    """
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{url!r} is not a valid URL ({exc})") from None
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError(f"{url!r} is not an http or https URL")
    if allows_private():
        return []
    return checked_addresses(parts.hostname, port or (443 if parts.scheme == "https" else 80))
