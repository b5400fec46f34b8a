"""Server-rendered account pages: home (workspaces, members, tokens) and settings.

Every page needs a signed-in member and is scoped through
`accounts.access.current_membership`. A viewer sees no write forms and a POST
from one is a 403. Changes go through `accounts.actions` (check_* then do_*),
the same functions the API calls, so both refuse with the same sentences.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from foldrun import pageparts
from foldrun.api import ApiError

from . import actions as account_actions
from .access import current_membership
from .connect import mcp_setup, server_url
from .models import NAME_RULE, ApiToken, Invite, Membership, Profile, Role, Workspace
from .signals import home_parts

# The raw token minted by a POST waits here for the one page that shows it.
_FRESH_TOKEN_KEY = "foldrun_fresh_token"


def require_membership(request: HttpRequest) -> Membership:
    membership = current_membership(request)
    if membership is None:
        raise PermissionDenied("You are not a member of any account.")
    return membership


def require_write(membership: Membership) -> None:
    if not membership.can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")


def require_manage(membership: Membership) -> None:
    if not membership.can_manage:
        raise PermissionDenied(f"Your role ({membership.role}) cannot manage members or settings.")


def _no_account(request: HttpRequest) -> HttpResponse:
    return render(request, "accounts/no_account.html", {"section": "home"}, status=200)


# ---------------------------------------------------------------- queries


def member_rows(membership: Membership) -> list[Membership]:
    return list(
        Membership.objects.select_related("user").filter(account_id=membership.account_id).order_by("created_at", "pk")
    )


def pending_invites(membership: Membership) -> list[Invite]:
    return list(
        Invite.objects.filter(
            account_id=membership.account_id, accepted_at__isnull=True, expires_at__gt=timezone.now()
        ).order_by("-created_at")
    )


def token_rows(request: HttpRequest, membership: Membership) -> list[ApiToken]:
    """The person's own tokens in this account (a token is personal)."""
    return list(ApiToken.objects.filter(user=request.user, account_id=membership.account_id).order_by("-created_at"))


def _context(request: HttpRequest, membership: Membership, section: str) -> dict[str, Any]:
    return {
        "section": section,
        "membership": membership,
        "account": membership.account,
        "can_write": membership.can_write,
        "can_manage": membership.can_manage,
        "members": member_rows(membership),
        "invites": pending_invites(membership) if membership.can_manage else [],
        "tokens": token_rows(request, membership),
        "roles": [r for r in Role],
        "name_rule": NAME_RULE,
    }


# ---------------------------------------------------------------- pages


@login_required
def home(request: HttpRequest) -> HttpResponse:
    membership = current_membership(request)
    if membership is None:
        return _no_account(request)
    context = _context(request, membership, "home")
    # The apps above accounts fill in their parts: library the workspaces with their counts, runs what
    # waits for a person and the latest runs of every workspace.
    context.update(pageparts.fill(home_parts, Membership, membership=membership))
    names = set(Workspace.objects.filter(account=membership.account).values_list("name", flat=True))
    context["first_desk"] = None if names else first_desk(request)
    context["new_workspace_placeholder"] = new_workspace_placeholder(names)
    return render(request, "accounts/home.html", context)


FIRST_DESK = "my-desk"


def first_desk(request: HttpRequest) -> dict[str, Any]:
    """A new account's home: the three commands that get a first desk running, with this server's address."""
    return {
        "name": FIRST_DESK,
        "commands": [
            f"foldrun login --url {server_url(request)}",
            f"foldrun init {FIRST_DESK}",
            f"foldrun deploy {FIRST_DESK} --to {FIRST_DESK}",
        ],
    }


def new_workspace_placeholder(names: set[str]) -> str:
    """An example name for the new-workspace field that is not already one of the account's."""
    for candidate in (FIRST_DESK, "support-desk", "research-desk"):
        if candidate not in names:
            return candidate
    return next(f"desk-{n}" for n in range(2, len(names) + 3) if f"desk-{n}" not in names)


@login_required
def settings_page(request: HttpRequest) -> HttpResponse:
    membership = current_membership(request)
    if membership is None:
        return _no_account(request)
    context = _context(request, membership, "settings")
    context["my_memberships"] = list(
        Membership.objects.select_related("account").filter(user=request.user).order_by("created_at", "pk")
    )
    context.update(mcp_setup(request))
    return render(request, "accounts/settings.html", context)


@login_required
@require_POST
def switch_account(request: HttpRequest) -> HttpResponse:
    """Show another of the person's accounts. Only their own memberships count."""
    membership = (
        Membership.objects.select_related("account")
        .filter(user=request.user, account__public_id=request.POST.get("account", ""))
        .first()
    )
    if membership is None:
        raise Http404
    Profile.objects.update_or_create(user=request.user, defaults={"current_account": membership.account})
    messages.success(request, f"Now showing {membership.account.name}.")
    return redirect("home")


@login_required
@require_POST
def set_search_engine(request: HttpRequest) -> HttpResponse:
    """The account's own SearXNG (spec/tools.md, Search — the account's own engine); owners and admins only."""
    membership = require_membership(request)
    require_manage(membership)
    try:
        url = account_actions.check_search_engine_url(request.POST.get("search_engine_url"))
        account_actions.do_set_search_engine(membership.account, url)
    except ApiError as refused:
        messages.error(request, _error_text(refused))
        return redirect("settings")
    messages.success(request, f"Searching now asks {url}." if url else "Searching now uses the install's default.")
    return redirect("settings")


# ---------------------------------------------------------------- workspaces


def _error_text(exc: Exception) -> str:
    if isinstance(exc, ApiError):
        return exc.message
    if isinstance(exc, ValidationError):
        return " ".join(exc.messages)
    return str(exc)


@login_required
@require_POST
def create_workspace(request: HttpRequest) -> HttpResponse:
    membership = require_membership(request)
    require_write(membership)
    name = (request.POST.get("name") or "").strip()
    try:
        workspace = account_actions.do_create_workspace(membership.account, name, request.user)
    except ApiError as refused:
        messages.error(request, _error_text(refused))
        return redirect("home")
    messages.success(
        request,
        f"Workspace {workspace.name} created. Push a desk to it with foldrun push <folder> --to {workspace.name}.",
    )
    return redirect("workspace", ws=workspace.name)


# ---------------------------------------------------------------- members


@login_required
@require_POST
def invite_member(request: HttpRequest) -> HttpResponse:
    membership = require_membership(request)
    require_manage(membership)
    back = request.POST.get("next") or "settings"
    back = back if back in {"home", "settings"} else "settings"
    try:
        email, role = account_actions.check_invite(
            membership, request.POST.get("email"), request.POST.get("role") or None
        )
        account_actions.do_invite(membership, email, role)
    except ApiError as refused:
        messages.error(request, _error_text(refused))
        return redirect(back)
    messages.success(request, f"Invited {email} as {role}. The invite link is on its way by mail.")
    return redirect(back)


def _member(membership: Membership, member_id: str) -> Membership:
    """A membership of the same account, by public id; anything else is a 404."""
    target = (
        Membership.objects.select_related("user", "account")
        .filter(public_id=member_id, account_id=membership.account_id)
        .first()
    )
    if target is None:
        raise Http404
    return target


@login_required
@require_POST
def change_role(request: HttpRequest, member_id: str) -> HttpResponse:
    membership = require_membership(request)
    require_manage(membership)
    target = _member(membership, member_id)
    try:
        account_actions.do_change_role(target, request.POST.get("role"), membership)
    except ApiError as refused:
        messages.error(request, _error_text(refused))
        return redirect("settings")
    messages.success(request, f"{target.user.email} is now {request.POST.get('role')}.")
    return redirect("settings")


@login_required
@require_POST
def remove_member(request: HttpRequest, member_id: str) -> HttpResponse:
    membership = require_membership(request)
    require_manage(membership)
    target = _member(membership, member_id)
    try:
        account_actions.do_remove_member(target, membership)
    except ApiError as refused:
        messages.error(request, _error_text(refused))
        return redirect("settings")
    messages.success(
        request, f"{target.user.email} was removed from {membership.account.name}; their tokens for it are revoked."
    )
    return redirect("home" if target.pk == membership.pk else "settings")


# ---------------------------------------------------------------- tokens


@login_required
@require_POST
def create_token(request: HttpRequest) -> HttpResponse:
    """Mint a personal token. Any member may: it acts with the member's own role."""
    membership = require_membership(request)
    name = (request.POST.get("name") or "").strip()
    try:
        name = account_actions.check_token_name(name)
    except ApiError as refused:
        messages.error(request, _error_text(refused))
        return redirect("settings")
    token, raw = account_actions.do_create_token(request.user, membership.account, name)
    # Kept in the session only until the next page shows it, once.
    request.session[_FRESH_TOKEN_KEY] = {"id": token.public_id, "raw": raw}
    return redirect("token-created")


@never_cache
@login_required
@require_http_methods(["GET"])
def token_created(request: HttpRequest) -> HttpResponse:
    membership = require_membership(request)
    fresh = request.session.pop(_FRESH_TOKEN_KEY, None)
    token = None
    if fresh:
        token = ApiToken.objects.filter(public_id=fresh["id"], user=request.user).first()
    context = {
        "section": "settings",
        "membership": membership,
        "account": membership.account,
        "token": token,
        "raw": fresh["raw"] if (fresh and token) else None,
    }
    return render(request, "accounts/token_created.html", context)


@login_required
@require_POST
def revoke_token(request: HttpRequest, token_id: str) -> HttpResponse:
    membership = require_membership(request)
    token = ApiToken.objects.filter(public_id=token_id, user=request.user, account_id=membership.account_id).first()
    if token is None:
        raise Http404
    account_actions.do_revoke_token(token)
    messages.success(request, f"Token {token.name} ({token.hint}…) revoked. The CLI using it must sign in again.")
    return redirect("settings")
