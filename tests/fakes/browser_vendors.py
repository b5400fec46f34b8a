"""Loopback stand-ins for the browser vendors of `web.browse: {via: …}`, each handing back a real browser.

`LocalChromium` is the browser every stand-in hands back: Chromium started with
`--remote-debugging-port=0`, its websocket read from `DevToolsActivePort`.
`CdpRelay` is the vendor's websocket host: it records the handshake (path,
query, headers — where the key arrived) and pipes the connection on to that
Chromium, or refuses it with `refuse = 401` — or, with `refuse_when`, turns down
the handshakes the vendor would (`browserless_account`: Browserless's 401s, a
text/plain body as its server writes one). Given `custom` (Bright Data's own
CDP commands, `BRIGHT_DATA_COMMANDS`), it reads the CDP messages in the
websocket frames, answers those commands itself as the vendor's browser does
(`{"id", "result", "sessionId"}` on the page's flattened session), records
them in `commands`, and passes every other frame on unchanged. `BrowserVendor` speaks a vendor's
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
from pathlib import Path
from typing import Any, Callable
from urllib.parse import parse_qsl, urlsplit

from foldrun.net import read_head
from tests.fakes.loopback import LoopbackServer, QuietHandler

CHROMIUM = "/usr/bin/chromium"
KEY_HEADERS = {"browserbase": "x-bb-api-key", "steel": "steel-api-key", "hyperbrowser": "x-api-key"}
# Bright Data's custom CDP commands (docs.brightdata.com, "Custom CDP Functions") and what each answers: void.
BRIGHT_DATA_COMMANDS: dict[str, dict] = {
    "Captcha.setAutoSolve": {},
    "Unblocker.enableAdBlock": {},
    "Unblocker.disableAdBlock": {},
    "Unblocker.enableCookieBlock": {},
    "Unblocker.disableCookieBlock": {},
}


class LocalChromium:
    """A headless Chromium on loopback, its DevTools on a port it chose itself."""

    def __init__(self) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="vendor-chromium-"))
        self.process: subprocess.Popen | None = None
        self.port = 0
        self.path = ""

    def __enter__(self) -> "LocalChromium":
        self.process = subprocess.Popen(
            [
                CHROMIUM,
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--remote-debugging-port=0",
                f"--user-data-dir={self.profile}",
                "about:blank",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
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

    def __init__(self, chromium: LocalChromium, custom: dict[str, dict] | None = None) -> None:
        self.chromium = chromium
        self.custom = dict(custom or {})  # CDP methods the vendor's browser answers itself → their result
        self.commands: list[tuple[str, dict]] = []  # those methods as they arrived, with their params
        self.methods: list[str] = []  # every CDP method the caller sent, in order (read only with `custom`)
        self.handshakes: list[dict[str, Any]] = []
        self.refuse: int | None = None
        # A handshake → (status, words) to turn it down with, as the vendor does (`browserless_account`), or None.
        self.refuse_when: Callable[[dict[str, Any]], tuple[int, str] | None] | None = None
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
        if (read := read_head(client)) is None:
            client.close()
            return
        head, rest = read
        lines = head.decode("latin-1").split("\r\n")
        _method, target, _version = lines[0].split(" ", 2)
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        parts = urlsplit(target)
        self.handshakes.append({"path": parts.path, "query": dict(parse_qsl(parts.query)), "headers": dict(headers)})
        if self.refuse:
            client.sendall(f"HTTP/1.1 {self.refuse} Refused\r\ncontent-length: 0\r\nconnection: close\r\n\r\n".encode())
            client.close()
            return
        refused = self.refuse_when(self.handshakes[-1]) if self.refuse_when else None
        if refused is not None:
            client.sendall(_upgrade_refused(*refused))
            client.close()
            return
        upstream = socket.create_connection(("127.0.0.1", self.chromium.port))
        headers["host"] = f"127.0.0.1:{self.chromium.port}"
        headers.pop("authorization", None)
        if self.custom:  # the frames are read here, so they must arrive uncompressed
            headers.pop("sec-websocket-extensions", None)
        request = (
            f"GET {self.chromium.path} HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items()) + "\r\n"
        )
        upstream.sendall(request.encode("latin-1"))
        self.open += 1
        self.sockets += [client, upstream]
        if self.custom:
            lock = threading.Lock()  # answers made here and frames from Chromium share the client's socket
            back = threading.Thread(target=self._frames_back, args=(upstream, client, lock), daemon=True)
            back.start()
            self._frames_on(client, upstream, lock, rest)
        else:
            upstream.sendall(rest)
            back = threading.Thread(target=_pipe, args=(upstream, client), daemon=True)
            back.start()
            _pipe(client, upstream)
        back.join(timeout=5)
        self.open -= 1

    def _frames_on(self, client: socket.socket, upstream: socket.socket, lock: threading.Lock, rest: bytes) -> None:
        """The caller's frames: the vendor's own commands answered here, everything else passed on as it came."""
        frames = _Frames(client, rest)
        try:
            while (frame := frames.next()) is not None:
                raw, opcode, payload = frame
                message = _json(payload) if opcode == 1 else None
                if message is not None and isinstance(message.get("method"), str):
                    self.methods.append(message["method"])
                if message is not None and message.get("method") in self.custom:
                    self.commands.append((message["method"], message.get("params") or {}))
                    answer = {"id": message.get("id"), "result": self.custom[message["method"]]}
                    if "sessionId" in message:
                        answer["sessionId"] = message["sessionId"]
                    with lock:
                        client.sendall(_text_frame(json.dumps(answer).encode()))
                    continue
                upstream.sendall(raw)
        except OSError:
            pass
        finally:
            _close(client, upstream)

    def _frames_back(self, upstream: socket.socket, client: socket.socket, lock: threading.Lock) -> None:
        """Chromium's handshake answer, then its frames one whole frame at a time (never split by an answer)."""
        try:
            if (read := read_head(upstream)) is None:
                return
            head, rest = read
            with lock:
                client.sendall(head + b"\r\n\r\n")
            frames = _Frames(upstream, rest)
            while (frame := frames.next()) is not None:
                with lock:
                    client.sendall(frame[0])
        except OSError:
            pass
        finally:
            _close(client, upstream)


class _Frames:
    """Websocket frames read whole off a socket (RFC 6455 §5.2): (the frame's bytes, opcode, unmasked payload)."""

    def __init__(self, sock: socket.socket, pending: bytes = b"") -> None:
        self.sock, self.buffer = sock, bytearray(pending)

    def _have(self, count: int) -> bool:
        while len(self.buffer) < count:
            chunk = self.sock.recv(65536)
            if not chunk:
                return False
            self.buffer += chunk
        return True

    def next(self) -> tuple[bytes, int, bytes] | None:
        if not self._have(2):
            return None
        length, at = self.buffer[1] & 0x7F, 2
        if length in (126, 127):
            size = 2 if length == 126 else 8
            if not self._have(at + size):
                return None
            length, at = int.from_bytes(self.buffer[at : at + size], "big"), at + size
        mask = b""
        if self.buffer[1] & 0x80:
            if not self._have(at + 4):
                return None
            mask, at = bytes(self.buffer[at : at + 4]), at + 4
        if not self._have(at + length):
            return None
        raw, opcode = bytes(self.buffer[: at + length]), self.buffer[0] & 0x0F
        payload = bytes(self.buffer[at : at + length])
        if mask:
            payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        del self.buffer[: at + length]
        return raw, opcode, payload


def browserless_account(token: str, scale: bool = False) -> Callable[[dict[str, Any]], tuple[int, str] | None]:
    """What Browserless's websocket host turns down for one account: a token it does not know, 401 with its server's
    words; a proxy city on a plan under Scale (500k units), 401 too (its REST proxies page, "City-Level Proxying" —
    the page gives the status only, so those words are this stand-in's own)."""

    def refused(handshake: dict[str, Any]) -> tuple[int, str] | None:
        if handshake["query"].get("token") != token:
            return 401, "Bad or missing authentication."
        if "proxyCity" in handshake["query"] and not scale:
            return 401, "City-level proxying needs a Scale plan (500k+ units)."
        return None

    return refused


def _upgrade_refused(status: int, words: str) -> bytes:
    """An upgrade turned down as Browserless writes it: the status line, a text/plain body, then the socket closed."""
    reason = {401: "Unauthorized", 403: "Forbidden", 429: "Too Many Requests"}.get(status, "Refused")
    body = words.encode()
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


def _text_frame(data: bytes) -> bytes:
    """A final, unmasked text frame, as a server sends it."""
    if len(data) < 126:
        return bytes([0x81, len(data)]) + data
    if len(data) < 1 << 16:
        return bytes([0x81, 126]) + len(data).to_bytes(2, "big") + data
    return bytes([0x81, 127]) + len(data).to_bytes(8, "big") + data


def _json(payload: bytes) -> dict | None:
    try:
        message = json.loads(payload)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def _pipe(a: socket.socket, b: socket.socket) -> None:
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        _close(a, b)


def _close(*socks: socket.socket) -> None:
    for sock in socks:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class BrowserVendor(LoopbackServer):
    """One vendor's session API on loopback, handing back `relay`'s websocket as its session's."""

    def __init__(self, name: str, relay: CdpRelay) -> None:
        self.name = name
        self.key = f"{name}-key-0123456789"
        self.relay = relay
        self.refuse: int | None = None
        self.seen: list[dict[str, Any]] = []
        self.sessions: dict[str, dict] = {}
        self.made: list[str] = []  # contexts (Browserbase) and profiles (Hyperbrowser) it created
        outer = self

        class Handler(QuietHandler):
            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                request = {
                    "method": self.command,
                    "path": parts.path,
                    "query": dict(parse_qsl(parts.query)),
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "json": json.loads(raw) if raw.strip() else None,
                }
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

        super().__init__(Handler)

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
            return 201, {
                "id": session,
                "status": "RUNNING",
                "connectUrl": f"{self.relay.url}/?apiKey={self.key}&sessionId={session}",
            }
        if method == "GET" and path.endswith("/debug"):
            session = path.split("/")[3]
            return 200, {
                "debuggerFullscreenUrl": f"https://www.browserbase.com/devtools-fullscreen/inspector.html?s={session}"
            }
        return 404, {"message": f"no route {method} {path}"}

    def _steel(self, request: dict) -> tuple[int, Any]:
        method, path = request["method"], request["path"]
        if (method, path) == ("POST", "/v1/sessions"):
            body = request["json"] or {}
            profile = body.get("profileId") or (f"prof_{uuid.uuid4().hex[:8]}" if body.get("persistProfile") else None)
            session = self._session()
            return 200, {
                "id": session,
                "websocketUrl": f"{self.relay.url}/?sessionId={session}",
                "sessionViewerUrl": f"https://app.steel.dev/sessions/{session}",
                **({"profileId": profile} if profile else {}),
            }
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
            return 200, {
                "id": session,
                "status": "active",
                "wsEndpoint": f"{self.relay.url}/?token={token}",
                "liveUrl": f"https://app.hyperbrowser.ai/live?token={token}",
            }
        if method == "PUT" and path.startswith("/api/session/") and path.endswith("/stop"):
            session = path.split("/")[3]
            if session not in self.sessions:
                return 404, {"message": "no such session"}
            self.sessions[session]["status"] = "closed"
            return 200, {"success": True}
        return 404, {"message": f"no route {method} {path}"}
