"""A loopback far side that answers every request with what it received (JSON):
the method, path, query, headers and body — so a test can see what went out."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from tests.fakes.loopback import LoopbackServer, QuietHandler


class EchoServer(LoopbackServer):
    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        echo = self

        class Handler(QuietHandler):
            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                parts = urlsplit(self.path)
                record = {
                    "method": self.command,
                    "path": parts.path,
                    "query": dict(parse_qsl(parts.query)),
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": (self.rfile.read(length) if length else b"").decode(),
                }
                echo.seen.append(record)
                data = json.dumps(record).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _any

        super().__init__(Handler)
