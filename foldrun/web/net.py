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


# ------------------------------------------------------------------ the browser's guard

class Refused(Exception):
    """A host the browser may not reach, with the reason said in the refusal."""


class GuardProxy:
    """A forward proxy on loopback that every request of one browser context goes through.

    A route handler in the page sees the first request only, never a redirect's
    next hop, and the browser resolves names itself; so the browser is pointed
    at this proxy (with loopback not bypassed), and each connection — page,
    redirect hop, script, image, fetch, socket — is checked here when it is
    made: `policy(host, port)` returns the checked addresses to connect to, or
    raises Refused / PrivateAddress / NoSuchHost, which answer 403 and are
    recorded in `refusals`.
    """

    def __init__(self, policy: Callable[[str, int], list[str]]) -> None:
        self.policy = policy
        self.refusals: list[tuple[str, str]] = []
        self._server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._server.bind(("127.0.0.1", 0))
        self._server.listen(128)
        self.port = self._server.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._closed = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def playwright_proxy(self) -> dict:
        # `<-loopback>` removes Chromium's implicit bypass, so 127.0.0.1 and localhost come here too.
        return {"server": self.url, "bypass": "<-loopback>"}

    def close(self) -> None:
        self._closed = True
        try:
            self._server.close()
        except OSError:
            pass

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        upstream = None
        try:
            conn.settimeout(30)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                head += chunk
                if len(head) > 65536:
                    return
            header, rest = head.split(b"\r\n\r\n", 1)
            lines = header.split(b"\r\n")
            method, target, version = lines[0].decode("latin-1").split(" ", 2)
            if method == "CONNECT":
                host, _, port_text = target.rpartition(":")
                port = int(port_text)
            else:
                parts = urlsplit(target)
                host, port = parts.hostname or "", parts.port or 80
            host = host.strip("[]")
            try:
                addresses = self.policy(host, port)
            except (Refused, PrivateAddress, NoSuchHost) as exc:
                self.refusals.append((host, str(exc)))
                body = f"refused by foldrun: {exc}".encode()
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n"
                             b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
                return
            upstream = self._connect(addresses, port)
            if upstream is None:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                return
            if method == "CONNECT":
                conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            else:
                parts = urlsplit(target)
                path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                kept = [line for line in lines[1:] if not line.lower().startswith((b"proxy-connection:",
                                                                                   b"proxy-authorization:",
                                                                                   b"connection:"))]
                request = [f"{method} {path} {version}".encode("latin-1")] + kept + [b"Connection: close"]
                upstream.sendall(b"\r\n".join(request) + b"\r\n\r\n" + rest)
            self._pipe(conn, upstream)
        except (OSError, ValueError):
            return
        finally:
            for sock in (conn, upstream):
                if sock is not None:
                    try:
                        sock.close()
                    except OSError:
                        pass

    @staticmethod
    def _connect(addresses: list[str], port: int) -> socket.socket | None:
        for address in addresses:
            try:
                return socket.create_connection((address, port), timeout=30)
            except OSError:
                continue
        return None

    @staticmethod
    def _pipe(a: socket.socket, b: socket.socket) -> None:
        import selectors

        selector = selectors.DefaultSelector()
        selector.register(a, selectors.EVENT_READ, b)
        selector.register(b, selectors.EVENT_READ, a)
        try:
            while True:
                events = selector.select(timeout=60)
                if not events:
                    return
                for key, _ in events:
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    key.data.sendall(data)
        finally:
            selector.close()
