"""Closing a session's record: one place, whoever closes it (a caller, the sweep, the keeper itself)."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from foldrun.celery import send_after_commit

from .models import BrowserSession, SessionStatus, Task, TaskStatus
from .states import move_session

# A task waiting for this session's browser (run_task opened it) ends by why it closed (runs.browser_tasks).
START_SESSION_TASKS = "runs.start_session_tasks"


def tell_waiting_tasks(session_pk: int) -> None:
    """The session went live or closed: if a task waits for it, its worker-side start (or end) is sent."""
    if Task.objects.filter(session_id=session_pk, run__isnull=True, status=TaskStatus.RUNNING).exists():
        send_after_commit(START_SESSION_TASKS, session_pk)


def close_session(session_pk: int, end_reason: str, why: str) -> bool:
    """Move an open session to `closed` with why. False when it had closed already (nothing changes)."""
    with transaction.atomic():
        session = BrowserSession.objects.select_for_update().filter(pk=session_pk).first()
        if session is None or session.status == SessionStatus.CLOSED:
            return False
        fields = move_session(session, SessionStatus.CLOSED, why, end_reason=end_reason)
        session.save(update_fields=fields)
        tell_waiting_tasks(session_pk)
    return True


def touch(session_pk: int) -> None:
    """A caller acted on the session: its idle clock starts again."""
    BrowserSession.objects.filter(pk=session_pk).update(last_activity_at=timezone.now())


def touch_public(public_id: str) -> None:
    """The session by its public id acted on (a task's browse call on it): its idle clock starts again."""
    BrowserSession.objects.filter(public_id=public_id).update(last_activity_at=timezone.now())
