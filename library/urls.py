"""Dashboard pages over library files (the API lives in api_urls.py)."""

from django.urls import path

from . import pages, pages_library, pages_workspace

urlpatterns = [
    path("w/<str:ws>/", pages_workspace.workspace_page, name="workspace"),
    path("w/<str:ws>/files/<path:path>", pages.workspace_file, name="workspace-file"),
    path("w/<str:ws>/edit/<path:path>", pages.workspace_edit, name="workspace-edit"),
    path("w/<str:ws>/rollback/<path:path>", pages.workspace_rollback, name="workspace-rollback"),
    path("w/<str:ws>/revisions/<int:number>/", pages.workspace_revision, name="workspace-revision"),
    path("library/", pages_library.library_page, name="library"),
    path("library/files/<path:path>", pages.library_file, name="library-file"),
    path("library/edit/<path:path>", pages.library_edit, name="library-edit"),
    path("library/rollback/<path:path>", pages.library_rollback, name="library-rollback"),
    path("library/revisions/<int:number>/", pages.library_revision, name="library-revision"),
    path("library/gallery/<str:tool>/install", pages_library.gallery_install, name="gallery-install"),
    path("library/gallery/<str:tool>/update", pages_library.gallery_update, name="gallery-update"),
]
