"""The library API. Every path exists twice: under a workspace and under the
account library (`/api/library/…`). `…/history` and `…/rollback` are matched
before a plain file path."""

from django.urls import path

from . import views, views_files, views_gallery

urlpatterns = [
    path("gallery", views_gallery.GalleryView.as_view(), name="api-gallery"),
    path("gallery/<str:tool>", views_gallery.GalleryToolView.as_view(), name="api-gallery-tool"),
    path("library", views_gallery.LibraryOverviewView.as_view(), name="api-library"),
    path("library/gallery/<str:tool>/install", views_gallery.GalleryInstallView.as_view(), name="api-gallery-install"),
    path("library/gallery/<str:tool>/upgrade", views_gallery.GalleryUpgradeView.as_view(), name="api-gallery-upgrade"),
]

for prefix, name in (("workspaces/<str:ws>/", "ws"), ("library/", "lib")):
    urlpatterns += [
        path(f"{prefix}push", views.PushView.as_view(), name=f"api-{name}-push"),
        path(f"{prefix}deploy", views.DeployView.as_view(), name=f"api-{name}-deploy"),
        path(f"{prefix}check", views.CheckView.as_view(), name=f"api-{name}-check"),
        path(f"{prefix}files", views_files.FilesView.as_view(), name=f"api-{name}-files"),
        path(f"{prefix}files/<path:path>/history", views_files.HistoryView.as_view(), name=f"api-{name}-file-history"),
        path(
            f"{prefix}files/<path:path>/rollback", views_files.RollbackView.as_view(), name=f"api-{name}-file-rollback"
        ),
        path(f"{prefix}files/<path:path>", views_files.FileView.as_view(), name=f"api-{name}-file"),
        path(f"{prefix}revisions", views_files.RevisionsView.as_view(), name=f"api-{name}-revisions"),
        path(f"{prefix}revisions/<int:number>", views_files.RevisionView.as_view(), name=f"api-{name}-revision"),
        path(f"{prefix}diff", views_files.DiffView.as_view(), name=f"api-{name}-diff"),
    ]
