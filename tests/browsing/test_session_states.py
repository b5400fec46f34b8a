"""A session's record: its public id, and the one way its status moves."""

from __future__ import annotations

import re

import pytest

from browsing.models import BrowserSession, EndReason, SessionStatus
from browsing.states import IllegalMove, move_session


def test_a_session_id_is_sess_us_and_24_characters(account):
    session = BrowserSession.objects.create(account=account)
    assert re.fullmatch(r"sess_us_[0-9a-hjkmnp-tv-z]{24}", session.public_id)


def test_a_session_moves_starting_live_closed_and_says_why(account):
    session = BrowserSession.objects.create(account=account)
    session.save(update_fields=move_session(session, SessionStatus.LIVE, "its browser is up"))
    fields = move_session(session, SessionStatus.CLOSED, "stopped by a caller", end_reason=EndReason.STOPPED)
    session.save(update_fields=fields)
    session.refresh_from_db()
    assert (session.status, session.status_reason, session.end_reason) == ("closed", "stopped by a caller", "stopped")
    assert session.live_at is not None and session.closed_at is not None and session.cdp_endpoint == ""


def test_a_closed_session_never_opens_again(account):
    session = BrowserSession.objects.create(account=account)
    move_session(session, SessionStatus.CLOSED, "its start URL is blocked", end_reason=EndReason.NAVIGATION_BLOCKED)
    with pytest.raises(IllegalMove, match="cannot move from closed to live"):
        move_session(session, SessionStatus.LIVE, "a late keeper")
