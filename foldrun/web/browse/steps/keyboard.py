"""Keyboard steps: press a key, type on the keyboard, hold and let go, insert text."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import WebToolError
from ..registry import step

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from ..call import Call


@step("press", acts=True)
def press(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    key = item.get("key")
    if not isinstance(key, str):
        raise WebToolError(f'browse: step {index}: press needs "key", such as "Enter"')
    if value in ("", None):
        page.keyboard.press(key)
    else:
        call.locate(page, value).press(key, timeout=timeout)


@step("keyboard", acts=True)
def keyboard(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    page.keyboard.type(str(value))


@step("keydown", "keyup", acts=True)
def key_up_or_down(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    getattr(page.keyboard, "down" if name == "keydown" else "up")(str(value))


@step("insert", acts=True)
def insert(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    page.keyboard.insert_text(str(value))
