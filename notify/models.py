"""Notification records: webhook deliveries and their attempts, the state of a
workspace's webhook endpoint, mail preferences, and the marks that make an
alarm fire once per occurrence.

A webhook URL can itself be a secret (a Slack incoming-webhook URL is a
credential), so no row here keeps a URL: an endpoint is known by a keyed
fingerprint of it, and the URL is read from `notify:` at each attempt.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from accounts.models import Account, Workspace
from foldrun.ids import public_id_field
from foldrun.leases import Leased

from .webhook import RESPONSE_EXCERPT_CHARS

# The spec's events live with the pure parser, shared with `foldrun check`.
from foldrun.contract.rules.notify import DEFAULT_EVENTS, EVENTS, FOLLOWS_FAILED  # noqa: E402,F401

# Attempt n+1 is due this many seconds after attempt n failed (n = 1..5).
RETRY_DELAYS = (60, 5 * 60, 30 * 60, 2 * 60 * 60, 6 * 60 * 60)
MAX_ATTEMPTS = len(RETRY_DELAYS) + 1
LOG_RETENTION_DAYS = 30


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    SKIPPED = "skipped"


class Delivery(Leased):
    """One webhook send: recorded before its first attempt, then retried on
    the backoff until it succeeds or the sixth attempt fails.

    `body` is the exact text first sent; every retry and redelivery sends
    those same bytes. `next_attempt_at` is the durable schedule: the beat
    sweep enqueues every pending delivery whose time has come and whose lease
    has run out, and a worker claims one with a conditional update.
    """

    public_id = public_id_field("dlv")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="notify_deliveries")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="notify_deliveries")
    event = models.CharField(max_length=24)
    run_public_id = models.CharField(max_length=40, blank=True, db_index=True)
    body = models.TextField()
    status = models.CharField(max_length=12, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts_made = models.PositiveIntegerField(default=0)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    # lease_holder, lease_until (Leased): the lease of the attempt in flight. The
    # holder's heartbeat renews it; an expired lease on a pending delivery means
    # its worker was lost (the sweep records that).
    endpoint_fingerprint = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "deliveries"
        ordering = ["-created_at", "-pk"]
        indexes = [
            models.Index(fields=["status", "next_attempt_at"], name="notify_dlv_due"),
            models.Index(fields=["workspace", "-created_at"], name="notify_dlv_ws"),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} {self.event} {self.status}"


class Attempt(models.Model):
    """One POST of a delivery: what came back, how long it took, or the error."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="attempts")
    number = models.PositiveIntegerField()
    redelivery = models.BooleanField(default=False)
    started_at = models.DateTimeField(default=timezone.now)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    duration_ms = models.PositiveIntegerField(default=0)
    response_excerpt = models.CharField(max_length=RESPONSE_EXCERPT_CHARS, blank=True)
    error = models.CharField(max_length=500, blank=True)
    ok = models.BooleanField(default=False)
    # The worker died while this attempt was in flight: what the receiver got is unknown.
    lost = models.BooleanField(default=False)

    class Meta:
        ordering = ["delivery", "number"]
        constraints = [models.UniqueConstraint(fields=["delivery", "number"], name="one_attempt_number_per_delivery")]

    def __str__(self) -> str:
        return f"attempt {self.number} of {self.delivery.public_id}"


class Endpoint(models.Model):
    """A workspace's webhook destination as the platform has experienced it.

    `failing_since` is the first failure of the current unbroken run of
    failures (cleared by any accepted attempt). A different URL fingerprint
    starts the row afresh.
    """

    workspace = models.OneToOneField(Workspace, on_delete=models.CASCADE, related_name="notify_endpoint")
    fingerprint = models.CharField(max_length=64)
    failing_since = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    owner_mailed_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"endpoint of {self.workspace}"


class SigningKeyState(models.Model):
    """Which signing secret value a workspace's deliveries were last signed
    with, so a rotation can sign under the old and the new key for a day.

    Values are kept only encrypted with the install's vault keys.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=100)
    fingerprint = models.CharField(max_length=64)
    current_ciphertext = models.TextField()
    previous_ciphertext = models.TextField(blank=True)
    rotated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "name"], name="one_signing_state_per_name")]


class Category(models.TextChoices):
    SECURITY = "security"
    INVITES = "invites"
    BILLING = "billing"
    ACCOUNT = "account"
    RUN_ALERTS = "run-alerts"
    APPROVALS = "approvals"
    LOW_BALANCE = "low-balance"
    PRODUCT_UPDATES = "product-updates"


class Preference(models.Model):
    """A person's choice for one category, optionally for one workspace.

    Keyed by address, not by user: a shared inbox reached by `notify: email`
    can unsubscribe without an account, and a person's Profile shows the
    choices made for their own address.
    """

    email = models.EmailField(db_index=True)
    category = models.CharField(max_length=20, choices=Category.choices)
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    enabled = models.BooleanField(default=True)
    via = models.CharField(max_length=12, default="profile", help_text="profile | unsubscribe | cli")
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["email", "category", "workspace"], name="one_pref_per_ws"),
            models.UniqueConstraint(
                fields=["email", "category"], condition=models.Q(workspace__isnull=True), name="one_pref_per_category"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.email} {self.category} {'on' if self.enabled else 'off'}"


class Mark(models.Model):
    """An alarm already sent for one occurrence (`quarantined`, `sla`, `budget`).

    The unique key is what makes "once per occurrence" hold when two workers
    notice the same thing at once: the second insert fails.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    event = models.CharField(max_length=24)
    key = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "event", "key"], name="one_mark_per_occurrence")]

    def __str__(self) -> str:
        return f"{self.workspace} {self.event} {self.key}"


def user_email(user) -> str:
    return (getattr(user, "email", "") or "").strip().lower()


class MailSend(models.Model):
    """One notification mail and what the provider answered: a refusal is
    kept in its own words, so silence never looks like success. Addresses
    only — never a body, a key or a link."""

    account = models.ForeignKey(Account, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    to = models.EmailField()
    category = models.CharField(max_length=20)
    subject = models.CharField(max_length=300)
    provider = models.CharField(max_length=12)
    sent = models.BooleanField(default=False)
    skipped = models.BooleanField(default=False)
    message = models.CharField(max_length=500, blank=True)
    status_code = models.PositiveIntegerField(null=True, blank=True)
    # The outbox row this try was for (none for a mail sent at once, e.g. the test button).
    outgoing = models.ForeignKey("OutgoingMail", null=True, blank=True, on_delete=models.SET_NULL, related_name="sends")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.category} mail to {self.to}: {'sent' if self.sent else 'not sent'}"


class MailStatus(models.TextChoices):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"
    SKIPPED = "skipped"


class OutgoingMail(Leased):
    """The mail outbox: one notification mail, written in the transaction of
    what caused it (a run's change, an endpoint switched off, a broken key),
    then sent by a task that holds the row's lease, retried on the provider's
    passing faults and recorded (each try is a MailSend).

    `body` is kept only until the mail is finished (it can carry approve and
    reject links); the record of what happened stays in MailSend.
    """

    public_id = public_id_field("mail")
    account = models.ForeignKey(Account, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    platform = models.BooleanField(default=False)
    to = models.EmailField()
    category = models.CharField(max_length=20)
    subject = models.CharField(max_length=300)
    body = models.TextField(blank=True)
    status = models.CharField(max_length=12, choices=MailStatus.choices, default=MailStatus.PENDING)
    tries = models.PositiveIntegerField(default=0)
    next_try_at = models.DateTimeField(null=True, blank=True)
    message = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["status", "next_try_at"], name="notify_mail_due")]

    def __str__(self) -> str:
        return f"{self.public_id} {self.category} to {self.to}: {self.status}"


class Kick(models.Model):
    """Whether a drain of due deliveries is already on its way to a worker.

    New deliveries set `pending` with a conditional update and queue a drain
    only when it was not set: a burst of a thousand deliveries is one message,
    not a thousand. A drain clears it before it starts claiming, so a
    delivery recorded after that queues the next drain; the beat sweep clears
    it too, so a drain lost with its worker holds nothing up for long.
    """

    name = models.CharField(max_length=40, unique=True)
    pending = models.BooleanField(default=False)

    def __str__(self) -> str:
        return f"{self.name} {'pending' if self.pending else 'idle'}"
