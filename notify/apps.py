from django.apps import AppConfig


class NotifyConfig(AppConfig):
    name = "notify"
    verbose_name = "Notifications"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The registry loader: connects to runs' run_event, the Triggers tab's part and platform mail.
        from browsing.reports import report_link

        from . import receivers  # noqa: F401
        from .report_pages import link_for

        report_link.connect(link_for, dispatch_uid="notify.report_link")
