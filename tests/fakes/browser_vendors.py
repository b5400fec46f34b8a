"""Loopback stand-ins for the browser vendors of `web.browse: {via: …}`, each handing back a real browser.

`LocalChromium` is the browser every stand-in hands back: Chromium started with
`--remote-debugging-port=0`, its websocket read from `DevToolsActivePort`.
`CdpRelay` is the vendor's websocket host: it records the handshake (path,
query, headers — where the key arrived) and pipes the connection on to that
Chromium, or refuses it with `refuse = 401`. `BrowserVendor` speaks a vendor's
documented session API (Browserbase `POST /v1/sessions` with `X-BB-API-Key` →
`connectUrl`; Steel `POST /v1/sessions` with `steel-api-key` → `websocketUrl`,
`POST /v1/sessions/{id}/release`; Hyperbrowser `POST /api/session` with
`x-api-key` → `wsEndpoint`, `PUT /api/session/{id}/stop`), answers 401 when the
key is not in that vendor's header, and `refuse = 402` (or 401, 429) makes the
next answers a refusal in the vendor's own words.
"""
from __future__ import annotations

import json
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

CHROMIUM = "/usr/bin/chromium"
KEY_HEADERS = {"browserbase": "x-bb-api-key", "steel": "steel-api-key", "hyperbrowser": "x-api-key"}


class LocalChromium:
    """A headless Chromium on loopback, its DevTools on a port it chose itself."""

    def __init__(self) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="vendor-chromium-"))
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.path = ""

    def __enter__(self) -> "LocalChromium":
        self.process = subprocess.Popen(
            [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--remote-debugging-port=0", f"--user-data-dir={self.profile}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        marker = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 30
        while not (marker.is_file() and len(marker.read_text().splitlines()) >= 2):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise RuntimeError("Chromium did not write DevToolsActivePort")
            time.sleep(0.05)
        port, path = marker.read_text().splitlines()[:2]
        self.port, self.path = int(port), path
        return self

    @property
    def ws(self) -> str:
        return f"ws://127.0.0.1:{self.port}{self.path}"

    def __exit__(self, *exc: object) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait(timeout=10)
        shutil.rmtree(self.profile, ignore_errors=True)


class CdpRelay:
    """A vendor's websocket host: records each handshake, then pipes it to the local Chromium."""

    def __init__(self, chromium: LocalChromium) -> None:
        self.chromium = chromium
        self.handshakes: list[dict[str, Any]] = []
        self.refuse: int | None = None
        self.server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        self.url = f"ws://127.0.0.1:{self.port}"
        self.open = 0  # connections piped now (0 once every caller has disconnected)
        self.sockets: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)

    def __enter__(self) -> "CdpRelay":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.close()

    def cut(self) -> None:
        """Drop every piped connection, as a vendor does when a session ends under its caller."""
        for sock in self.sockets:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(4096)
            if not chunk:
                client.close()
                return
            head += chunk
        head, _, rest = head.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        _method, target, _version = lines[0].split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        parts = urlsplit(target)
        self.handshakes.append({"path": parts.path, "query": dict(parse_qsl(parts.query)), "headers": dict(headers)})
        if self.refuse:
            client.sendall(f"HTTP/1.1 {self.refuse} Refused\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".encode())
            client.close()
            return
        upstream = socket.create_connection(("127.0.0.1", self.chromium.port))
        headers["host"] = f"127.0.0.1:{self.chromium.port}"
        headers.pop("authorization", None)
        request = f"GET {self.chromium.path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        upstream.sendall(request.encode("latin-1") + rest)
        self.open += 1
        self.sockets += [client, upstream]

        def pipe(a: socket.socket, b: socket.socket) -> None:
            try:
                while True:
                    data = a.recv(65536)
                    if not data:
                        break
                    b.sendall(data)
            except OSError:
                pass
            finally:
                for s in (a, b):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

        back = threading.Thread(target=pipe, args=(upstream, client), daemon=True)
        back.start()
        pipe(client, upstream)
        back.join(timeout=5)
        self.open -= 1


class BrowserVendor:
    """One vendor's session API on loopback, handing back `relay`'s websocket as its session's."""

    def __init__(self, name: str, relay: CdpRelay) -> None:
        self.name = name
        self.key = f"{name}-key-0123456789"
        self.relay = relay
        self.refuse: int | None = None
        self.seen: list[dict[str, Any]] = []
        self.sessions: dict[str, dict] = {}
        self.made: list[str] = []   # contexts (Browserbase) and profiles (Hyperbrowser) it created
        outer = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                request = {"method": self.command, "path": parts.path, "query": dict(parse_qsl(parts.query)),
                           "headers": {k.lower(): v for k, v in self.headers.items()},
                           "json": json.loads(raw) if raw.strip() else None}
                outer.seen.append(request)
                status, body = outer.respond(request)
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                if status == 429:
                    self.send_header("retry-after", "30")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = _any

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def __enter__(self) -> "BrowserVendor":
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def posted(self, path: str) -> list[dict]:
        return [r["json"] for r in self.seen if r["method"] in ("POST", "PUT") and r["path"] == path]

    def respond(self, request: dict) -> tuple[int, Any]:
        if request["headers"].get(KEY_HEADERS[self.name]) != self.key:
            return 401, {"message": "Unauthorized: invalid API key"}
        if self.refuse == 402:
            return 402, {"message": "Payment required: your plan's browser minutes are used up"}
        if self.refuse == 429:
            return 429, {"message": "Too many concurrent sessions"}
        if self.refuse:
            return self.refuse, {"message": "Refused"}
        return getattr(self, f"_{self.name}")(request)

    def _session(self, **extra: Any) -> str:
        session = f"ses_{uuid.uuid4().hex[:12]}"
        self.sessions[session] = {"status": "running", **extra}
        return session

    def _browserbase(self, request: dict) -> tuple[int, Any]:
        method, path = request["method"], request["path"]
        if (method, path) == ("POST", "/v1/contexts"):
            made = f"ctx_{uuid.uuid4().hex[:8]}"
            self.made.append(made)
            return 201, {"id": made}
        if (method, path) == ("POST", "/v1/sessions"):
            session = self._session()
            return 201, {"id": session, "status": "RUNNING",
                         "connectUrl": f"{self.relay.url}/?apiKey={self.key}&sessionId={session}"}
        if method == "GET" and path.endswith("/debug"):
            session = path.split("/")[3]
            return 200, {"debuggerFullscreenUrl": f"https://www.browserbase.com/devtools-fullscreen/inspector.html?s={session}"}
        return 404, {"message": f"no route {method} {path}"}

    def _steel(self, request: dict) -> tuple[int, Any]:
        method, path = request["method"], request["path"]
        if (method, path) == ("POST", "/v1/sessions"):
            body = request["json"] or {}
            profile = body.get("profileId") or (f"prof_{uuid.uuid4().hex[:8]}" if body.get("persistProfile") else None)
            session = self._session()
            return 200, {"id": session, "websocketUrl": f"{self.relay.url}/?sessionId={session}",
                         "sessionViewerUrl": f"https://app.steel.dev/sessions/{session}",
                         **({"profileId": profile} if profile else {})}
        if method == "POST" and path.startswith("/v1/sessions/") and path.endswith("/release"):
            session = path.split("/")[3]
            if session not in self.sessions:
                return 404, {"message": "no such session"}
            self.sessions[session]["status"] = "released"
            return 200, {"id": session, "status": "released"}
        return 404, {"message": f"no route {method} {path}"}

    def _hyperbrowser(self, request: dict) -> tuple[int, Any]:
        method, path = request["method"], request["path"]
        if (method, path) == ("POST", "/api/profile"):
            made = f"prof_{uuid.uuid4().hex[:8]}"
            self.made.append(made)
            return 200, {"id": made}
        if (method, path) == ("POST", "/api/session"):
            token = uuid.uuid4().hex
            session = self._session(token=token)
            return 200, {"id": session, "status": "active", "wsEndpoint": f"{self.relay.url}/?token={token}",
                         "liveUrl": f"https://app.hyperbrowser.ai/live?token={token}"}
        if method == "PUT" and path.startswith("/api/session/") and path.endswith("/stop"):
            session = path.split("/")[3]
            if session not in self.sessions:
                return 404, {"message": "no such session"}
            self.sessions[session]["status"] = "closed"
            return 200, {"success": True}
        return 404, {"message": f"no route {method} {path}"}
