"""The Celery app. Import it as `from foldrun.celery import app`."""
from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.dev")

app = Celery("foldrun")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="foldrun.ping")
def ping() -> str:
    return "pong"
