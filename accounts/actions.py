"""Account actions: `check_*` validates and scopes, `do_*` changes data in one
transaction and queues work on commit."""

from __future__ import annotations

import datetime as dt
import secrets

from django.conf import settings
from django.core.validators import validate_email
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from foldrun import mail
from foldrun.api import NOT_FOUND_MESSAGE, ApiError, NotFound

from .models import (
    NAME_RE,
    NAME_RULE,
    Account,
    ApiToken,
    Invite,
    Membership,
    Profile,
    Role,
    Workspace,
    hash_token,
)

INVITE_DAYS = 14


@transaction.atomic
def do_set_up_new_user(user) -> Membership:
    """Give a new user their memberships: pending invites to their address,
    else an account of their own with them as owner."""
    Profile.objects.get_or_create(user=user)
    invites = list(
        Invite.objects.select_for_update().filter(
            email__iexact=user.email, accepted_at__isnull=True, expires_at__gt=timezone.now()
        )
    )
    first: Membership | None = None
    for invite in invites:
        membership, _ = Membership.objects.get_or_create(
            account=invite.account, user=user, defaults={"role": invite.role}
        )
        invite.accepted_at = timezone.now()
        invite.save(update_fields=["accepted_at"])
        first = first or membership
    if first is None:
        account = Account.objects.create(name=f"{user.email.split('@')[0]}'s account")
        first = Membership.objects.create(account=account, user=user, role=Role.OWNER)
    Profile.objects.filter(user=user).update(current_account=first.account)
    return first


# Workspaces ---------------------------------------------------------------


def check_workspace_name(account: Account, name: object, *, exclude: Workspace | None = None) -> str:
    if not isinstance(name, str) or not name:
        raise ApiError("name: a workspace needs a name.", code="invalid", details={"field": "name"})
    if not NAME_RE.match(name):
        raise ApiError(
            f"name: {name[:80]!r} is not a valid workspace name; use {NAME_RULE}.",
            code="invalid",
            details={"field": "name"},
        )
    clash = Workspace.objects.filter(account=account, name=name)
    if exclude is not None:
        clash = clash.exclude(pk=exclude.pk)
    if clash.exists():
        raise ApiError(
            f"name: a workspace called {name!r} already exists in this account.",
            code="duplicate",
            status_code=409,
            details={"field": "name"},
        )
    return name


def do_create_workspace(account: Account, name: str, actor=None, description: str = "") -> Workspace:
    check_workspace_name(account, name)
    try:
        with transaction.atomic():
            return Workspace.objects.create(account=account, name=name, description=description[:300])
    except IntegrityError:  # a concurrent create won the race
        raise ApiError(
            f"name: a workspace called {name!r} already exists in this account.",
            code="duplicate",
            status_code=409,
            details={"field": "name"},
        ) from None


def do_update_workspace(workspace: Workspace, *, name: str | None = None, description: str | None = None) -> Workspace:
    if name is not None and name != workspace.name:
        workspace.name = check_workspace_name(workspace.account, name, exclude=workspace)
    if description is not None:
        workspace.description = description[:300]
    workspace.save()
    return workspace


# What goes with a workspace (every row that names it is removed with it; the account library stays).
WORKSPACE_DELETE_REMOVES = (
    "Removes the workspace and everything that belongs to it: its files and every revision of them, its runs "
    "(with their steps, tries, trace, approvals and artifacts), its schedules and triggers, the secrets set "
    "on the workspace, and its notification settings and delivery log. The account, its members, the account "
    "library and account-wide secrets stay."
)


def do_delete_workspace(workspace: Workspace) -> None:
    """Delete `workspace` and, through its foreign keys, everything WORKSPACE_DELETE_REMOVES names."""
    with transaction.atomic():
        Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
        workspace.delete()


# Members and invites ------------------------------------------------------


def check_role(value: object, actor: Membership) -> str:
    if value not in Role.values:
        raise ApiError(
            f"role: {str(value)[:40]!r} is not a role; use one of {', '.join(Role.values)}.",
            code="invalid",
            details={"field": "role"},
        )
    if value == Role.OWNER and actor.role != Role.OWNER:
        raise ApiError("role: only an owner can make someone an owner.", code="forbidden", status_code=403)
    return str(value)


def _owners_left(account: Account, without: Membership) -> int:
    return Membership.objects.filter(account=account, role=Role.OWNER).exclude(pk=without.pk).count()


def _locked_member(target: Membership) -> Membership:
    """The member's row, locked — or a 404 when it went between the view's lookup and now (removed meanwhile)."""
    locked = Membership.objects.select_for_update().filter(pk=target.pk).first()
    if locked is None:
        raise NotFound(NOT_FOUND_MESSAGE)
    return locked


@transaction.atomic
def do_change_role(target: Membership, role: str, actor: Membership) -> Membership:
    check_role(role, actor)
    target = _locked_member(target)
    if target.role == Role.OWNER and role != Role.OWNER:
        if actor.role != Role.OWNER:
            raise ApiError("role: only an owner can change an owner's role.", code="forbidden", status_code=403)
        if _owners_left(target.account, target) == 0:
            raise ApiError(
                "role: an account needs at least one owner; make someone else owner first.",
                code="last_owner",
                status_code=409,
            )
    target.role = role
    target.save(update_fields=["role"])
    return target


@transaction.atomic
def do_remove_member(target: Membership, actor: Membership) -> None:
    target = _locked_member(target)
    if target.role == Role.OWNER:
        if actor.role != Role.OWNER:
            raise ApiError("Only an owner can remove an owner.", code="forbidden", status_code=403)
        if _owners_left(target.account, target) == 0:
            raise ApiError(
                "An account needs at least one owner; make someone else owner first.",
                code="last_owner",
                status_code=409,
            )
    ApiToken.objects.filter(user=target.user, account=target.account, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    target.delete()


def check_invite(actor: Membership, email: object, role: object) -> tuple[str, str]:
    if not isinstance(email, str):
        raise ApiError("email: an invite needs an email address.", code="invalid", details={"field": "email"})
    email = email.strip().lower()
    try:
        validate_email(email)
    except ValidationError:
        raise ApiError(
            f"email: {email[:120]!r} is not an email address.", code="invalid", details={"field": "email"}
        ) from None
    # Only a missing role means viewer: any other value, `{}` and "" included, must be a role (a 400 otherwise).
    role = check_role(Role.VIEWER if role is None else role, actor)
    if Membership.objects.filter(account=actor.account, user__email__iexact=email).exists():
        raise ApiError(f"email: {email} is already a member of this account.", code="duplicate", status_code=409)
    return email, role


def do_invite(actor: Membership, email: str, role: str) -> tuple[Invite, str]:
    """Record an invite and mail its link. Returns the invite and the raw token
    (for the mail only; it is stored hashed)."""
    raw = "inv_" + secrets.token_urlsafe(24)
    with transaction.atomic():
        Invite.objects.filter(account=actor.account, email__iexact=email, accepted_at__isnull=True).delete()
        invite = Invite.objects.create(
            account=actor.account,
            email=email,
            role=role,
            invited_by=actor.user,
            token_hash=hash_token(raw),
            expires_at=timezone.now() + dt.timedelta(days=INVITE_DAYS),
        )
        transaction.on_commit(lambda: _send_invite_mail(invite.pk, raw))
    return invite, raw


def _send_invite_mail(invite_pk: int, raw: str) -> None:
    invite = Invite.objects.select_related("account", "invited_by").get(pk=invite_pk)
    base = settings.FOLDRUN_PUBLIC_URL or "http://127.0.0.1:8000"
    link = f"{base}/invites/{raw}"
    who = invite.invited_by.email if invite.invited_by else "Someone"
    subject = f"{who} invited you to {invite.account.name} on foldrun"
    body = (
        f"{who} invited you to join {invite.account.name} on foldrun as {invite.role}.\n\n"
        f"Accept: {link}\n\nThe link works for {INVITE_DAYS} days. If you did not expect this, ignore it."
    )
    # Invites always come from the platform's own sender (notify's, asked through foldrun.mail).
    mail.send_platform_mail(to=invite.email, subject=subject, body=body, category="invites")


@transaction.atomic
def do_accept_invite(user, raw: str) -> Membership:
    invite = Invite.objects.select_for_update().filter(token_hash=hash_token(raw)).first()
    if invite is None or invite.accepted_at is not None:
        raise ApiError("This invite link is not valid or was already used.", code="invalid_invite", status_code=404)
    if invite.expires_at <= timezone.now():
        raise ApiError("This invite link has expired; ask for a new one.", code="expired", status_code=410)
    if invite.email.lower() != (user.email or "").lower():
        raise ApiError(
            f"This invite was sent to {invite.email}; sign in with that address to accept it.",
            code="wrong_user",
            status_code=403,
        )
    membership, _ = Membership.objects.get_or_create(account=invite.account, user=user, defaults={"role": invite.role})
    invite.accepted_at = timezone.now()
    invite.save(update_fields=["accepted_at"])
    Profile.objects.filter(user=user).update(current_account=invite.account)
    return membership


# API tokens ---------------------------------------------------------------


def check_token_name(name: object) -> str:
    if name in (None, ""):
        return "cli"
    if not isinstance(name, str) or len(name) > 100 or any(ord(c) < 32 for c in name):
        raise ApiError(
            "name: a token name is at most 100 printable characters.", code="invalid", details={"field": "name"}
        )
    return name


def do_create_token(user, account: Account, name: str, *, days: int | None = None) -> tuple[ApiToken, str]:
    """Mint a token; the raw value is returned once and never stored."""
    raw = ApiToken.mint()
    token = ApiToken.objects.create(
        user=user,
        account=account,
        name=name,
        token_hash=hash_token(raw),
        hint=raw[:8],
        expires_at=timezone.now() + dt.timedelta(days=days) if days else None,
    )
    return token, raw


def do_revoke_token(token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk, revoked_at__isnull=True).update(revoked_at=timezone.now())


# ---------------------------------------------------------------- the account's own search engine


def check_search_engine_url(value: object) -> str:
    """An http(s) URL of a SearXNG instance, or "" for the install's default. Credentials in it are
    refused: the address is shown on Settings and in the API, and a secret belongs in the vault."""
    from urllib.parse import urlsplit

    if value is None:
        return ""
    if not isinstance(value, str):
        raise ApiError(
            "search_engine_url must be a URL such as https://search.example.com, or empty for the install's default.",
            code="invalid",
            details={"field": "search_engine_url"},
        )
    text = value.strip()
    if not text:
        return ""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - read for its ValueError
    except ValueError:  # `[::1`, a port past 65535: not a URL, said as the check below says it
        parts = urlsplit("")
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ApiError(
            f"search_engine_url {text[:200]!r} is not an http or https URL such as https://search.example.com.",
            code="invalid",
            details={"field": "search_engine_url"},
        )
    if parts.username or parts.password:
        raise ApiError(
            "search_engine_url must not carry a user name or password; the address is shown to every member.",
            code="invalid",
            details={"field": "search_engine_url"},
        )
    if parts.query or parts.fragment:
        raise ApiError(
            "search_engine_url is the instance's address, without a query or fragment — "
            "e.g. https://search.example.com.",
            code="invalid",
            details={"field": "search_engine_url"},
        )
    if len(text) > 500:
        raise ApiError(
            "search_engine_url is longer than 500 characters.", code="invalid", details={"field": "search_engine_url"}
        )
    return text.rstrip("/")


@transaction.atomic
def do_set_search_engine(account: Account, url: str) -> Account:
    locked = Account.objects.select_for_update().get(pk=account.pk)
    locked.search_engine_url = url
    locked.save(update_fields=["search_engine_url"])
    return locked
