"""Library background work. Tasks take ids (or nothing), re-read rows and are
idempotent: running one twice writes nothing the second time."""

from __future__ import annotations

from celery import shared_task

from .actions.gallery import sync_gallery_copies


@shared_task(name="library.sync_gallery")
def sync_gallery() -> int:
    """Bring unedited gallery copies to the shelf; returns how many were updated."""
    return len(sync_gallery_copies())
