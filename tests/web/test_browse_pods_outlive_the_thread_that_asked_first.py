"""A pod belongs to the account's pool, not to the thread that first asked for it: a short-lived thread (one a
request or a tool spawned) that made the account's first pod and then ended leaves the pod running for the next
caller, on another thread — and the pod still goes when the pool stops, or when the process that holds the pool
is killed."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from foldrun.web.browse.pool import BrowserPool
from foldrun.web.browse.servers import AccountPool
from tests.conftest import wait_for
from tests.processes import parent_of

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
# A worker whose account's first pod is asked for from a thread that ends at once; its server's pid on a line.
WORKER = """
import sys, threading
from foldrun.web.browse.servers import AccountPool
pool = AccountPool("acc_short_thread", None)
asked = []
thread = threading.Thread(target=lambda: asked.append(pool.pod()))
thread.start()
thread.join()
print(asked[0].process.pid, flush=True)
sys.stdin.read()
"""


def _first_pod_from_a_thread_that_ends(pool: AccountPool):
    asked = []
    thread = threading.Thread(target=lambda: asked.append(pool.pod()), name="a-request's-thread")
    thread.start()
    thread.join(timeout=60)
    assert not thread.is_alive()
    (pod,) = asked
    pool.done_with(pod)
    return pod


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie is gone
    except OSError:
        return True


def test_a_pod_first_asked_for_from_a_thread_that_ended_serves_the_next_caller_and_stops_with_the_pool():
    pool = AccountPool("acc_short_thread", None)
    browsers = BrowserPool(pods=pool)
    try:
        first = _first_pod_from_a_thread_that_ends(pool)
        time.sleep(0.5)  # a parent-death signal is delivered at once
        assert first.alive()

        def title():  # noqa: ANN202 - in the browser's own thread, which asks the pool for a pod
            page = browsers.browser().new_page()
            page.set_content("<title>still up</title>")
            return page.title()

        assert browsers.run(title) == "still up"
        assert browsers.pod is first and pool.pods == [first]  # the same pod, not a replacement
    finally:
        browsers.close()
        pool.stop()
    assert first.process.poll() is not None
    assert pool.pods == []


def test_a_pod_first_asked_for_from_a_thread_that_ended_still_goes_when_its_worker_is_killed():
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    try:
        server = int(worker.stdout.readline())
        time.sleep(0.5)
        assert not _gone(server) and parent_of(server) == worker.pid  # outlived the thread, still the worker's
        worker.kill()
        worker.wait(timeout=10)
        wait_for(lambda: _gone(server), timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
