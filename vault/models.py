"""The vault: secrets sealed at rest, the daily key probe's record, and
dashboard OAuth connects in flight.

A Secret with no workspace is in the account vault; with one, in that
workspace's vault. Values never leave `vault.actions` unsealed except to the
caller that resolves them for a run.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from accounts.models import Account, Workspace
from foldrun.ids import public_id_field
from foldrun.leases import Leased


class SecretKind(models.TextChoices):
    VALUE = "value", "value"
    OAUTH2 = "oauth2", "OAuth2 credential"


class Secret(models.Model):
    public_id = public_id_field("sec")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="secrets")
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="secrets")
    name = models.CharField(max_length=64)
    kind = models.CharField(max_length=16, choices=SecretKind.choices, default=SecretKind.VALUE)
    # Which key sealed it (a fingerprint, never the key) and the sealed bytes.
    key_id = models.CharField(max_length=16)
    sealed = models.BinaryField()
    # The hosts the egress proxy may send this value to (empty: none).
    hosts = models.JSONField(default=list, blank=True)
    # OAuth2: when the cached access token runs out (not secret; lets a reader
    # skip the lock while the token is fresh), and whether it can refresh.
    expires_at = models.DateTimeField(null=True, blank=True)
    refreshable = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["account", "workspace", "name"],
                condition=Q(workspace__isnull=False),
                name="vault_secret_unique_in_workspace",
            ),
            models.UniqueConstraint(
                fields=["account", "name"], condition=Q(workspace__isnull=True), name="vault_secret_unique_in_account"
            ),
        ]
        indexes = [models.Index(fields=["account", "name"])]

    def __str__(self) -> str:
        return f"{self.scope_label}:{self.name}"

    @property
    def scope(self) -> str:
        return "workspace" if self.workspace_id else "account"

    @property
    def scope_label(self) -> str:
        return f"workspace {self.workspace.name}" if self.workspace_id else "account"

    def aad(self) -> bytes:
        """Binds the sealed value to this row: account, vault and name."""
        return f"foldrun-vault/{self.account_id}/{self.workspace_id or '-'}/{self.name}".encode()


class Verdict(models.TextChoices):
    OK = "ok"
    BUSY = "busy"
    CREDENTIAL = "credential"
    NOT_FOUND = "not-found"
    UNREACHABLE = "unreachable"
    PROVIDER_ERROR = "provider-error"


BROKEN_VERDICTS = frozenset({Verdict.CREDENTIAL, Verdict.NOT_FOUND, Verdict.UNREACHABLE, Verdict.PROVIDER_ERROR})


class ProviderCheck(models.Model):
    """The last answer the daily key probe got for one key at one endpoint.
    Keyed per secret: blocks sharing an endpoint and a key value are asked
    once and the verdict is written on each secret's row."""

    public_id = public_id_field("pck")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="provider_checks")
    endpoint = models.CharField(max_length=500)
    format = models.CharField(max_length=16)
    provider = models.CharField(max_length=64, blank=True)
    key_name = models.CharField(max_length=64, blank=True)
    key_scope = models.CharField(max_length=80, blank=True, help_text="account, workspace <name>, or missing")
    model = models.CharField(max_length=200, blank=True)
    used_by = models.JSONField(default=list, blank=True)
    verdict = models.CharField(max_length=16, choices=Verdict.choices, blank=True)
    message = models.CharField(max_length=600, blank=True)
    checked_at = models.DateTimeField(null=True, blank=True)
    broken_since = models.DateTimeField(null=True, blank=True)
    reported_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["account", "endpoint", "key_scope", "key_name"], name="vault_providercheck_unique"
            )
        ]

    def __str__(self) -> str:
        return f"{self.endpoint} [{self.key_name}] {self.verdict or 'never checked'}"


class OAuthPending(models.Model):
    """A dashboard Connect between the consent screen and the callback."""

    state = models.CharField(max_length=64, unique=True)
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    workspace = models.ForeignKey(Workspace, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=64)
    provider = models.CharField(max_length=40)
    token_url = models.URLField(max_length=500)
    redirect_uri = models.URLField(max_length=500)
    key_id = models.CharField(max_length=16)
    sealed = models.BinaryField(help_text="client_id, client_secret and the PKCE verifier, sealed")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    def aad(self) -> bytes:
        return f"foldrun-oauth-pending/{self.account_id}/{self.state}".encode()


class KeyProbe(Leased):
    """An account's daily key probe as a leased piece of work (foldrun/leases.py):
    the worker asking the account's keys holds this row's lease, renewed by a
    heartbeat, through the whole check. A second delivery of the same day's
    task finds it held (or just finished) and asks nothing; a worker that
    lost the lease writes no verdict and sends no mail."""

    account = models.OneToOneField(Account, on_delete=models.CASCADE, related_name="+")
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"key probe of {self.account_id}"


class SiteLogin(models.Model):
    """A login for a site, kept by host (and a namespace, for several logins to one host): what a browser
    session opened with `credentials` fills into a login form on a page of that host. The password is sealed
    with the vault's keys, bound to this row; nothing answers it back."""

    public_id = public_id_field("vlg")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="site_logins")
    host = models.CharField(max_length=253, help_text="a host name, or *.example.com for its subdomains")
    namespace = models.CharField(max_length=64, default="default")
    username = models.CharField(max_length=320)
    key_id = models.CharField(max_length=16)
    sealed_password = models.BinaryField()
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["account", "host", "namespace"], name="vault_site_login_unique")]
        ordering = ["host", "namespace"]

    def __str__(self) -> str:
        return f"{self.host} ({self.namespace}): {self.username}"

    def aad(self) -> bytes:
        """Binds the sealed password to this account, host and namespace."""
        return f"foldrun-vault-login/{self.account_id}/{self.host}/{self.namespace}".encode()
