"""Navigation steps: goto, back, forward, reload, scroll, wait, tabs, frames, the viewport and a single-page app's own route."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from ...errors import WebToolError
from ..context import listen
from ..registry import step

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from ..call import Call


@step("goto", acts=False)
def goto(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    call.navigate(page, str(value))


@step("back", "forward", "reload", acts=False)
def history(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    getattr(page, {"back": "go_back", "forward": "go_forward", "reload": "reload"}[name])()


@step("scroll", acts=False)
def scroll(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    if value == "bottom":
        page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    elif value == "top":
        page.evaluate("window.scrollTo(0, 0)")
    elif isinstance(value, (int, float)):
        page.mouse.wheel(0, float(value))
    else:
        call.locate(page, value).scroll_into_view_if_needed(timeout=timeout)


@step("wait", acts=False)
def wait_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    wait(call, page, value, item, timeout)


@step("viewport", acts=False)
def viewport(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    if not (isinstance(value, list) and len(value) == 2):
        raise WebToolError(f"browse: step {index}: viewport takes [width, height]")
    page.set_viewport_size({"width": int(value[0]), "height": int(value[1])})


@step("tab", acts=False)
def tab_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    tab(call, page, value, item)


@step("frame", acts=False)
def frame(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    call.scope = None
    if value in ("", None):
        return
    handle = call.locate(page, value).first.element_handle(timeout=timeout)
    found = handle.content_frame() if handle is not None else None
    if found is None:
        raise WebToolError(f"browse: frame {value} is not an iframe on the page")
    call.scope = found


@step("pushstate", acts=True)
def pushstate(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    target = urljoin(page.url, str(value))
    if urlsplit(target).netloc != urlsplit(page.url).netloc or urlsplit(target).scheme != urlsplit(page.url).scheme:
        raise WebToolError(
            f"browse: pushstate moves a single-page app within its own origin; {value} is another origin — use goto"
        )
    page.evaluate(_PUSHSTATE_JS, target)


def wait(call: "Call", page: "Page", value: Any, step: dict, timeout: float) -> None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        page.wait_for_timeout(call.deadline.clip(min(float(value), 30_000)))
    elif value in ("load", "domcontentloaded", "networkidle"):
        page.wait_for_load_state(value, timeout=timeout)
    elif value == "navigation":
        page.wait_for_load_state("load", timeout=timeout)
    elif value == "url":
        pattern = step.get("matches") or step.get("contains")
        page.wait_for_url(re.compile(str(pattern)) if step.get("matches") else f"**{pattern}**", timeout=timeout)
    elif value == "text":
        page.get_by_text(str(step.get("text"))).first.wait_for(timeout=timeout)
    elif value in ("response", "request"):
        wait_exchange(call, page, value, step, timeout)
    elif value == "fn":
        call.no_script("a wait on a function")
        page.wait_for_function(str(step.get("js")), timeout=timeout)
    else:
        state = "hidden" if step.get("gone") else "visible"
        call.locate(page, value).first.wait_for(state=state, timeout=timeout)


def wait_exchange(call: "Call", page: "Page", kind: str, step: dict, timeout: float) -> None:
    """`"wait": "response"` / `"request"` + `matches`: a regular expression searched in the URL. One the page
    already finished in this call counts — a fetch that landed before the step began is not waited out."""
    pattern = step.get("matches")
    if not isinstance(pattern, str) or not pattern:
        raise WebToolError(
            f'browse: wait "{kind}" needs "matches", a regular expression for its URL, such as "/api/items"'
        )
    try:
        wanted = re.compile(pattern)
    except re.error as exc:
        raise WebToolError(f'browse: wait "{kind}": "matches" is not a regular expression ({exc})') from None
    if any(wanted.search(url) for url in call.exchanges.get(kind, ())) or any(
        wanted.search(entry["url"]) for entry in call.network
    ):
        return
    try:
        page.wait_for_event(kind, lambda seen: bool(wanted.search(seen.url)), timeout=timeout)
    except Exception:  # noqa: BLE001 - a timeout: said in a sentence
        raise WebToolError(f"browse: wait {kind}: no {kind} matching {pattern} within {round(timeout)} ms") from None


def tab(call: "Call", page: "Page", value: Any, step: dict) -> None:
    """Switch to a tab a click opened (`1`, `"last"`), open one (`"new"` + url, + label), or close this one."""
    context = page.context
    if value == "new":
        call.denied("goto", "a new tab")
        target = context.new_page()
        listen(call, target)
        if step.get("label"):
            call.tabs[str(step["label"])] = target
        call.page, call.scope = target, None
        call.known_tabs = len(context.pages)
        if step.get("url"):
            call.navigate(target, str(step["url"]))
        return
    wants_opened = value == "last" or (
        isinstance(value, int) and not isinstance(value, bool) and value >= len(context.pages)
    )
    if wants_opened and len(context.pages) <= call.known_tabs:
        try:  # a click's new tab opens a moment after the click returns
            context.wait_for_event("page", timeout=3000)
        except Exception:  # noqa: BLE001 - none came: the tabs as they stand
            pass
    if value == "close":
        page.close()
        if not context.pages:
            raise WebToolError("browse: tab close closed the last tab; nothing is left to read")
        target = context.pages[-1]
    elif value == "last":
        target = context.pages[-1]
    elif isinstance(value, int) and not isinstance(value, bool):
        if not 0 <= value < len(context.pages):
            raise WebToolError(f"browse: tab {value}: there are {len(context.pages)} tabs, numbered from 0")
        target = context.pages[value]
    elif str(value) in call.tabs:
        target = call.tabs[str(value)]
    else:
        raise WebToolError(
            f'browse: tab takes a number, "last", "new", "close" or a label it was given; {value!r} is none of them'
        )
    if target not in call.listened:
        listen(call, target)
    target.wait_for_load_state("load")
    target.bring_to_front()
    call.page, call.scope = target, None
    call.known_tabs = len(context.pages)


# A single-page app's own route change: Next.js's router when it exposes one, else pushState and popstate.
_PUSHSTATE_JS = """(url) => {
  const router = window.next && window.next.router;
  if (router && typeof router.push === 'function') { router.push(url); return 'router'; }
  history.pushState({}, '', url);
  window.dispatchEvent(new PopStateEvent('popstate', {state: {}}));
  return 'history';
}"""
