"""The next call's browser context, made while this call runs.

A fresh context and its first tab cost the better part of a warm call on a
pod (two round trips through the Playwright client and the pod's server), so
a call that opens a plain context also asks for one more with the same
options, made once the call has answered (`BrowserPool._settle`), while
the step's model takes its turn — never during a call, whose tab would
otherwise stop being the browser's foremost (its animation frames slowed, its
clicks' stability waits failing). The next call whose options are the same
takes it; any other closes it. A spare has never been used — no page has
loaded in it, no cookie is in it — and it goes to exactly one call, so two
calls still never share a context. Only plain contexts are kept spare: a
`session` (named, held across calls), a login from a secret (`auth`,
`cookies`), saved storage, headers and HAR recording are always made for
their call. A spare's guard proxy answers no connection until a call holds
it (its policy reads the call it belongs to).

A context's pages run in a renderer process of its own, and a new renderer's
first text, first script and first numbered snapshot (Playwright's injected
script, compiled there) cost the call's first page otherwise. So a spare's tab
warms its renderer before any call holds it: a few elements written into its
own about:blank and read once with the snapshot — no request leaves it, no
storage is touched, and the call's `goto` keeps that renderer and replaces
that document.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from typing import Any

from playwright._impl._sync_base import mapping

from ..net import GuardProxy, Refused

# Context options a spare may carry: none of them is a secret or state of a call's own.
PLAIN = frozenset(
    {
        "locale",
        "viewport",
        "user_agent",
        "timezone_id",
        "color_scheme",
        "geolocation",
        "permissions",
        "ignore_https_errors",
        "device_scale_factor",
        "is_mobile",
        "has_touch",
        "screen",
    }
)


def key_of(options: dict[str, Any], proxied: bool) -> str | None:
    """What two calls' contexts must agree on to share a spare's shape; None: this call's is never spare."""
    if any(k not in PLAIN for k in options):
        return None
    return json.dumps([options, proxied], sort_keys=True, default=str)


# Written into the spare's about:blank and read once (`Spare._make`): text, a link, a button, a script.
WARM_UP = (
    "document.body.innerHTML = '<h1>.</h1><p>. <a href=\"#\">.</a> <button>.</button></p>'; "
    "document.body.textContent.length"
)
WARM_UP_MS = 5_000


class Spare:
    """One context (with its first tab and, when asked, its guard proxy) being made on the event loop.

    It is made step by step, each only while `go` is set: between calls, or once a call has taken it. A call
    that starts pauses the spares it does not take (`Spares.pause`), so that no tab of theirs opens beside it."""

    def __init__(
        self, browser: Any, key: str, options: dict[str, Any], proxied: bool, owner: "Spares | None" = None
    ) -> None:
        self.key = key
        self.owner = owner
        self.holder: dict[str, Any] = {"call": None}
        self.proxy: GuardProxy | None = GuardProxy(self._policy) if proxied else None
        made = dict(options, **({"proxy": self.proxy.playwright_proxy()} if self.proxy is not None else {}))
        self.browser = browser
        self.go = asyncio.Event()
        self.go.set()
        # Clear only while its tab is opening, the one step of it a call must not run beside (the tab would be the
        # browser's foremost); its context and its warm-up are made on, under the call, once under way.
        self.parked = asyncio.Event()
        self.parked.set()
        self.dropped = False  # discarded before it was made: it stops at its next step and closes what it made
        self.taken = False  # a call waits for it: the warm-up steps not begun are left to the call's own page
        self.task = browser._loop.create_task(self._make(browser._impl_obj, made))
        # Read here, so that a spare's failure never taken (its browser went) is not reported as unread.
        self.task.add_done_callback(lambda task: self.parked.set() or task.cancelled() or task.exception())

    def _policy(self, host: str, port: int) -> list[str]:
        call = self.holder["call"]
        if call is None:
            raise Refused("no call holds this browser context yet")
        return call.connect_policy(host, port)

    async def _step(self, made: Any) -> bool:
        """Wait until it may go on; False (and what was made closed) when it was discarded meanwhile."""
        await self.go.wait()
        if self.dropped and made is not None:
            close_later(made)
        return not self.dropped

    async def _make(self, browser: Any, options: dict[str, Any]) -> tuple[Any, Any] | None:
        # The client's own method names every option (the sync API passes each, None when unset).
        every = {name: None for name in inspect.signature(browser.new_context).parameters}
        if not await self._step(None):
            return None
        context = await browser.new_context(**dict(every, **options))
        if not await self._step(context):
            return None
        self.parked.clear()
        try:
            page = await context.new_page()
        finally:
            self.parked.set()
        if self.owner is not None and not self.go.is_set():
            await self.owner.front_again()  # it opened beside a call: that call's page is the foremost again
        try:
            if await self._step(context) and not self.taken:
                await page.evaluate(WARM_UP, None)
            if await self._step(context) and not self.taken:
                await page.aria_snapshot(timeout=WARM_UP_MS, depth=None, mode="ai", boxes=None)
        except Exception:  # noqa: BLE001 - a spare that did not warm up is still a fresh context
            pass
        return (context, page) if await self._step(context) else None

    def take(self, call: Any) -> tuple[Any, Any]:
        """(context, page) as sync objects, for `call` alone; raises what making it raised."""
        self.taken = True
        self.go.set()
        context, page = self.browser._sync(self.task)
        self.holder["call"] = call
        return mapping.from_impl(context), mapping.from_impl(page)

    def discard(self) -> None:
        """Close it unused: at once when made, else at its next step."""
        if self.proxy is not None:
            self.proxy.close()
        self.dropped = True
        if not self.task.done():
            self.go.set()
        elif not self.task.cancelled() and self.task.exception() is None and self.task.result() is not None:
            close_later(self.task.result()[0])


MOST_SPARES = 3  # spares kept at once when calls come faster than one is made between them


class Spares:
    """One browser's spares: one, or two from the moment a call had to wait for its own — its step's calls come
    faster than a spare is made between two of them (`BrowserPool._settle` is cut short when a call comes), so
    each gap makes the one after next's while the next's is already there."""

    def __init__(self) -> None:
        self.made: list[Spare] = []
        self.depth = 1
        self.wanted: tuple[str, dict, bool] | None = None  # the options the last plain call asked for next
        self.front: Any = None  # the page of the call running now: a spare's tab that opens beside it hands it back

    async def front_again(self) -> None:
        """Bring the running call's page to the front again: a spare's tab has just opened beside it."""
        page = self.front
        if page is None:
            return
        try:
            await getattr(page, "_impl_obj", page).bring_to_front()
        except Exception:  # noqa: BLE001 - the call's page closed meanwhile: nothing to hand the foreground to
            pass

    def take(self, key: str, call: Any, browser: Any) -> tuple[Any, Any, dict, Any] | None:
        """A spare (context, page, holder, guard proxy) made with `key`'s options on `browser`, for `call` alone;
        else None. Spares of other options are closed."""
        for other in [s for s in self.made if s.key != key or s.browser is not browser]:
            self.made.remove(other)
            other.discard()
        # A spare already made first: one still being made would be finished on this call's path.
        self.made.sort(key=lambda s: not s.task.done())
        while self.made:
            spare = self.made.pop(0)
            if spare.key != key or spare.browser is not browser:
                spare.discard()
                continue
            if not spare.task.done():
                self.depth = MOST_SPARES
            try:
                context, page = spare.take(call)
            except Exception:  # noqa: BLE001 - it could not be made: the call makes its own, and meets why
                if spare.proxy is not None:
                    spare.proxy.close()
                return None
            return context, page, spare.holder, spare.proxy
        self.depth = MOST_SPARES  # a call found none made: calls come faster than one is made between them
        return None

    def pause(self) -> None:
        """A call starts: the spares it may not take make no further step until the next gap (`resume`). One
        step already under way ends on its own — the call does not wait for it — and a tab of theirs that opens
        meanwhile hands the foreground back to the call's page (`front`) at once."""
        self.front = None
        for spare in self.made:
            spare.go.clear()

    def resume(self) -> None:
        for spare in self.made:
            spare.go.set()

    def top_up(self, browser: Any) -> list[Any]:
        """Between calls: make what the last plain call asked for, up to `depth`; the tasks still being made."""
        wanted, self.wanted = self.wanted, None
        if wanted is not None:
            for spare in [s for s in self.made if s.key != wanted[0] or s.browser is not browser]:
                self.made.remove(spare)
                spare.discard()
            while len(self.made) < self.depth:
                self.made.append(Spare(browser, *wanted, owner=self))
        self.resume()
        return [spare.task for spare in self.made if not spare.task.done()]

    def drop(self, browser_alive: bool) -> None:
        """Close every spare (with its browser gone, the contexts went with it: only their proxies are closed)."""
        self.wanted = None
        made, self.made = self.made, []
        for spare in made:
            if browser_alive and spare.browser.is_connected():
                spare.discard()
            else:
                if spare.proxy is not None:
                    spare.proxy.close()
                spare.task.cancel()


# Closes under way, so that the pool can let them finish between calls (`closing_on`): a close left to the
# next call would be done inside it, its page's last events read there too.
_CLOSING: set[Any] = set()


def closing_on(loop: Any) -> list[Any]:
    """The closes still under way on `loop` (a pool's event loop)."""
    # Read from a copy: other pools' threads add and drop theirs meanwhile.
    return [task for task in tuple(_CLOSING) if not task.done() and task.get_loop() is loop]


def close_later(context: Any) -> None:
    """Close a context on the event loop without waiting for it (a call's answer does not wait on its close).
    `context` is the sync object or its impl."""
    impl = getattr(context, "_impl_obj", context)

    async def close() -> None:
        try:
            await impl.close()
        except Exception:  # noqa: BLE001 - its browser is already gone
            pass

    try:
        task = impl._loop.create_task(close())
    except Exception:  # noqa: BLE001 - the loop has stopped: the context went with its browser
        return
    _CLOSING.add(task)
    task.add_done_callback(_CLOSING.discard)
