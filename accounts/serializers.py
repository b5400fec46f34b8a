from __future__ import annotations

from rest_framework import serializers

from .models import ApiToken, Invite, Membership, Workspace


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
