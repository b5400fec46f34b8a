"""Run pages on the dashboard."""

from django.urls import path

from . import pages, pages_browser, pages_live, pages_tools

urlpatterns = [
    path("w/<str:ws>/runs/", pages.runs_list, name="runs-list"),
    path("w/<str:ws>/triggers/", pages.triggers_page, name="triggers"),
    path("w/<str:ws>/tools/", pages_tools.tools_page, name="tools-page"),
    path("w/<str:ws>/tools/<str:tool>/scratch/clear", pages_tools.clear_scratch, name="tool-scratch-clear"),
    path("w/<str:ws>/tools/<str:tool>/scratch/<path:path>", pages_tools.scratch_file, name="tool-scratch-file"),
    path("w/<str:ws>/runs/start", pages.start_page, name="run-start"),
    path("w/<str:ws>/runs/<str:run_id>", pages.run_page, name="run-page"),
    path("w/<str:ws>/sessions/", pages_browser.sessions_page, name="sessions-page"),
    path("w/<str:ws>/sessions/<str:session_id>/recording", pages_browser.recording_page, name="session-recording"),
    path("w/<str:ws>/skill-runs/<str:skill_run_id>", pages_browser.skill_run_page, name="skill-run-page"),
    path("w/<str:ws>/runs/<str:run_id>/browser/<str:step_id>", pages_live.browser_panel, name="run-browser"),
    path(
        "w/<str:ws>/runs/<str:run_id>/browser/<str:step_id>/frame", pages_live.browser_frame, name="run-browser-frame"
    ),
    path("w/<str:ws>/runs/<str:run_id>/videos/<str:artifact_id>", pages_live.step_video, name="run-video"),
    path("w/<str:ws>/runs/<str:run_id>/steps/<int:index>/<str:decision>", pages.decide_page, name="run-decide"),
]
