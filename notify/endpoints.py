"""A workspace's webhook endpoint: its row for the URL its notify: names (started afresh when the URL changes),
switched off when every attempt has failed for FOLDRUN_WEBHOOK_DISABLE_DAYS running, its owner mailed once."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import IntegrityError, transaction

from accounts.models import Membership, Role, Workspace

from .models import Endpoint
from .outbox import queue_mail
from .secrets import fingerprint


def endpoint_state(workspace: Workspace, url: str | None) -> Endpoint | None:
    """The workspace's endpoint row for `url`, started afresh when the URL changed."""
    if not url:
        return None
    print_ = fingerprint(url)
    endpoint = Endpoint.objects.filter(workspace=workspace).first()
    created = False
    if endpoint is None:
        # Two runs ending at once in a new workspace both get here: the
        # savepoint lets the loser read the winner's row instead of failing.
        try:
            with transaction.atomic():
                endpoint = Endpoint.objects.create(workspace=workspace, fingerprint=print_)
                created = True
        except IntegrityError:
            endpoint = Endpoint.objects.get(workspace=workspace)
    if not created and endpoint.fingerprint != print_:
        Endpoint.objects.filter(pk=endpoint.pk).update(
            fingerprint=print_, failing_since=None, disabled_at=None, owner_mailed_at=None, last_success_at=None
        )
        endpoint.refresh_from_db()
    return endpoint


def maybe_switch_off(endpoint_pk: int, workspace: Workspace, now: datetime) -> None:
    """Switch the endpoint off when it has failed for FOLDRUN_WEBHOOK_DISABLE_DAYS
    running, and mail the owner — once, even when two workers give up at once
    (the conditional update lets exactly one through)."""
    cutoff = now - timedelta(days=settings.FOLDRUN_WEBHOOK_DISABLE_DAYS)
    switched = Endpoint.objects.filter(
        pk=endpoint_pk, disabled_at__isnull=True, failing_since__isnull=False, failing_since__lte=cutoff
    ).update(disabled_at=now)
    if not switched:
        return
    mailed = Endpoint.objects.filter(pk=endpoint_pk, owner_mailed_at__isnull=True).update(owner_mailed_at=now)
    if mailed:
        _mail_owner_switched_off(workspace)


def _mail_owner_switched_off(workspace: Workspace) -> None:
    """Written to the mail outbox in the transaction that switched it off."""
    owner = (
        Membership.objects.filter(account=workspace.account, role=Role.OWNER)
        .select_related("user")
        .order_by("created_at", "pk")
        .first()
    )
    if owner is None or not owner.user.email:
        return
    days = settings.FOLDRUN_WEBHOOK_DISABLE_DAYS
    queue_mail(
        to=owner.user.email,
        subject=f"The notification webhook of {workspace.name} has been switched off",
        body=(
            f"Every attempt to deliver {workspace.name}'s notifications to its webhook has failed for {days} days "
            "running, so foldrun has switched the webhook off. Deliveries made while it is off are recorded as "
            "skipped, not attempted.\n\n"
            f"To turn it back on, fix the receiver and press Redeliver on a delivery, or send a test "
            f"(foldrun notify test --to {workspace.name}): the first accepted one switches it on. "
            "Changing the URL in notify: starts it fresh.\n"
        ),
        category="account",
        platform=True,
    )
