"""The session keeper: the one process that owns a session's browser, for the session's whole life.

Where it runs, and why: a session's browser must outlive the HTTP request (or MCP call) that opened it,
and a web process is the wrong owner — it is recycled, scaled and restarted at will, and a browser it
started would die with it or, worse, live on unwatched. A worker is where the account's browser pool
already lives (DESIGN.md, "The account's browser pool"), so the keeper is a Celery task,
`browsing.keep_session`, that the browser service's worker runs for as long as the session is open: it launches Chromium as
its own child (dying with it), holds the lease on the session row with a heartbeat, and watches. Callers —
the web process's MCP handlers and REST views, a quick tool, the browser agent's step — never own the
browser: they connect to it over CDP (`browsing.attach`) and disconnect, and the page and its cookies stay.

The keeper's Chromium sends every connection through a `GuardProxy` on loopback (`--proxy-server`, loopback
not bypassed), so a page, a redirect hop or a script reaching a private address is refused at connect
time by foldrun.net's own check, on the session's own decision (`private_addresses`, made when it was opened);
a refused start URL closes the session as `navigation_blocked`, a page refused later is a task's
`navigation_blocked` (foldrun/web/browse/refused.py).

Liveness is the lease and nothing else. A keeper killed with -9 stops renewing; its browser dies with it
(PR_SET_PDEATHSIG); the sweep (browsing/sweep.py) finds the expired lease and closes the row with a
sentence. A keeper that finds its lease taken stops its browser and commits nothing. A session closed by
anyone else (stop_session, the idle or max-duration sweep) is seen on the next tick and its browser stopped.

The cost: one slot of the browser service per open session. The keepers have a queue of their own, taken by
a worker of its own (foldrun/celery.py, `browser_queue`) whose slots are the install's browser capacity
(FOLDRUN_BROWSER_CAPACITY), so an open browser never holds a slot that runs steps, deliveries, probes or sweeps;
browsing/actions.py counts the places in the database before a keeper is sent, so a keeper never waits for a
slot. While it keeps its session, a keeper also keeps the service's heartbeat fresh for /api/health: a full
service runs no heartbeat task. A worker told to stop (a warm shutdown) closes the sessions it keeps at once,
saying so, rather than waiting for them.
"""

from __future__ import annotations

import base64
import logging
import multiprocessing
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from foldrun import leases, net
from foldrun.heartbeats import BROWSERS, beat_heartbeat
from foldrun.net.proxy import GuardProxy, Upstream
from vault.logins import OpenLogin, logins_for_session

from .chromium import Browser, StartFailed, launch
from .ending import close_session, tell_waiting_tasks
from .models import BrowserSession, EndReason, SessionStatus
from .options import DESKTOP
from .recording import encode
from .sealed import open_secrets
from .side import BrowserSide, host_matches
from .states import move_session

log = logging.getLogger(__name__)

TICK_SECONDS = 0.25
# How often a keeper says the browser service is alive (a full service runs no heartbeat task).
HEARTBEAT_SECONDS = 5.0
# Set in the worker's main process when it begins a warm shutdown (browsing/tasks.py); made before the pool
# forks, so every pool process sees it. A warm shutdown waits for running tasks, and a keeper runs as long
# as its session: without this, stopping a worker would wait on every open session.
SHUTTING_DOWN = multiprocessing.Event()


def recordings_dir() -> Path:
    return Path(settings.DATA_DIR) / "recordings"


def keep(session_pk: int) -> str:
    """Claim the session, run its browser until it closes; safe to run twice (the second claim fails)."""
    holder = leases.new_holder()
    if not leases.claim(BrowserSession, session_pk, holder, status=SessionStatus.STARTING, queued_until__isnull=True):
        return "not claimed: the session is held by another keeper, queued or no longer starting"
    try:
        with leases.Heartbeat(BrowserSession, session_pk, holder) as beat:
            return Keeper(session_pk, beat).run()
    finally:
        leases.release(BrowserSession, session_pk, holder)


def _policy(private_addresses: bool) -> Callable[[str, int], list[str]]:
    """Where the session's browser may connect for host:port: foldrun.net's checked addresses (raises when refused).
    Private addresses only when the session was opened on an install that allows them and this worker's does too."""
    allowed = private_addresses and net.allows_private()

    def policy(host: str, port: int) -> list[str]:
        return net.connect_addresses(host, port, allow_private=allowed)

    return policy


def _upstream(proxy_url: str, allow_hosts: list[str]) -> Callable[[str], Upstream | None] | None:
    """allowHosts are reached through the user's own proxy (only the proxy's address is checked); the rest
    go out directly, checked as always."""
    if not proxy_url or not allow_hosts:
        return None
    parts = urlsplit(proxy_url)
    authorization = ""
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
        authorization = "Basic " + base64.b64encode(pair).decode()
    hop = Upstream(parts.hostname or "", parts.port or 80, authorization)

    def upstream(host: str) -> Upstream | None:
        return hop if any(host_matches(host, pattern) for pattern in allow_hosts) else None

    return upstream


class Keeper:
    def __init__(self, session_pk: int, beat: leases.Heartbeat) -> None:
        self.pk = session_pk
        self.beat = beat
        self.browser: Browser | None = None
        self.side: BrowserSide | None = None
        self._console_kept = 0

    def run(self) -> str:
        session = BrowserSession.objects.select_related("account").get(pk=self.pk)
        options = session.options or {}
        try:
            secrets = open_secrets(session)
        except Exception as exc:  # noqa: BLE001 - a vault key gone: the session cannot carry its headers
            close_session(self.pk, EndReason.START_FAILED, f"the session's headers could not be opened ({exc})")
            return "start failed"
        headers = secrets["headers"]
        credentials = options.get("credentials")
        try:
            logins = logins_for_session(session.account_id, credentials["namespace"]) if credentials else []
        except Exception as exc:  # noqa: BLE001 - a vault key gone: the session cannot fill its logins
            close_session(self.pk, EndReason.START_FAILED, f"the session's logins could not be opened ({exc})")
            return "start failed"
        proxy = GuardProxy(
            _policy(session.private_addresses), upstream=_upstream(secrets["proxyUrl"], options.get("allowHosts") or [])
        )
        try:
            self.browser = launch(options.get("viewport") or DESKTOP, proxy, cdp_host=settings.FOLDRUN_BROWSER_CDP_HOST)
        except StartFailed as exc:
            proxy.close()
            close_session(self.pk, EndReason.START_FAILED, str(exc))
            return "start failed"
        try:
            return self._watch(session, options, headers, logins)
        finally:
            self._stop(session)

    def _watch(self, session: BrowserSession, options: dict, headers: list[dict], logins: list[OpenLogin]) -> str:
        assert self.browser is not None
        self.side = BrowserSide(
            self.browser.cdp,
            self.browser.proxy,
            start_url=options.get("startUrl", ""),
            headers=headers,
            block=options.get("block"),
            record=bool(options.get("record")),
            viewport=options.get("viewport") or DESKTOP,
            logins=logins,
            auto_submit=bool((options.get("credentials") or {}).get("autoSubmit")),
        )
        self.side.start()
        self.side.ready.wait(timeout=90)
        if self.side.error or not self.side.ready.is_set():
            close_session(
                self.pk,
                EndReason.START_FAILED,
                f"the browser started but did not answer ({self.side.error or 'no answer in 90 s'})",
            )
            return "start failed"
        if self.side.blocked:
            close_session(
                self.pk,
                EndReason.NAVIGATION_BLOCKED,
                f"the start URL {options.get('startUrl')} was not opened: {self.side.blocked}",
            )
            return "navigation blocked"
        if self.side.start_failed:
            close_session(self.pk, EndReason.START_FAILED, self.side.start_failed)
            return "start failed"
        if not self._go_live():
            return "closed before it was live"
        title = ""
        said_alive = 0.0
        while True:
            time.sleep(TICK_SECONDS)
            if time.monotonic() - said_alive >= HEARTBEAT_SECONDS:
                beat_heartbeat(BROWSERS)
                said_alive = time.monotonic()
            if self.beat.lost:
                log.warning("session %s: the keeper's lease was lost; stopping its browser", session.public_id)
                return "lease lost"
            if SHUTTING_DOWN.is_set():
                close_session(
                    self.pk,
                    EndReason.BROWSER_EXITED,
                    "the worker holding its browser was shutting down, so the browser was stopped",
                )
                return "worker shutting down"
            row = BrowserSession.objects.filter(pk=self.pk).values("status").first()
            if row is None or row["status"] == SessionStatus.CLOSED:
                return "closed"
            if not self.browser.alive() or not self.side.is_alive():
                close_session(self.pk, EndReason.BROWSER_EXITED, "the session's browser exited on its own")
                return "browser exited"
            if self.side.title != title:
                title = self.side.title
                BrowserSession.objects.filter(pk=self.pk).update(title=title)
            self._keep_console()

    def _go_live(self) -> bool:
        assert self.browser is not None and self.side is not None
        with transaction.atomic():
            session = BrowserSession.objects.select_for_update().get(pk=self.pk)
            if session.status != SessionStatus.STARTING:
                return False
            self.beat.check()
            fields = move_session(
                session,
                SessionStatus.LIVE,
                "its browser is up"
                + (f" and opened {session.options.get('startUrl')}" if session.options.get("startUrl") else ""),
            )
            session.cdp_endpoint = self.browser.cdp
            session.title = self.side.title
            session.last_activity_at = timezone.now()
            session.console_log = list(self.side.console)
            self._console_kept = len(session.console_log)
            session.save(update_fields=[*fields, "cdp_endpoint", "title", "last_activity_at", "console_log"])
            tell_waiting_tasks(self.pk)
        return True

    def _keep_console(self) -> None:
        """What the browser's console said since the last tick, onto the session's record."""
        if self.side is None or self.beat.lost or len(self.side.console) <= self._console_kept:
            return
        BrowserSession.objects.filter(pk=self.pk, console_log__isnull=False).update(console_log=list(self.side.console))
        self._console_kept = len(self.side.console)

    def _stop(self, session: BrowserSession) -> None:
        """Stop the browser; keep the recording; close the row if nobody has (a lost lease leaves it to the sweep)."""
        if self.side is not None:
            self.side.stopping.set()
            self.side.join(timeout=10)
            self._keep_console()
        if self.browser is not None:
            self.browser.stop()
        if self.side is not None and self.side.frames and not self.beat.lost:
            target = recordings_dir() / session.account.public_id / f"{session.public_id}.webm"
            try:
                size = encode(self.side.frames, target)
                BrowserSession.objects.filter(pk=self.pk).update(recording=str(target), recording_bytes=size)
            except Exception:  # noqa: BLE001 - a video that will not encode is logged; the session still ends
                log.exception("session %s: its recording could not be written", session.public_id)
        if not self.beat.lost:
            close_session(self.pk, EndReason.BROWSER_EXITED, "the session's browser stopped")
