"""A URL the HTTP library cannot read, said as the guard would say it.

httpx refuses some hosts outright (`0177.0.0.1`, `127.000.000.001`, `256.0.0.1`, an IDNA label it
cannot encode, a port that is not a number) with `httpx.InvalidURL` — not an `httpx.HTTPError`, so a
caller catching those let it out as a crash. The system's resolver reads `0177.0.0.1` as 127.0.0.1
(octal), so the honest answer to it is the guard's own sentence, not "invalid URL". Every client and
pool in foldrun.net turns such a URL into one of these before anything is sent.
"""

from __future__ import annotations

import re

import httpx

from .address import is_allowed, literal
from .guard import NoSuchHost, PrivateAddress, allows_private

_AUTHORITY = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)")


class MalformedURL(httpx.LocalProtocolError):
    """A URL that cannot be sent as written: its sentence says which part and why."""


def _host_and_port(url: str) -> tuple[str, str]:
    """(host, port text) of `url` read leniently, without the user info; ("", "") when it names none."""
    found = _AUTHORITY.match(url.strip())
    if found is None:
        return "", ""
    authority = found.group(1).rpartition("@")[2]
    if authority.startswith("["):
        host, _, rest = authority.partition("]")
        return host + "]", rest[1:] if rest.startswith(":") else ""
    host, _, port = authority.partition(":")
    return host, port


def _shown(text: str, limit: int = 80) -> str:
    """A piece of a URL fit for a sentence: control characters escaped, long ones cut."""
    shown = "".join(ch if ord(ch) >= 32 and ord(ch) != 127 else f"\\x{ord(ch):02x}" for ch in text)
    return shown if len(shown) <= limit else shown[:limit] + "…"


def port_problem(port: int | None, host: str) -> MalformedURL | None:
    """A sentence for a port no connection can use (httpx reads `:99999` and `:-1` as numbers)."""
    if port is None or 1 <= port <= 65535:
        return None
    return MalformedURL(f"{_shown(host)}:{port}: a port is a number from 1 to 65535")


def refusal(url: str, *, allow_private: bool | None = None) -> httpx.HTTPError:
    """The error to raise for `url`, which the HTTP library could not read.

    A host written as a number (`0177.0.0.1`, `127.000.000.001`) is the address the system's resolver
    would read it as: a non-public one gets the guard's sentence (PrivateAddress). Any other host that
    cannot be read is NoSuchHost, as the resolver would have it; a bad port or a control character
    elsewhere in the URL is a MalformedURL naming it.
    """
    host, port = _host_and_port(url)
    bare = host.strip("[]")
    if not bare:
        return MalformedURL(f"{_shown(url)}: the URL names no host")
    if port and not (port.isdigit() and 1 <= int(port) <= 65535):
        return MalformedURL(f"{_shown(bare)}:{_shown(port, 20)}: a port is a number from 1 to 65535")
    try:
        ip = literal(bare)
    except ValueError:
        ip = None
    allowed = allows_private() if allow_private is None else allow_private
    if ip is not None:
        if not allowed and not is_allowed(ip):
            return PrivateAddress(bare, str(ip))
        return MalformedURL(
            f"{_shown(bare)}: an address written this way is read differently by different programs; write it as {ip}"
        )
    if any(ord(ch) < 32 or ord(ch) == 127 for ch in url):
        return MalformedURL(f"{_shown(url)}: a URL may not hold a control character")
    return NoSuchHost(_shown(bare))


def unreadable(url: str, *, allow_private: bool | None = None) -> httpx.HTTPError | None:
    """The refusal for `url` when the HTTP library could not send it (see `refusal`), else None — for a
    client outside foldrun.net's own (the MCP SDK's), asked before it is handed the URL."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, UnicodeError):
        return refusal(url, allow_private=allow_private)
    return port_problem(parsed.port, parsed.host)
