"""A browser session: one Chromium of the account's pool, kept open across calls.

The row is the session's whole record. Its keeper (browsing/keeper.py) holds the
lease on it while the browser runs; the status moves only through
`browsing.states.move_session`, which records why.
"""
from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.models import Account
from foldrun.ids import public_id_field

SESSION_PREFIX = "sess_us"


class SessionStatus(models.TextChoices):
    STARTING = "starting", "starting"
    LIVE = "live", "live"
    CLOSED = "closed", "closed"


class EndReason(models.TextChoices):
    """Why a session closed, as a code (the sentence is in `status_reason`)."""

    STOPPED = "stopped", "stopped by a caller"
    IDLE = "idle_timeout", "idle past idleTimeoutMs"
    MAX_DURATION = "max_duration", "open past maxDurationMs"
    KEEPER_LOST = "keeper_lost", "its keeper was lost"
    BROWSER_EXITED = "browser_exited", "the browser exited"
    NAVIGATION_BLOCKED = "navigation_blocked", "the start URL is blocked"
    START_FAILED = "start_failed", "the browser did not start"
    CAPACITY_TIMEOUT = "capacity_timeout", "no browser became free in time"


class BrowserSession(models.Model):
    public_id = public_id_field(SESSION_PREFIX, 24)
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="browser_sessions")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")
    status = models.CharField(max_length=16, choices=SessionStatus.choices, default=SessionStatus.STARTING,
                              db_index=True)
    status_reason = models.CharField(max_length=500, blank=True, help_text="why it last changed status")
    end_reason = models.CharField(max_length=32, choices=EndReason.choices, blank=True)
    engine = models.CharField(max_length=32, default="chromium")
    title = models.CharField(max_length=300, blank=True, help_text="the page's title when last seen")
    # The options as given (checked; header values and anything secret are not kept here, see sealed_headers).
    options = models.JSONField(default=dict, blank=True)
    # Extra request headers per host, sealed with the vault's keys: their values may be a staging gate's secret.
    sealed_headers = models.BinaryField(null=True, blank=True)
    sealed_headers_kid = models.CharField(max_length=32, blank=True)
    # The browser's DevTools endpoint as the workers see it (loopback of the keeper's machine); empty when closed.
    cdp_endpoint = models.CharField(max_length=300, blank=True)
    # queueForCapacity: queued (no keeper yet) until a browser is free or this time passes.
    queued_until = models.DateTimeField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    live_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField(default=timezone.now)
    closed_at = models.DateTimeField(null=True, blank=True)
    # `record`: the video, kept after the session closes (a path under DATA_DIR/recordings).
    recording = models.CharField(max_length=500, blank=True)
    recording_bytes = models.BigIntegerField(default=0)
    # The keeper's lease (foldrun/leases.py).
    lease_holder = models.CharField(max_length=64, blank=True, db_index=True)
    lease_until = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["account", "status"]), models.Index(fields=["account", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.public_id} {self.status}"

    @property
    def is_open(self) -> bool:
        return self.status != SessionStatus.CLOSED

    def headers_aad(self) -> bytes:
        return f"browsing.session:{self.account_id}:{self.public_id}:headers".encode()
