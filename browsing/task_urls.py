"""The task and report reads under /v1/ (the spec's routes)."""

from django.urls import path

from . import task_views

api_urlpatterns = [
    path("tasks/<str:task_id>", task_views.TaskView.as_view(), name="api-task"),
    path("tasks/<str:task_id>/report.json", task_views.TaskReportView.as_view(), name="api-task-report"),
    path("skill-runs/<str:run_id>", task_views.SkillRunView.as_view(), name="api-skill-run"),
    path("skill-runs/<str:run_id>/report.json", task_views.SkillRunReportView.as_view(), name="api-skill-run-report"),
]
