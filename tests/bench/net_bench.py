"""foldrun.net's guarded client against a plain shared httpx client, to the same loopback receiver, in one run.

1. Keep-alive requests: N GETs on one connection (the guard runs only at connect). Target: at most 1.10×.
2. New connections: N GETs each on a fresh connection (`Connection: close`), so every request resolves,
   checks and connects. Target: at most 1.5×.

    .venv/bin/python tests/bench/net_bench.py [--requests 400]

Prints one line per figure; exits non-zero when a ratio misses its target.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import httpx  # noqa: E402

from foldrun import net  # noqa: E402


def receiver() -> int:
    """A loopback receiver answering each request in one write (no Nagle wait)."""
    server = socket.create_server(("127.0.0.1", 0), backlog=128)

    def serve(conn: socket.socket) -> None:
        with conn:
            buffer = b""
            while True:
                data = conn.recv(65536)
                if not data:
                    return
                buffer += data
                while b"\r\n\r\n" in buffer:
                    head, buffer = buffer.split(b"\r\n\r\n", 1)
                    close = b"connection: close" in head.lower()
                    conn.sendall(
                        b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n"
                        + (b"Connection: close\r\n" if close else b"")
                        + b"\r\nok"
                    )
                    if close:
                        return

    def accept() -> None:
        while True:
            conn, _ = server.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    return server.getsockname()[1]


def timed(client: httpx.Client, url: str, n: int, headers: dict) -> list[float]:
    times = []
    for _ in range(n):
        started = time.perf_counter()
        client.get(url, headers=headers).read()
        times.append(time.perf_counter() - started)
    return times


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=400)
    n = parser.parse_args().requests
    url = f"http://localhost:{receiver()}/x"
    net.configure(allow_private=True)  # the receiver is on loopback; the lookup and the check still run
    plain = httpx.Client(trust_env=False)
    guarded = net.client("web")
    failed = False
    for label, headers, target in (("keep-alive", {}, 1.10), ("new connection each", {"Connection": "close"}, 1.5)):
        timed(plain, url, 20, headers), timed(guarded, url, 20, headers)  # warm up
        base = statistics.median(timed(plain, url, n, headers))
        ours = statistics.median(timed(guarded, url, n, headers))
        ratio = ours / base
        failed |= ratio > target
        print(
            f"{label}: plain httpx p50 {base * 1e3:.3f} ms, foldrun.net p50 {ours * 1e3:.3f} ms, "
            f"ratio {ratio:.2f}× (target ≤ {target:.2f}×)"
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
