"""What went wrong on the wire, as a sentence a person reads.

An httpx exception's class name (`ConnectError`, `RemoteProtocolError`) means
nothing to the person reading a run log, a delivery record or a CLI line, and
its text is often an errno string. Every place that reports a failed outgoing
call says it through `describe`, so the same failure reads the same everywhere.
"""

from __future__ import annotations

import httpx

from .guard import NoSuchHost, PrivateAddress, ResolveTimeout
from .malformed import MalformedURL

# Checked in order: subclasses before their parents (ConnectTimeout is a TimeoutException).
_SENTENCES: tuple[tuple[type[BaseException], str], ...] = (
    (httpx.ConnectTimeout, "the connection timed out"),
    (httpx.PoolTimeout, "no connection was free in time"),
    (httpx.TimeoutException, "no answer came in time"),
    (httpx.ProxyError, "the proxy refused the connection"),
    (httpx.ConnectError, "the connection failed"),
    (httpx.RemoteProtocolError, "the server closed the connection before a whole answer"),
    (httpx.LocalProtocolError, "the request could not be sent as written"),
    (httpx.ReadError, "the connection broke while reading the answer"),
    (httpx.WriteError, "the connection broke while sending the request"),
    (httpx.TooManyRedirects, "it redirected too many times"),
    (httpx.DecodingError, "the answer could not be decoded"),
    (httpx.UnsupportedProtocol, "the URL is not an http or https address"),
    (httpx.InvalidURL, "the URL is not valid"),
)

# Words from the operating system worth keeping, said plainly.
_OS_WORDS = (
    ("connection refused", "nothing is listening there (connection refused)"),
    ("connection reset", "the other side reset the connection"),
    ("network is unreachable", "the network is unreachable"),
    ("no route to host", "there is no route to the host"),
    ("certificate verify failed", "its TLS certificate could not be verified"),
    ("wrong version number", "it does not speak TLS on that port"),
)


def describe(exc: BaseException) -> str:
    """A sentence for a failed outgoing call; never a class name or a traceback."""
    if isinstance(exc, (PrivateAddress, NoSuchHost, ResolveTimeout, MalformedURL)):
        return str(exc)  # already the guard's own sentences
    words = str(exc).lower()
    for needle, said in _OS_WORDS:
        if needle in words:
            return said
    for kind, said in _SENTENCES:
        if isinstance(exc, kind):
            return said
    if isinstance(exc, TimeoutError):
        return "no answer came in time"
    if isinstance(exc, OSError):
        return "the connection failed"
    return "the request failed"
