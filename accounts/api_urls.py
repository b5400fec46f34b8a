from django.urls import path

from . import views

urlpatterns = [
    path("version", views.VersionView.as_view(), name="api-version"),
    path("me", views.MeView.as_view(), name="api-me"),
]
