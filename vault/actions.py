"""Everything that reads or changes the vault.

`check_*` validates, scopes and locks, then calls `do_*`, which changes data
in one transaction. Values leave this module unsealed only through
`reveal`, `resolve_secrets` and `access_token_for` — the run's own callers.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from accounts.models import Account, Membership, Workspace
from foldrun.api import ApiError, NotFound
from vault import oauth, rotation
from vault.boundary import Grant
from vault.crypto import UndecryptableSecret, open_sealed, seal
from vault.keys import vault_keys
from vault.models import Secret, SecretKind

NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
NAME_SENTENCE = (
    "A secret's name is UPPER_SNAKE_CASE — capital letters, digits and underscores, starting with a "
    "letter, at most 64 characters (like OPENAI_API_KEY)."
)
MAX_VALUE_BYTES = 64 * 1024
RFC3339 = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})\Z"
)
HOST_RE = re.compile(r"^(\*\.)?[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*(:\d{1,5})?$")
# Refresh this long before the provider's stated expiry, so a token is never
# handed to a request that outlives it.
REFRESH_MARGIN = dt.timedelta(seconds=120)
OAUTH_FIELDS = ("token_url", "client_id", "client_secret", "refresh_token", "access_token", "expires_at", "scope")


class OAuthError(oauth.OAuthError):
    pass


# ------------------------------------------------------------------ sealing


def _seal_into(row: Secret | Any, plaintext: str) -> None:
    row.key_id, row.sealed = seal(vault_keys(), plaintext.encode(), row.aad())


def reveal(secret: Secret) -> str:
    """The stored plaintext (for an OAuth2 secret, its JSON recipe). Raises
    UndecryptableSecret naming the secret when no configured key opens it."""
    return open_sealed(vault_keys(), secret.key_id, bytes(secret.sealed), secret.aad(), name=secret.name).decode()


def _recipe(secret: Secret) -> dict:
    return json.loads(reveal(secret))


# ------------------------------------------------------------------ validation


def validate_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RE.match(name):
        raise ApiError(NAME_SENTENCE, code="invalid_name", details={"field": "name"})
    return name


def _validate_value(value: Any) -> str:
    if not isinstance(value, str) or value == "":
        raise ApiError(
            "value: give the secret's value as a non-empty string.", code="invalid_value", details={"field": "value"}
        )
    if len(value.encode()) > MAX_VALUE_BYTES:
        raise ApiError("value: a secret is at most 64 KiB.", code="invalid_value", details={"field": "value"})
    return value


def _validate_hosts(hosts: Any) -> list[str]:
    if hosts is None:
        return []
    if isinstance(hosts, str):
        hosts = [h for h in hosts.replace(",", " ").split() if h]
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise ApiError(
            'hosts: give a list of host names, like ["api.example.com"].',
            code="invalid_hosts",
            details={"field": "hosts"},
        )
    cleaned = [h.strip().lower() for h in hosts]
    for host in cleaned:
        if not HOST_RE.match(host):
            raise ApiError(
                f"hosts: '{host}' is not a host name (no scheme or path: api.example.com).",
                code="invalid_hosts",
                details={"field": "hosts"},
            )
    return cleaned


def _validate_recipe(recipe: Any) -> dict:
    if not isinstance(recipe, Mapping):
        raise ApiError(
            "oauth: give the credential as an object with token_url, client_id, client_secret and "
            "refresh_token (or access_token).",
            code="invalid_oauth",
            details={"field": "oauth"},
        )
    unknown = sorted(set(recipe) - set(OAUTH_FIELDS))
    if unknown:
        raise ApiError(
            f"oauth: unknown field {unknown[0]}; the fields are {', '.join(OAUTH_FIELDS)}.",
            code="invalid_oauth",
            details={"field": f"oauth.{unknown[0]}"},
        )
    token_url = recipe.get("token_url")
    if not isinstance(token_url, str) or not token_url.startswith(("https://", "http://")):
        raise ApiError(
            "oauth.token_url: give the provider's token endpoint as an https URL.",
            code="invalid_oauth",
            details={"field": "oauth.token_url"},
        )
    if not recipe.get("refresh_token") and not recipe.get("access_token"):
        raise ApiError(
            "oauth: give a refresh_token (or, for a provider that issues none, the access_token).",
            code="invalid_oauth",
            details={"field": "oauth.refresh_token"},
        )
    if recipe.get("refresh_token") and not recipe.get("client_id"):
        raise ApiError(
            "oauth.client_id: a refresh recipe needs the app's client_id.",
            code="invalid_oauth",
            details={"field": "oauth.client_id"},
        )
    for key, value in recipe.items():
        if not isinstance(value, str):  # null too: the schema documents strings
            raise ApiError(f"oauth.{key}: must be a string.", code="invalid_oauth", details={"field": f"oauth.{key}"})
    if "expires_at" in recipe:  # the schema's date-time: RFC 3339, and a real moment
        if not RFC3339.match(recipe["expires_at"]):
            raise ApiError(
                "oauth.expires_at: give an RFC 3339 time, e.g. 2026-12-01T10:00:00Z.",
                code="invalid_oauth",
                details={"field": "oauth.expires_at"},
            )
        recipe = {**recipe, "expires_at": recipe["expires_at"].upper()}
        _parse_time(recipe["expires_at"], "oauth.expires_at")
    return {k: v for k, v in recipe.items() if v}


def _parse_time(value: str, field_name: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(value)
    except (TypeError, ValueError):
        raise ApiError(
            f"{field_name}: give an ISO 8601 time.", code="invalid_oauth", details={"field": field_name}
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.timezone.utc)


# ------------------------------------------------------------------ set / list / delete


def check_set_secret(membership: Membership, workspace: Workspace | None, name: str, data: Mapping[str, Any]) -> Secret:
    """Precondition: `workspace` was found through the member's account (or is None
    for the account vault). Needs a role that writes."""
    if not membership.can_write:
        from rest_framework.exceptions import PermissionDenied

        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
    validate_name(name)
    if not isinstance(data, Mapping):
        raise ApiError("Send a JSON object with value (or oauth).", code="invalid_body")
    unknown = sorted(set(data) - {"value", "oauth", "hosts"})
    if unknown:
        raise ApiError(
            f"{unknown[0]}: unknown field; send value (or oauth) and optionally hosts.",
            code="invalid_body",
            details={"field": unknown[0]},
        )
    if ("value" in data) == ("oauth" in data):
        raise ApiError(
            "value: give either value or oauth, not both and not neither.",
            code="invalid_value",
            details={"field": "value"},
        )
    hosts = _validate_hosts(data.get("hosts")) if "hosts" in data else None
    if "oauth" in data:
        return do_set_secret(
            membership.account,
            workspace,
            name,
            oauth_recipe=_validate_recipe(data["oauth"]),
            hosts=hosts,
            user=membership.user,
        )
    return do_set_secret(
        membership.account, workspace, name, value=_validate_value(data["value"]), hosts=hosts, user=membership.user
    )


def do_set_secret(
    account: Account,
    workspace: Workspace | None,
    name: str,
    *,
    value: str | None = None,
    oauth_recipe: dict | None = None,
    hosts: list[str] | None = None,
    user=None,
) -> Secret:
    """Create or replace a secret. `hosts=None` keeps the hosts already set.
    Two writers creating the same name at once: the loser retries as an update."""
    from django.db import IntegrityError

    try:
        return _set_secret_once(
            account, workspace, name, value=value, oauth_recipe=oauth_recipe, hosts=hosts, user=user
        )
    except IntegrityError:
        return _set_secret_once(
            account, workspace, name, value=value, oauth_recipe=oauth_recipe, hosts=hosts, user=user
        )


def _set_secret_once(
    account: Account,
    workspace: Workspace | None,
    name: str,
    *,
    value: str | None,
    oauth_recipe: dict | None,
    hosts: list[str] | None,
    user,
) -> Secret:
    now = timezone.now()
    with transaction.atomic():
        row = Secret.objects.select_for_update().filter(account=account, workspace=workspace, name=name).first()
        if row is None:
            row = Secret(account=account, workspace=workspace, name=name, created_by=user, created_at=now)
        row.updated_by, row.updated_at = user, now
        if hosts is not None:
            row.hosts = hosts
        if oauth_recipe is not None:
            row.kind = SecretKind.OAUTH2
            row.refreshable = bool(oauth_recipe.get("refresh_token"))
            row.expires_at = (
                _parse_time(oauth_recipe["expires_at"], "oauth.expires_at") if oauth_recipe.get("expires_at") else None
            )
            if row.refreshable and not oauth_recipe.get("access_token"):
                row.expires_at = None  # nothing cached yet: the first use refreshes
            _seal_into(row, json.dumps(oauth_recipe))
        else:
            row.kind, row.refreshable, row.expires_at = SecretKind.VALUE, False, None
            _seal_into(row, value or "")
        row.save()
    return row


def secrets_for(account: Account, workspace: Workspace | None = None):
    """The account vault's secrets, or a workspace's and the account's (for nearest-wins views)."""
    query = Secret.objects.filter(account=account).select_related("workspace", "created_by", "updated_by")
    if workspace is None:
        return query.filter(workspace__isnull=True).order_by("name")
    # The workspace's own first under each name: nearest wins, read top down.
    return query.filter(Q(workspace=workspace) | Q(workspace__isnull=True)).order_by(
        "name", F("workspace_id").asc(nulls_last=True)
    )


def check_delete_secret(membership: Membership, workspace: Workspace | None, name: str) -> None:
    if not membership.can_write:
        from rest_framework.exceptions import PermissionDenied

        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
    row = Secret.objects.filter(account=membership.account, workspace=workspace, name=name).first()
    if row is None:
        raise NotFound()
    do_delete_secret(row)


def do_delete_secret(row: Secret) -> None:
    with transaction.atomic():
        Secret.objects.filter(pk=row.pk).delete()


# ------------------------------------------------------------------ resolution


@dataclass
class Resolved:
    value: str = field(repr=False)
    scope: str  # "workspace" or "account" (the laptop vault says "local")
    kind: str = SecretKind.VALUE
    secret_id: str | None = None

    def __str__(self) -> str:
        return f"Resolved(scope={self.scope!r})"


class Resolution(dict):
    """name → Resolved, nearest wins; `.missing` lists names in neither vault,
    `.failed` maps names whose value could not be produced to the sentence why."""

    def __init__(self) -> None:
        super().__init__()
        self.missing: list[str] = []
        self.failed: dict[str, str] = {}

    def values_by_name(self) -> dict[str, str]:
        return {name: item.value for name, item in self.items()}

    def scopes(self) -> dict[str, str]:
        """What a trace may show: which store each came from, never a value."""
        return {name: item.scope for name, item in self.items()}


def find_secret(account: Account | int, workspace: Workspace | None, name: str) -> Secret | None:
    """The nearest secret called `name`: the workspace's, else the account's."""
    account_id = account if isinstance(account, int) else account.pk
    rows = {
        (r.workspace_id is not None): r
        for r in Secret.objects.filter(account_id=account_id, name=name).filter(
            Q(workspace__isnull=True) | (Q(workspace=workspace) if workspace is not None else Q(pk__in=[]))
        )
    }
    return rows.get(True) or rows.get(False)


def resolve_secrets(
    workspace: Workspace | None,
    names: Iterable[str],
    *,
    account: Account | None = None,
    http: httpx.Client | None = None,
) -> Resolution:
    """Nearest wins: the workspace vault, then the account vault. OAuth2
    secrets come back as a live access token (refreshed if near expiry).
    An undecryptable or unrefreshable secret is in `.failed`, never empty."""
    account = account or workspace.account
    wanted = sorted(set(names))
    result = Resolution()
    rows = Secret.objects.filter(account=account, name__in=wanted).filter(
        Q(workspace__isnull=True) | (Q(workspace=workspace) if workspace is not None else Q(pk__in=[]))
    )
    nearest: dict[str, Secret] = {}
    for row in rows:
        if row.name not in nearest or row.workspace_id is not None:
            nearest[row.name] = row
    for name in wanted:
        row = nearest.get(name)
        if row is None:
            result.missing.append(name)
            continue
        try:
            value = access_token_for(row, http=http) if row.kind == SecretKind.OAUTH2 else reveal(row)
        except (UndecryptableSecret, oauth.OAuthError) as exc:
            result.failed[name] = str(exc)
            continue
        result[name] = Resolved(value=value, scope=row.scope, kind=row.kind, secret_id=row.public_id)
    return result


# ------------------------------------------------------------------ OAuth2


def _fresh(row: Secret, now: dt.datetime) -> bool:
    return row.expires_at is None or row.expires_at > now + REFRESH_MARGIN


def access_token_for(secret: Secret, *, http: httpx.Client | None = None) -> str:
    """A live access token for an OAuth2 secret. Fresh → the cached one,
    without a lock. Near expiry → take the row with select_for_update, look
    again (another worker may just have refreshed), exchange the refresh
    token, save the new access token and any rotated refresh token. Two
    workers at once cause one refresh."""
    if secret.kind != SecretKind.OAUTH2:
        return reveal(secret)
    now = timezone.now()
    if _fresh(secret, now):
        recipe = _recipe(secret)
        if recipe.get("access_token"):
            return recipe["access_token"]
    with transaction.atomic():
        row = Secret.objects.select_for_update().get(pk=secret.pk)
        recipe = _recipe(row)
        if _fresh(row, now) and recipe.get("access_token"):
            return recipe["access_token"]
        if not recipe.get("refresh_token"):
            when = row.expires_at.strftime("%Y-%m-%d %H:%M UTC") if row.expires_at else "an unknown time"
            raise OAuthError(
                f"the OAuth credential {row.name} expired at {when} and has no refresh token — "
                f"connect it again with `foldrun connect {row.name}`"
            )
        answer = oauth.refresh(
            http,
            name=row.name,
            token_url=recipe["token_url"],
            refresh_token=recipe["refresh_token"],
            client_id=recipe.get("client_id"),
            client_secret=recipe.get("client_secret"),
        )
        recipe["access_token"] = answer.access_token
        if answer.refresh_token:  # a rotated refresh token replaces the spent one
            recipe["refresh_token"] = answer.refresh_token
        # No expiry stated: treat the token as good for an hour rather than forever.
        expires = answer.expires_at or (timezone.now() + dt.timedelta(hours=1))
        recipe["expires_at"] = expires.isoformat()
        row.expires_at = expires
        row.updated_at = timezone.now()
        _seal_into(row, json.dumps(recipe))
        row.save(update_fields=["expires_at", "key_id", "sealed", "updated_at"])
        return answer.access_token


# ------------------------------------------------------------------ key rotation: vault/rotation.py

rotate_keys = rotation.rotate_keys  # the management command's name for it


# ------------------------------------------------------------------ the boundary


def egress_grants(
    workspace: Workspace | None,
    names: Iterable[str],
    *,
    account: Account | None = None,
    http: httpx.Client | None = None,
):
    """For a `secrets: proxied` step: each resolved secret's value and the
    hosts the egress proxy may send it to (nearest wins, as everywhere).
    Returns (grants, resolution) — the resolution says the scopes and what is missing."""
    account = account or workspace.account
    found = resolve_secrets(workspace, names, account=account, http=http)
    hosts = {
        row.name: list(row.hosts or [])
        for row in Secret.objects.filter(account=account, name__in=list(found))
        .filter(Q(workspace__isnull=True) | (Q(workspace=workspace) if workspace is not None else Q(pk__in=[])))
        .order_by(F("workspace_id").asc(nulls_first=True))
    }  # the workspace's row last, so it wins
    return {name: Grant(item.value, hosts.get(name, [])) for name, item in found.items()}, found
