"""Pointer steps: click and its kin, hover, drag, the mouse and the wheel."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import WebToolError
from ..human import human_pointer, move_to, swipe, tap
from ..registry import step

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Locator, Page

    from ..call import Call

FIRST_TRY_MS = 1_500  # the plain click's own try, before the keyboard and the label


@step("click", "check", "uncheck", acts=True)
def press(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    locator = call.locate(page, value)
    if item.get("human") and name == "click":
        human_pointer(call, page, name, locator.first, item, timeout)
    elif item.get("force"):
        force_on(locator.first, name, value, timeout)
    else:
        press_on(call, page, locator, name, value, timeout)


@step("dblclick", acts=True)
def dblclick(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    if item.get("human"):
        human_pointer(call, page, name, call.locate(page, value).first, item, timeout)
    elif item.get("force"):  # on the element itself, as a forced click is
        dispatch_on(call.locate(page, value).first, "dblclick", timeout)
    else:
        call.locate(page, value).dblclick(timeout=timeout)


@step("rightclick", acts=True)
def rightclick(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    if item.get("force"):
        dispatch_on(call.locate(page, value).first, "contextmenu", timeout)
    else:
        call.locate(page, value).click(button="right", timeout=timeout)


@step("hover", acts=False)
def hover(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    if item.get("human"):
        human_pointer(call, page, name, call.locate(page, value).first, item, timeout)
    else:
        call.locate(page, value).hover(timeout=timeout, force=bool(item.get("force")))


@step("drag", acts=True)
def drag(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    if not item.get("to"):
        raise WebToolError(f'browse: step {index}: drag needs "to", the selector to drop on')
    if item.get("human"):
        human_pointer(call, page, name, call.locate(page, value).first, item, timeout)
        return
    call.locate(page, value).first.drag_to(call.locate(page, item["to"]).first, timeout=timeout)


@step("mouse", acts=True)
def mouse(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    x, y = float(item.get("x", 0)), float(item.get("y", 0))
    if item.get("human"):
        move_to(call, page, x, y)  # the pointer travels there like a person's; then what was asked happens there
        if value == "move":
            return
    if value == "move":
        page.mouse.move(x, y)
    elif value in ("down", "up"):
        page.mouse.move(x, y)
        getattr(page.mouse, value)()
    elif value == "dblclick":
        page.mouse.dblclick(x, y)
    else:
        page.mouse.click(x, y)


@step("wheel", acts=False)
def wheel(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    page.mouse.wheel(float(item.get("dx") or 0), float(value))


@step("tap", acts=True)
def tap_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    tap(call, page, call.locate(page, value).first, timeout)


@step("swipe", acts=True)
def swipe_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    on = call.locate(page, item["selector"]).first if item.get("selector") else None
    swipe(call, page, str(value), on, timeout)


@step("highlight", acts=False)
def highlight(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    call.locate(page, value).highlight()


def press_on(call: "Call", page: "Page", locator: "Locator", name: str, selector: Any, timeout: float) -> None:
    """click / check / uncheck, falling back when the pointer cannot reach the element.

    A control drawn over its hidden real input, or one under a fixed banner,
    fails a plain click. After a short first try: the keyboard (Space on a
    checkbox, radio or switch, Enter on a button or link), then the control's
    label — and a toggle is read back rather than trusting the press.
    """
    first_try = min(timeout, FIRST_TRY_MS)
    try:
        if name == "click":
            locator.click(timeout=first_try)
        elif name == "check":
            locator.check(timeout=first_try)
        else:
            locator.uncheck(timeout=first_try)
        return
    except Exception as exc:  # noqa: BLE001 - the fallbacks below, else this error
        first_error = exc
    if pressed_already(first_error):
        # The press reached the page and its own handler held the page past the try: pressing again by
        # keyboard or label would act twice (a second order, a second message).
        call.notes.append(
            f"{name} {selector} (the page took longer than {first_try / 1000:g} s to handle it; "
            "it was not pressed again)"
        )
        return
    element = locator.first
    try:
        kind = element.evaluate(
            "e => [e.tagName.toLowerCase(), (e.type || '').toLowerCase(), "
            "(e.getAttribute('role') || '').toLowerCase()]",
            timeout=timeout,
        )
    except Exception:  # noqa: BLE001 - not on the page at all: the plain error says so
        raise first_error from None
    toggle = kind[1] in ("checkbox", "radio") or kind[2] in ("checkbox", "radio", "switch")
    if name in ("check", "uncheck") and not toggle:
        raise first_error
    want = None if not toggle else (name != "uncheck" if name != "click" else not _checked(element))
    key = "Space" if toggle else "Enter"
    label = f"{name} {selector}"
    try:
        element.focus(timeout=FIRST_TRY_MS)
        page.keyboard.press(key)
        if want is None or _checked(element) == want:
            call.notes.append(f"{label} (by keyboard ({key}) — the pointer could not reach it)")
            return
    except Exception:  # noqa: BLE001 - then the label
        pass
    try:
        clicked = element.evaluate(
            "e => { const l = e.labels && e.labels[0]; if (!l) return false; l.click(); return true; }"
        )
        if clicked and (want is None or _checked(element) == want):
            call.notes.append(f"{label} (by its label — the pointer could not reach it)")
            return
    except Exception:  # noqa: BLE001 - no label to click: the first error, below
        pass
    message = str(first_error).split("\n", 1)[0]
    raise WebToolError(
        f"browse: {label} failed by pointer, keyboard ({key}) and label: {message} — try "
        f'"force": true, which sends the click to the element itself'
    )


def pressed_already(error: Exception) -> bool:
    """Whether Playwright had sent the press when its try ran out, read from the call log its error carries:
    `click action done` logged, or `performing click action` the last thing it was doing (the events are in
    the page, whose handler has not returned). A check or uncheck is logged as a click."""
    steps = [line.strip()[2:] for line in str(error).splitlines() if line.strip().startswith("- ")]
    return "click action done" in steps or (bool(steps) and steps[-1] == "performing click action")


def force_on(element: "Locator", name: str, selector: Any, timeout: float) -> None:
    """`"force": true`: the click goes to the element itself, never to its place on the screen — a banner over
    it or a hidden input does not take it. A toggle is read back rather than trusting the click."""
    element.wait_for(state="attached", timeout=timeout)
    if name == "click":
        element.evaluate("e => e.click()")
        return
    want = name == "check"
    if _checked(element) != want:
        element.evaluate("e => e.click()")
    if _checked(element) != want:
        raise WebToolError(
            f"browse: {name} {selector} (forced): the element was clicked but is still "
            f"{'unchecked' if want else 'checked'}"
        )


def dispatch_on(element: "Locator", event: str, timeout: float) -> None:
    """A forced double or right click: the event goes to the element itself, past whatever covers it."""
    element.wait_for(state="attached", timeout=timeout)
    element.dispatch_event(
        event,
        {
            "bubbles": True,
            "cancelable": True,
            "button": 2 if event == "contextmenu" else 0,
            "detail": 2 if event == "dblclick" else 1,
        },
    )


def _checked(element: "Locator") -> bool:
    return bool(
        element.evaluate(
            "e => e.getAttribute('aria-checked') !== null ? e.getAttribute('aria-checked') === 'true' : !!e.checked"
        )
    )
