from django.urls import path

from . import pages, report_pages

urlpatterns = [
    path("decide/<str:token>", pages.decide, name="notify-decide"),
    path("reports/<str:token>", report_pages.report_page, name="report-page"),
    path("reports/<str:token>/steps/<int:index>.png", report_pages.report_screenshot, name="report-screenshot"),
    path("w/<str:ws>/notifications/", pages.workspace_notifications, name="notify-workspace"),
    path("w/<str:ws>/notifications/test", pages.workspace_test, name="notify-workspace-test"),
    path(
        "w/<str:ws>/notifications/deliveries/<str:delivery_id>/redeliver",
        pages.workspace_redeliver,
        name="notify-workspace-redeliver",
    ),
    path("profile/notifications/", pages.profile_notifications, name="notify-profile"),
]
