from django.apps import AppConfig


class BrowsingConfig(AppConfig):
    name = "browsing"
    verbose_name = "Browser sessions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # A session's headers and proxy URL are sealed with the vault's keys: rotating them re-seals these too.
        from vault.rotation import SealedColumn, register

        from .models import BrowserSession

        register(
            SealedColumn(
                BrowserSession,
                "sealed_headers_kid",
                "sealed_headers",
                lambda row: row.headers_aad(),
                lambda row: f"the headers of session {row.public_id}",
            )
        )
