"""A session's status moves only here: starting → live → closed (or starting → closed), each with why."""

from __future__ import annotations

from django.utils import timezone

from .models import BrowserSession, SessionStatus

S = SessionStatus

SESSION_MOVES: dict[str, set[str]] = {
    S.STARTING: {S.LIVE, S.CLOSED},
    S.LIVE: {S.CLOSED},
    S.CLOSED: set(),
}


class IllegalMove(Exception):
    """A status change the table does not allow; the message says which and why it was asked."""


def move_session(session: BrowserSession, to: str, why: str, *, end_reason: str = "") -> list[str]:
    """Set the new status (and why) on the object in hand; return the fields to save with it."""
    current = str(session.status)
    if current == str(to):
        session.status_reason = why[:500] or session.status_reason
        return ["status_reason"]
    if str(to) not in SESSION_MOVES.get(current, set()):
        raise IllegalMove(f"session {session.public_id} cannot move from {current} to {to} ({why or 'no reason'})")
    session.status = to
    session.status_reason = why[:500]
    fields = ["status", "status_reason"]
    now = timezone.now()
    if to == S.LIVE:
        session.live_at = now
        fields.append("live_at")
    if to == S.CLOSED:
        session.closed_at = now
        session.end_reason = end_reason
        session.cdp_endpoint = ""
        session.queued_until = None
        fields += ["closed_at", "end_reason", "cdp_endpoint", "queued_until"]
    return fields
