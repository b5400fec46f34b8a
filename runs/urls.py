"""Run pages on the dashboard."""
from django.urls import path

from . import pages, pages_tools

urlpatterns = [
    path("w/<str:ws>/runs/", pages.runs_list, name="runs-list"),
    path("w/<str:ws>/triggers/", pages.triggers_page, name="triggers"),
    path("w/<str:ws>/tools/", pages_tools.tools_page, name="tools-page"),
    path("w/<str:ws>/runs/start", pages.start_page, name="run-start"),
    path("w/<str:ws>/runs/<str:run_id>", pages.run_page, name="run-page"),
    path("w/<str:ws>/runs/<str:run_id>/steps/<int:index>/<str:decision>", pages.decide_page, name="run-decide"),
]
