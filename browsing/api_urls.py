"""The sessions API under /v1/ (the spec's routes)."""

from django.urls import path

from . import views

urlpatterns = [
    path("sessions", views.SessionsView.as_view(), name="api-sessions"),
    path("sessions/<str:session_id>", views.SessionView.as_view(), name="api-session"),
    path("sessions/<str:session_id>/recording", views.SessionRecordingView.as_view(), name="api-session-recording"),
]
