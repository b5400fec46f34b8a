"""A session as the API and the MCP tools show it (one shape for both)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.conf import settings

from .models import BrowserSession, SessionStatus
from .tokens import session_token


def stamp(value: dt.datetime | None) -> str | None:
    """`2026-01-01T10:00:00.000Z`, the spec's form."""
    if value is None:
        return None
    return value.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.") + f"{value.microsecond // 1000:03d}Z"


def base_url() -> str:
    return (getattr(settings, "FOLDRUN_PUBLIC_URL", None) or "").rstrip("/")


def _root(base: str | None) -> str:
    return base_url() if base is None else base.rstrip("/")


def placement_of(session: BrowserSession) -> str:
    """`pool` when the session holds (or is starting on) a browser place, `queued` while it waits for one."""
    return "queued" if session.queued_until is not None else "pool"


def summary(session: BrowserSession) -> dict[str, Any]:
    """What `list_sessions` shows of each."""
    return {
        "id": session.public_id,
        "status": session.status,
        "engine": session.engine,
        "createdAt": stamp(session.created_at),
        "endedAt": stamp(session.closed_at),
        "endReason": session.end_reason or None,
        "title": session.title,
    }


def record(session: BrowserSession, *, may_act: bool, base: str | None = None) -> dict[str, Any]:
    """The whole record. An open session's has its endpoints; for a member whose role may act (`may_act`) they
    carry a fresh short-lived token, the session's key, and the record has it as `token`. A member who may only
    read gets the status and `endpoints.http`, and neither `token` nor a CDP or live address: the token drives
    the browser (its tabs, its cookies), which is acting."""
    out = summary(session)
    out.update(
        {
            "reason": session.status_reason,
            "liveAt": stamp(session.live_at),
            "lastActivityAt": stamp(session.last_activity_at),
            "placement": placement_of(session),
            "queuedUntil": stamp(session.queued_until),
            "options": session.options,
        }
    )
    if session.options.get("record"):
        out["recording"] = {
            "available": bool(session.recording),
            "bytes": session.recording_bytes,
            "url": f"{_root(base)}/v1/sessions/{session.public_id}/recording",
        }
    if session.status != SessionStatus.CLOSED and not may_act:
        out["endpoints"] = {"http": f"{_root(base)}/v1/sessions/{session.public_id}", "cdp": None, "live": None}
    elif session.status != SessionStatus.CLOSED:
        token, expires = session_token(session.public_id)
        http = f"{_root(base)}/v1/sessions/{session.public_id}"
        root = _root(base)
        cdp = live = None
        if session.cdp_endpoint and root.startswith(("http://", "https://")):
            cdp = f"ws{root[4:]}/v1/sessions/{session.public_id}/cdp?token={token}"
            # The screen's frames, a WebSocket (browsing/live.py); /watch is the page a person reads it from.
            live = f"ws{root[4:]}/v1/sessions/{session.public_id}/live?token={token}"
        out.update(
            {"token": token, "tokenExpiresAt": stamp(expires), "endpoints": {"http": http, "cdp": cdp, "live": live}}
        )
    return out
