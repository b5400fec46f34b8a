"""A real Celery worker for the benchmark scripts, on the configured broker and
the benchmark's throwaway test database (Django must be set up first)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def start_worker(
    concurrency: int, log_path: Path, *, level: str = "info", settle: float = 0.0, include: list[str] | None = None
) -> subprocess.Popen:
    """Start the worker and return once its log says it is ready (or 60 s pass);
    `settle` waits a little longer so its pool processes have connected. `include`: modules of
    bench-only tasks the worker loads besides the apps' (tests/bench/tasks.py)."""
    from django.db import connection

    env = dict(os.environ)
    env["FOLDRUN_TEST_DB_NAME"] = connection.settings_dict["NAME"]
    env["DJANGO_SETTINGS_MODULE"] = "foldrun.settings.test"
    # The checkout on the worker's path, so `include` can name modules under tests/.
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "foldrun",
                "worker",
                "-l",
                level,
                "--concurrency",
                str(concurrency),
                "--without-mingle",
                "--without-gossip",
                "--without-heartbeat",
                "-Q",
                env["FOLDRUN_TEST_QUEUE"],
                *(["--include", ",".join(include)] if include else []),
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while b"ready" not in log_path.read_bytes() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    time.sleep(settle)
    return process
