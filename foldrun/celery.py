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
# The browser service: a session's keeper holds its slot for the session's whole life, so keepers go to a queue
# of their own, taken by a worker of its own whose --concurrency is the install's browser capacity
# (FOLDRUN_BROWSER_CAPACITY) — never a slot that runs steps, deliveries, probes and sweeps.
BROWSER_TASKS = {"browsing.keep_session", "browsing.heartbeat"}


def recovery_queue() -> str:
    return f"{app.conf.task_default_queue}.recovery"


def browser_queue() -> str:
    return f"{app.conf.task_default_queue}.browsers"


def route_task(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **kw: Any) -> dict | None:
    """CELERY_TASK_ROUTES: the recovery tasks to the recovery queue, the keepers to the browser service's,
    everything else as configured."""
    if name in RECOVERY_TASKS:
        return {"queue": recovery_queue()}
    if name in BROWSER_TASKS:
        return {"queue": browser_queue()}
    return None


def roles_served(queues: Any) -> list[str]:
    """What a worker taking from these queues is, for /api/health: `worker` (steps and the rest), `browsers`
    (the browser service), or both (a worker started with both queues, as the tests' are)."""
    names = set(queues)
    roles = ["worker"] if names - {browser_queue(), recovery_queue()} else []
    return roles + (["browsers"] if browser_queue() in names else [])


@celeryd_after_setup.connect
def _take_from_the_recovery_queue(sender: str, instance: Any, **kwargs: Any) -> None:
    # Whatever `-Q` a worker was started with, it also serves the recovery queue — except the browser service:
    # its slots are all keepers when it is full, and a sweep must never wait behind an open browser.
    if "worker" in roles_served(instance.app.amqp.queues.consume_from):
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
    for role in roles_served(sender.app.amqp.queues.consume_from):
        beat_heartbeat(role)


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
