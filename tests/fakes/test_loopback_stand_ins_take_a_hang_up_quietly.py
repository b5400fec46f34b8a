"""A client hanging up mid-answer is a normal end for every loopback stand-in (nothing printed); a handler's
own bug still prints its traceback."""

from __future__ import annotations

import socket
import struct
import threading

from tests.fakes.loopback import HUNG_UP, LoopbackServer, QuietHandler

CHUNK = b"x" * 65536


class Answers(QuietHandler):
    """`/long` writes a first chunk, waits for the client to be gone, then writes on; `/bug` raises."""

    client_gone = threading.Event()
    seen: list[BaseException] = []
    threads: list[threading.Thread] = []

    def do_GET(self) -> None:  # noqa: N802
        self.threads.append(threading.current_thread())
        try:
            if self.path == "/bug":
                raise RuntimeError("a bug of the stand-in")
            self.send_response(200)
            self.send_header("Content-Length", str(len(CHUNK) * 1000))
            self.end_headers()
            self.wfile.write(CHUNK)
            self.client_gone.wait(5)
            for _ in range(999):
                self.wfile.write(CHUNK)
        except BaseException as exc:  # noqa: BLE001 - seen, then left to the server as it would be
            self.seen.append(exc)
            raise


def ask(server: LoopbackServer, path: str) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", server.port))
    client.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    return client


def hang_up(client: socket.socket) -> None:
    # linger 0: the close is a reset, as a killed worker's kernel sends, so the next write fails at once
    client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.close()


def served(handler: type[Answers]) -> threading.Thread:
    """The thread that answered, once it has ended (its error handled by the server)."""
    thread = handler.threads[0]
    thread.join(10)
    assert not thread.is_alive()
    return thread


def test_a_client_that_hangs_up_mid_answer_leaves_no_traceback(capfd) -> None:
    handler = type("Long", (Answers,), {"client_gone": threading.Event(), "seen": [], "threads": []})
    with LoopbackServer(handler) as server:
        client = ask(server, "/long")
        assert client.recv(1024).startswith(b"HTTP/1.1 200")
        hang_up(client)
        handler.client_gone.set()
        served(handler)
    assert isinstance(handler.seen[0], HUNG_UP)
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "Error" not in err


def test_a_handler_bug_still_prints_its_traceback(capfd) -> None:
    handler = type("Bug", (Answers,), {"client_gone": threading.Event(), "seen": [], "threads": []})
    with LoopbackServer(handler) as server:
        client = ask(server, "/bug")
        assert client.recv(1024) == b""
        client.close()
        served(handler)
    err = capfd.readouterr().err
    assert "Traceback" in err
    assert "RuntimeError: a bug of the stand-in" in err
