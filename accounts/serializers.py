from __future__ import annotations

from rest_framework import serializers

from foldrun.openapi import StrictCharField, StrictIntegerField

from .models import NAME_RE, NAME_RULE, ApiToken, Invite, Membership, Role, Workspace


class WorkspaceSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id", read_only=True)

    class Meta:
        model = Workspace
        fields = ["id", "name", "description", "created_at"]


class WorkspaceDetailSerializer(WorkspaceSerializer):
    """One workspace, with how many runs it holds (what a delete would take with it)."""

    run_count = serializers.SerializerMethodField()

    class Meta(WorkspaceSerializer.Meta):
        fields = WorkspaceSerializer.Meta.fields + ["run_count"]

    def get_run_count(self, obj: Workspace) -> int:
        return obj.runs.count()


class MemberSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id", read_only=True)
    email = serializers.EmailField(source="user.email", read_only=True)

    class Meta:
        model = Membership
        fields = ["id", "email", "role", "created_at"]


class InviteSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id", read_only=True)
    invited_by = serializers.SerializerMethodField()
    state = serializers.SerializerMethodField()

    class Meta:
        model = Invite
        fields = ["id", "email", "role", "invited_by", "created_at", "expires_at", "state"]

    def get_invited_by(self, invite: Invite) -> str | None:
        return invite.invited_by.email if invite.invited_by else None

    def get_state(self, invite: Invite) -> str:
        from django.utils import timezone

        if invite.accepted_at:
            return "accepted"
        return "expired" if invite.expires_at <= timezone.now() else "pending"


class TokenSerializer(serializers.ModelSerializer):
    id = serializers.CharField(source="public_id", read_only=True)
    state = serializers.SerializerMethodField()

    class Meta:
        model = ApiToken
        fields = ["id", "name", "hint", "created_at", "last_used_at", "expires_at", "revoked_at", "state"]

    def get_state(self, token: ApiToken) -> str:
        if token.revoked_at:
            return "revoked"
        return "active" if token.is_active else "expired"


# ---------------------------------------------------------------- requests and answers of the API's own shapes
# Each request body is read through the serializer that documents it (foldrun.openapi.validated), so what
# /api/schema/ promises is what the view takes; the actions then check what only the database knows.

MAX_TOKEN_DAYS = 3650
# A URL of a SearXNG instance as check_search_engine_url takes it (http(s), a host, no credentials, query or
# fragment), or "": the view runs that check first for its sentences, then this pattern for anything else.
SEARCH_ENGINE_URL = (
    r"^\s*(https?://[A-Za-z0-9](?:[A-Za-z0-9.-]{0,200}[A-Za-z0-9])?(?::[0-9]{1,5})?"
    r"(?:/[A-Za-z0-9._~%-]*)*)?\s*$"
)
TOKEN_NAME = r"^[^\x00-\x1f]*$"
TOKEN_NAME_RULE = "a token name is at most 100 printable characters."


class WorkspaceInSerializer(serializers.Serializer):
    name = StrictCharField(
        max_length=63,
        regex_pattern=NAME_RE.pattern,
        pattern_message=f"%(value)r is not a valid workspace name; use {NAME_RULE}.",
        help_text=f"{NAME_RULE}; unique in the account",
    )
    description = StrictCharField(required=False, allow_blank=True, max_length=300)


class WorkspacePatchSerializer(serializers.Serializer):
    name = StrictCharField(
        required=False,
        max_length=63,
        regex_pattern=NAME_RE.pattern,
        pattern_message=f"%(value)r is not a valid workspace name; use {NAME_RULE}.",
    )
    description = StrictCharField(required=False, allow_blank=True, max_length=300)


NOT_A_ROLE = {"invalid_choice": f"'{{input}}' is not a role; use one of {', '.join(Role.values)}."}


class RoleInSerializer(serializers.Serializer):
    openapi_closed = "is not a field of a member; the one there is: role."
    role = serializers.ChoiceField(choices=Role.choices, error_messages=NOT_A_ROLE)


class InviteInSerializer(serializers.Serializer):
    email = serializers.EmailField(max_length=254, error_messages={"invalid": "%(value)r is not an email address."})
    role = serializers.ChoiceField(
        choices=Role.choices, required=False, error_messages=NOT_A_ROLE, help_text="viewer when absent"
    )


class InviteAcceptInSerializer(serializers.Serializer):
    token = StrictCharField(max_length=200, help_text="the inv_… token from the invite link")


class AccountRefSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="acc_…")
    name = serializers.CharField()


class InviteAcceptedSerializer(serializers.Serializer):
    account = AccountRefSerializer()
    role = serializers.ChoiceField(choices=Role.choices)


class TokenInSerializer(serializers.Serializer):
    name = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=100,
        regex_pattern=TOKEN_NAME,
        pattern_message=TOKEN_NAME_RULE,
        help_text='"cli" when absent',
    )
    # Past MAX_TOKEN_DAYS a date overflows; a token meant to last that long should not expire at all.
    expires_in_days = StrictIntegerField(
        required=False,
        allow_null=True,
        min_value=1,
        max_value=MAX_TOKEN_DAYS,
        error_messages={
            "invalid": "give a whole number of days, 1 or more.",
            "min_value": "give a whole number of days, 1 or more.",
            "max_value": f"at most {MAX_TOKEN_DAYS} days; leave it out for a token that does not expire.",
        },
        help_text="absent or null: the token does not expire",
    )


class TokenCreatedSerializer(TokenSerializer):
    token = serializers.CharField(help_text="the frt_… token: shown once, never again")

    class Meta(TokenSerializer.Meta):
        fields = TokenSerializer.Meta.fields + ["token"]


class LoginInSerializer(serializers.Serializer):
    email = StrictCharField(max_length=254, help_text="the account's email address")
    password = StrictCharField(max_length=4096)
    name = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=100,
        regex_pattern=TOKEN_NAME,
        pattern_message=TOKEN_NAME_RULE,
        help_text='the new token\'s name; "foldrun login" when absent',
    )


class LoginOutSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="shown once, never again")
    id = serializers.CharField(help_text="the token's id, tok_…")
    account = AccountRefSerializer()


class AccountOutSerializer(serializers.Serializer):
    id = serializers.CharField()
    name = serializers.CharField()
    search_engine_url = serializers.CharField(
        allow_blank=True, help_text="the account's own SearXNG; empty for the install's default"
    )
    search_engine = serializers.CharField(allow_null=True, help_text="the engine a search step asks; null when none")


class AccountPatchSerializer(serializers.Serializer):
    # A misspelt setting is refused, not ignored: the schema says so (additionalProperties: false).
    openapi_closed = "is not an account setting; the one there is: search_engine_url."
    search_engine_url = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=500,
        regex_pattern=SEARCH_ENGINE_URL,
        pattern_message="is not an http or https URL such as https://search.example.com.",
        help_text="http(s) address of a SearXNG instance; empty for the default",
    )


class VersionSerializer(serializers.Serializer):
    version = serializers.CharField()
    api = serializers.IntegerField()
    browsers = serializers.ListField(
        child=serializers.CharField(), required=False, help_text="the browsers this install drives; absent when none"
    )
    browser_versions = serializers.DictField(
        child=serializers.CharField(),
        required=False,
        help_text='each browser\'s version, e.g. {"chromium": "156.0.8078.73"}',
    )


class MembershipRefSerializer(AccountRefSerializer):
    role = serializers.ChoiceField(choices=Role.choices)


class MeSerializer(serializers.Serializer):
    email = serializers.EmailField()
    account = MembershipRefSerializer(help_text="the account this request acts in")
    accounts = MembershipRefSerializer(many=True, help_text="every account you are a member of")
