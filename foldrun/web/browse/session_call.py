"""A browse call on a browser session's own page (a step that browses in a session, or a live page)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from ..errors import WebToolError
from . import profile as cpu
from .answer import finish
from .call import Call
from .context import listen
from .deadline import Deadline
from .framing import add_init
from .live import check_tab
from .modes import read
from .refused import raise_if_refused, watch_refusals
from .registry import prepare, run_steps
from .watch import start_watch

if TYPE_CHECKING:  # pragma: no cover
    from ..tool import WebTool


def run_in_session(
    tool: "WebTool",
    call: Call,
    url: str | None,
    mode: str,
    args: dict,
    steps: list,
    claims: list,
    explicit_mode: bool,
    limit: int,
    profile_to: Any = None,
) -> str:
    """The call on a browser session's own page: it opens `url` when given, else acts where the page is, and
    leaves the page (and its cookies) as the steps left it for the next call."""
    started = time.monotonic()
    call.kept.update(tool.browse_kept)  # an earlier call's login on this page: still redacted here
    context, page = tool.browsers.session_page()
    live_page = getattr(tool, "live_page", None)
    if live_page is not None:
        check_tab(live_page, page)  # a tab that crashed since the last call is a sentence, not a blank page
        if live_page.calls == 0 or call.args.get("cookies"):  # the file's cookies when it opens; a call's own
            call.add_cookies(context)
        live_page.seeded = live_page.seeded or call.seeded
        call.seeded = live_page.seeded  # no script, ever, on a page a secret's cookies signed in
        if any(call.blocked()):
            context.route("**/*", lambda route, request: call._guard(route, request))
            call.listeners.append((context, "route", None))
    add_init(context, call.init)  # the session's pages run them from their next load on
    call.deadline = Deadline(call.deadline.seconds)  # clipped waits only: the session's context is not ours to close
    listen(call, page)
    prepare(call, page, mode, steps)
    profiler = cpu.start(call, page) if profile_to is not None else None
    watch = start_watch(call, page) if live_page is not None else None  # a live page is watched call by call too
    # The session's guard is its keeper's, not this call's: a page it refused is seen from here by its answer.
    refused = watch_refusals(call, context) if call.proxy is None else None
    try:
        if url is not None and not (live_page is not None and url == page.url):  # the same URL: as it stands
            call.navigate(page, url)
            if refused is not None:
                raise_if_refused(call, refused)
        call.page, call.known_tabs = page, len(context.pages)
        if call.captcha is not None:  # a widget on the page as it opens is passed; the steps' re-checks find it done
            call.captcha.check(page)
        try:
            run_steps(call, page, steps)
        finally:  # a step that failed on the guard's 403 page failed because of the refusal: that is said
            if refused is not None:
                raise_if_refused(call, refused)
        page = call.page
        if args.get("js"):
            call.no_script("js")
            call.results.append({"js": str(args["js"]), "value": page.evaluate(str(args["js"]))})
        call.check_expectations(page, claims)
        call.deadline.where = f"while reading the page (mode={mode})"
        body = read(call, page, mode, args)
        final_url = page.url
        if live_page is not None:
            live_page.url = final_url  # where the next call finds it
        if profiler is not None:
            cpu.stop(call, profiler, profile_to)
    except Exception:  # looked at and raised again: past the deadline, the deadline's sentence
        if call.deadline.passed:
            raise WebToolError(call.deadline.sentence(call)) from None
        raise
    finally:
        tool.browse_kept.update(call.secrets)
        if watch is not None:
            watch.stop()
        for opened, event, handler in call.listeners:  # the next call listens afresh; nothing fires twice
            try:
                if event == "route":
                    opened.unroute("**/*")
                    continue
                opened.remove_listener(event, handler)
            except Exception:  # noqa: BLE001 - a closed tab
                pass
    return finish(tool, call, url or final_url, final_url, mode, steps, started, body, explicit_mode, limit)
