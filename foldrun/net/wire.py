"""The one reading of an HTTP message's head off a socket (RFC 9112 §2.1: start line and fields, then a blank line),
shared by the browser's guard proxy and the test stand-ins that speak HTTP on a raw socket."""

from __future__ import annotations

import socket

END = b"\r\n\r\n"


def read_head(sock: socket.socket, limit: int = 65536) -> tuple[bytes, bytes] | None:
    """(the head without its blank line, the bytes that came after it) read off `sock`.

    None when the peer closed before the blank line, or when more than `limit` bytes came without one
    (a head that long is not an HTTP head worth waiting for)."""
    buffer = b""
    while END not in buffer:
        if len(buffer) > limit:
            return None
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buffer += chunk
    head, _, rest = buffer.partition(END)
    return head, rest
