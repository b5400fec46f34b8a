from django.apps import AppConfig


class BrowsingConfig(AppConfig):
    name = "browsing"
    verbose_name = "Browser sessions"
    default_auto_field = "django.db.models.BigAutoField"

