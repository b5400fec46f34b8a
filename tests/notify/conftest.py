"""Loopback stand-ins for what notifications talk to: a webhook receiver and
Resend's email API, each a real HTTP server on 127.0.0.1 in the test."""

from __future__ import annotations

import json
import threading
import time

import pytest
from django.core import mail

from library.actions.writes import FileWrite, do_write_files
from notify.outbox import due_mail_ids, send_outgoing
from tests.fakes.loopback import LoopbackServer, QuietHandler


class Receiver(LoopbackServer):
    """Records every POST (headers and raw body) and answers from a script:
    `answers` is a list of (status, body, delay_seconds), the last repeated."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.answers: list[tuple[int, bytes, float]] = [(200, b"ok", 0.0)]
        self.lock = threading.Lock()
        receiver = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                with receiver.lock:
                    receiver.requests.append(
                        {"path": self.path, "headers": dict(self.headers.items()), "body": raw, "at": time.time()}
                    )
                    index = min(len(receiver.requests) - 1, len(receiver.answers) - 1)
                    status, body, delay = receiver.answers[index]
                if delay:
                    time.sleep(delay)
                # a sender that hung up before the answer is the server's to take quietly (tests/fakes/loopback.py)
                self.send_response(status)
                if status in (301, 302, 307, 308):
                    self.send_header("Location", "http://127.0.0.1:9/elsewhere")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        # Parallel senders would see refused connections past socketserver's backlog of five.
        super().__init__(Handler, backlog=128)
        self.url += "/hook"
        self.start()

    def close(self) -> None:
        self.stop()


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


class FakeResend(LoopbackServer):
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

        class Handler(QuietHandler):
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

        super().__init__(Handler, backlog=128)
        self.url += "/"
        self.start()

    def close(self) -> None:
        self.stop()


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
