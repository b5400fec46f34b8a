"""`"human": true` and the touch steps: how a person's pointer and finger move.

A human move travels a curve (a cubic Bézier with its control points pushed off the straight line) from where
the pointer was to a point inside the element — not its exact centre — in many small moves with uneven pauses,
and a press is held a moment. Nothing else about the browser changes (spec "The browser, in full": `"human":
true` moves the pointer like a person, and changes nothing else).

Touch (`tap`, `swipe`) goes through Chromium's own input pipeline (CDP `Input.dispatchTouchEvent`), so the page
gets real touchstart / touchmove / touchend events and the click a tap makes, on a page whose context was not
made for a phone.
"""

from __future__ import annotations

import math
import random
from typing import TYPE_CHECKING, Any

from ..errors import WebToolError

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Locator, Page

    from .call import Call

_RANDOM = random.Random()
SWIPES = ("up", "down", "left", "right")


def _curve(start: tuple[float, float], end: tuple[float, float]) -> list[tuple[float, float]]:
    """Points along a Bézier from start to end, bowed to one side, more of them for a longer way."""
    (x0, y0), (x3, y3) = start, end
    dx, dy = x3 - x0, y3 - y0
    length = math.hypot(dx, dy)
    steps = max(12, min(60, int(length / 12)))
    bow = _RANDOM.uniform(0.15, 0.35) * max(length, 40) * _RANDOM.choice((-1, 1))
    nx, ny = (-dy / length, dx / length) if length else (0.0, 1.0)  # the normal to the straight way
    x1, y1 = x0 + dx * 0.3 + nx * bow, y0 + dy * 0.3 + ny * bow
    x2, y2 = x0 + dx * 0.7 + nx * bow * 0.6, y0 + dy * 0.7 + ny * bow * 0.6
    points = []
    for i in range(1, steps + 1):
        t = i / steps
        t = t * t * (3 - 2 * t)  # ease in and out: slow to start, quick in the middle, slow to land
        u = 1 - t
        points.append(
            (
                u**3 * x0 + 3 * u * u * t * x1 + 3 * u * t * t * x2 + t**3 * x3,
                u**3 * y0 + 3 * u * u * t * y1 + 3 * u * t * t * y2 + t**3 * y3,
            )
        )
    return points


def pause(page: "Page", call: "Call", low: float, high: float) -> None:
    page.wait_for_timeout(call.deadline.clip(_RANDOM.uniform(low, high)))


def move_to(call: "Call", page: "Page", x: float, y: float) -> None:
    """The pointer travels a curve from where it was to (x, y), with a person's pauses on the way."""
    start = (
        call.pointer
        if call.pointer is not None
        else (
            _RANDOM.uniform(0.2, 0.8) * (page.viewport_size or {"width": 1280})["width"],
            _RANDOM.uniform(0.2, 0.8) * (page.viewport_size or {"height": 720})["height"],
        )
    )
    for px, py in _curve(start, (x, y)):
        page.mouse.move(px, py)
        if _RANDOM.random() < 0.25:
            pause(page, call, 8, 30)
    call.pointer = (x, y)


def point_in(locator: "Locator", timeout: float) -> tuple[float, float]:
    """A point inside the element's box, away from its edges and not its exact centre."""
    locator.scroll_into_view_if_needed(timeout=timeout)
    box = locator.bounding_box(timeout=timeout)
    if not box or box["width"] <= 0 or box["height"] <= 0:
        raise WebToolError(
            "browse: the element has no size on screen, so a pointer cannot land on it — drop "
            '"human" (or use "force": true)'
        )
    return (box["x"] + box["width"] * _RANDOM.uniform(0.3, 0.7), box["y"] + box["height"] * _RANDOM.uniform(0.3, 0.7))


def human_pointer(call: "Call", page: "Page", name: str, locator: "Locator", item: dict, timeout: float) -> None:
    """click, dblclick, hover or drag as a person does it."""
    x, y = point_in(locator, timeout)
    move_to(call, page, x, y)
    if name == "hover":
        return
    pause(page, call, 60, 180)  # a moment to aim
    if name == "drag":
        page.mouse.down()
        pause(page, call, 80, 160)
        tx, ty = point_in(call.locate(page, item["to"]).first, timeout)
        move_to(call, page, tx, ty)
        pause(page, call, 60, 140)
        page.mouse.up()
        return
    for press in range(2 if name == "dblclick" else 1):
        page.mouse.down()
        pause(page, call, 40, 110)
        page.mouse.up()
        if press == 0 and name == "dblclick":
            pause(page, call, 60, 120)


# -- touch -----------------------------------------------------------------------------------------------------


def _touch_ready(page: "Page") -> Any:
    """A CDP session with touch input switched on for this tab (a tap becomes a click, a drag a scroll)."""
    session = page.context.new_cdp_session(page)
    session.send("Emulation.setTouchEmulationEnabled", {"enabled": True, "maxTouchPoints": 1})
    return session


def tap(call: "Call", page: "Page", locator: "Locator", timeout: float) -> None:
    x, y = point_in(locator, timeout)
    session = _touch_ready(page)
    try:
        session.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
        page.wait_for_timeout(call.deadline.clip(60))
        session.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    finally:
        session.detach()


def swipe(call: "Call", page: "Page", direction: str, locator: "Locator | None", timeout: float) -> None:
    """A finger put down, drawn `direction` (up moves the finger up, so the page scrolls down) and lifted."""
    if direction not in SWIPES:
        raise WebToolError(f"browse: swipe is one of {', '.join(SWIPES)}; {direction!r} is not")
    if locator is not None:
        locator.scroll_into_view_if_needed(timeout=timeout)
        box = locator.bounding_box(timeout=timeout)
        if not box:
            raise WebToolError("browse: swipe: the element has no size on screen to swipe on")
    else:
        size = page.viewport_size or {"width": 1280, "height": 720}
        box = {"x": 0, "y": 0, "width": size["width"], "height": size["height"]}
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    reach_x, reach_y = box["width"] * 0.35, box["height"] * 0.35
    dx, dy = {"up": (0, -reach_y), "down": (0, reach_y), "left": (-reach_x, 0), "right": (reach_x, 0)}[direction]
    start = (cx - dx / 2, cy - dy / 2)
    session = _touch_ready(page)
    try:
        session.send(
            "Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": start[0], "y": start[1]}]}
        )
        for i in range(1, 11):
            session.send(
                "Input.dispatchTouchEvent",
                {"type": "touchMove", "touchPoints": [{"x": start[0] + dx * i / 10, "y": start[1] + dy * i / 10}]},
            )
            page.wait_for_timeout(call.deadline.clip(16))
        session.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    finally:
        session.detach()
