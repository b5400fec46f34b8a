from django.apps import AppConfig
from django.core import checks


class VaultConfig(AppConfig):
    name = "vault"
    verbose_name = "Vault"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        checks.register(check_vault_keys, "vault")
        import vault.boundary  # noqa: F401 — keeps httpx's URL-bearing INFO lines out of the logs

        # The registry loader: the workspace page's needed secrets (library does not import vault).
        from library.signals import workspace_parts
        from vault.pages import workspace_part

        workspace_parts.connect(workspace_part, dispatch_uid="vault.workspace_part")


def check_vault_keys(app_configs=None, **kwargs):
    """Start-up (`manage.py check`, runserver, migrate) refuses absent or
    malformed FOLDRUN_VAULT_KEYS with the sentence that says how to fix it."""
    from vault.crypto import VaultKeyError
    from vault.keys import vault_keys

    try:
        vault_keys()
    except VaultKeyError as exc:
        return [checks.Error(str(exc), id="vault.E001")]
    return []
