"""The browser's guard: a forward proxy on loopback that every connection of one
browser context goes through, so each one — page, redirect hop, script, image,
fetch, socket — is checked when it is made, on the address it is made to.
"""

from __future__ import annotations

import selectors
import socket
import threading
from dataclasses import dataclass
from typing import Callable
from urllib.parse import urlsplit

from .guard import NoSuchHost, PrivateAddress, ResolveTimeout
from .wire import END, read_head


class Refused(Exception):
    """A host a policy will not let the browser reach (outside allowed_domains), the reason said in it."""


@dataclass(frozen=True)
class Upstream:
    """A user's own HTTP proxy that some hosts are reached through."""

    host: str
    port: int
    authorization: str = ""  # the Proxy-Authorization value, when the proxy wants one
    name: str = ""  # the secret it came from: a refusal names it, never its value


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

    def __init__(
        self,
        policy: Callable[[str, int], list[str]],
        upstream: Callable[[str], "Upstream | None"] | None = None,
        target: Callable[[str], None] | None = None,
        *,
        listener: socket.socket | None = None,
        own: Callable[[str], "tuple[str, int, str] | None"] | None = None,
        on_refusal: Callable[[str, int, str], None] | None = None,
    ) -> None:
        self.policy = policy
        # For some hosts, the user's own proxy: `upstream(host)` names it, and the connection to that proxy
        # (not to the host, which only the proxy reaches) is the one `policy` checks.
        self.upstream = upstream
        # What the host asked for must pass when only the user's proxy reaches it (an allowed_domains list):
        # `target(host)` raises Refused, as `policy` does.
        self.target = target
        # A request meant for the platform's own endpoint (a step's proxied-secrets egress): `own(target)` gives
        # the (address, port, path) it is served at, reached without the policy — it is no user-named address.
        self.own = own
        # Told of each refusal as it happens: (host, port, the guard's sentence).
        self.on_refusal = on_refusal
        self.refusals: list[tuple[str, str]] = []
        if listener is None:  # the browser's: a port on loopback
            listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", 0))
            listener.listen(128)
        self._server = listener
        name = listener.getsockname()
        self.port = name[1] if isinstance(name, tuple) else 0
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
            self._server.shutdown(socket.SHUT_RDWR)  # wakes the accept under way (a close alone does not)
        except OSError:
            pass
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
            if (read := read_head(conn)) is None:
                return
            header, rest = read
            lines = header.split(b"\r\n")
            method, target, version = lines[0].decode("latin-1").split(" ", 2)
            if method == "CONNECT":
                host, _, port_text = target.rpartition(":")
                port = int(port_text)
            else:
                parts = urlsplit(target)
                host, port = parts.hostname or "", parts.port or 80
            host = host.strip("[]")
            mine = self.own(target) if self.own is not None and method != "CONNECT" else None
            if mine is not None:
                upstream = self._connect([mine[0]], mine[1])
                if upstream is None:
                    conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                    return
                kept = [
                    line
                    for line in lines[1:]
                    if not line.lower().startswith((b"proxy-connection:", b"proxy-authorization:", b"connection:"))
                ]
                request = [f"{method} {mine[2]} {version}".encode("latin-1")] + kept + [b"Connection: close"]
                upstream.sendall(b"\r\n".join(request) + b"\r\n\r\n" + rest)
                self._pipe(conn, upstream)
                return
            hop = self.upstream(host) if self.upstream is not None else None
            try:
                if hop is not None and self.target is not None:
                    self.target(host)
                addresses = self.policy(hop.host, hop.port) if hop else self.policy(host, port)
            except (Refused, PrivateAddress, NoSuchHost, ResolveTimeout) as exc:
                self._refuse(conn, host, str(exc), port)
                return
            upstream = self._connect(addresses, hop.port if hop else port)
            if upstream is None and hop is not None:
                self._refuse(conn, host, f"the proxy in the secret {hop.name} ({hop.host}:{hop.port}) did not answer")
                return
            if upstream is None:
                conn.sendall(b"HTTP/1.1 502 Bad Gateway\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                return
            if hop is not None:
                self._through(hop, conn, upstream, method, target, version, lines, rest)
                return
            if method == "CONNECT":
                conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            else:
                parts = urlsplit(target)
                path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                kept = [
                    line
                    for line in lines[1:]
                    if not line.lower().startswith((b"proxy-connection:", b"proxy-authorization:", b"connection:"))
                ]
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

    def _refuse(self, conn: socket.socket, host: str, reason: str, port: int = 0) -> None:
        """403 to the browser, and the reason kept for the call's sentence."""
        self.refusals.append((host, reason))
        if self.on_refusal is not None:
            self.on_refusal(host, port, reason)
        body = f"refused by foldrun: {reason}".encode()
        conn.sendall(
            b"HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\nconnection: close\r\n"
            b"content-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
        )

    def _through(
        self,
        hop: Upstream,
        conn: socket.socket,
        upstream: socket.socket,
        method: str,
        target: str,
        version: str,
        lines: list[bytes],
        rest: bytes,
    ) -> None:
        """The browser's request handed on to the user's proxy (a tunnel asked of it, or the request as is).
        The proxy's own refusal (407, 403, 5xx on a tunnel) becomes a sentence naming its secret, never its
        credentials: the browser never holds them, only this side of the guard does."""
        auth = [f"Proxy-Authorization: {hop.authorization}".encode("latin-1")] if hop.authorization else []
        kept = [
            line for line in lines[1:] if not line.lower().startswith((b"proxy-connection:", b"proxy-authorization:"))
        ]
        if method != "CONNECT":  # one request a connection: a second on it would reach the proxy without auth
            kept = [line for line in kept if not line.lower().startswith(b"connection:")]
            upstream.sendall(b"\r\n".join([lines[0], *kept, *auth, b"Connection: close"]) + b"\r\n\r\n" + rest)
        else:
            upstream.sendall(
                b"\r\n".join(
                    [f"CONNECT {target} {version}".encode("latin-1"), f"Host: {target}".encode("latin-1"), *auth]
                )
                + b"\r\n\r\n"
            )
        head, early = read_head(upstream) or (b"", b"")
        status = (head.split(b" ", 2)[1:2] or [b""])[0].decode("latin-1")
        where = f"the proxy in the secret {hop.name} ({hop.host}:{hop.port})"
        host = target.rpartition(":")[0].strip("[]") if method == "CONNECT" else (urlsplit(target).hostname or "")
        if status == "407":
            self._refuse(conn, host, f"{where} refused its user:pass (HTTP 407 Proxy Authentication Required)")
            return
        if method != "CONNECT":
            if not status:
                self._refuse(conn, host, f"{where} closed the connection without an answer")
                return
            conn.sendall(head + END + early)  # the page's own answer, whatever its status
            self._pipe(conn, upstream)
            return
        if status != "200":
            self._refuse(
                conn,
                host,
                f"{where} would not open a tunnel to {target}" + (f" (HTTP {status})" if status else " (no answer)"),
            )
            return
        conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n" + early)
        if rest:
            upstream.sendall(rest)
        self._pipe(conn, upstream)

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
