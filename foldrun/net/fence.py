"""A step's programs' one way out: the egress proxy on the worker's side of a Unix socket.

A program of a real run starts in a network namespace of its own, with nothing in it but loopback. There a
small forwarder (`FORWARDER`, started by the program's shell prologue before the program) listens on
127.0.0.1:`PORT` and relays each connection to a Unix socket in the step's own folder — a Unix socket is a
file, so it crosses network namespaces, and the step's mount namespace shows it to that step's programs
only. On the worker's side `ProgramFence` serves that socket with the guard proxy: an absolute-URI HTTP
request or a CONNECT tunnel, each connected only where the install's policy allows (public addresses unless
FOLDRUN_ALLOW_PRIVATE_URLS opted in), the address checked when the connection is made. A request for the
step's proxied-secrets egress (`FOLDRUN_EGRESS`) is handed to it. Everything else a program tries — a raw
socket to 127.0.0.1:6379, 10.0.0.1, 169.254.169.254 — has no route at all.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

from .guard import connect_addresses
from .proxy import GuardProxy, Refused

PORT = 3128  # inside the program's namespace, where its HTTP_PROXY points
SOCKET_NAME = "egress.sock"

# Started by the program's prologue with (socket path, port, the pid to outlive no longer). It brings the
# namespace's loopback up, listens, and only then forks and lets the prologue go on: its exit status says
# whether the way out is there. The Unix socket is reached through /proc/self/fd/<folder>/<name>, so a
# sandbox path longer than a socket address may be (108 bytes) does not matter.
FORWARDER = r"""
import fcntl, os, socket, struct, sys, threading
path, port, watch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
flags = struct.unpack("16sH14x", fcntl.ioctl(probe, 0x8913, struct.pack("16sH14x", b"lo", 0)))[1]
fcntl.ioctl(probe, 0x8914, struct.pack("16sH14x", b"lo", flags | 1))
probe.close()
folder = os.open(os.path.dirname(path), os.O_RDONLY)
target = "/proc/self/fd/%d/%s" % (folder, os.path.basename(path))
server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", port))
server.listen(64)
if os.fork():
    os._exit(0)
server.settimeout(1.0)
def relay(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    finally:
        try:
            b.shutdown(socket.SHUT_WR)
        except OSError:
            pass
def serve(conn):
    up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        up.connect(target)
    except OSError:
        conn.close()
        return
    back = threading.Thread(target=relay, args=(up, conn), daemon=True)
    back.start()
    relay(conn, up)
    back.join()
    conn.close()
    up.close()
while True:
    try:
        conn, _ = server.accept()
    except socket.timeout:
        try:
            os.kill(watch, 0)
        except ProcessLookupError:
            os._exit(0)
        except PermissionError:
            pass
        continue
    except OSError:
        os._exit(0)
    conn.settimeout(None)
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
"""


class ProgramFence:
    """The worker's side of one step's way out: a guard proxy on `folder/egress.sock`."""

    def __init__(self, folder: Path, *, allow_private: bool) -> None:
        self.allow_private = allow_private
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / SOCKET_NAME
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass
        self._lock = threading.Lock()
        self._lines: list[str] = []
        self._egress: tuple[str, int] | None = None
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:  # through the folder's descriptor: the socket's own path may be longer than an address holds
            listener.bind(f"/proc/self/fd/{handle}/{SOCKET_NAME}")
        except OSError:
            listener.close()
            raise
        finally:
            os.close(handle)
        listener.listen(64)
        self.proxy = GuardProxy(self._policy, listener=listener, own=self._own, on_refusal=self._refused)

    # -- what a program is given ------------------------------------------------------------
    def env(self) -> dict[str, str]:
        """The program's proxy settings, and what its prologue needs to start the forwarder."""
        url = f"http://127.0.0.1:{PORT}"
        return {
            "HTTP_PROXY": url,
            "HTTPS_PROXY": url,
            "http_proxy": url,
            "https_proxy": url,
            "NO_PROXY": "",
            "no_proxy": "",
            "FOLDRUN_FENCE": FORWARDER,
            "FOLDRUN_FENCE_PYTHON": sys.executable,
            "FOLDRUN_FENCE_SOCKET": str(self.path),
            "FOLDRUN_FENCE_PORT": str(PORT),
        }

    def reach_egress(self, url: str) -> str:
        """The step's proxied-secrets egress (a loopback URL on the worker) as a fenced program reaches it."""
        parts = urlsplit(url)
        self._egress = (parts.hostname or "127.0.0.1", parts.port or 80)
        return f"http://127.0.0.1:{PORT}{parts.path}"

    def drain(self) -> list[str]:
        """The refusal sentences since the last call (the proxy's threads add them; the step writes them)."""
        with self._lock:
            lines, self._lines = self._lines, []
        return lines

    def close(self) -> None:
        self.proxy.close()
        try:
            self.path.unlink()
        except OSError:
            pass

    # -- the proxy's hooks ------------------------------------------------------------------------
    def _policy(self, host: str, port: int) -> list[str]:
        if not host:
            raise Refused("send each request through HTTP_PROXY with its absolute URL (or CONNECT for TLS)")
        return connect_addresses(host, port, allow_private=self.allow_private)

    def _own(self, target: str) -> tuple[str, int, str] | None:
        """A request for FOLDRUN_EGRESS: sent to the proxy (absolute form) or straight to it (origin form)."""
        if self._egress is None:
            return None
        if target.startswith("/"):
            return (*self._egress, target)
        try:
            parts = urlsplit(target)
            port = parts.port
        except ValueError:
            return None
        if parts.scheme == "http" and parts.hostname in {"127.0.0.1", "localhost"} and port == PORT:
            return (*self._egress, (parts.path or "/") + (f"?{parts.query}" if parts.query else ""))
        return None

    def _refused(self, host: str, port: int, reason: str) -> None:
        where = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
        line = (
            f"a program's connection to {where} was refused: {reason}"
            if host
            else f"a program's request to the egress proxy was refused: {reason}"
        )
        with self._lock:
            self._lines.append(line)
