"""A session's short-lived token: derived, never stored, bound to the session and its expiry.

`token = "<expires>.<hmac>"` where the HMAC (SHA-256, keyed by FOLDRUN_LINK_KEY, else SECRET_KEY) covers the
session's id and the expiry; checking it needs only the session id, so nothing is kept to be stolen.
"""
from __future__ import annotations

import base64
import datetime as dt
import hashlib
import hmac

from django.conf import settings
from django.utils import timezone

TOKEN_MINUTES = 15


def _key() -> bytes:
    return (getattr(settings, "FOLDRUN_LINK_KEY", "") or settings.SECRET_KEY).encode()


def _mac(public_id: str, expires: int) -> str:
    digest = hmac.new(_key(), f"browsing.session:{public_id}:{expires}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def session_token(public_id: str, now: dt.datetime | None = None) -> tuple[str, dt.datetime]:
    """(token, when it stops working)."""
    expires_at = (now or timezone.now()).replace(microsecond=0) + dt.timedelta(minutes=TOKEN_MINUTES)
    expires = int(expires_at.timestamp())
    return f"{expires}.{_mac(public_id, expires)}", expires_at


def token_ok(public_id: str, token: str, now: dt.datetime | None = None) -> bool:
    """True for a token of this session that has not expired."""
    expires_text, _, mac = (token or "").partition(".")
    if not expires_text.isdigit() or not mac:
        return False
    if int(expires_text) < (now or timezone.now()).timestamp():
        return False
    return hmac.compare_digest(mac, _mac(public_id, int(expires_text)))
