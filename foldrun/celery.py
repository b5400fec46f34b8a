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


def send(name: str, *args: object) -> None:
    """Send task `name` with `args` — by name, so the sender never imports the module that defines it."""
    if app.conf.task_always_eager:
        app.tasks[name].apply(args=args)
        return
    app.send_task(name, args=args)


def send_after_commit(name: str, *args: object) -> None:
    """Send task `name` once the caller's transaction commits (at once outside one): a worker that picks
    the message up always finds the rows it names."""
    from django.db import transaction

    transaction.on_commit(lambda: send(name, *args))
