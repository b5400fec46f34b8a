"""Closing a session's record: one place, whoever closes it (a caller, the sweep, the keeper itself)."""
from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from .models import BrowserSession, SessionStatus
from .states import move_session


def close_session(session_pk: int, end_reason: str, why: str) -> bool:
    """Move an open session to `closed` with why. False when it had closed already (nothing changes)."""
    with transaction.atomic():
        session = BrowserSession.objects.select_for_update().filter(pk=session_pk).first()
        if session is None or session.status == SessionStatus.CLOSED:
            return False
        fields = move_session(session, SessionStatus.CLOSED, why, end_reason=end_reason)
        session.save(update_fields=fields)
    return True


def touch(session_pk: int) -> None:
    """A caller acted on the session: its idle clock starts again."""
    BrowserSession.objects.filter(pk=session_pk).update(last_activity_at=timezone.now())
