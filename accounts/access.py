"""Tenancy in one place: every API view and page finds its objects through here.

Another account's object is a 404 exactly like a missing one. A member who
may read but not write gets a 403.
"""

from __future__ import annotations

from django.http import Http404
from rest_framework import exceptions
from rest_framework.permissions import IsAuthenticated
from rest_framework.views import APIView

from .models import Account, ApiToken, Membership, Workspace


def current_membership(request) -> Membership | None:
    """The membership a request acts through.

    A token is bound to one account. A browser session uses the profile's
    current account, else the user's oldest membership.
    """
    user = request.user
    if not user.is_authenticated:
        return None
    auth = getattr(request, "auth", None)
    if isinstance(auth, ApiToken):
        return Membership.objects.select_related("account").filter(user=user, account=auth.account).first()
    profile = getattr(user, "profile", None)
    if profile is not None and profile.current_account_id:
        membership = (
            Membership.objects.select_related("account")
            .filter(user=user, account_id=profile.current_account_id)
            .first()
        )
        if membership is not None:
            return membership
    return Membership.objects.select_related("account").filter(user=user).order_by("created_at", "pk").first()


def workspace_for_user(membership: Membership | None, name: str) -> tuple[Workspace, bool]:
    """The workspace called `name` in the member's account, and whether they may write it."""
    if membership is None:
        raise Http404
    workspace = Workspace.objects.filter(account_id=membership.account_id, name=name).first()
    if workspace is None:
        raise Http404
    return workspace, membership.can_write


class ScopedAPIView(APIView):
    """The base of every API view: resolves the member, scopes every lookup.

    Subclasses call `self.require_write()` before any change and
    `self.get_workspace(name)` for a workspace in the URL.
    """

    permission_classes = [IsAuthenticated]
    # The schema (foldrun.openapi.AutoSchema) lists 403 on every operation: no membership, or a role that may not.
    openapi_scoped = True

    def initial(self, request, *args, **kwargs) -> None:
        super().initial(request, *args, **kwargs)
        self.membership = current_membership(request)
        if self.membership is None:
            raise exceptions.PermissionDenied("You are not a member of any account.")
        self.account: Account = self.membership.account

    def require_write(self) -> None:
        if not self.membership.can_write:
            raise exceptions.PermissionDenied(
                f"Your role ({self.membership.role}) can read this account but not change it."
            )

    def require_manage(self) -> None:
        if not self.membership.can_manage:
            raise exceptions.PermissionDenied(f"Your role ({self.membership.role}) cannot manage members or settings.")

    def get_workspace(self, name: str) -> Workspace:
        workspace, _ = workspace_for_user(self.membership, name)
        return workspace
