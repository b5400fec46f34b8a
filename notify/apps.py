from django.apps import AppConfig


class NotifyConfig(AppConfig):
    name = "notify"
    verbose_name = "Notifications"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # The registry loader: connects to runs' run_event, the Triggers tab's part and platform mail.
        from . import receivers  # noqa: F401
