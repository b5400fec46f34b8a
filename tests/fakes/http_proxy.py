"""A forward HTTP proxy on loopback that wants basic auth, for the browser's `proxy` setting.

It speaks what an HTTP proxy speaks (RFC 9110 §9.3.6 CONNECT, RFC 9112 §3.2.2 absolute-form requests,
RFC 9110 §11.7 Proxy-Authorization / 407 Proxy Authentication Required), counts what it carried, and keeps
what a request looked like on arrival, so a test can prove the page came through it and which credentials
came with it.
"""

from __future__ import annotations

import base64
import selectors
import socket
import threading
from urllib.parse import urlsplit

from foldrun.net import read_head


class AuthProxy:
    """`AuthProxy(user, password)`; `.url_with(user, password)` is the secret's value; `.carried` what it forwarded."""

    __test__ = False

    def __init__(self, user: str, password: str) -> None:
        self.expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
        self.carried: list[str] = []  # "GET http://…" / "CONNECT host:port" it passed on
        self.refused: list[str] = []  # what it answered 407
        self.heads: list[bytes] = []  # every request head as it arrived (credentials in it)
        self._server = socket.create_server(("127.0.0.1", 0))
        self.port = self._server.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def url_with(self, user: str, password: str) -> str:
        return f"http://{user}:{password}@127.0.0.1:{self.port}"

    def __enter__(self) -> "AuthProxy":
        return self

    def __exit__(self, *exc: object) -> None:
        self._closed = True
        self._server.close()

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
            if (read := read_head(conn)) is None:
                return
            header, rest = read
            self.heads.append(header)
            lines = header.split(b"\r\n")
            method, target, version = lines[0].decode("latin-1").split(" ", 2)
            auth = next(
                (
                    l.split(b":", 1)[1].strip().decode("latin-1")
                    for l in lines[1:]
                    if l.lower().startswith(b"proxy-authorization:")
                ),
                "",
            )
            if auth != self.expected:
                self.refused.append(f"{method} {target}")
                conn.sendall(
                    b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic "
                    b'realm="test"\r\ncontent-length: 0\r\nconnection: close\r\n\r\n'
                )
                return
            self.carried.append(f"{method} {target}")
            if method == "CONNECT":
                host, _, port = target.rpartition(":")
                upstream = socket.create_connection((host.strip("[]"), int(port)), timeout=10)
                conn.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                if rest:
                    upstream.sendall(rest)
            else:
                parts = urlsplit(target)
                upstream = socket.create_connection((parts.hostname, parts.port or 80), timeout=10)
                path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
                kept = [
                    l
                    for l in lines[1:]
                    if not l.lower().startswith((b"proxy-authorization:", b"proxy-connection:", b"connection:"))
                ]
                upstream.sendall(
                    b"\r\n".join([f"{method} {path} {version}".encode("latin-1"), *kept, b"Connection: close"])
                    + b"\r\n\r\n"
                    + rest
                )
            selector = selectors.DefaultSelector()
            selector.register(conn, selectors.EVENT_READ, upstream)
            selector.register(upstream, selectors.EVENT_READ, conn)
            while True:
                events = selector.select(timeout=30)
                if not events:
                    return
                for key, _ in events:
                    data = key.fileobj.recv(65536)
                    if not data:
                        return
                    key.data.sendall(data)
        except OSError:
            return
        finally:
            for sock in (conn, upstream):
                if sock is not None:
                    try:
                        sock.close()
                    except OSError:
                        pass
