from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts, members and tokens"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import pods, schema, signals  # noqa: F401

        # Django started: foldrun's Celery app becomes the current one, so every @shared_task binds to it.
        # (foldrun/__init__.py used to import it, which made every `foldrun` CLI call pay for Celery.)
        import foldrun.celery  # noqa: F401

        pods.connect()  # a reaped browser pod's line on the ledger
