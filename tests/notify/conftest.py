"""Loopback stand-ins for what notifications talk to: a webhook receiver and
Resend's email API, each a real HTTP server on 127.0.0.1 in the test."""
from __future__ import annotations

import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core import mail

from library.actions import FileWrite, do_write_files
from notify.outbox import due_mail_ids, send_outgoing


class Receiver:
    """Records every POST (headers and raw body) and answers from a script:
    `answers` is a list of (status, body, delay_seconds), the last repeated."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.answers: list[tuple[int, bytes, float]] = [(200, b"ok", 0.0)]
        self.lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Headers and body go out as two writes; without NODELAY, Nagle
                # and delayed ACKs add 40 ms to every keep-alive request.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, *args) -> None:  # keep test output quiet
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                with receiver.lock:
                    receiver.requests.append({"path": self.path, "headers": dict(self.headers.items()), "body": raw,
                                              "at": time.time()})
                    index = min(len(receiver.requests) - 1, len(receiver.answers) - 1)
                    status, body, delay = receiver.answers[index]
                if delay:
                    time.sleep(delay)
                try:
                    self.send_response(status)
                    if status in (301, 302, 307, 308):
                        self.send_header("Location", "http://127.0.0.1:9/elsewhere")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        class Server(ThreadingHTTPServer):
            # socketserver's default listen backlog is 5: parallel senders would
            # see refused connections a real receiver never gives them.
            request_queue_size = 128

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


class FakeResend:
    """Resend's `POST /emails` as documented: 200 {"id": …} or an error
    object {"statusCode", "name", "message"} in Resend's own words."""

    def __init__(self) -> None:
        self.sent: list[dict] = []
        self.auth: list[str] = []
        self.refuse: tuple[int, str, str] | None = None
        # A script of refusals for the next requests, one each (then `refuse`, then success).
        self.refusals: list[tuple[int, str, str]] = []
        # The Idempotency-Key header of every request, in order.
        self.idempotency_keys: list[str | None] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                data = json.loads(self.rfile.read(length) or b"{}")
                fake.auth.append(self.headers.get("Authorization", ""))
                fake.idempotency_keys.append(self.headers.get("Idempotency-Key"))
                refusal = fake.refusals.pop(0) if fake.refusals else fake.refuse
                if refusal:
                    status, name, message = refusal
                    body = json.dumps({"statusCode": status, "name": name, "message": message}).encode()
                else:
                    status = 200
                    fake.sent.append(data)
                    body = json.dumps({"id": f"re_{len(fake.sent):04d}"}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        class Server(ThreadingHTTPServer):
            # socketserver's default listen backlog is 5: parallel senders would
            # see refused connections a real receiver never gives them.
            request_queue_size = 128

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_resend(settings):
    fake = FakeResend()
    settings.FOLDRUN_RESEND_API_URL = fake.url
    yield fake
    fake.close()


def write_agents_md(workspace, text: str, *, library: bool = False) -> None:
    do_write_files(
        account=workspace.account,
        workspace=None if library else workspace,
        writes=[FileWrite("AGENTS.md", text)],
        kind="push",
    )


@pytest.fixture
def public_url(settings):
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example.com"
    return settings.FOLDRUN_PUBLIC_URL


def send_outbox() -> list:
    """What a worker does with the mail outbox (the `notify.send_mail` task):
    try every mail that is due. Returns the mail sent so far."""
    for pk in due_mail_ids():
        send_outgoing(pk)
    return mail.outbox
