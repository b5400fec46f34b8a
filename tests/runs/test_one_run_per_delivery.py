"""Item 5: one run per inbound delivery id (per flow, per day), under any concurrency — the database decides."""

from __future__ import annotations

import json
import threading

import httpx
import pytest

from runs.models import Run
from tests.runs.test_triggers import hooked, sign  # noqa: F401 - the fixture

pytestmark = pytest.mark.django_db(transaction=True)


def test_twelve_simultaneous_signed_posts_with_one_delivery_id_start_one_run(hooked, live_server):  # noqa: F811
    body = json.dumps({"order": "A-17"}).encode()
    headers = {"content-type": "application/json", "x-signature": sign(body), "X-Foldrun-Delivery": "dlv_same"}
    url = f"{live_server.url}/api/hooks/{hooked.public_id}/intake"
    start = threading.Barrier(12)
    answers: list[httpx.Response] = []

    def post() -> None:
        with httpx.Client(timeout=60) as client:
            start.wait()
            answers.append(client.post(url, content=body, headers=headers))

    threads = [threading.Thread(target=post) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Run.objects.filter(delivery_id="dlv_same").count() == 1
    run = Run.objects.get(delivery_id="dlv_same")
    assert sorted(a.status_code for a in answers) == [200] * 11 + [202]
    assert {a.json()["run"] for a in answers} == {run.public_id}
    assert [a.json()["duplicate"] for a in answers].count(True) == 11


def test_the_same_delivery_id_for_another_flow_starts_that_flow_too(hooked, client):  # noqa: F811
    body = json.dumps({"order": "A-17"}).encode()
    first = client.post(
        f"/api/hooks/{hooked.public_id}/intake",
        data=body,
        content_type="application/json",
        HTTP_X_SIGNATURE=sign(body),
        HTTP_X_FOLDRUN_DELIVERY="dlv_9",
    )
    other = client.post(
        f"/api/hooks/{hooked.public_id}/open",
        data=body,
        content_type="application/json",
        HTTP_X_FOLDRUN_DELIVERY="dlv_9",
    )
    assert (first.status_code, other.status_code) == (202, 202)
    assert Run.objects.filter(delivery_id="dlv_9").count() == 2
