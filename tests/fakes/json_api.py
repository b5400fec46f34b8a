"""A loopback JSON API for the http tool files and the writes a test counts: it records every request (method,
path, headers, raw body, when it came) and answers 200 `{"ok": true, "path": …}`; a path under /slow answers
after two seconds, for a call that must still be under way."""

from __future__ import annotations

import collections
import json
import time

from tests.fakes.loopback import LoopbackServer, QuietHandler


class JsonApi(LoopbackServer):
    """Serving once made (`url`); `requests` what came, in order; `hits` how many came to each path (a path seen
    twice is a write sent twice). `stop()` (or `server.shutdown()`) ends it."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        api = self

        class Handler(QuietHandler):
            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                api.requests.append(
                    {
                        "method": self.command,
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": body,
                        "at": time.monotonic(),
                    }
                )
                if self.path.startswith("/slow"):
                    time.sleep(2)
                data = json.dumps({"ok": True, "path": self.path}).encode()
                # a caller gone by now (a worker killed mid-call) is the server's to take quietly (loopback.py);
                # what came is recorded all the same
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

        super().__init__(Handler)
        self.start()

    @property
    def hits(self) -> collections.Counter[str]:
        return collections.Counter(request["path"] for request in self.requests)
