"""The bench's own Celery task, loaded only by the benchmark's worker (tests/bench/worker.py `include=`).

`bench.model_call` is the bare peer of a one-step run in run_overhead.py: the same instant model call, to
the same loopback stub, through the same guarded shared client a step uses, and its reply written to a row
the bench polls for — a Celery task doing the step's work with none of the platform around it.
"""
from __future__ import annotations

from celery import shared_task

from accounts.models import Account
from foldrun import net


@shared_task(name="bench.model_call")
def model_call(account_pk: int, url: str, body: dict, tag: str) -> None:
    reply = net.client("model").post(url, json=body)
    reply.raise_for_status()
    text = reply.json()["content"][0]["text"]
    Account.objects.filter(pk=account_pk).update(name=f"{text}-{tag}")
