"""The bench's own Celery task, loaded only by the benchmark's worker (tests/bench/worker.py `include=`).

`bench.model_call` is the bare peer of a one-step run in run_overhead.py: a Celery task doing the step's one
model call with none of the platform around it. It makes the call exactly as tests/bench/peer_call.py says —
the body a step sent, streamed (as a step's is) through the same guarded shared client to the same loopback
stand-in, the SSE stream read to its end and the text taken from its content_block_delta events — and writes
the text to a row the bench polls for. Nothing else: no run, step or trace rows, no lease, no message assembly.
"""

from __future__ import annotations

from celery import shared_task

from accounts.models import Account
from tests.bench.peer_call import streamed_text


@shared_task(name="bench.model_call")
def model_call(account_pk: int, url: str, body: dict, tag: str) -> None:
    text = streamed_text(url, body)
    Account.objects.filter(pk=account_pk).update(name=f"{text}-{tag}")


@shared_task(name="bench.model_call_row")
def model_call_row(account_pk: int, url: str, body: dict, tag: str) -> None:
    """The sustained-throughput peer (tests/bench/throughput_bench.py): the same call, then one new row."""
    text = streamed_text(url, body)
    Account.objects.create(name=f"{tag}-{text}")
