"""Logins by host: the user name and sealed password a browser session opened with `credentials` fills into a
login form on a page of that host (browsing's keeper asks `logins_for_session`, and only it opens a password).

`check_set_login` reads a body (`host`, `namespace`, `username`, `password`); `do_set_login` seals and keeps
it, replacing the login of the same host and namespace. Nothing here answers a password back: the API shows
the host, namespace, user name and when it was set.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone
from rest_framework.exceptions import PermissionDenied

from accounts.models import Account, Membership
from foldrun.api import ApiError, NotFound

from .crypto import open_sealed, seal
from .keys import vault_keys
from .models import SiteLogin

HOST = re.compile(r"^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")
NAMESPACE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
FIELDS = {"host", "namespace", "username", "password"}
MAX_PASSWORD = 1024


@dataclass(frozen=True)
class OpenLogin:
    """A login opened for one session's keeper: never logged, never stored elsewhere."""

    host: str
    username: str
    password: str

    def __repr__(self) -> str:  # a traceback or a debug print shows no password
        return f"OpenLogin(host={self.host!r}, username={self.username!r})"


def _invalid(field: str, message: str) -> ApiError:
    return ApiError(message, code="invalid", details={"field": field})


def check_set_login(membership: Membership, data: Any, *, user: Any = None) -> SiteLogin:
    """Set a login of the membership's account from a request body; ApiError naming the field at fault."""
    if not membership.can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
    if not isinstance(data, dict):
        raise ApiError("The request body must be a JSON object.", code="invalid")
    unknown = sorted(set(data) - FIELDS)
    if unknown:
        raise _invalid(
            unknown[0], f"{unknown[0]} is not a field of a login; give host, namespace, username and password."
        )
    host = data.get("host")
    if not isinstance(host, str) or not HOST.match(host.strip().lower()) or len(host.strip()) > 253:
        raise _invalid(
            "host",
            "host must be a host name such as staging.example.com, or *.example.com for its "
            "subdomains (no scheme, port or path).",
        )
    namespace = data.get("namespace", "default")
    if not isinstance(namespace, str) or not NAMESPACE.match(namespace):
        raise _invalid("namespace", "namespace must be 1 to 64 letters, digits, . _ or -.")
    username = data.get("username")
    if not isinstance(username, str) or not username.strip() or len(username) > 320:
        raise _invalid("username", "username must be the login's user name or email, 1 to 320 characters.")
    password = data.get("password")
    if not isinstance(password, str) or not password or len(password) > MAX_PASSWORD:
        raise _invalid("password", f"password must be the login's password, 1 to {MAX_PASSWORD:,} characters.")
    return do_set_login(membership.account, host.strip().lower(), namespace, username.strip(), password, user=user)


def do_set_login(
    account: Account, host: str, namespace: str, username: str, password: str, *, user: Any = None
) -> SiteLogin:
    with transaction.atomic():
        row = SiteLogin.objects.select_for_update().filter(account=account, host=host, namespace=namespace).first()
        if row is None:
            row = SiteLogin(
                account=account, host=host, namespace=namespace, created_by=user if getattr(user, "pk", None) else None
            )
        row.username = username
        row.key_id, row.sealed_password = seal(vault_keys(), password.encode(), row.aad())
        row.updated_at = timezone.now()
        row.save()
    return row


def logins_of(account: Account) -> list[SiteLogin]:
    return list(SiteLogin.objects.filter(account=account).order_by("host", "namespace"))


def check_delete_login(membership: Membership, public_id: str) -> None:
    """Delete the account's login with this id; another account's, or none, is a 404."""
    if not membership.can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
    row = SiteLogin.objects.filter(account_id=membership.account_id, public_id=public_id).first()
    if row is None:
        raise NotFound()  # the same body for another account's login as for none
    row.delete()


def login_data(row: SiteLogin) -> dict[str, Any]:
    """What the API answers of a login: never the password."""
    return {
        "id": row.public_id,
        "host": row.host,
        "namespace": row.namespace,
        "username": row.username,
        "createdAt": row.created_at.isoformat(),
        "updatedAt": row.updated_at.isoformat(),
    }


def logins_for_session(account_id: int, namespace: str) -> list[OpenLogin]:
    """The account's logins of one namespace, opened: for a session's keeper to fill forms with."""
    rows = SiteLogin.objects.filter(account_id=account_id, namespace=namespace).order_by("host")
    return [
        OpenLogin(
            row.host,
            row.username,
            open_sealed(
                vault_keys(), row.key_id, bytes(row.sealed_password), row.aad(), name=f"the login for {row.host}"
            ).decode(),
        )
        for row in rows
    ]
