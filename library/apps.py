from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _follow_the_gallery(sender, using="default", plan=None, **kwargs) -> None:
    # A new platform version is deployed with `migrate`: that is when the
    # shelf may have changed, so unedited copies follow it then.
    from django.db import DatabaseError, transaction

    from .actions.gallery import sync_gallery_copies

    try:
        with transaction.atomic(using=using):
            sync_gallery_copies()
    except DatabaseError:
        # A partial migrate (the library's tables not there yet): nothing to follow.
        pass


class LibraryConfig(AppConfig):
    name = "library"
    verbose_name = "Library"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(_follow_the_gallery, sender=self, dispatch_uid="library.follow_the_gallery")
        # The registry loader: the home page's workspace rows (accounts does not import library).
        from accounts.signals import home_parts

        from .pages_home import home_part

        home_parts.connect(home_part, dispatch_uid="library.home_part")
