"""A pool server (Playwright's run-server) never outlives the process that started it, even when that process is
killed while the server is being started — the window between fork and setting the parent-death signal, which a
loaded machine stretched enough for a worker killed then to leave run-server processes under PID 1."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.processes import parent_of, running

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]
# A worker's step of the account begins (its pod starts beside it, from the pool's starter thread) on a line in.
STARTER = """
import sys, time
from foldrun.web.browse.servers import AccountPool
pool = AccountPool("acc_starter", None)
print("ready", flush=True)
sys.stdin.readline()
pool.open_step()
time.sleep(60)
"""
CHILD_OF_A_GONE_STARTER = """
import os, subprocess, sys
from foldrun.web.browse.util import dies_with_this_process
in_the_child = dies_with_this_process()  # made for this process ...
if os.fork() == 0:  # ... and used by another: to the child, the process it was made for is already gone
    started = subprocess.Popen(["sleep", "30"], preexec_fn=in_the_child)
    print(started.wait(timeout=10), flush=True)
    os._exit(0)
os.wait()
"""


def marked(mark: str) -> list[int]:
    """The run-server processes started under this test's mark (their environment carries it)."""
    found = []
    for pid, argv in running():
        if b"run-server" not in b"\0".join(argv):
            continue
        try:
            if f"FOLDRUN_TEST_STARTER={mark}".encode() in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
                found.append(pid)
        except OSError:
            continue
    return found


def test_a_starter_killed_while_its_pod_starts_leaves_no_server_running_under_pid_1():
    mark = uuid.uuid4().hex
    env = {**os.environ, "FOLDRUN_TEST_STARTER": mark}
    try:
        for _ in range(30):
            starter = subprocess.Popen(
                [sys.executable, "-c", STARTER],
                cwd=ROOT,
                env=env,
                text=True,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
            assert starter.stdout.readline().strip() == "ready"
            starter.stdin.write("go\n")
            starter.stdin.flush()
            time.sleep(random.uniform(0, 0.05))  # somewhere in the server's start: before, during or after its fork
            starter.kill()
            starter.wait()
        time.sleep(1)  # a parent-death signal is delivered at once; an orphan stays
        left = marked(mark)
        assert [(pid, parent_of(pid)) for pid in left] == []
    finally:
        for pid in marked(mark):
            os.kill(pid, signal.SIGKILL)


def test_a_child_whose_starter_is_gone_by_the_time_it_sets_its_parent_death_signal_exits_before_it_runs():
    said = subprocess.run(
        [sys.executable, "-c", CHILD_OF_A_GONE_STARTER], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert said.stdout.strip() == "1", said.stderr  # exited at once (1), never ran `sleep 30`
