"""A loopback site for the guard tests: it records every request and can redirect."""

from __future__ import annotations

import socket
from urllib.parse import unquote

import pytest

from foldrun import net
from tests.fakes.loopback import LoopbackServer, QuietHandler


class Site(LoopbackServer):
    """Answers 200 `ok` to anything; `/hop?to=URL` answers 302 to URL."""

    def __init__(self, host: str = "127.0.0.1", *, close: bool = False) -> None:
        self.seen: list[str] = []
        self.cookies: list[str | None] = []  # the Cookie header of each request
        ending = "Connection: close\r\n" if close else ""  # close: every request is a new connection
        site = self

        class Handler(QuietHandler):
            def _any(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                self.rfile.read(length)
                site.seen.append(f"{self.command} {self.path}")
                site.cookies.append(self.headers.get("Cookie"))
                if self.path.startswith("/hop?to="):
                    head = (
                        f"HTTP/1.1 302 Found\r\nLocation: {unquote(self.path[len('/hop?to=') :])}\r\n{ending}"
                        "Content-Length: 0\r\n\r\n"
                    )
                else:
                    head = (
                        f"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nSet-Cookie: sid=first-caller; Path=/\r\n"
                        f"{ending}Content-Length: 2\r\n\r\nok"
                    )
                self.wfile.write(head.encode())  # one write: no Nagle wait on keep-alive
                self.close_connection = close

            do_GET = do_POST = do_PUT = do_HEAD = _any

        super().__init__(Handler, host=host, backlog=128)
        self.start()

    def close(self) -> None:
        self.stop()


@pytest.fixture
def site():
    made = Site()
    yield made
    made.close()


@pytest.fixture
def guarded():
    """The install's policy as a server without the opt-in has it; restored after."""
    old = net.configure(allow_private=False)
    yield
    net.restore(old)


def private_urls(port: int) -> dict[str, tuple[str, str]]:
    """Every form of a non-public address → (host the refusal names, address it names)."""
    name = socket.gethostname()
    return {
        f"http://127.0.0.1:{port}/hook": ("127.0.0.1", "127.0.0.1"),
        f"http://localhost:{port}/hook": ("localhost", "127.0.0.1"),  # a name that resolves there
        f"http://{name}:{port}/hook": (name, "127.0.0.1"),  # this machine's own name
        f"http://2130706433:{port}/hook": ("2130706433", "127.0.0.1"),  # decimal
        f"http://0x7f000001:{port}/hook": ("0x7f000001", "127.0.0.1"),  # hex
        f"http://0x7f.1:{port}/hook": ("0x7f.1", "127.0.0.1"),  # short hex
        f"http://017700000001:{port}/hook": ("017700000001", "127.0.0.1"),  # octal
        f"http://[::1]:{port}/hook": ("::1", "::1"),
        f"http://[::ffff:127.0.0.1]:{port}/hook": ("::ffff:127.0.0.1", "::ffff:7f00:1"),  # v4-mapped
        f"http://[::ffff:7f00:1]:{port}/hook": ("::ffff:7f00:1", "::ffff:7f00:1"),
        f"http://[2002:7f00:1::1]:{port}/hook": ("2002:7f00:1::1", "2002:7f00:1::1"),  # 6to4 of 127.0.0.1
        f"http://[64:ff9b::a9fe:a9fe]:{port}/hook": ("64:ff9b::a9fe:a9fe", "64:ff9b::a9fe:a9fe"),  # NAT64
        f"http://0.0.0.0:{port}/hook": ("0.0.0.0", "0.0.0.0"),
        "http://10.20.30.40/hook": ("10.20.30.40", "10.20.30.40"),
        "http://172.16.5.4/hook": ("172.16.5.4", "172.16.5.4"),
        "http://192.168.1.1/hook": ("192.168.1.1", "192.168.1.1"),
        "http://100.64.0.1/hook": ("100.64.0.1", "100.64.0.1"),  # carrier-grade NAT
        "http://169.254.169.254/latest/meta-data": ("169.254.169.254", "169.254.169.254"),
        "http://224.0.0.1/hook": ("224.0.0.1", "224.0.0.1"),  # multicast
        "http://240.0.0.1/hook": ("240.0.0.1", "240.0.0.1"),  # reserved
        "http://[fe80::1]/hook": ("fe80::1", "fe80::1"),
        "http://[fd00::1]/hook": ("fd00::1", "fd00::1"),
        "http://[ff02::1]/hook": ("ff02::1", "ff02::1"),
    }


def refusal(host: str, address: str) -> str:
    return net.SENTENCE.format(host=host, address=address)
