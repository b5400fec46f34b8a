"""The library API's account-wide views: the library overview (every shared
file, who grants it, what overrides it) and the gallery shelf — its tools,
one tool's files, and installing or upgrading a copy."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response

from accounts.access import ScopedAPIView
from foldrun.api import ApiError
from foldrun.openapi import error

from . import serializers as s
from .actions.gallery import GalleryError, do_install_gallery_tool
from .actions.writes import WriteRefused
from .services import gallery_overview, gallery_tool_files, library_overview, sha256_text
from .views import WRITE_ERRORS, not_found_error, refused


# ---------------------------------------------------------------- library & gallery


class LibraryOverviewView(ScopedAPIView):
    """GET /api/library: every shared file, who grants it, what overrides it."""

    @extend_schema(responses={200: s.LibraryOut})
    def get(self, request):
        return Response({"results": library_overview(self.account)})


class GalleryView(ScopedAPIView):
    """GET /api/gallery: the shelf's tools and the copies the account keeps."""

    @extend_schema(responses=s.GalleryOut, operation_id="gallery_list")
    def get(self, request):
        return Response({"results": gallery_overview(self.account)})


class GalleryToolView(ScopedAPIView):
    """GET /api/gallery/<tool>: one shelf tool with its files' content — what
    a laptop fetches to run a gallery tool as the platform would."""

    @extend_schema(responses=s.GalleryToolOut)
    def get(self, request, tool: str):
        shelf = gallery_tool_files(tool)
        if shelf is None:
            raise not_found_error()
        return Response(
            {
                "name": tool,
                "files": [
                    {"path": p, "content": t, "sha256": sha256_text(t), "size": len(t.encode("utf-8"))}
                    for p, t in sorted(shelf.items())
                ],
            }
        )


class GalleryInstallView(ScopedAPIView):
    """POST /api/library/gallery/<tool>/install {"workspace"?} — and …/upgrade."""

    serializer_class = s.InstallSerializer  # for the OpenAPI schema

    upgrade = False

    @extend_schema(
        request=s.InstallSerializer,
        responses={
            201: s.WriteResultOut,
            **WRITE_ERRORS,
            409: error(409, "Upgrade: the scope keeps no copy of the tool (install it first)."),
        },
    )
    def post(self, request, tool: str):
        self.require_write()
        serializer = s.InstallSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        name = serializer.validated_data.get("workspace")
        workspace = self.get_workspace(name) if name else None
        try:
            result = do_install_gallery_tool(
                account=self.account, workspace=workspace, name=tool, author=request.user, upgrade=self.upgrade
            )
        except GalleryError as exc:
            raise ApiError(exc.message, code=exc.code, status_code=exc.status) from None
        except WriteRefused as exc:  # a shelf file where the scope has a folder of that name, or the reverse
            raise refused(exc) from None
        return Response(s.write_result(result), status=status.HTTP_201_CREATED)


class GalleryUpgradeView(GalleryInstallView):
    upgrade = True
