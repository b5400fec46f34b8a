"""The whole `browse` action: check the arguments, open the page, run the steps, read it."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from foldrun import net
from foldrun.contract import web_engines as W

from ..errors import WebToolError
from ..net import scrub_url
from .aria import check_options
from .annotate import check_annotate_options
from .compare import check_diff_options, refuse_against
from .walk import check_walk_options
from .answer import finish
from .session_call import run_in_session
from .call import Call
from . import profile as cpu
from .framing import add_init, check_boundaries, init_scripts
from .limits import choose_engine
from .context import listen
from . import captcha, engines
from .deadline import Deadline
from .spare import close_later
from .timing import mark
from .watch import Recording, start_watch, video_target
from .modes import BUILT_MODES, read, save_captures
from .registry import prepare, run_steps
from .steps import mock
from . import vendors
from .util import ACTION_TIMEOUT_MS, safe_name, steps_of

if TYPE_CHECKING:  # pragma: no cover
    from ..tool import WebTool

MAX_OUTPUT = 18_000

# What a browser session settles for itself when a step browses in it (browsing's session options).
SESSION_OWNED = (
    "session",
    "state",
    "har",
    "trace",
    "video",
    "cookies",
    "auth",
    "device",
    "headers",
    "identity",
    "proxy",
    "extensions",
    "webgpu",
)


def _uses_secret(steps: list) -> bool:
    for step in steps:
        if not isinstance(step, dict):
            continue
        if (
            "secret" in step
            or "login" in step
            or _uses_secret(step.get("then") or [])
            or _uses_secret(step.get("else") or [])
        ):
            return True
    return False


def run(tool: "WebTool", args: dict) -> str:
    """The whole `browse` action. Preconditions: allowed, not a test run."""
    opened: list[vendors.Opened] = []  # a vendor's session, ended when the call ends however it ends
    try:
        return _run(tool, args, opened)
    except Exception:  # looked at and raised again: only a vendor's lost browser changes it
        gone = vendors.gone_under(opened)  # the vendor's browser, not the account's pod: said as such
        if gone is not None:
            raise WebToolError(gone) from None
        raise
    finally:
        for session in opened:
            vendors.end(session.call, session)


def _run(tool: "WebTool", args: dict, opened: list) -> str:
    in_session = bool(tool.browsers.cdp)  # this step browses in a browser session: its page stays between calls
    live_page = getattr(tool, "live_page", None)  # … or on a live page of its own (live.py), which does the same
    url = args.get("url")
    if in_session and url in (None, ""):
        url = None  # read and act on the page the session is on
    elif not isinstance(url, str) or not url.strip():
        raise WebToolError("browse needs url= — the page to open")
    else:
        url = url.strip()
    if in_session:
        kept = [
            k
            for k in SESSION_OWNED
            if args.get(k) not in (None, "", False, "false") and not (live_page is not None and k == "cookies")
        ]  # a live page takes a login's cookies
        if kept and live_page is not None:
            raise WebToolError(
                f"browse: {kept[0]}= does not apply to a live page — it keeps its own browser and "
                f"page from call to call; drop it"
            )
        if kept:
            raise WebToolError(
                f"browse: {kept[0]}= is the browser session's own setting here — this step browses "
                f"in a session; drop it"
            )
    if url is not None:
        try:
            urlsplit(url).port  # noqa: B018 - read for its ValueError: `[::1`, a port that is not one
        except ValueError:  # what the guard says of it, as fetch does
            raise WebToolError(f"{scrub_url(url)}: {net.refusal(url)}") from None
    if url is not None and (urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname):
        raise WebToolError(f"{scrub_url(url)}: browse opens http and https URLs only")
    explicit_mode = args.get("mode") not in (None, "")
    mode = str(args.get("mode") or "text").strip().lower()
    if mode not in W.BROWSE_MODES:
        raise WebToolError(f"browse mode={mode} is not one of {', '.join(W.BROWSE_MODES)}")
    if mode not in BUILT_MODES:
        raise WebToolError(
            f"browse mode={mode} is not built into this install yet; the modes that are: {', '.join(BUILT_MODES)}"
        )
    check_options(args, mode)
    check_boundaries(args)
    check_diff_options(args, mode)
    check_annotate_options(args, mode)
    check_walk_options(args, mode)
    call = Call(tool, args)
    if live_page is not None:
        live_page.holder["call"] = call  # its guard proxy reads this call's allowed_domains
    vendor = tool.provider_for("browse")  # a vendor's browser: opened once every argument has been checked
    steps = steps_of(args.get("actions"))
    engine = choose_engine(call, args, mode, steps)
    has = engines.installed()  # what the install wrote down in engines.json
    if engine == "chrome" and "chrome" not in has:
        tool.log("browse: Google Chrome is not in this runner image; running Chromium")
    elif engine == "chrome":
        tool.log("browse: Google Chrome runs as Chromium in this install; running Chromium")
    elif engine != "chromium" and engine not in has:
        raise WebToolError(
            f"browse: this runner image was built without {engine}; it has "
            f"{', '.join(sorted(has)) or 'no browser'}"
            + (" (and chrome, which runs as Chromium here)" if "chrome" not in has else "")
        )
    elif engine not in ("chromium", "chrome"):
        raise WebToolError(f"browse: browser={engine} is not built into this install yet; it runs chromium and chrome")
    call.captcha = captcha.for_call(call, steps)  # its secret read before a browser opens: a missing one is refused
    claims = steps_of(args.get("expect")) if args.get("expect") not in (None, "") else []
    routes = steps_of(args.get("routes")) if args.get("routes") not in (None, "") else []
    call.secrets_in_steps = _uses_secret(steps)
    if args.get("js"):
        call.denied("js")
        if args.get("cookies"):
            raise WebToolError(
                "browse: js does not run in a call that carries cookies from a secret — "
                "document.cookie is one expression away"
            )
        if call.secrets_in_steps:
            call.no_script("js")
    if args.get("state") and (args.get("cookies") or call.identity.get("cookies") or call.block.get("cookies")):
        raise WebToolError(
            "browse: state= does not keep a login seeded from a secret (cookies) — state/ is a "
            "workspace file every later step can read; sign in with actions instead"
        )
    if args.get("state") and call.block.get("storage"):
        raise WebToolError(
            "browse: state= does not keep a login seeded from a secret (web.browse.storage) — "
            "state/ is a workspace file every later step can read; sign in with actions instead"
        )
    recorders = [k for k in ("trace", "har") if args.get(k) not in (None, "", False, "false")]
    if recorders and call.secrets_in_steps:
        raise WebToolError(
            f"browse: a call that signs in keeps no {' or '.join(recorders)} — a trace keeps every "
            f"field's value, a HAR every request body; sign in with session= and record the next call"
        )
    if args.get("har") not in (None, "", False, "false"):
        if args.get("session"):
            raise WebToolError("browse: har records one call's own browser context; drop session= to record it")
        call.har_target = tool.save_target(_recording_path(args["har"], "outputs/network.har", ".har", "har"))
    if not in_session:
        video = video_target(call, args)
        call.recording = Recording(video) if video is not None else None
    trace_target = (
        tool.save_target(_recording_path(args["trace"], "outputs/trace.zip", ".zip", "trace"))
        if args.get("trace") not in (None, "", False, "false")
        else None
    )
    if args.get("confirm") and not steps:
        raise WebToolError("browse: confirm= needs actions= — confirming a page nobody changed proves nothing")
    for key in ("session", "state"):
        if args.get(key) is not None:
            safe_name(args[key], key)
    max_output = args.get("max_output")
    limit = MAX_OUTPUT if max_output in (None, "") else max(200, min(int(max_output), MAX_OUTPUT))
    reason = call.host_refusal(url) if url is not None else None
    if reason:  # before a browser opens
        raise WebToolError(f"browse: {scrub_url(url)} was not opened — {reason}")
    refuse_against(call, args)  # mode=diff's other page, by the same guards, before a browser opens too
    call.init = init_scripts(call)  # read before a browser opens: a missing one is refused first
    profile_to = cpu.profile_target(call)
    if in_session:
        where = "on a live page" if live_page is not None else "in a browser session"
        for key in ("proxy", "extensions", "webgpu"):  # the file's own, not the call's (refused above): said
            if call.setting(key) not in (None, "", False, [], "false"):
                tool.log(
                    f"browse: this step browses {where}, so web.browse {key} is not used — "
                    f"{'the live page' if live_page is not None else 'the session'}'s browser was opened "
                    f"without it"
                )
        if vendor is not None:  # never quietly dropped
            tool.log(
                f"browse: this step browses in a browser session, so web.browse's via: {vendor['name']} is not used"
            )
        return run_in_session(tool, call, url, mode, args, steps, claims, explicit_mode, limit, profile_to)
    if tool.browsers.idle():  # unused past its idle time: a fresh browser (a session reloads its saved storage)
        if tool.browse_state is not None:
            tool.browse_state.close()
        tool.browsers.close()
    if vendor is not None:
        call.vendor = vendors.open_for(call, vendor)  # None: it could not be had, and the call renders here
        if call.vendor is not None:
            call.vendor.call = call
            opened.append(call.vendor)
    started = time.monotonic()
    mark("job started")
    context = call.context()
    mark("context")
    add_init(context, call.init)
    # The clock runs from the moment the browser is there (its launch or connection has its own bound).
    call.deadline = Deadline(call.deadline.seconds)
    call.deadline.arm(context)
    context.set_default_timeout(ACTION_TIMEOUT_MS)
    refusals_from = len(call.proxy.refusals) if call.proxy is not None else 0
    page = call.fresh_page or context.new_page()
    if call.vendor is None:
        tool.browsers.foreground(page)  # a spare's tab that opens beside this call hands it the foreground back
    vendors.on_page(call, page)
    listen(call, page)
    prepare(call, page, mode, steps)
    profiler = cpu.start(call, page) if profile_to is not None else None
    if trace_target is not None:
        context.tracing.start(screenshots=True, snapshots=True)
    live = start_watch(call, page)  # the Run page's view of this page while the call runs, and its video
    mark("page ready")
    try:
        for route in routes:  # mocks in place before the first request
            if "mock" not in route:
                raise WebToolError(
                    'browse: routes= is a JSON array of mock steps, such as [{"mock": "**/api/*", "json": []}]'
                )
            mock(call, page, str(route["mock"]), route)
        call.navigate(page, url)
        mark("navigated")
        if args.get("wait_for"):
            try:
                call.locate(page, args["wait_for"]).first.wait_for(state="visible", timeout=ACTION_TIMEOUT_MS)
            except WebToolError:
                raise
            except Exception:  # noqa: BLE001 - a timeout, a bad selector, a closed page: all "did not appear"
                raise WebToolError(
                    f"browse: wait_for={args['wait_for']} did not appear within {ACTION_TIMEOUT_MS // 1000}s"
                ) from None
        call.page, call.known_tabs = page, len(context.pages)
        if call.captcha is not None:  # a widget on the page as it opens is passed; the steps' re-checks find it done
            call.captcha.check(page)
        run_steps(call, page, steps)
        call.deadline.where = "after the steps"
        page = call.page  # the tab the steps ended on is the one read
        if args.get("js"):
            call.no_script("js")
            call.results.append({"js": str(args["js"]), "value": page.evaluate(str(args["js"]))})
        call.check_expectations(page, claims)
        if args.get("confirm"):
            call.confirm(page, str(args["confirm"]))
        if args.get("capture"):
            try:  # the last fetches land before their bodies are kept
                page.wait_for_load_state("networkidle", timeout=3000)
            except Exception:  # noqa: BLE001 - a page that never idles: the captures as they stand
                pass
            call.saved_captures = save_captures(call)
            call.notes.append(
                f"capture: {len(call.saved_captures)} response"
                f"{'s' if len(call.saved_captures) != 1 else ''} saved under outputs/captures/"
            )
        call.deadline.where = f"while reading the page (mode={mode})"
        body = read(call, page, mode, args)
        mark("read")
        final_url = page.url  # read before the page closes: the call's last stderr line
        if profiler is not None:
            cpu.stop(call, profiler, profile_to)
        call.save_storage(context)
    except Exception:  # looked at and raised again: past the deadline, the deadline's sentence
        if call.deadline.passed:
            raise WebToolError(call.deadline.sentence(call)) from None
        raise
    finally:
        call.deadline.disarm()
        if live is not None:
            live.stop()
        if call.recording is not None:
            call.recording.save(call)
        if trace_target is not None:
            try:
                context.tracing.stop(path=str(trace_target))
                call.notes.append(f"trace: {tool.relative(trace_target)} — open it at trace.playwright.dev")
                call.recordings["trace"] = tool.relative(trace_target)
            except Exception:  # noqa: BLE001 - the call's own error matters more than its trace
                pass
        # A call's own context closes without the answer waiting on it (its pages go with it); a session's stays,
        # and a recording is only written once its context has closed.
        later = not args.get("session") and call.har_target is None and trace_target is None
        for opened in (
            {}
            if later
            else {id(p): p for p in [page, *call.listened, *(context.pages if not args.get("session") else [])]}
        ).values():
            try:
                opened.close()
            except Exception:  # noqa: BLE001 - a tab or its browser already gone: nothing to close
                pass
        if later:
            close_later(context)
        elif not args.get("session"):
            try:
                context.close()
            except Exception:  # noqa: BLE001 - its browser already gone: the context went with it
                pass
            if call.proxy is not None:
                call.proxy.close()
            if call.har_target is not None and call.har_target.is_file():
                call.notes.append(f"har: {tool.relative(call.har_target)}")
                call.recordings["har"] = tool.relative(call.har_target)
        if call.proxy is not None:  # what the guard refused beyond the page itself: one line each
            for host, reason in call.proxy.refusals[refusals_from:]:
                line = f"refused {host}: {reason}"
                if line not in call.page_failures:
                    call.page_failures.append(line)
    mark("closed")
    return finish(tool, call, url, final_url, mode, steps, started, body, explicit_mode, limit)


def _recording_path(value: Any, default: str, suffix: str, what: str) -> str:
    """`"true"` → the default file; a path must end in its suffix."""
    if value is True or str(value).lower() == "true":
        return default
    text = str(value).strip()
    if not text.lower().endswith(suffix):
        raise WebToolError(f'browse: {what}= is "true" or a {suffix} path, such as {default}')
    return text
