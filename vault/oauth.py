"""OAuth2, the parts both the CLI and the server use. Pure Python (no Django).

Consent URLs with PKCE (S256) where the provider takes it, the code
exchange, and the refresh-token exchange. Every failure is an `OAuthError`
whose message is a sentence that names the credential and never a value.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
import secrets as pysecrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

import httpx

from foldrun import net

CLI_REDIRECT_URI = "http://localhost:8642/callback"
CLI_PORT = 8642


class OAuthError(Exception):
    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True)
class OAuthPreset:
    name: str
    auth_url: str
    token_url: str
    scopes: str  # an example, one space-separated string as OAuth defines it
    pkce: bool = True
    extra: dict = field(default_factory=dict)  # extra consent-URL parameters


OAUTH_PRESETS: dict[str, OAuthPreset] = {
    p.name: p
    for p in (
        OAuthPreset(
            "google",
            "https://accounts.google.com/o/oauth2/v2/auth",
            "https://oauth2.googleapis.com/token",
            "https://www.googleapis.com/auth/gmail.readonly",
            True,
            {"access_type": "offline", "prompt": "consent"},
        ),
        OAuthPreset(
            "github",
            "https://github.com/login/oauth/authorize",
            "https://github.com/login/oauth/access_token",
            "repo read:user",
            True,
        ),
        OAuthPreset(
            "linkedin",
            "https://www.linkedin.com/oauth/v2/authorization",
            "https://www.linkedin.com/oauth/v2/accessToken",
            "openid profile w_member_social",
            False,
        ),
        OAuthPreset(
            "microsoft",
            "https://login.microsoftonline.com/common/oauth2/v2.0/authorize",
            "https://login.microsoftonline.com/common/oauth2/v2.0/token",
            "offline_access User.Read Mail.Read",
            True,
        ),
        OAuthPreset(
            "slack",
            "https://slack.com/oauth/v2/authorize",
            "https://slack.com/api/oauth.v2.access",
            "channels:read chat:write",
            False,
        ),
        OAuthPreset(
            "atlassian",
            "https://auth.atlassian.com/authorize",
            "https://auth.atlassian.com/oauth/token",
            "read:jira-work offline_access",
            True,
            {"audience": "api.atlassian.com", "prompt": "consent"},
        ),
        OAuthPreset(
            "hubspot",
            "https://app.hubspot.com/oauth/authorize",
            "https://api.hubapi.com/oauth/v1/token",
            "crm.objects.contacts.read",
            False,
        ),
        OAuthPreset(
            "notion",
            "https://api.notion.com/v1/oauth/authorize",
            "https://api.notion.com/v1/oauth/token",
            "",
            False,
            {"owner": "user"},
        ),
    )
}


def pkce_pair() -> tuple[str, str]:
    """(verifier, S256 challenge) per RFC 7636."""
    verifier = pysecrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def consent_url(
    auth_url: str,
    *,
    client_id: str,
    redirect_uri: str,
    scopes: str,
    state: str,
    challenge: str | None,
    extra: dict | None = None,
) -> str:
    query: dict[str, str] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": state,
    }
    if scopes:
        query["scope"] = scopes
    if challenge:
        query["code_challenge"] = challenge
        query["code_challenge_method"] = "S256"
    query.update(extra or {})
    joiner = "&" if "?" in auth_url else "?"
    return auth_url + joiner + urlencode(query)


@dataclass
class TokenAnswer:
    access_token: str = field(repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: dt.datetime | None = None
    scope: str | None = None
    token_type: str | None = None


def _read_answer(response: httpx.Response, name: str, what: str) -> TokenAnswer:
    try:
        data: dict[str, Any] = response.json()
    except ValueError:
        data = dict(parse_qsl(response.text))
    if response.status_code >= 400 or "error" in data or not data.get("access_token"):
        reason = data.get("error") or "no access token in the answer"
        raise OAuthError(f"the token endpoint for {name} refused the {what} (HTTP {response.status_code}: {reason})")
    expires_in = data.get("expires_in")
    expires_at = None
    if expires_in not in (None, ""):
        try:
            expires_at = dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=int(float(expires_in)))
        except (TypeError, ValueError):
            expires_at = None
    return TokenAnswer(
        access_token=str(data["access_token"]),
        refresh_token=data.get("refresh_token") or None,
        expires_at=expires_at,
        scope=data.get("scope"),
        token_type=data.get("token_type"),
    )


def _post(http: httpx.Client | None, token_url: str, form: dict, name: str, what: str) -> TokenAnswer:
    """One POST to a token endpoint, through foldrun.net's "oauth" role unless the caller brings a client."""
    client = http or net.client("oauth")
    try:
        response = client.post(token_url, data=form, headers={"Accept": "application/json"})
    except (net.PrivateAddress, net.NoSuchHost) as exc:
        raise OAuthError(f"the token endpoint for {name} cannot be called: {exc}") from None
    except httpx.HTTPError as exc:
        raise OAuthError(f"the token endpoint for {name} could not be reached: {net.describe(exc)}") from None
    return _read_answer(response, name, what)


def exchange_code(
    http: httpx.Client | None,
    *,
    name: str,
    token_url: str,
    code: str,
    redirect_uri: str,
    client_id: str,
    client_secret: str | None,
    verifier: str | None,
) -> TokenAnswer:
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri, "client_id": client_id}
    if client_secret:
        form["client_secret"] = client_secret
    if verifier:
        form["code_verifier"] = verifier
    return _post(http, token_url, form, name, "code exchange")


def refresh(
    http: httpx.Client | None,
    *,
    name: str,
    token_url: str,
    refresh_token: str,
    client_id: str | None,
    client_secret: str | None,
) -> TokenAnswer:
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    if client_id:
        form["client_id"] = client_id
    if client_secret:
        form["client_secret"] = client_secret
    return _post(http, token_url, form, name, "refresh")


def recipe_from_answer(answer: TokenAnswer, *, token_url: str, client_id: str, client_secret: str | None) -> dict:
    """What the vault stores for a connected credential."""
    recipe = {"token_url": token_url, "client_id": client_id, "access_token": answer.access_token}
    if client_secret:
        recipe["client_secret"] = client_secret
    if answer.refresh_token:
        recipe["refresh_token"] = answer.refresh_token
    if answer.expires_at:
        recipe["expires_at"] = answer.expires_at.isoformat()
    if answer.scope:
        recipe["scope"] = answer.scope
    return recipe


def stored_sentence(name: str, where: str, answer: TokenAnswer, tz: dt.tzinfo | None = None) -> str:
    """What `connect` says after storing: refreshes by itself, or when it expires."""
    if answer.refresh_token:
        return f"Stored {name} in {where}: it refreshes itself before every use."
    if answer.expires_at:
        moment = answer.expires_at.astimezone(tz) if tz else answer.expires_at
        return (
            f"Stored {name} in {where} as is: the provider sent no refresh token, so it expires at "
            f"{moment:%Y-%m-%d %H:%M %Z} — connect again after that."
        )
    return (
        f"Stored {name} in {where} as is: the provider sent no refresh token and no expiry, "
        "so it lasts until the provider revokes it."
    )
