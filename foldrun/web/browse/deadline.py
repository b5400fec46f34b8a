"""An overall deadline on one browse call: it ends within its timeout, however the page behaves.

Each Playwright wait is clipped to the time left, and a timer closes the
call's context when the time is up — a script that never returns, a page that
never loads — so the call comes back with what it had done so far and a
sentence saying where it stopped.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING, Any

from ..errors import WebToolError

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import BrowserContext

    from .call import Call

DEFAULT_SECONDS = 90.0  # the tool states it: "browse: … (default 90)"
MOST_SECONDS = 600.0


def seconds_of(raw: Any) -> float:
    """`timeout=`: seconds, from 1 to 600; absent, the default."""
    if raw in (None, ""):
        return DEFAULT_SECONDS
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise WebToolError(f"browse: timeout={raw!r} is not a number of seconds, such as 30") from None
    if not 1 <= value <= MOST_SECONDS:
        raise WebToolError(f"browse: timeout={value:g} is outside 1 to {MOST_SECONDS:g} seconds")
    return value


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds
        self.where = "while opening the page"
        self._fired = False
        self._timer: threading.Timer | None = None

    # A wait clipped to the time left ends by its own timeout at about the moment the timer fires, and
    # either may come first; within this much of the deadline, the deadline is what stopped the call.
    SLACK_SECONDS = 0.1

    @property
    def passed(self) -> bool:
        return self._fired or time.monotonic() >= self.at - self.SLACK_SECONDS

    @passed.setter
    def passed(self, value: bool) -> None:
        self._fired = value

    def remaining_ms(self) -> float:
        return (self.at - time.monotonic()) * 1000

    def clip(self, ms: float) -> float:
        """A wait of `ms`, no longer than the time left (and at least 1 ms, so Playwright still waits)."""
        left = self.remaining_ms()
        if left <= 0:
            self.passed = True
            raise WebToolError("browse: the call's deadline passed")
        return max(1.0, min(float(ms), left))

    def arm(self, context: "BrowserContext") -> None:
        """When the time is up, close the context from the event loop's side: the call's wait ends at once."""

        def fire() -> None:
            self.passed = True
            try:
                asyncio.run_coroutine_threadsafe(
                    context._impl_obj.close(reason="the call's deadline passed"), context._loop
                )
            except Exception:  # noqa: BLE001 - the loop or the context is already gone: the call has ended
                pass

        self._timer = threading.Timer(max(0.0, self.at - time.monotonic()), fire)
        self._timer.daemon = True
        self._timer.start()

    def disarm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()

    def sentence(self, call: "Call") -> str:
        return call.with_what_it_did(
            f"browse: the call stopped at its {self.seconds:g}-second deadline, "
            f"{self.where} — pass timeout= (at most {MOST_SECONDS:g}) for a longer one"
        )
