"""Accounts, members and their roles, workspaces, profiles and API tokens."""

from __future__ import annotations

import hashlib
import re
import secrets

from django.conf import settings
from django.db import models
from django.utils import timezone

from foldrun.ids import public_id_field

NAME_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,62}$")
NAME_RULE = "lowercase letters, digits and dashes, starting with a letter or digit, at most 63 characters"


class Role(models.TextChoices):
    OWNER = "owner"
    ADMIN = "admin"
    EDITOR = "editor"
    APPROVER = "approver"
    VIEWER = "viewer"


# Who may change what. Approvers decide gates but do not edit desks.
WRITE_ROLES = {Role.OWNER, Role.ADMIN, Role.EDITOR}
MANAGE_ROLES = {Role.OWNER, Role.ADMIN}
APPROVE_ROLES = {Role.OWNER, Role.ADMIN, Role.EDITOR, Role.APPROVER}


class Account(models.Model):
    public_id = public_id_field("acc")
    name = models.CharField(max_length=120)
    created_at = models.DateTimeField(default=timezone.now)
    # Prepaid platform credits in USD; None means the account is not metered.
    # Each finished run's cost is drawn from it once (see CreditCharge).
    credits_usd = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    low_balance_usd = models.DecimalField(
        max_digits=14, decimal_places=2, default=5, help_text="owners are mailed once when credits fall below this"
    )
    low_balance_warned_at = models.DateTimeField(null=True, blank=True)
    # The account's own search engine: its SearXNG instance. Empty means the install's
    # FOLDRUN_SEARXNG_URL; with neither, `web action=search` says the account has none.
    search_engine_url = models.CharField(
        max_length=500,
        blank=True,
        default="",
        help_text="the account's SearXNG instance, e.g. https://search.example.com",
    )

    def __str__(self) -> str:
        return self.name

    @property
    def effective_search_engine_url(self) -> str:
        from django.conf import settings

        return self.search_engine_url or str(getattr(settings, "FOLDRUN_SEARXNG_URL", "") or "")


class Membership(models.Model):
    public_id = public_id_field("mem")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "user"], name="one_membership_per_user")]

    def __str__(self) -> str:
        return f"{self.user} in {self.account} as {self.role}"

    @property
    def can_write(self) -> bool:
        return self.role in WRITE_ROLES

    @property
    def can_manage(self) -> bool:
        return self.role in MANAGE_ROLES

    @property
    def can_approve(self) -> bool:
        return self.role in APPROVE_ROLES


class Workspace(models.Model):
    """A desk: a folder of agents, flows, tools, skills and knowledge."""

    public_id = public_id_field("ws")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="workspaces")
    name = models.CharField(max_length=63)
    description = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "name"], name="workspace_name_unique_in_account")]
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Profile(models.Model):
    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="profile")
    display_name = models.CharField(max_length=120, blank=True)
    timezone = models.CharField(max_length=64, blank=True)
    # The account the dashboard shows when a person belongs to several.
    current_account = models.ForeignKey(Account, null=True, blank=True, on_delete=models.SET_NULL)

    def __str__(self) -> str:
        return f"profile of {self.user}"


TOKEN_PREFIX = "frt_"


def hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class ApiToken(models.Model):
    """A CLI credential. The raw value is shown once; only its hash is kept."""

    public_id = public_id_field("tok")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True)
    hint = models.CharField(max_length=12, help_text="the first characters, to tell tokens apart")
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name = "API token"
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.hint}…)"

    @staticmethod
    def mint() -> str:
        return TOKEN_PREFIX + secrets.token_urlsafe(30)

    @property
    def is_active(self) -> bool:
        if self.revoked_at is not None:
            return False
        return self.expires_at is None or self.expires_at > timezone.now()


class Invite(models.Model):
    public_id = public_id_field("inv")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="invites")
    email = models.EmailField()
    role = models.CharField(max_length=16, choices=Role.choices, default=Role.VIEWER)
    invited_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL)
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"invite {self.email} to {self.account}"


class CreditCharge(models.Model):
    """One run's cost drawn from its account's credits: one row per run, so a
    run is never charged twice however often its end is announced."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="credit_charges")
    run_public_id = models.CharField(max_length=40, unique=True)
    amount_usd = models.DecimalField(max_digits=14, decimal_places=6)
    balance_after_usd = models.DecimalField(max_digits=14, decimal_places=6)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.run_public_id}: {self.amount_usd}"


class BrowserPodLine(models.Model):
    """One browser pod's seconds and bytes, written once when the pod is reaped: the account's compute and
    network on the ledger (spec tools.md "Where the browser runs": one `browser <pod>` line)."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="browser_pod_lines")
    pod = models.CharField(max_length=80)
    seconds = models.DecimalField(max_digits=14, decimal_places=3)
    bytes = models.BigIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["created_at"]

    def __str__(self) -> str:
        return self.line

    @property
    def line(self) -> str:
        return f"browser {self.pod}: {self.seconds} s, {self.bytes:,} bytes"
