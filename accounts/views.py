"""Account API: version, me, workspaces, members, invites, tokens, sign-in for the CLI.

Views are thin: they scope through ScopedAPIView and call one action.
"""
from __future__ import annotations

from django.contrib.auth import authenticate, get_user_model
from django.http import Http404
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import AllowAny, IsAuthenticated
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle
from rest_framework.views import APIView

import foldrun
from foldrun.api import ApiError

from . import actions
from .access import ScopedAPIView
from .browsers import browser_versions
from .models import ApiToken, Invite, Membership, Workspace
from .serializers import (InviteSerializer, MemberSerializer, TokenSerializer, WorkspaceDetailSerializer,
                          WorkspaceSerializer)


# OpenAPI: these views read plain JSON bodies; the shapes are declared here so
# /api/schema/ documents what each one takes and answers.
_ERROR = inline_serializer("Error", {"code": serializers.CharField(), "message": serializers.CharField(),
                                     "details": serializers.DictField()})
_ACCOUNT = inline_serializer("AccountRef", {"id": serializers.CharField(), "name": serializers.CharField()})
_WORKSPACE_IN = inline_serializer("WorkspaceIn", {"name": serializers.CharField(),
                                                  "description": serializers.CharField(required=False)})
_WORKSPACE_PATCH = inline_serializer("WorkspacePatch", {"name": serializers.CharField(required=False),
                                                        "description": serializers.CharField(required=False)})
_ROLE_IN = inline_serializer("RoleIn", {"role": serializers.ChoiceField(choices=["owner", "admin", "editor", "approver", "viewer"])})
_INVITE_IN = inline_serializer("InviteIn", {"email": serializers.EmailField(), "role": serializers.ChoiceField(
    choices=["owner", "admin", "editor", "approver", "viewer"], required=False)})
_ACCEPT_IN = inline_serializer("InviteAcceptIn", {"token": serializers.CharField()})
_ACCEPTED = inline_serializer("InviteAccepted", {"account": _ACCOUNT, "role": serializers.CharField()})
_TOKEN_IN = inline_serializer("TokenIn", {"name": serializers.CharField(),
                                          "expires_in_days": serializers.IntegerField(required=False, min_value=1)})
_TOKEN_OUT = inline_serializer("TokenCreated", {"id": serializers.CharField(), "name": serializers.CharField(),
                                                "hint": serializers.CharField(), "state": serializers.CharField(),
                                                "token": serializers.CharField(help_text="shown once, never again")})
_LOGIN_IN = inline_serializer("LoginIn", {"email": serializers.EmailField(), "password": serializers.CharField(),
                                          "name": serializers.CharField(required=False)})
_LOGIN_OUT = inline_serializer("LoginOut", {"token": serializers.CharField(), "id": serializers.CharField(),
                                            "account": _ACCOUNT})
_VERSION = inline_serializer("Version", {
    "version": serializers.CharField(), "api": serializers.IntegerField(),
    "browsers": serializers.ListField(child=serializers.CharField(), required=False,
                                      help_text="the browsers this install drives; absent when none"),
    "browser_versions": serializers.DictField(child=serializers.CharField(), required=False,
                                              help_text='each browser\'s version, e.g. {"chromium": "156.0.8078.73"}')})
_ME = inline_serializer("Me", {"email": serializers.EmailField(), "account": serializers.DictField(),
                               "accounts": serializers.ListField(child=serializers.DictField())})
_REFUSED = {400: _ERROR, 403: _ERROR, 404: _ERROR, 409: _ERROR}


def _body(request) -> dict:
    if not isinstance(request.data, dict):
        raise ApiError("The request body must be a JSON object.", code="invalid")
    return request.data


class VersionView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(responses=_VERSION)
    def get(self, request):
        answer: dict = {"version": foldrun.__version__, "api": 1}
        versions = browser_versions()
        if versions:
            # `foldrun check` compares a pinned user_agent: with these (spec/tools.md).
            answer.update(browsers=sorted(versions), browser_versions=versions)
        return Response(answer)


class MeView(ScopedAPIView):
    @extend_schema(responses=_ME)
    def get(self, request):
        user = request.user
        memberships = user.memberships.select_related("account").order_by("created_at")
        return Response(
            {
                "email": user.email,
                "account": {"id": self.account.public_id, "name": self.account.name, "role": self.membership.role},
                "accounts": [
                    {"id": m.account.public_id, "name": m.account.name, "role": m.role} for m in memberships
                ],
            }
        )


class WorkspaceListView(ScopedAPIView):
    @extend_schema(responses=WorkspaceSerializer(many=True))
    def get(self, request):
        workspaces = Workspace.objects.filter(account=self.account).order_by("name")
        return Response(WorkspaceSerializer(workspaces, many=True).data)

    @extend_schema(request=_WORKSPACE_IN, responses={201: WorkspaceSerializer, **_REFUSED})
    def post(self, request):
        self.require_write()
        body = _body(request)
        workspace = actions.do_create_workspace(
            self.account, body.get("name"), request.user, description=str(body.get("description") or "")
        )
        return Response(WorkspaceSerializer(workspace).data, status=status.HTTP_201_CREATED)


class WorkspaceDetailView(ScopedAPIView):
    @extend_schema(responses={200: WorkspaceDetailSerializer, 404: _ERROR})
    def get(self, request, ws: str):
        return Response(WorkspaceDetailSerializer(self.get_workspace(ws)).data)

    @extend_schema(request=_WORKSPACE_PATCH, responses={200: WorkspaceSerializer, **_REFUSED})
    def patch(self, request, ws: str):
        workspace = self.get_workspace(ws)
        self.require_write()
        body = _body(request)
        workspace = actions.do_update_workspace(
            workspace, name=body.get("name"), description=body.get("description")
        )
        return Response(WorkspaceSerializer(workspace).data)

    @extend_schema(
        summary="Delete a workspace and everything in it",
        description=actions.WORKSPACE_DELETE_REMOVES
        + " Owners and admins only; there is no undo. `GET` the workspace first: its `run_count` says how many "
          "runs go with it.",
        responses={204: None, 403: _ERROR, 404: _ERROR},
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

    @extend_schema(responses={200: MemberSerializer, 404: _ERROR})
    def get(self, request, member_id: str):
        return Response(MemberSerializer(self._member(member_id)).data)

    @extend_schema(request=_ROLE_IN, responses={200: MemberSerializer, **_REFUSED})
    def patch(self, request, member_id: str):
        member = self._member(member_id)
        self.require_manage()
        member = actions.do_change_role(member, _body(request).get("role"), self.membership)
        return Response(MemberSerializer(member).data)

    @extend_schema(responses={204: None, 403: _ERROR, 404: _ERROR, 409: _ERROR})
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

    @extend_schema(request=_INVITE_IN, responses={201: InviteSerializer, **_REFUSED})
    def post(self, request):
        self.require_manage()
        body = _body(request)
        email, role = actions.check_invite(self.membership, body.get("email"), body.get("role"))
        invite, _raw = actions.do_invite(self.membership, email, role)
        return Response(InviteSerializer(invite).data, status=status.HTTP_201_CREATED)


class InviteDetailView(ScopedAPIView):
    @extend_schema(responses={204: None, 403: _ERROR, 404: _ERROR})
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

    @extend_schema(request=_ACCEPT_IN, responses={200: _ACCEPTED, **_REFUSED})
    def post(self, request):
        raw = _body(request).get("token")
        if not isinstance(raw, str) or not raw:
            raise ApiError("token: the invite token is missing.", code="invalid", details={"field": "token"})
        membership = actions.do_accept_invite(request.user, raw)
        return Response({"account": {"id": membership.account.public_id, "name": membership.account.name}, "role": membership.role})


MAX_TOKEN_DAYS = 3650


class TokenListView(ScopedAPIView):
    @extend_schema(responses=TokenSerializer(many=True))
    def get(self, request):
        tokens = ApiToken.objects.filter(user=request.user, account=self.account)
        return Response(TokenSerializer(tokens, many=True).data)

    @extend_schema(request=_TOKEN_IN, responses={201: _TOKEN_OUT, 400: _ERROR})
    def post(self, request):
        body = _body(request)
        name = actions.check_token_name(body.get("name"))
        days = body.get("expires_in_days")
        if days is not None and (not isinstance(days, int) or isinstance(days, bool) or days < 1):
            raise ApiError("expires_in_days: give a whole number of days, 1 or more.", code="invalid", details={"field": "expires_in_days"})
        if days is not None and days > MAX_TOKEN_DAYS:
            # Past this a date overflows; a token meant to last that long should not expire at all.
            raise ApiError(f"expires_in_days: at most {MAX_TOKEN_DAYS} days; leave it out for a token that does not expire.",
                           code="invalid", details={"field": "expires_in_days"})
        token, raw = actions.do_create_token(request.user, self.account, name, days=days)
        data = TokenSerializer(token).data
        data["token"] = raw  # shown once, never again
        return Response(data, status=status.HTTP_201_CREATED)


class TokenDetailView(ScopedAPIView):
    @extend_schema(responses={204: None, 404: _ERROR})
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

    @extend_schema(request=_LOGIN_IN, responses={201: _LOGIN_OUT, 400: _ERROR, 401: _ERROR})
    def post(self, request):
        body = _body(request)
        email, password = body.get("email"), body.get("password")
        if not isinstance(email, str) or not isinstance(password, str) or not email or not password:
            raise ApiError("Give an email and a password.", code="invalid")
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
            {"token": raw, "id": token.public_id, "account": {"id": membership.account.public_id, "name": membership.account.name}},
            status=status.HTTP_201_CREATED,
        )


_ACCOUNT_OUT = inline_serializer("Account", {
    "id": serializers.CharField(), "name": serializers.CharField(),
    "search_engine_url": serializers.CharField(help_text="the account's own SearXNG; empty for the install's default"),
    "search_engine": serializers.CharField(allow_null=True, help_text="the engine a search step asks; null when none"),
})
_ACCOUNT_PATCH = inline_serializer("AccountPatch", {"search_engine_url": serializers.CharField(allow_blank=True)})


def account_answer(account) -> dict:
    return {"id": account.public_id, "name": account.name, "search_engine_url": account.search_engine_url,
            "search_engine": account.effective_search_engine_url or None}


class AccountView(ScopedAPIView):
    """The account's own settings: today its search engine (spec/tools.md, Search — the account's own engine)."""

    @extend_schema(responses=_ACCOUNT_OUT)
    def get(self, request):
        return Response(account_answer(self.account))

    @extend_schema(request=_ACCOUNT_PATCH, responses={200: _ACCOUNT_OUT, **_REFUSED})
    def patch(self, request):
        self.require_manage()
        body = _body(request)
        unknown = sorted(set(body) - {"search_engine_url"})
        if unknown:
            raise ApiError(f"{unknown[0]} is not an account setting; the one there is: search_engine_url.",
                           code="invalid", details={"field": unknown[0]})
        account = self.account
        if "search_engine_url" in body:
            account = actions.do_set_search_engine(account, actions.check_search_engine_url(body["search_engine_url"]))
        return Response(account_answer(account))
