"""Connect from the dashboard: the consent screen, then `<dashboard URL>/api/oauth/callback`.

The pending connect (client secret and PKCE verifier sealed) waits in
OAuthPending for at most CONNECT_TTL; the callback must come back to a
member of the same account.
"""

from __future__ import annotations

import datetime as dt
import json
import secrets as pysecrets
from collections.abc import Mapping
from typing import Any

import httpx
from django.conf import settings
from django.db import transaction
from django.http import Http404
from django.utils import timezone
from rest_framework.exceptions import PermissionDenied

from accounts.models import Membership, Workspace
from foldrun.api import ApiError
from vault import actions, oauth
from vault.crypto import open_sealed, seal
from vault.keys import vault_keys
from vault.models import OAuthPending

CONNECT_TTL = dt.timedelta(minutes=15)


def dashboard_redirect_uri() -> str:
    base = getattr(settings, "FOLDRUN_PUBLIC_URL", None)
    if not base:
        raise ApiError(
            "Connect from the dashboard needs FOLDRUN_PUBLIC_URL (the dashboard's https address) to be "
            "set; from a terminal, `foldrun connect` works without it.",
            code="no_public_url",
        )
    return base.rstrip("/") + "/api/oauth/callback"


def _text(body: Mapping, key: str, *, required: bool = False) -> str:
    value = body.get(key)
    if value in (None, ""):
        if required:
            raise ApiError(f"{key}: this field is required.", code="invalid", details={"field": key})
        return ""
    if not isinstance(value, str):
        raise ApiError(f"{key}: must be a string.", code="invalid", details={"field": key})
    return value.strip()


def check_start(membership: Membership, body: Mapping[str, Any]) -> dict:
    if not membership.can_write:
        raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
    name = actions.validate_name(_text(body, "name", required=True))
    workspace = None
    if _text(body, "workspace"):
        workspace = Workspace.objects.filter(account=membership.account, name=_text(body, "workspace")).first()
        if workspace is None:
            raise Http404
    provider = _text(body, "provider") or "custom"
    preset = oauth.OAUTH_PRESETS.get(provider)
    if preset is None and provider != "custom":
        raise ApiError(
            f"provider: unknown OAuth provider '{provider}'; the presets are "
            f"{', '.join(sorted(oauth.OAUTH_PRESETS))}, or custom with auth_url and token_url.",
            code="invalid",
            details={"field": "provider"},
        )
    auth_url = _text(body, "auth_url") or (preset.auth_url if preset else "")
    token_url = _text(body, "token_url") or (preset.token_url if preset else "")
    for field_name, url in (("auth_url", auth_url), ("token_url", token_url)):
        if not url.startswith(("https://", "http://")):
            raise ApiError(f"{field_name}: give the provider's URL.", code="invalid", details={"field": field_name})
    client_id = _text(body, "client_id", required=True)
    client_secret = _text(body, "client_secret")
    scopes = _text(body, "scopes") if "scopes" in body else (preset.scopes if preset else "")
    redirect_uri = dashboard_redirect_uri()
    use_pkce = preset.pkce if preset else True
    verifier, challenge = oauth.pkce_pair() if use_pkce else (None, None)
    state = pysecrets.token_urlsafe(32)
    pending = OAuthPending(
        state=state,
        account=membership.account,
        workspace=workspace,
        name=name,
        provider=provider,
        token_url=token_url,
        redirect_uri=redirect_uri,
        created_by=membership.user,
    )
    pending.key_id, pending.sealed = seal(
        vault_keys(),
        json.dumps({"client_id": client_id, "client_secret": client_secret, "verifier": verifier}).encode(),
        pending.aad(),
    )
    with transaction.atomic():
        OAuthPending.objects.filter(created_at__lt=timezone.now() - CONNECT_TTL).delete()
        pending.save()
    url = oauth.consent_url(
        auth_url,
        client_id=client_id,
        redirect_uri=redirect_uri,
        scopes=scopes,
        state=state,
        challenge=challenge,
        extra=preset.extra if preset else None,
    )
    return {"consent_url": url, "redirect_uri": redirect_uri, "scopes": scopes}


def pending_for(membership: Membership, state: str) -> OAuthPending:
    """The connect this account started with `state`; a 404 for anyone else's."""
    pending = OAuthPending.objects.select_related("workspace").filter(state=state, account=membership.account).first()
    if pending is None or not state:
        raise Http404
    return pending


def check_callback(membership: Membership, params: Mapping[str, str], *, http: httpx.Client | None = None):
    """Returns (secret row, where). The state must be one this account started."""
    state = params.get("state") or ""
    with transaction.atomic():
        pending = OAuthPending.objects.select_for_update().filter(state=state, account=membership.account).first()
        if pending is None:
            raise Http404
        if not membership.can_write:
            raise PermissionDenied(f"Your role ({membership.role}) can read this account but not change it.")
        pending_id = pending.pk
    if params.get("error"):
        OAuthPending.objects.filter(pk=pending_id).delete()
        raise ApiError(
            f"The provider did not grant access ({params.get('error')}); nothing was stored.", code="oauth_refused"
        )
    if pending.created_at < timezone.now() - CONNECT_TTL:
        OAuthPending.objects.filter(pk=pending_id).delete()
        raise ApiError("This connect took longer than 15 minutes; start it again.", code="oauth_expired")
    sealed = json.loads(
        open_sealed(vault_keys(), pending.key_id, bytes(pending.sealed), pending.aad(), name=pending.name)
    )
    try:
        answer = oauth.exchange_code(
            http,
            name=pending.name,
            token_url=pending.token_url,
            code=params.get("code") or "",
            redirect_uri=pending.redirect_uri,
            client_id=sealed["client_id"],
            client_secret=sealed.get("client_secret") or None,
            verifier=sealed.get("verifier"),
        )
    except oauth.OAuthError as exc:
        raise ApiError(exc.message + "; nothing was stored.", code="oauth_refused") from None
    recipe = oauth.recipe_from_answer(
        answer,
        token_url=pending.token_url,
        client_id=sealed["client_id"],
        client_secret=sealed.get("client_secret") or None,
    )
    row = actions.do_set_secret(
        membership.account, pending.workspace, pending.name, oauth_recipe=recipe, user=membership.user
    )
    OAuthPending.objects.filter(pk=pending_id).delete()
    where = f"workspace {pending.workspace.name}" if pending.workspace_id else "the account vault"
    return row, where
