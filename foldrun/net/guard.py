"""The connect-time check: resolve a host once, check every address, hand
back the checked ones to connect to — and the install's one switch.

`configure(allow_private=…)` is called by the host (the Django app reads
FOLDRUN_ALLOW_PRIVATE_URLS once, and again when a test changes it; a laptop
entry point opts in for the user's own machine). Nothing else reads the
setting.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor, TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Callable

import httpx

from .address import is_allowed, literal

Resolver = Callable[[str, int], list[str]]

SENTENCE = "{host} resolves to {address}: private, loopback, link-local and other non-public addresses cannot be called"


class PrivateAddress(httpx.ConnectError):
    """The host is, or resolves to, an address a user-named URL may not reach.

    An httpx error, so a caller catching httpx.HTTPError cannot let it out as a
    crash; raised from inside the connection, it passes through httpx unchanged.
    """

    def __init__(self, host: str, address: str) -> None:
        super().__init__(SENTENCE.format(host=host, address=address))
        self.host = host
        self.address = address


class NoSuchHost(httpx.ConnectError):
    def __init__(self, host: str) -> None:
        super().__init__(f"{host}: the host name does not resolve")
        self.host = host


class ResolveTimeout(httpx.ConnectTimeout):
    def __init__(self, host: str) -> None:
        super().__init__(f"{host}: the host name did not resolve in time")
        self.host = host


# ------------------------------------------------------------------ the deadline of the request under way


class _Deadline(threading.local):
    at: float | None = None


deadline = _Deadline()


def left(timeout: float | None) -> float | None:
    """`timeout` capped at what is left of this thread's request; 0 once it is spent."""
    if deadline.at is None:
        return timeout
    remaining = max(0.0, deadline.at - time.monotonic())
    return remaining if timeout is None else min(timeout, remaining)


# ------------------------------------------------------------------ resolving

_pool_lock = threading.Lock()
_pool: ThreadPoolExecutor | None = None
_pool_pid = 0


def system_resolver(host: str, port: int) -> list[str]:
    """getaddrinfo, within what is left of the request: a resolver that hangs
    cannot hold a request (the lookup thread is left to finish on its own)."""
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool, _pool_pid = ThreadPoolExecutor(max_workers=8, thread_name_prefix="foldrun-dns"), os.getpid()
        future = _pool.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
    try:
        infos = future.result(timeout=left(30.0))
    except FutureTimeout:
        raise ResolveTimeout(host) from None
    except (socket.gaierror, UnicodeError):  # UnicodeError: an empty or over-long label
        raise NoSuchHost(host) from None
    return list(dict.fromkeys(info[4][0] for info in infos))


# ------------------------------------------------------------------ the policy the host passes in


@dataclass(frozen=True)
class Policy:
    allow_private: bool = False
    resolver: Resolver = system_resolver
    ca_files: tuple[str, ...] = ()  # extra certificate authorities to trust beside the usual ones


_policy = Policy()
_listeners: list[Callable[[], None]] = []


def configure(
    *, allow_private: bool | None = None, resolver: Resolver | None = None, ca_files: tuple[str, ...] | None = None
) -> Policy:
    """Set the install's policy (the host's one reading of FOLDRUN_ALLOW_PRIVATE_URLS). Returns the old one."""
    global _policy
    old = _policy
    _policy = Policy(
        old.allow_private if allow_private is None else bool(allow_private),
        old.resolver if resolver is None else resolver,
        old.ca_files if ca_files is None else tuple(str(f) for f in ca_files),
    )
    for listener in list(_listeners):
        listener()  # pooled connections were opened under the old policy
    return old


def on_configure(listener: Callable[[], None]) -> None:
    """Call `listener` whenever the policy changes: whatever holds connections opened under the old one drops them."""
    _listeners.append(listener)


def restore(policy: Policy) -> None:
    configure(allow_private=policy.allow_private, resolver=policy.resolver, ca_files=policy.ca_files)


def policy() -> Policy:
    return _policy


def allows_private() -> bool:
    return _policy.allow_private


def checked_addresses(host: str, port: int, resolve: Resolver | None = None) -> list[str]:
    """Every address `host` resolves to, or PrivateAddress for the first that is not allowed."""
    bare = host.strip("[]")
    ip = literal(bare)
    addresses = [str(ip)] if ip is not None else (resolve or _policy.resolver)(bare, port)
    if not addresses:
        raise NoSuchHost(bare)
    for address in addresses:
        if not is_allowed(address):
            raise PrivateAddress(bare, address)
    return addresses


def connect_addresses(
    host: str, port: int, *, allow_private: bool | None = None, resolve: Resolver | None = None
) -> list[str]:
    """What a connection to host:port may go to: the checked addresses, or the host itself when allowed."""
    allowed = _policy.allow_private if allow_private is None else allow_private
    if not allowed:
        return checked_addresses(host, port, resolve)
    bare = host.strip("[]")
    ip = literal(bare)
    # Resolved here even when allowed: the lookup keeps the request's deadline.
    addresses = [str(ip)] if ip is not None else (resolve or _policy.resolver)(bare, port)
    if not addresses:
        raise NoSuchHost(bare)
    return addresses
