"""`web action=browse`: a real browser (Playwright's sync API over the system Chromium).

The browser is launched on demand by a `BrowserPool` and closed at step end
(or when idle); each call gets a fresh context unless it names a `session`,
whose context (cookies, localStorage — a login) is kept for the rest of the
step and its storage written to `outputs/.browser/<session>/state.json` so a
later step of the run starts signed in — unless a secret's cookies or storage
signed it in, which stays in the step's browser only. `state` does the same
across runs under `state/browser/<name>.json`.

Steps (`actions`) run in order before the page is read; `expect` claims stop
the call when wrong; `get` and `eval` answers are the call's results. A number
read with `mode=aria` is written `"@e4"` in a later call and found again by its
role and name, or refused when the page changed (spec "Numbered elements").

The package: `pool` (the browser), `call` (one call's state and guards),
`context` (its browser context), `storage` (logins kept between calls), `refs`
(selectors and numbered elements), `claims` (`expect`, `confirm`), `steps`,
`modes` (how the page is read), `action` (the whole call), `session_call` (a call
on a browser session's or live page's own page) and `answer` (what a call answers).
"""

from __future__ import annotations

from .action import MAX_OUTPUT, run
from .call import Call
from .context import BrowseState
from .modes import BUILT_MODES
from .pool import CHROMIUM, IDLE_SECONDS, INSTALL_SENTENCE, LAUNCH_ARGS, BrowserPool, find_chromium, thread_pool
from .refs import interactive_lines, parse_snapshot
from .steps import ACTING_STEPS, BUILT_STEPS, acts

__all__ = [
    "ACTING_STEPS",
    "BUILT_MODES",
    "BUILT_STEPS",
    "CHROMIUM",
    "IDLE_SECONDS",
    "INSTALL_SENTENCE",
    "LAUNCH_ARGS",
    "MAX_OUTPUT",
    "BrowseState",
    "BrowserPool",
    "Call",
    "acts",
    "find_chromium",
    "interactive_lines",
    "parse_snapshot",
    "run",
    "thread_pool",
]
