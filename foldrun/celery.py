"""The Celery app. Import it as `from foldrun.celery import app`."""
from __future__ import annotations

import os

from typing import Any

from celery import Celery
from celery.signals import celeryd_after_setup, task_postrun, task_prerun, worker_ready
from django.db import close_old_connections

from foldrun.heartbeats import beat_heartbeat

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.dev")

app = Celery("foldrun")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# Recovery tasks go to a queue of their own, which every worker also takes from: behind a backlog of step
# messages in the main queue, the sweep would otherwise wait its turn while lost steps stay lost.
RECOVERY_TASKS = {"runs.sweep", "browsing.sweep", "foldrun.heartbeat"}


def recovery_queue() -> str:
    return f"{app.conf.task_default_queue}.recovery"


def route_task(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **kw: Any) -> dict | None:
    """CELERY_TASK_ROUTES: the recovery tasks to the recovery queue, everything else as configured."""
    if name in RECOVERY_TASKS:
        return {"queue": recovery_queue()}
    return None


@celeryd_after_setup.connect
def _take_from_the_recovery_queue(sender: str, instance: Any, **kwargs: Any) -> None:
    # Whatever `-Q` a worker was started with, it also serves the recovery queue.
    instance.app.amqp.queues.select_add(recovery_queue())


@task_prerun.connect
@task_postrun.connect
def _connections_as_between_requests(sender: Any = None, **kwargs: Any) -> None:
    # What Django does around each request, around each task: a connection past CONN_MAX_AGE or broken by an
    # error is closed, any other kept (settings: CELERY_DB_REUSE_MAX stops Celery closing them every task).
    # Not for an eager task: it runs inside its caller's transaction.
    if not getattr(getattr(sender, "request", None), "is_eager", False):
        close_old_connections()


@worker_ready.connect
def _heartbeat_when_ready(sender: Any = None, **kwargs: Any) -> None:
    beat_heartbeat("worker")


@app.task(name="foldrun.heartbeat", ignore_result=True)
def heartbeat() -> None:
    """Sent by beat; whichever worker runs it shows /api/health that a worker answers."""
    beat_heartbeat("worker")


@app.task(name="foldrun.ping")
def ping() -> str:
    return "pong"


def send(name: str, *args: object) -> None:
    """Send task `name` with `args` — by name, so the sender never imports the module that defines it."""
    if app.conf.task_always_eager:
        if name not in app.tasks:
            app.loader.import_default_modules()  # the apps' tasks modules, as a worker imports them
        app.tasks[name].apply(args=args)
        return
    app.send_task(name, args=args)


def send_after_commit(name: str, *args: object) -> None:
    """Send task `name` once the caller's transaction commits (at once outside one): a worker that picks
    the message up always finds the rows it names."""
    from django.db import transaction

    transaction.on_commit(lambda: send(name, *args))
