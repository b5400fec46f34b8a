"""Account API: version, me, workspaces, members, invites, tokens, sign-in for the CLI.

Views are thin: they scope through ScopedAPIView and call one action.
"""

from __future__ import annotations

from django.contrib.auth import authenticate, get_user_model
from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

import foldrun
import foldrun.openapi
from foldrun.api import ApiError
from foldrun.openapi import errors

from . import actions
from . import serializers as s
from .access import ScopedAPIView
from .browsers import browser_versions
from .models import ApiToken, Invite, Membership, Workspace
from .serializers import (
    InviteSerializer,
    MemberSerializer,
    TokenSerializer,
    WorkspaceDetailSerializer,
    WorkspaceSerializer,
)


_BODY = foldrun.openapi.validated


class VersionView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(responses=s.VersionSerializer)
    def get(self, request):
        answer: dict = {"version": foldrun.__version__, "api": 1}
        versions = browser_versions()
        if versions:
            # `foldrun check` compares a pinned user_agent: with these (spec/tools.md).
            answer.update(browsers=sorted(versions), browser_versions=versions)
        return Response(answer)


class MeView(ScopedAPIView):
    @extend_schema(responses=s.MeSerializer)
    def get(self, request):
        user = request.user
        memberships = user.memberships.select_related("account").order_by("created_at")
        return Response(
            {
                "email": user.email,
                "account": {"id": self.account.public_id, "name": self.account.name, "role": self.membership.role},
                "accounts": [{"id": m.account.public_id, "name": m.account.name, "role": m.role} for m in memberships],
            }
        )


class WorkspaceListView(ScopedAPIView):
    @extend_schema(responses=WorkspaceSerializer(many=True))
    def get(self, request):
        workspaces = Workspace.objects.filter(account=self.account).order_by("name")
        return Response(WorkspaceSerializer(workspaces, many=True).data)

    @extend_schema(request=s.WorkspaceInSerializer, responses={201: WorkspaceSerializer, **errors(409)})
    def post(self, request):
        self.require_write()
        body = _BODY(s.WorkspaceInSerializer, request.data)
        workspace = actions.do_create_workspace(
            self.account, body["name"], request.user, description=body.get("description", "")
        )
        return Response(WorkspaceSerializer(workspace).data, status=status.HTTP_201_CREATED)


class WorkspaceDetailView(ScopedAPIView):
    @extend_schema(responses=WorkspaceDetailSerializer)
    def get(self, request, ws: str):
        return Response(WorkspaceDetailSerializer(self.get_workspace(ws)).data)

    @extend_schema(request=s.WorkspacePatchSerializer, responses={200: WorkspaceSerializer, **errors(409)})
    def patch(self, request, ws: str):
        workspace = self.get_workspace(ws)
        self.require_write()
        body = _BODY(s.WorkspacePatchSerializer, request.data)
        workspace = actions.do_update_workspace(workspace, name=body.get("name"), description=body.get("description"))
        return Response(WorkspaceSerializer(workspace).data)

    @extend_schema(
        summary="Delete a workspace and everything in it",
        description=actions.WORKSPACE_DELETE_REMOVES
        + " Owners and admins only; there is no undo. `GET` the workspace first: its `run_count` says how many "
        "runs go with it.",
        responses={204: None},
    )
    def delete(self, request, ws: str):
        workspace = self.get_workspace(ws)
        self.require_manage()
        actions.do_delete_workspace(workspace)
        return Response(status=status.HTTP_204_NO_CONTENT)


class MemberListView(ScopedAPIView):
    @extend_schema(responses=MemberSerializer(many=True))
    def get(self, request):
        members = Membership.objects.filter(account=self.account).select_related("user").order_by("created_at")
        return Response(MemberSerializer(members, many=True).data)


class MemberDetailView(ScopedAPIView):
    def _member(self, member_id: str) -> Membership:
        member = Membership.objects.filter(account=self.account, public_id=member_id).select_related("user").first()
        if member is None:
            raise Http404
        return member

    @extend_schema(responses=MemberSerializer)
    def get(self, request, member_id: str):
        return Response(MemberSerializer(self._member(member_id)).data)

    @extend_schema(
        request=s.RoleInSerializer,
        responses={200: MemberSerializer, **errors(409)},
        description="Only an owner makes or unmakes an owner (403); the last owner stays one (409).",
    )
    def patch(self, request, member_id: str):
        member = self._member(member_id)
        self.require_manage()
        member = actions.do_change_role(member, _BODY(s.RoleInSerializer, request.data)["role"], self.membership)
        return Response(MemberSerializer(member).data)

    @extend_schema(responses={204: None, **errors(409)}, description="The last owner cannot be removed (409).")
    def delete(self, request, member_id: str):
        member = self._member(member_id)
        self.require_manage()
        actions.do_remove_member(member, self.membership)
        return Response(status=status.HTTP_204_NO_CONTENT)


class InviteListView(ScopedAPIView):
    @extend_schema(responses=InviteSerializer(many=True))
    def get(self, request):
        invites = Invite.objects.filter(account=self.account).select_related("invited_by").order_by("-created_at")
        return Response(InviteSerializer(invites, many=True).data)

    @extend_schema(
        request=s.InviteInSerializer,
        responses={201: InviteSerializer, **errors(409)},
        description="Invites a person by email (viewer unless `role` says otherwise); 409 when they "
        "are already a member.",
    )
    def post(self, request):
        self.require_manage()
        body = _BODY(s.InviteInSerializer, request.data)
        email, role = actions.check_invite(self.membership, body["email"], body.get("role"))
        invite, _raw = actions.do_invite(self.membership, email, role)
        return Response(InviteSerializer(invite).data, status=status.HTTP_201_CREATED)


class InviteDetailView(ScopedAPIView):
    @extend_schema(responses={204: None})
    def delete(self, request, invite_id: str):
        invite = Invite.objects.filter(account=self.account, public_id=invite_id).first()
        if invite is None:
            raise Http404
        self.require_manage()
        invite.delete()
        return Response(status=status.HTTP_204_NO_CONTENT)


class InviteAcceptView(APIView):
    """Accept an invite as the signed-in user (any account: the token is the proof)."""

    permission_classes = [IsAuthenticated]

    @extend_schema(
        request=s.InviteAcceptInSerializer,
        responses={
            200: s.InviteAcceptedSerializer,
            403: foldrun.openapi.error(403, "The invite was sent to another address."),
            404: foldrun.openapi.error(404, "No such invite, or it was already used."),
            **errors(410),
        },
    )
    def post(self, request):
        raw = _BODY(s.InviteAcceptInSerializer, request.data)["token"]
        membership = actions.do_accept_invite(request.user, raw)
        return Response(
            {"account": {"id": membership.account.public_id, "name": membership.account.name}, "role": membership.role}
        )


class TokenListView(ScopedAPIView):
    @extend_schema(responses=TokenSerializer(many=True))
    def get(self, request):
        tokens = ApiToken.objects.filter(user=request.user, account=self.account)
        return Response(TokenSerializer(tokens, many=True).data)

    @extend_schema(request=s.TokenInSerializer, responses={201: s.TokenCreatedSerializer})
    def post(self, request):
        body = _BODY(s.TokenInSerializer, request.data)
        name = actions.check_token_name(body.get("name"))
        token, raw = actions.do_create_token(request.user, self.account, name, days=body.get("expires_in_days"))
        data = TokenSerializer(token).data
        data["token"] = raw  # shown once, never again
        return Response(data, status=status.HTTP_201_CREATED)


class TokenDetailView(ScopedAPIView):
    @extend_schema(responses={204: None})
    def delete(self, request, token_id: str):
        # Only your own tokens: another member's token is as missing as another account's.
        token = ApiToken.objects.filter(user=request.user, account=self.account, public_id=token_id).first()
        if token is None:
            raise Http404
        actions.do_revoke_token(token)
        return Response(status=status.HTTP_204_NO_CONTENT)


class LoginThrottle(AnonRateThrottle):
    rate = "20/min"


class AuthTokenView(APIView):
    """`foldrun login`: email and password in, a new API token out (shown once)."""

    permission_classes = [AllowAny]
    authentication_classes: list = []
    throttle_classes = [LoginThrottle]

    @extend_schema(
        request=s.LoginInSerializer,
        responses={
            201: s.LoginOutSerializer,
            401: foldrun.openapi.error(401, "That email and password do not match an account."),
        },
    )
    def post(self, request):
        body = _BODY(s.LoginInSerializer, request.data)
        email, password = body["email"], body["password"]
        User = get_user_model()
        candidate = User.objects.filter(email__iexact=email.strip()).first()
        user = authenticate(request, username=candidate.get_username(), password=password) if candidate else None
        if user is None:
            raise ApiError("That email and password do not match an account.", code="bad_credentials", status_code=401)
        membership = Membership.objects.select_related("account").filter(user=user).order_by("created_at").first()
        if membership is None:
            membership = actions.do_set_up_new_user(user)
        name = actions.check_token_name(body.get("name") or "foldrun login")
        token, raw = actions.do_create_token(user, membership.account, name)
        return Response(
            {
                "token": raw,
                "id": token.public_id,
                "account": {"id": membership.account.public_id, "name": membership.account.name},
            },
            status=status.HTTP_201_CREATED,
        )


def account_answer(account) -> dict:
    return {
        "id": account.public_id,
        "name": account.name,
        "search_engine_url": account.search_engine_url,
        "search_engine": account.effective_search_engine_url or None,
    }


class AccountView(ScopedAPIView):
    """The account's own settings: today its search engine (spec/tools.md, Search — the account's own engine)."""

    @extend_schema(responses=s.AccountOutSerializer)
    def get(self, request):
        return Response(account_answer(self.account))

    @extend_schema(request=s.AccountPatchSerializer, responses=s.AccountOutSerializer)
    def patch(self, request):
        self.require_manage()
        # The action's sentences first (they say what a search engine URL must be), then the body's shape.
        data = request.data
        url = (
            actions.check_search_engine_url(data["search_engine_url"])
            if isinstance(data, dict) and "search_engine_url" in data
            else None
        )
        body = _BODY(s.AccountPatchSerializer, data)
        account = self.account
        if "search_engine_url" in body:
            account = actions.do_set_search_engine(account, url)
        return Response(account_answer(account))
