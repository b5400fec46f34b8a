from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _follow_the_gallery(sender, **kwargs) -> None:
    # A new platform version is deployed with `migrate`: that is when the
    # shelf may have changed, so unedited copies follow it then.
    from .actions import sync_gallery_copies

    sync_gallery_copies()


class LibraryConfig(AppConfig):
    name = "library"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(_follow_the_gallery, sender=self, dispatch_uid="library.follow_the_gallery")
