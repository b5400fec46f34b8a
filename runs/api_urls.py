"""The runs API under /api/."""

from django.urls import path

from . import views, views_trace

urlpatterns = [
    path("workspaces/<str:ws>/runs", views.RunsView.as_view(), name="api-runs"),
    path("workspaces/<str:ws>/runs/<str:run_id>", views.RunView.as_view(), name="api-run"),
    path("workspaces/<str:ws>/runs/<str:run_id>/status", views_trace.RunStatusView.as_view(), name="api-run-status"),
    path("workspaces/<str:ws>/runs/<str:run_id>/trace", views_trace.RunTraceView.as_view(), name="api-run-trace"),
    path(
        "workspaces/<str:ws>/runs/<str:run_id>/steps/<int:index>/approve",
        views.ApproveView.as_view(),
        name="api-run-approve",
    ),
    path(
        "workspaces/<str:ws>/runs/<str:run_id>/steps/<int:index>/reject",
        views.RejectView.as_view(),
        name="api-run-reject",
    ),
    path("workspaces/<str:ws>/runs/<str:run_id>/events/<str:name>", views.EventView.as_view(), name="api-run-event"),
    path("workspaces/<str:ws>/runs/<str:run_id>/cancel", views.CancelView.as_view(), name="api-run-cancel"),
    path("workspaces/<str:ws>/runs/<str:run_id>/artifacts", views.ArtifactsView.as_view(), name="api-run-artifacts"),
    path(
        "workspaces/<str:ws>/runs/<str:run_id>/artifacts/<str:artifact_id>",
        views.ArtifactView.as_view(),
        name="api-run-artifact",
    ),
    path("workspaces/<str:ws>/schedules", views.SchedulesView.as_view(), name="api-schedules"),
    path("workspaces/<str:ws>/tools/<str:tool>/test", views.ToolTestView.as_view(), name="api-tool-test"),
    path("workspaces/<str:ws>/tools/<str:tool>/scratch", views.ScratchView.as_view(), name="api-tool-scratch"),
    path(
        "workspaces/<str:ws>/tools/<str:tool>/scratch/<path:path>",
        views.ScratchFileView.as_view(),
        name="api-tool-scratch-file",
    ),
    path("hooks/<str:ws>/<str:flow>", views.HookView.as_view(), name="api-hook"),
]
