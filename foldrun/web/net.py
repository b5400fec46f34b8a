"""The network underneath `web action=fetch`: a guard at connect time.

A user-supplied URL may not reach loopback, private or link-local addresses
unless the install opts in. Checking the name before the request is not
enough — DNS can answer differently a moment later (rebinding), and a redirect
can point anywhere — so the check lives in the connection itself: the host is
resolved once, **every** address it resolves to is checked, and the socket is
opened to the checked address (TLS still verifies the host name). A redirect
to a private address therefore fails at its own connect, like the first hop.
"""
from __future__ import annotations

import ipaddress
import socket
import threading
from typing import Callable, Iterable
from urllib.parse import urlsplit, urlunsplit

import httpcore
import httpx
from httpcore._backends.sync import SyncBackend

Resolver = Callable[[str, int], list[str]]


class PrivateAddress(Exception):
    """The host resolved to an address a user-supplied URL may not reach."""

    def __init__(self, host: str, address: str) -> None:
        super().__init__(f"{host} resolves to {address}: private, loopback and link-local addresses cannot be called")
        self.host = host
        self.address = address


class NoSuchHost(Exception):
    def __init__(self, host: str) -> None:
        super().__init__(f"{host}: the host name does not resolve")
        self.host = host


def is_forbidden(address: str) -> bool:
    """Loopback, RFC 1918 / ULA, link-local (the metadata endpoint), reserved, unspecified, multicast."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return bool(ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_reserved or ip.is_unspecified
                or ip.is_multicast)


def system_resolver(host: str, port: int) -> list[str]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror:
        raise NoSuchHost(host) from None
    return list(dict.fromkeys(info[4][0] for info in infos))


def checked_addresses(host: str, port: int, resolve: Resolver = system_resolver) -> list[str]:
    """Every address `host` resolves to, or PrivateAddress for the first forbidden one."""
    bare = host.strip("[]")
    try:
        addresses = [str(ipaddress.ip_address(bare))]
    except ValueError:
        addresses = resolve(bare, port)
    if not addresses:
        raise NoSuchHost(host)
    for address in addresses:
        if is_forbidden(address):
            raise PrivateAddress(bare, address)
    return addresses


class GuardedBackend(SyncBackend):
    """httpcore's own socket backend, connecting only to checked addresses."""

    def __init__(self, resolve: Resolver = system_resolver) -> None:
        self.resolve = resolve

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable | None = None) -> httpcore.NetworkStream:
        addresses = checked_addresses(host, port, self.resolve)
        last: Exception | None = None
        for address in addresses:
            try:
                return super().connect_tcp(address, port, timeout=timeout, local_address=local_address,
                                           socket_options=socket_options)
            except httpcore.ConnectError as exc:  # try the next checked address
                last = exc
        assert last is not None
        raise last


_clients: dict[bool, httpx.Client] = {}
_clients_lock = threading.Lock()


def fetch_client(allow_private: bool) -> httpx.Client:
    """One client per process and guard setting (a new client costs ~30 ms: its TLS context).

    No cookie jar (one run's cookies never reach another's fetch), no proxy from
    the environment (a proxy would connect for us and the guard would check the
    proxy, not the page), redirects followed by the caller hop by hop.
    """
    with _clients_lock:
        client = _clients.get(allow_private)
        if client is None:
            transport = httpx.HTTPTransport(trust_env=False, retries=0)
            if not allow_private:
                transport._pool._network_backend = GuardedBackend()  # the pool's own connect, guarded
            client = httpx.Client(transport=transport, trust_env=False, follow_redirects=False,
                                  cookies=_NoCookies())
            _clients[allow_private] = client
        return client


class _NoCookies(httpx.Cookies):
    """A jar that keeps nothing: a shared client must not carry one page's cookies to the next."""

    def extract_cookies(self, response: httpx.Response) -> None:  # noqa: D401
        return None


def scrub_url(url: str) -> str:
    """The URL without `user:password@` — what is echoed to the model, the log and the trace."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
