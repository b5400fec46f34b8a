"""The thread that drives Playwright, apart from the step's own.

Playwright's sync API runs an asyncio event loop in the thread that starts it,
for as long as it is started, so Django's ORM refuses that thread
(`SynchronousOnlyOperation`): a trace line or a run-log line written from
inside a browse call would fail the step. So the browser lives in a thread of
its own; a browse call runs there as a job, and what it hands back to the
step — a trace event, a log line, a secret to read — runs in the step's thread,
in order, while the caller waits for the job.
"""

from __future__ import annotations

import queue
import threading
from typing import Any, Callable

_OK, _ERROR, _HAND = "ok", "error", "hand"


class Driver:
    """One daemon thread running jobs one at a time; `run` blocks the caller until its job ends."""

    def __init__(self, name: str = "foldrun-browser") -> None:
        self.name = name
        self._jobs: queue.Queue = queue.Queue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._local = threading.local()  # in the driver thread: the queue of the caller now waiting
        # Set by an `after()` that waits on something else meanwhile (the pool's settle, on its event loop): called
        # from the caller's thread when a job is put, so that the wait ends at once instead of at its next look.
        self.wake: Callable[[], None] | None = None

    @property
    def ident(self) -> int | None:
        return self._thread.ident if self._thread is not None else None

    def inside(self) -> bool:
        return self._thread is not None and threading.get_ident() == self._thread.ident

    def run(self, job: Callable[[], Any], after: Callable[[], Any] | None = None) -> Any:
        """`job()` in the driver thread; its hand-backs run here, in this thread, as they come. `after()` runs
        there once the answer is handed over (work the caller need not wait for), before the next job."""
        if self.inside():
            return job()
        self._start()
        box: queue.Queue = queue.Queue()
        self._jobs.put((job, box, after))
        wake = self.wake
        if wake is not None:
            wake()
        while True:
            kind, value = box.get()
            if kind == _OK:
                return value
            if kind == _ERROR:
                raise value
            value()  # a hand-back: runs in the caller's thread (where the ORM may be used)

    def queued(self) -> bool:
        """A job is waiting for this thread (an `after()` in progress gives way to it)."""
        return not self._jobs.empty()

    def hand(self, fn: Callable[[], Any], *, wait: bool) -> Any:
        """From inside a job: run `fn` in the waiting caller's thread (and wait for its answer if asked).
        Anywhere else: run it here."""
        box = getattr(self._local, "caller", None) if self.inside() else None
        if box is None:
            return fn()
        if not wait:
            box.put((_HAND, fn))
            return None
        answer: queue.Queue = queue.Queue()

        def relayed() -> None:
            try:
                answer.put((_OK, fn()))
            except BaseException as exc:  # noqa: BLE001 - raised again in the job's thread
                answer.put((_ERROR, exc))

        box.put((_HAND, relayed))
        kind, value = answer.get()
        if kind == _ERROR:
            raise value
        return value

    def _start(self) -> None:
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._loop, name=self.name, daemon=True)
                self._thread.start()

    def _loop(self) -> None:
        while True:
            job, box, after = self._jobs.get()
            self._local.caller = box
            try:
                box.put((_OK, job()))
            except BaseException as exc:  # noqa: BLE001 - the caller raises it
                box.put((_ERROR, exc))
            finally:
                self._local.caller = None
            if after is not None:
                try:
                    after()
                except Exception:  # noqa: BLE001 - background work; the next job meets what went wrong
                    pass
