from __future__ import annotations

from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

import foldrun
from foldrun.api import ApiError

from .access import ScopedAPIView


class VersionView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list = []

    def get(self, request):
        return Response({"version": foldrun.__version__, "api": 1})


class MeView(ScopedAPIView):
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
