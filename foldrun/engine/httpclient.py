"""The process's shared httpx client for tool calls (one per process: building one costs ~30 ms)."""
from __future__ import annotations

import http.cookiejar
import threading

import httpx

_SHARED_HTTP: httpx.Client | None = None
_SHARED_LOCK = threading.Lock()


def shared_http() -> httpx.Client:
    """The process's httpx client (thread-safe; no cookies kept between calls)."""
    global _SHARED_HTTP
    with _SHARED_LOCK:
        if _SHARED_HTTP is None or _SHARED_HTTP.is_closed:
            # A jar that accepts no cookie: one tenant's call must never carry another's session.
            jar = http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
            _SHARED_HTTP = httpx.Client(follow_redirects=False, timeout=httpx.Timeout(300.0, connect=15.0),
                                        cookies=jar)
        return _SHARED_HTTP
