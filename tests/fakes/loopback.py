"""What every loopback stand-in shares: a quiet HTTP/1.1 handler and a threaded server on 127.0.0.1.

`QuietHandler` answers HTTP/1.1 (keep-alive, as the clients under test expect), writes nothing to the test
output, and turns Nagle's algorithm off: an answer written in two sends (the headers, then the body) otherwise
waits ~40 ms for the client's delayed ACK before the second goes out, which made every "instant" stand-in
answer take that long. `LoopbackServer` starts and stops one `ThreadingHTTPServer` for a handler class, on a
port the kernel chose; a stand-in subclasses it and passes its handler. A client hanging up mid-answer (a
cut stream, a killed worker: tests do it on purpose) is a normal end of a connection there, said nowhere; any
other error a handler raises is still printed, since that is a bug of the stand-in.
"""

from __future__ import annotations

import socket
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


class QuietHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def log_message(self, *args: Any) -> None:  # keep test output quiet
        pass


# what writing to (or reading from) a socket raises once its client went away
HUNG_UP = (ConnectionResetError, BrokenPipeError)


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], HUNG_UP):
            return
        super().handle_error(request, client_address)


class LoopbackServer:
    """A threaded HTTP server on 127.0.0.1 (or `host`, an IPv6 one too): `url` and `port` once made, serving
    between `start()` and `stop()` (or inside `with`). `backlog` is how many connections may wait to be
    accepted — a page, or senders in parallel, opening many at once need more than socketserver's five."""

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, host: str = "127.0.0.1", backlog: int = 16) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        server_class = type("Server", (QuietServer,), {"request_queue_size": backlog, "address_family": family})
        self.server: ThreadingHTTPServer = server_class((host, 0), handler)
        self.port: int = self.server.server_address[1]
        self.url = f"http://{f'[{host}]' if ':' in host else host}:{self.port}"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    def start(self) -> Self:
        self.thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
