"""Settings → Secrets: the account vault at /settings/secrets, a workspace's at
/w/<ws>/settings/secrets. Names, scope, who and when — never a value; set,
delete and Connect (OAuth) need a write role, and another account's
workspace is a 404 like a missing one."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.access import current_membership, workspace_for_user
from accounts.models import Workspace
from foldrun.api import ApiError
from foldrun.engine.needs import secrets_needed
from library.services import desk_for_scope
from vault import actions, connect, oauth
from vault.crypto import VaultKeyError
from vault.models import BROKEN_VERDICTS, ProviderCheck
from vault.probe import check_account_providers


def _context(request: HttpRequest, ws: str | None):
    membership = current_membership(request)
    if membership is None:
        raise Http404
    workspace = workspace_for_user(membership, ws)[0] if ws else None
    return membership, workspace


def _back(workspace) -> str:
    return f"/w/{workspace.name}/settings/secrets" if workspace else "/settings/secrets"


def _require_write(membership) -> None:
    if not membership.can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")


@login_required
def secrets_page(request: HttpRequest, ws: str | None = None) -> HttpResponse:
    membership, workspace = _context(request, ws)
    rows = list(actions.secrets_for(membership.account, workspace))
    in_workspace = {r.name for r in rows if r.workspace_id}
    here = workspace.pk if workspace else None
    entries = [
        {
            "row": r,
            "overridden": not r.workspace_id and r.name in in_workspace,
            "deletable": membership.can_write and r.workspace_id == here,
        }
        for r in rows
    ]
    try:
        redirect_uri = connect.dashboard_redirect_uri()
    except ApiError:
        redirect_uri = None
    return render(
        request,
        "vault/secrets.html",
        {
            "section": "secrets",
            "membership": membership,
            "account": membership.account,
            "workspace": workspace,
            "entries": entries,
            "can_write": membership.can_write,
            "redirect_uri": redirect_uri,
            "presets": sorted(oauth.OAUTH_PRESETS.values(), key=lambda p: p.name),
            "back": _back(workspace),
            "connected": request.GET.get("connected"),
            "plain_http": bool(redirect_uri)
            and redirect_uri.startswith("http://")
            and not redirect_uri.startswith(("http://localhost", "http://127.0.0.1")),
            "checks": []
            if workspace
            else list(ProviderCheck.objects.filter(account=membership.account).order_by("endpoint", "key_name")),
        },
    )


@login_required
@require_POST
def check_providers(request: HttpRequest) -> HttpResponse:
    """Check every provider key now — for the minute after rotating one."""
    membership, _ = _context(request, None)
    _require_write(membership)
    rows = check_account_providers(membership.account.pk, report=True)
    broken = [r for r in rows if r.verdict in BROKEN_VERDICTS]
    if broken:
        messages.error(request, f"{len(broken)} of {len(rows)} provider key(s) are not working.")
    else:
        messages.success(request, f"All {len(rows)} provider key(s) answered.")
    return redirect("/settings/secrets#providers")


@login_required
@require_POST
def set_secret(request: HttpRequest, ws: str | None = None) -> HttpResponse:
    membership, workspace = _context(request, ws)
    _require_write(membership)
    data = {"value": request.POST.get("value", "")}
    if request.POST.get("hosts", "").strip():
        data["hosts"] = request.POST["hosts"]
    name = request.POST.get("name", "").strip()
    try:
        actions.check_set_secret(membership, workspace, name, data)
    except ApiError as exc:
        messages.error(request, exc.message)
    except VaultKeyError as exc:
        messages.error(request, f"Nothing was saved: {exc}.")
    else:
        messages.success(request, f"Set {name}.")
    return redirect(_back(workspace))


@login_required
@require_POST
def delete_secret(request: HttpRequest, name: str, ws: str | None = None) -> HttpResponse:
    membership, workspace = _context(request, ws)
    _require_write(membership)
    try:
        actions.check_delete_secret(membership, workspace, name)
    except ApiError:
        raise Http404 from None
    messages.success(request, f"Deleted {name}.")
    return redirect(_back(workspace))


@login_required
@require_POST
def connect_start(request: HttpRequest, ws: str | None = None) -> HttpResponse:
    membership, workspace = _context(request, ws)
    _require_write(membership)
    # An empty field means "the preset's": leave it out rather than send "".
    body = {
        key: request.POST[key]
        for key in ("name", "provider", "client_id", "client_secret", "scopes", "auth_url", "token_url")
        if request.POST.get(key, "").strip()
    }
    if workspace:
        body["workspace"] = workspace.name
    try:
        started = connect.check_start(membership, body)
    except ApiError as exc:
        messages.error(request, exc.message)
        return redirect(_back(workspace))
    return redirect(started["consent_url"])


def needed_secrets(workspace: Workspace) -> list[dict]:
    """The secrets the desk's agents need, each with who asks and whether the vault (workspace or account) holds it."""
    held = set(actions.secrets_for(workspace.account, workspace).values_list("name", flat=True))
    needed = secrets_needed(desk_for_scope(workspace.account, workspace))
    return [{"name": name, "where": ", ".join(where), "missing": name not in held} for name, where in needed.items()]


def workspace_part(sender, workspace: Workspace, **kwargs) -> dict:
    """The vault's part of the workspace page (`library.signals.workspace_parts`, connected in VaultConfig.ready)."""
    return {"needed_secrets": needed_secrets(workspace)}
