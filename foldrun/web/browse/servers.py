"""The account's browser pods: Playwright browser servers on the worker, per account.

A pod is `playwright run-server --unsafe` (Playwright's own server, so the
client's launch flags — the in-step launch's `LAUNCH_ARGS` — reach the
browser it launches for each connection) bound to loopback under a random
path: the path is the pool's token, so only the account's own steps, which
are handed the address, can reach it; two accounts never share a server.

The steps of the account that grant `web` browse are counted as they begin,
and the pods they want start then, beside the step; one more for every `FOLDRUN_BROWSER_STEPS_PER_POD` (2) steps browsing
at once, up to `FOLDRUN_BROWSER_MAX_PODS` (4). A pod unused for
`FOLDRUN_BROWSER_IDLE_MS` (15 minutes) is reaped — the surplus first, the last
one when the account stops, and none while a step of the account runs. A pod
whose server died (killed with -9) is noticed, forgotten and replaced on the
next use; each pod's seconds and bytes go to `on_reap` as one line.
Every pod is started on the process's one starter thread (starter.py), whichever
thread asked for it: a pod lives as long as its pool or its worker process, never
only as long as the thread that first wanted it.

The worker process keeps one Playwright client and connection per account
(`AccountPool.browsers`) from one step to the next — each call still gets a
fresh context, each step its own sessions — and closes it once the account has
been idle past the idle time, so its pod can be reaped.

Pure Python (no Django): the host sets `on_reap` to write the ledger line.
"""

from __future__ import annotations

import atexit
import math
import os
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from ..errors import WebToolError
from .pool import BrowserPool
from .podstart import start_server, start_windowed
from .screen import Screen
from .starter import STARTER
from .util import stop_group


def _env_int(name: str, default: int, low: int) -> int:
    raw = os.environ.get(name, "")
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise WebToolError(f"{name}={raw!r} is not a whole number") from None
    if value < low:
        raise WebToolError(f"{name}={value} is below {low}")
    return value


def settings() -> tuple[int, int, float]:
    """(steps per pod, max pods, idle seconds), read from the worker's environment."""
    return (
        _env_int("FOLDRUN_BROWSER_STEPS_PER_POD", 2, 1),
        _env_int("FOLDRUN_BROWSER_MAX_PODS", 4, 1),
        _env_int("FOLDRUN_BROWSER_IDLE_MS", 15 * 60 * 1000, 1) / 1000,
    )


@dataclass
class Pod:
    """One Playwright browser server."""

    name: str
    process: subprocess.Popen
    ws: str
    started: float = field(default_factory=time.monotonic)
    last_used: float = field(default_factory=time.monotonic)
    users: int = 0
    bytes: int = 0
    screen: Screen | None = None  # a windowed server's own Xvfb (its display number no other server has)

    @property
    def windowed(self) -> bool:
        return self.screen is not None

    def alive(self) -> bool:
        """The server answers — and, for a windowed one, its screen is still there to draw on."""
        return self.process.poll() is None and (self.screen is None or self.screen.alive())

    def stop(self) -> None:
        stop_group(self.process, grace=2)  # the server and the browsers it launched: the spec's 2-second grace
        if self.process.stdout is not None:
            self.process.stdout.close()
        if self.screen is not None:
            self.screen.stop()

    def line(self) -> dict:
        return {"pod": self.name, "seconds": round(time.monotonic() - self.started, 3), "bytes": self.bytes}


class AccountPool:
    """One account's pods, and how many of its steps browse now."""

    def __init__(self, account: str, on_reap: Callable[[str, dict], None] | None) -> None:
        self.account = account
        self.pods: list[Pod] = []
        self.steps = 0  # every step of the account browsing now (a pod is reaped only at none)
        self.windowed_steps = 0  # of those, the steps whose browser has a window (`headless: false`)
        self.on_reap = on_reap
        self.lock = threading.RLock()
        self._numbers = 0
        self._epoch = 0  # one more at every stop: a start asked for before it is not made after it
        # This process's browser on the account's pods — its Playwright client and its connection — kept from one
        # step to the next; each call still gets a context of its own, and each step its own sessions.
        self.browsers: BrowserPool | None = None
        # … and its browsers of another kind, by (executable, windowed): a pinned `version:` build, a window.
        self.other_browsers: dict[tuple[str, bool], BrowserPool] = {}

    def _start(self, windowed: bool = False) -> Pod:
        screen = None
        if windowed:
            process, ws, screen = start_windowed()
        else:
            process, ws = start_server()
        self._numbers += 1
        pod = Pod(name=f"{self.account}-{self._numbers}", process=process, ws=ws, screen=screen)
        self.pods.append(pod)
        return pod

    def _of_kind(self, windowed: bool) -> list[Pod]:
        return [p for p in self.pods if p.windowed == windowed]

    def _forget_dead(self) -> None:
        for pod in [p for p in self.pods if not p.alive()]:
            self.pods.remove(pod)
            pod.stop()
            self._record(pod)

    def _record(self, pod: Pod) -> None:
        if self.on_reap is not None:
            try:
                self.on_reap(self.account, pod.line())
            except Exception:  # noqa: BLE001 - the ledger line is best effort; the pod is gone either way
                pass

    def open_step(self, windowed: bool = False) -> None:
        """A step of the account that grants browse began: it counts toward the pods wanted, and the pods it
        wants start now, beside the step (its first call finds the server up, not a cold start). A step whose
        browser has a window wants a windowed server (one under an Xvfb of its own) as well."""
        with self.lock:
            self.steps += 1
            self.windowed_steps += 1 if windowed else 0
            short = len([p for p in self._of_kind(windowed) if p.alive()]) < self.wanted(windowed)
            epoch = self._epoch
        if short:
            STARTER.submit(lambda: self._warm(epoch, windowed))

    def _warm(self, epoch: int, windowed: bool = False) -> None:
        """Start the pods wanted and not yet running (a failure here is met again, and said, by the first call)."""
        try:
            with self.lock:
                self._forget_dead()
                while self._epoch == epoch and self.steps > 0 and len(self._of_kind(windowed)) < self.wanted(windowed):
                    self._start(windowed)
        except Exception:  # noqa: BLE001 - the call that needs the pod starts it and says why it did not start
            pass

    def step_browsers(self) -> BrowserPool:
        """The account's kept browser for a step that begins (its server gone since: connected afresh)."""
        with self.lock:
            if self.browsers is None:
                self.browsers = BrowserPool(pods=self)
            kept = self.browsers
        if kept.pod is not None and not kept.pod.alive():
            kept.close()  # the pod died between steps: this step connects anew, with no lost-pod lines
        return kept

    def call_browsers(self, executable: str, windowed: bool, args: list[str]) -> BrowserPool:
        """The account's kept browser for a call that is not the usual one — a pinned build (`executable`), a
        window (on a windowed server) — connected on first use and kept like the usual one."""
        key = (executable, windowed)
        with self.lock:
            kept = self.other_browsers.get(key)
            if kept is None:
                kept = self.other_browsers[key] = BrowserPool(
                    pods=self, executable=executable, args=args, headless=not windowed
                )
        if kept.pod is not None and not kept.pod.alive():
            kept.close()
        return kept

    def _kept(self) -> list[BrowserPool]:
        return [b for b in (self.browsers, *self.other_browsers.values()) if b is not None]

    def _drop_browsers(self, now: float, idle: float) -> None:
        """Close the kept browser once no step runs and it sat unused past the idle time (its pod may then go)."""
        for kept in self._kept():
            if self.steps == 0 and kept.pod is not None and now - kept.last_used > idle:
                try:
                    kept.close()
                except Exception:  # noqa: BLE001 - gone already
                    pass

    def wanted(self, windowed: bool = False) -> int:
        """Pods of that kind wanted: one per `FOLDRUN_BROWSER_STEPS_PER_POD` steps of that kind browsing at once
        (with a window, for windowed pods; without, for plain ones), at least one, at most
        `FOLDRUN_BROWSER_MAX_PODS`. A windowed step never browses on a plain pod, so it is no reason for one."""
        per_pod, most, _idle = settings()
        steps = self.windowed_steps if windowed else self.steps - self.windowed_steps
        return min(most, max(1, math.ceil(steps / per_pod)))

    def done_with(self, pod: Pod) -> None:
        """A step's browser left the pod."""
        with self.lock:
            pod.users = max(0, pod.users - 1)
            pod.last_used = time.monotonic()

    def close_step(self, windowed: bool = False) -> None:
        with self.lock:
            self.steps = max(0, self.steps - 1)
            if windowed:
                self.windowed_steps = max(0, self.windowed_steps - 1)
            now = time.monotonic()
            for pod in self.pods:
                pod.last_used = now

    def pod(self, windowed: bool = False) -> Pod:
        """The least-used live pod of that kind, a new one when the pod died (the replacement). A pod this call
        needs is started on the starter's thread, not the caller's: the caller may be a thread that ends soon."""
        with self.lock:
            self._forget_dead()
            short = len(self._of_kind(windowed)) < self.wanted(windowed)
        if short:  # waited for outside the lock: the starter may be warming this account's pods, under it
            STARTER.run(lambda: self._top_up(windowed))
        with self.lock:
            kind = self._of_kind(windowed)
            if not kind:
                raise WebToolError("browse: the browser pod did not start (the account's pods were stopped meanwhile)")
            pod = min(kind, key=lambda p: p.users)
            pod.users += 1
            pod.last_used = time.monotonic()
            return pod

    def _top_up(self, windowed: bool) -> None:
        """One pod more of that kind if still short (a caller before this one may have started it)."""
        with self.lock:
            self._forget_dead()
            if len(self._of_kind(windowed)) < self.wanted(windowed):
                self._start(windowed)

    def reap(self, now: float | None = None) -> list[dict]:
        """Pods unused past the idle time, newest (the surplus) first; none while a step runs."""
        _per_pod, _most, idle = settings()
        now = time.monotonic() if now is None else now
        self._drop_browsers(now, idle)  # outside the lock: closing it hands the pod back, which takes the lock
        reaped = []
        with self.lock:
            self._forget_dead()
            if self.steps > 0:
                return reaped
            for pod in reversed(list(self.pods)):
                if pod.users == 0 and now - pod.last_used > idle:
                    self.pods.remove(pod)
                    pod.stop()
                    self._record(pod)
                    reaped.append(pod.line())
        return reaped

    def stop(self) -> None:
        kept = self._kept()
        self.browsers, self.other_browsers = None, {}
        for browsers in kept:
            if browsers.driver.ident is None:
                continue
            try:
                browsers.close()
            except Exception:  # noqa: BLE001 - a worker shutting down
                pass
        with self.lock:
            self._epoch += 1
            for pod in list(self.pods):
                self.pods.remove(pod)
                pod.stop()
                self._record(pod)


class ServerPool:
    """Every account's pods on this worker process, and the thread that reaps them."""

    def __init__(self) -> None:
        self.accounts: dict[str, AccountPool] = {}
        self.lock = threading.Lock()
        self.on_reap: Callable[[str, dict], None] | None = None
        self._reaper: threading.Thread | None = None
        self._halt = threading.Event()  # set by stop: the reaper of the time ends

    def account(self, account: str) -> AccountPool:
        with self.lock:
            pool = self.accounts.get(account)
            if pool is None:
                pool = self.accounts[account] = AccountPool(account, lambda a, line: self._reaped(a, line))
            if self._reaper is None or not self._reaper.is_alive():
                self._halt = threading.Event()
                self._reaper = threading.Thread(
                    target=self._reap_forever, args=(self._halt,), name="foldrun-browser-reaper", daemon=True
                )
                self._reaper.start()
            return pool

    def _reaped(self, account: str, line: dict) -> None:
        if self.on_reap is not None:
            self.on_reap(account, line)

    def reap(self) -> list[dict]:
        with self.lock:
            pools = list(self.accounts.values())
        return [line for pool in pools for line in pool.reap()]

    def _reap_forever(self, halt: threading.Event) -> None:
        while True:
            _per_pod, _most, idle = settings()
            if halt.wait(max(0.2, min(idle / 4, 30.0))):
                return  # the pool was stopped
            try:
                self.reap()
            except Exception:  # noqa: BLE001 - the reaper never dies of one bad pod
                pass

    def stop(self) -> None:
        """The reaper ended and waited for, then every pod stopped and its line recorded: once stop returns the
        pool writes no line until it is used again (a process's exit, or a test session before its database
        goes, stops it)."""
        with self.lock:
            pools = list(self.accounts.values())
            reaper, self._reaper = self._reaper, None
            self._halt.set()
        if reaper is not None and reaper is not threading.current_thread():
            reaper.join(timeout=60)
        for pool in pools:
            pool.stop()


POOL = ServerPool()
atexit.register(POOL.stop)
