"""A webhook receiver on loopback that answers one byte a second — its headers, or its body — for the sender's
8-second cut-off."""

from __future__ import annotations

import time

from tests.fakes.loopback import LoopbackServer, QuietHandler


class Trickler(LoopbackServer):
    """`Trickler("headers")`: a status line, then a header a second; `Trickler("body")`: a whole head promising
    40 bytes, then one a second. Serving once made; `url` is its /hook."""

    def __init__(self, part: str) -> None:
        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.close_connection = True
                try:
                    if part == "headers":
                        self.wfile.write(b"HTTP/1.1 200 OK\r\n")
                        for i in range(20):
                            self.wfile.write(f"X-Slow-{i}: a\r\n".encode())
                            time.sleep(1)
                    else:
                        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n")
                        for _ in range(20):
                            self.wfile.write(b"a")
                            time.sleep(1)
                except OSError:
                    pass

        super().__init__(Handler)
        self.url += "/hook"
        self.start()
