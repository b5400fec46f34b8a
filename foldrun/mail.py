"""Mail asked for by an app below notify: an invite and a low-balance warning
(accounts), a broken provider key (vault).

notify owns mail — the platform's sender, the preferences asked at send time,
the outbox and the task that drains it — and sits at the top of the apps
(`.importlinter`'s `apps-one-way`), so the apps below it never import it: they
call `send_platform_mail` (sent now) or `queue_platform_mail` (written into
the outbox in the caller's transaction, sent by a worker once it commits)
here, and notify answers the `platform_mail` signal (notify/receivers.py).
Without a receiver (notify not installed) the mail goes through Django's own
`send_mail` at once.
"""

from __future__ import annotations

from django.core.mail import send_mail
from django.dispatch import Signal

# Sent with to, subject, body, category and queued (True: into the outbox, in the caller's transaction).
platform_mail = Signal()


def _ask(*, to: str, subject: str, body: str, category: str, queued: bool) -> None:
    if not platform_mail.has_listeners():
        send_mail(subject, body, None, [to])
        return
    platform_mail.send(sender=None, to=to, subject=subject, body=body, category=category, queued=queued)


def send_platform_mail(*, to: str, subject: str, body: str, category: str) -> None:
    """The platform's own mail, sent now (an invite: the person is waiting for it)."""
    _ask(to=to, subject=subject, body=body, category=category, queued=False)


def queue_platform_mail(*, to: str, subject: str, body: str, category: str) -> None:
    """The platform's own mail into the outbox, committed with the caller's transaction or not at all."""
    _ask(to=to, subject=subject, body=body, category=category, queued=True)
