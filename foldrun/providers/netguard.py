"""User-supplied URLs (a provider's base_url, an OAuth token endpoint) must
not reach loopback, private or link-local addresses unless the install opts
in (settings.FOLDRUN_ALLOW_PRIVATE_URLS)."""
from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit


class PrivateAddress(ValueError):
    pass


def check_public_url(url: str, *, allow_private: bool) -> None:
    """Raises ValueError (PrivateAddress for a private host) with a sentence."""
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ValueError(f"{url!r} is not an http or https URL")
    if allow_private:
        return
    try:
        infos = socket.getaddrinfo(parts.hostname, parts.port or (443 if parts.scheme == "https" else 80))
    except socket.gaierror:
        raise ValueError(f"{parts.hostname} does not resolve") from None
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if address.is_private or address.is_loopback or address.is_link_local or address.is_reserved:
            raise PrivateAddress(f"{parts.hostname} is a private, loopback or link-local address")
