"""A session's short-lived tokens: derived, never stored, bound to the session, their use and their expiry.

`token = "<expires>.<hmac>"` where the HMAC (SHA-256, keyed by FOLDRUN_LINK_KEY, else SECRET_KEY) covers the
session's id, what the token is for and the expiry; checking it needs only the session id, so nothing is kept
to be stolen. Two uses:

- DRIVE: the session's key (the record's `token`, `endpoints.cdp` and `endpoints.live`): the CDP relay
  (browsing/relay.py) takes only this one. It goes only to a member whose role may act (browsing/records.py).
- WATCH: the dashboard's watch link for a member who may only read: the live view (browsing/live.py) takes it,
  the CDP relay refuses it, so a read-only member sees the screen and never drives the browser.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac

from django.conf import settings
from django.utils import timezone

TOKEN_MINUTES = 15
DRIVE = "drive"
WATCH = "watch"
# What each use's HMAC covers: DRIVE's is the form every token had before WATCH existed.
_LABEL = {DRIVE: "browsing.session", WATCH: "browsing.session.watch"}


def _key() -> bytes:
    return (getattr(settings, "FOLDRUN_LINK_KEY", "") or settings.SECRET_KEY).encode()


def _mac(public_id: str, expires: int, use: str) -> str:
    digest = hmac.new(_key(), f"{_LABEL[use]}:{public_id}:{expires}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def session_token(public_id: str, now: dt.datetime | None = None, *, use: str = DRIVE) -> tuple[str, dt.datetime]:
    """(token, when it stops working); `use` is DRIVE (the session's key) or WATCH (its screen only)."""
    expires_at = (now or timezone.now()).replace(microsecond=0) + dt.timedelta(minutes=TOKEN_MINUTES)
    expires = int(expires_at.timestamp())
    return f"{expires}.{_mac(public_id, expires, use)}", expires_at


def token_ok(public_id: str, token: str, now: dt.datetime | None = None, *, uses: tuple[str, ...] = (DRIVE,)) -> bool:
    """True for a token of this session, made for one of `uses`, that has not expired."""
    expires_text, _, mac = (token or "").partition(".")
    if not expires_text.isdigit() or not mac:
        return False
    if int(expires_text) < (now or timezone.now()).timestamp():
        return False
    return any(hmac.compare_digest(mac, _mac(public_id, int(expires_text), use)) for use in uses)
