"""`manage.py sync_gallery`: bring every unedited gallery copy to the shelf."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from library.actions.gallery import sync_gallery_copies


class Command(BaseCommand):
    help = "Update every account's unedited copies of gallery tools to the shelf's current files."

    def handle(self, *args, **options) -> None:
        written = sync_gallery_copies()
        self.stdout.write(f"Updated {len(written)} gallery cop{'y' if len(written) == 1 else 'ies'}.")
