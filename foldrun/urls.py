from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView

from accounts.invites import invite_page
from browsing.task_urls import api_urlpatterns as task_api
from foldrun.api import api_not_found
from foldrun.health import HealthView
from foldrun.metrics import metrics_view

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/", include("allauth.urls")),
    path("invites/<str:raw>", invite_page, name="invite"),
    path("api/health", HealthView.as_view(), name="api-health"),
    path("metrics", metrics_view, name="metrics"),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/", include("accounts.api_urls")),
    path("api/", include("library.api_urls")),
    path("api/", include("runs.api_urls")),
    path("api/", include("notify.api_urls")),
    path("api/", include("vault.api_urls")),
    # The routes the MCP spec names, at the spec's own addresses.
    path("v1/", include("browsing.api_urls")),
    path("v1/", include(task_api)),
    path("", include("notify.urls")),
    path("", include("runs.urls")),
    path("", include("library.urls")),
    path("", include("accounts.urls")),
    path("", include("vault.urls")),
    # Last: any other /api/ address answers the API's JSON 404, not an HTML page.
    re_path(r"^api/", api_not_found),
    re_path(r"^v1/", api_not_found),
]
