"""A whole Celery worker (its main process, pool children and embedded beat) that a test can kill with -9.

The worker runs in its own process group, so `kill()` takes all of it down at once, as an OOM killer or a lost
machine does — not just one pool child, which Celery itself would notice and recover from. Beat runs inside it
(`-B`), so the recovery sweep dies and comes back with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from django.db import connection


class WorkerGroup:
    def __init__(
        self,
        log_dir: Path,
        *,
        lease_seconds: int = 3,
        sweep_seconds: int = 1,
        concurrency: int = 2,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.log_dir = log_dir
        self.env = dict(os.environ)
        self.env["FOLDRUN_TEST_DB_NAME"] = connection.settings_dict["NAME"]
        self.env["DJANGO_SETTINGS_MODULE"] = "foldrun.settings.test"
        self.env["FOLDRUN_LEASE_SECONDS"] = str(lease_seconds)
        self.env["FOLDRUN_SWEEP_SECONDS"] = str(sweep_seconds)
        self.env.update(extra_env or {})
        self.concurrency = concurrency
        self.lease_seconds = lease_seconds
        self.sweep_seconds = sweep_seconds
        self.process: subprocess.Popen | None = None
        self.starts = 0

    def start(self) -> "WorkerGroup":
        self.starts += 1
        log_path = self.log_dir / f"worker-{self.starts}.log"
        schedule = self.log_dir / f"beat-{self.starts}"
        with open(log_path, "wb") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "foldrun",
                    "worker",
                    "-B",
                    "-l",
                    "info",
                    "--scheduler",
                    "celery.beat:PersistentScheduler",
                    "-s",
                    str(schedule),
                    "--concurrency",
                    str(self.concurrency),
                    "--without-mingle",
                    "--without-gossip",
                    "--without-heartbeat",
                    "-Q",
                    self.env["FOLDRUN_TEST_QUEUE"],
                ],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        deadline = time.monotonic() + 60
        while b"ready." not in log_path.read_bytes():
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.kill()
                raise RuntimeError("the Celery worker did not start:\n" + log_path.read_text(errors="replace")[-3000:])
            time.sleep(0.1)
        self.log_path = log_path
        return self

    def kill(self) -> None:
        """kill -9 the whole process group: the main process, every pool child and beat, at once."""
        if self.process is None:
            return
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.process.wait(timeout=20)
        self.process = None

    def stop(self) -> None:
        if self.process is None:
            return
        try:
            # The main process only, as a service manager stops it: it stops its pool and beat itself. A SIGTERM
            # to the whole group killed a pool child that held the pool's task-queue lock, and the main process
            # then waited for that lock until the timeout below.
            self.process.terminate()
            self.process.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            self.kill()
        self.process = None
