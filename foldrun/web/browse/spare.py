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
"""
from __future__ import annotations

import inspect
import json
from typing import Any

from playwright._impl._sync_base import mapping

from ..net import GuardProxy, Refused

# Context options a spare may carry: none of them is a secret or state of a call's own.
PLAIN = frozenset({"locale", "viewport", "user_agent", "timezone_id", "color_scheme", "geolocation", "permissions",
                   "ignore_https_errors", "device_scale_factor", "is_mobile", "has_touch", "screen"})


def key_of(options: dict[str, Any], proxied: bool) -> str | None:
    """What two calls' contexts must agree on to share a spare's shape; None: this call's is never spare."""
    if any(k not in PLAIN for k in options):
        return None
    return json.dumps([options, proxied], sort_keys=True, default=str)


class Spare:
    """One context (with its first tab and, when asked, its guard proxy) being made on the event loop."""

    def __init__(self, browser: Any, key: str, options: dict[str, Any], proxied: bool) -> None:
        self.key = key
        self.holder: dict[str, Any] = {"call": None}
        self.proxy: GuardProxy | None = GuardProxy(self._policy) if proxied else None
        made = dict(options, **({"proxy": self.proxy.playwright_proxy()} if self.proxy is not None else {}))
        self.browser = browser
        self.task = browser._loop.create_task(self._make(browser._impl_obj, made))

    def _policy(self, host: str, port: int) -> list[str]:
        call = self.holder["call"]
        if call is None:
            raise Refused("no call holds this browser context yet")
        return call.connect_policy(host, port)

    @staticmethod
    async def _make(browser: Any, options: dict[str, Any]) -> tuple[Any, Any]:
        # The client's own method names every option (the sync API passes each, None when unset).
        every = {name: None for name in inspect.signature(browser.new_context).parameters}
        context = await browser.new_context(**dict(every, **options))
        page = await context.new_page()
        return context, page

    def take(self, call: Any) -> tuple[Any, Any]:
        """(context, page) as sync objects, for `call` alone; raises what making it raised."""
        context, page = self.browser._sync(self.task)
        self.holder["call"] = call
        return mapping.from_impl(context), mapping.from_impl(page)

    def discard(self) -> None:
        """Close it unused: at once when made, else as soon as it is."""
        if self.proxy is not None:
            self.proxy.close()
        if self.task.done():
            if not self.task.cancelled() and self.task.exception() is None:
                close_later(self.task.result()[0])
            return
        self.task.add_done_callback(
            lambda task: close_later(task.result()[0]) if not task.cancelled() and task.exception() is None else None)


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
