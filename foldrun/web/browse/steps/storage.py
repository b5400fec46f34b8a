"""Storage steps: a cookie, localStorage and sessionStorage set or deleted."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..registry import step

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from ..call import Call


@step("cookie", "localstorage", "sessionstorage", acts=True)
def storage(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    storage_step(call, page, name, item)


def storage_step(call: "Call", page: "Page", name: str, step: dict) -> None:
    value = step[name]
    if name == "cookie":
        host = urlsplit(page.url).hostname or ""
        if step.get("delete"):
            if value == "*":
                page.context.clear_cookies()
            else:
                page.context.clear_cookies(name=str(value))
            return
        page.context.add_cookies(
            [
                {
                    "name": str(value),
                    "value": str(step.get("value") or ""),
                    "domain": str(step.get("domain") or host),
                    "path": str(step.get("path") or "/"),
                }
            ]
        )
        return
    store = "localStorage" if name == "localstorage" else "sessionStorage"
    if step.get("delete"):
        script = f"k => k === '*' ? window.{store}.clear() : window.{store}.removeItem(k)"
        page.evaluate(script, str(value))
    else:
        page.evaluate(f"([k, v]) => window.{store}.setItem(k, v)", [str(value), str(step.get("value") or "")])
