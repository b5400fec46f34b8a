"""The one thread that starts the browser pods of this worker process (servers.py).

A pod's server is started with a parent-death signal (util.dies_with_this_process) so it never outlives the
worker; Linux ties that signal to the *thread* that forked the server, not the process. Every pod is therefore
started here, on a thread that lasts as long as the process, whichever thread wanted it.
"""

from __future__ import annotations

import queue
import threading
from typing import Callable


class Starter:
    """One daemon thread, started on first use (again in a forked child, where it is gone), running jobs in turn:
    the warming of an account's pods as a step begins, and the start of a pod a call found missing."""

    def __init__(self) -> None:
        self._jobs: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name="foldrun-browser-pod-start", daemon=True)
                self._thread.start()
        self._jobs.put(job)

    def run(self, job: Callable[[], None]) -> None:
        """`job()` on the starter's thread, waited for; what it raised is raised here."""
        if self._thread is threading.current_thread():
            job()
            return
        done = threading.Event()
        failed: list[BaseException] = []

        def relayed() -> None:
            try:
                job()
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
                failed.append(exc)
            finally:
                done.set()

        self.submit(relayed)
        done.wait()
        if failed:
            raise failed[0]

    def _loop(self) -> None:
        while True:
            job = self._jobs.get()
            try:
                job()
            except Exception:  # noqa: BLE001 - the thread must not end: the pods it started would end with it
                pass


STARTER = Starter()
