"""What the API says about a secret: names, scope, who and when — never a value."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from foldrun.contract.presets import PRESETS
from foldrun.openapi import NO_NUL, StrictCharField
from vault.actions import NAME_RE
from vault.oauth import OAUTH_PRESETS
from vault.models import ProviderCheck, Secret, SecretKind


def _who(user) -> str | None:
    return user.email if user is not None else None


def secret_data(row: Secret, *, overridden: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": row.public_id,
        "name": row.name,
        "scope": row.scope,
        "workspace": row.workspace.name if row.workspace_id else None,
        "kind": row.kind,
        "hosts": list(row.hosts or []),
        "created_by": _who(row.created_by),
        "created_at": row.created_at.isoformat(),
        "updated_by": _who(row.updated_by),
        "updated_at": row.updated_at.isoformat(),
    }
    if row.kind == "oauth2":
        data["refreshable"] = row.refreshable
        data["expires_at"] = row.expires_at.isoformat() if row.expires_at else None
    if overridden:
        data["overridden"] = True
    return data


def check_data(row: ProviderCheck) -> dict[str, Any]:
    return {
        "id": row.public_id,
        "endpoint": row.endpoint,
        "format": row.format,
        "provider": row.provider or None,
        "key": {"name": row.key_name or None, "scope": row.key_scope or None},
        "model": row.model or None,
        "used_by": list(row.used_by or []),
        "verdict": row.verdict or None,
        "message": row.message or None,
        "checked_at": row.checked_at.isoformat() if row.checked_at else None,
        "broken_since": row.broken_since.isoformat() if row.broken_since else None,
    }


# ---------------------------------------------------------------- OpenAPI: what the vault API takes and answers


class SecretOut(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    scope = serializers.ChoiceField(choices=["account", "workspace"])
    workspace = serializers.CharField(allow_null=True)
    kind = serializers.ChoiceField(choices=SecretKind.choices)
    hosts = serializers.ListField(child=serializers.CharField(), help_text="where the value may be sent")
    created_by = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    updated_by = serializers.CharField(allow_null=True)
    updated_at = serializers.DateTimeField()
    refreshable = serializers.BooleanField(required=False, help_text="oauth2 only")
    expires_at = serializers.DateTimeField(required=False, allow_null=True, help_text="oauth2 only")
    overridden = serializers.BooleanField(required=False, help_text="an account secret a workspace one shadows")


class SecretListOut(serializers.Serializer):
    results = SecretOut(many=True)


# vault.actions.HOST_RE on the trimmed, lower-cased entry.
HOSTS_PATTERN = (
    r"^\s*(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*(:\d{1,5})?\s*$"
)


class _SecretIn(serializers.Serializer):
    openapi_closed = "is not a field of a secret; send value (or oauth) and optionally hosts."
    hosts = serializers.ListField(
        child=StrictCharField(regex_pattern=HOSTS_PATTERN),
        required=False,
        help_text="the https origins the value may be sent to; absent keeps those set",
    )


class SecretValueIn(_SecretIn):
    value = StrictCharField(min_length=1, help_text="the secret; never shown again")


# No string of a body may hold a NUL (foldrun's JSON parser refuses one anywhere: no column takes it).
_PLAIN = {"type": "string", "pattern": NO_NUL}
_TEXT = {"type": "string", "pattern": r"^[^\x00]*\S[^\x00]*$"}
_RECIPE_COMMON = {
    "token_url": {"type": "string", "pattern": r"^https?://[^\s\x00]*$"},
    "client_secret": _PLAIN,
    "scope": _PLAIN,
    "expires_at": {"type": "string", "format": "date-time", "description": "RFC 3339, e.g. 2026-12-01T10:00:00Z"},
}


@extend_schema_field(
    {
        "anyOf": [
            {
                "type": "object",
                "title": "RefreshRecipe",
                "additionalProperties": False,
                "required": ["token_url", "client_id", "refresh_token"],
                "properties": {**_RECIPE_COMMON, "client_id": _TEXT, "refresh_token": _TEXT, "access_token": _PLAIN},
            },
            {
                "type": "object",
                "title": "AccessTokenRecipe",
                "additionalProperties": False,
                "required": ["token_url", "access_token"],
                "properties": {**_RECIPE_COMMON, "client_id": _PLAIN, "access_token": _TEXT},
            },
        ]
    }
)
class OAuthRecipeField(serializers.DictField):
    """An OAuth recipe (vault.actions._validate_recipe reads it): a refresh recipe, or an access token alone."""


class SecretOAuthIn(_SecretIn):
    oauth = OAuthRecipeField(help_text="an OAuth recipe: token_url, client_id, client_secret, refresh_token…")


SECRET_IN = PolymorphicProxySerializer(
    component_name="SecretIn", serializers=[SecretValueIn, SecretOAuthIn], resource_type_field_name=None
)
SECRET_NAME_PATTERN = NAME_RE.pattern


class ProviderKeyOut(serializers.Serializer):
    name = serializers.CharField(allow_null=True)
    scope = serializers.CharField(allow_null=True)


class ProviderRowOut(serializers.Serializer):
    endpoint = serializers.CharField()
    format = serializers.CharField()
    provider = serializers.CharField(allow_null=True)
    key = ProviderKeyOut()
    model = serializers.CharField(allow_null=True)
    used_by = serializers.ListField(child=serializers.CharField())
    verdict = serializers.CharField(allow_null=True)
    message = serializers.CharField(allow_null=True)
    checked_at = serializers.DateTimeField(allow_null=True)


class ProviderCheckOut(ProviderRowOut):
    id = serializers.CharField()
    broken_since = serializers.DateTimeField(allow_null=True)


class ProvidersOut(serializers.Serializer):
    results = ProviderRowOut(many=True, help_text="each provider the desks use, with its last check")
    no_longer_used = ProviderCheckOut(many=True)


MODEL_MISSING = "name the model to probe, e.g. claude-haiku-4-5."


FIXED_PRESETS = sorted(p.name for p in PRESETS if not p.needs_base_url)


NEEDS_BASE_URL = sorted(p.name for p in PRESETS if p.needs_base_url)


def _provider_block(names: list[str], required: list[str], description: str) -> dict:
    return {
        "type": "object",
        "additionalProperties": False,
        "required": required,
        "description": description,
        "properties": {
            "name": {"type": "string", "enum": names},
            "base_url": {"type": "string", "pattern": r"^https?://\S+$"},
            "format": {"type": "string", "enum": ["anthropic", "openai", "responses"]},
            "key": {"type": "string", "pattern": r"^\$\{[A-Z][A-Z0-9_]*\}$"},
            "key_header": {"type": "string", "enum": ["x-api-key", "bearer"]},
        },
    }


# A preset with no fixed address (qwen…) needs base_url: check_probe refuses the block without one.
@extend_schema_field(
    {
        "oneOf": [
            {"type": "string", "enum": FIXED_PRESETS, "description": "a preset with a fixed address"},
            _provider_block(FIXED_PRESETS, ["name"], "a provider block"),
            _provider_block(
                NEEDS_BASE_URL, ["name", "base_url"], "a provider block for a preset with no fixed address"
            ),
        ]
    }
)
class ProviderField(serializers.JSONField):
    """A preset's name or a provider block, as AGENTS.md's `provider:` takes; check_probe reads it."""


class ProbeIn(serializers.Serializer):
    model = StrictCharField(
        regex_pattern=r"\S",
        pattern_message=MODEL_MISSING,
        max_length=200,
        error_messages={
            "required": MODEL_MISSING,
            "blank": MODEL_MISSING,
            "null": MODEL_MISSING,
            "invalid": MODEL_MISSING,
        },
    )
    provider = ProviderField(
        required=False,
        allow_null=True,
        help_text="a preset name or a provider block; the desk's AGENTS.md one when absent",
    )


class ProbeOut(serializers.Serializer):
    ok = serializers.BooleanField()
    endpoint = serializers.CharField()
    format = serializers.CharField()
    model = serializers.CharField()
    error = serializers.CharField(required=False)
    requests = serializers.IntegerField()
    lines = serializers.ListField(child=serializers.CharField())


# An http(s) URL as RFC 3986 has it, in ASCII: a host name, a port up to 65535, then path, query and fragment
# of URI characters (a % only as %XX). The consent URL is auth_url with the query added, and the schema
# promises a client a `uri` there: "http://fÞn" or "http://a/{x}" would not be one.
_PORT = r"(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
_URI_CHAR = r"(%[0-9A-Fa-f]{2}|[A-Za-z0-9._~:@!$&'()*+,;=/-])"
URL_PATTERN = (
    rf"^\s*https?://[A-Za-z0-9.-]+{_PORT}(/{_URI_CHAR}*)?(\?({_URI_CHAR}|\?)*)?(#({_URI_CHAR}|\?)*)?"
    r"\s*$"
)
GIVE_URL = "give the provider's URL."


class _OAuthStartIn(serializers.Serializer):
    openapi_closed = "is not a field of a connect; send name, client_id and provider (or auth_url and token_url)."
    name = StrictCharField(
        regex_pattern=NAME_RE.pattern, max_length=64, help_text="the secret's name, e.g. GITHUB_OAUTH"
    )
    workspace = StrictCharField(
        required=False, allow_blank=True, max_length=63, help_text="a workspace's vault; the account's when absent"
    )
    client_id = StrictCharField(regex_pattern=r"\S", max_length=500)
    client_secret = StrictCharField(required=False, allow_blank=True, max_length=2000)
    scopes = StrictCharField(required=False, allow_blank=True, max_length=2000)


class OAuthPresetStartIn(_OAuthStartIn):
    """A provider foldrun knows: its URLs and scopes are filled in (either URL may still be given)."""

    provider = serializers.ChoiceField(
        choices=sorted(OAUTH_PRESETS),
        error_messages={
            "invalid_choice": (
                f"unknown OAuth provider '{{input}}'; the presets are {', '.join(sorted(OAUTH_PRESETS))}, or custom with "
                "auth_url and token_url."
            )
        },
    )
    # 500: OAuthPending.token_url's column (a longer one was a database error, a 500).
    auth_url = StrictCharField(required=False, max_length=500, regex_pattern=URL_PATTERN)
    token_url = StrictCharField(required=False, max_length=500, regex_pattern=URL_PATTERN)


class OAuthCustomStartIn(_OAuthStartIn):
    """Any other provider: give its authorization and token URLs."""

    provider = serializers.ChoiceField(choices=["custom"], required=False)
    auth_url = StrictCharField(
        max_length=500,
        regex_pattern=URL_PATTERN,
        pattern_message=GIVE_URL,
        error_messages={"required": GIVE_URL, "blank": GIVE_URL},
    )
    token_url = StrictCharField(
        max_length=500,
        regex_pattern=URL_PATTERN,
        pattern_message=GIVE_URL,
        error_messages={"required": GIVE_URL, "blank": GIVE_URL},
    )


OAUTH_START_IN = PolymorphicProxySerializer(
    component_name="OAuthStartIn", serializers=[OAuthPresetStartIn, OAuthCustomStartIn], resource_type_field_name=None
)


class OAuthStartOut(serializers.Serializer):
    consent_url = serializers.URLField(help_text="send the person here: the provider's consent page")
    redirect_uri = serializers.URLField(help_text="register exactly this with the provider")
    scopes = serializers.CharField(allow_blank=True)


class RedirectUriOut(serializers.Serializer):
    redirect_uri = serializers.URLField()


# vault.logins.HOST (a host name, or *.example.com), as the API reads it.
LOGIN_HOST_PATTERN = (
    r"^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)


class SiteLoginIn(serializers.Serializer):
    openapi_closed = "is not a field of a login; give host, namespace, username and password."
    host = StrictCharField(
        regex_pattern=LOGIN_HOST_PATTERN,
        max_length=253,
        help_text="the site's host name, or *.example.com for its subdomains",
    )
    namespace = StrictCharField(
        regex_pattern=r"^[A-Za-z0-9_.-]{1,64}$",
        required=False,
        help_text="several logins to one host, one per namespace; default `default`",
    )
    username = StrictCharField(regex_pattern=r"^[^\x00]*\S[^\x00]*$", max_length=320)
    password = StrictCharField(min_length=1, max_length=1024, help_text="sealed at rest; never shown again")


class SiteLoginOut(serializers.Serializer):
    id = serializers.CharField()
    host = serializers.CharField()
    namespace = serializers.CharField()
    username = serializers.CharField()
    createdAt = serializers.DateTimeField()  # noqa: N815
    updatedAt = serializers.DateTimeField()  # noqa: N815


class SiteLoginListOut(serializers.Serializer):
    results = SiteLoginOut(many=True)
