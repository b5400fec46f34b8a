"""The `solve` step: the captcha widget on the page sent to the call's solver now, or an image captcha read
into a field. Needs `captcha=` (refused before a browser opens without it)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import WebToolError
from ..registry import step

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from ..call import Call


@step("solve", acts=True, capability="captcha")
def solve(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    solving = call.captcha
    if solving is None:  # the call refuses this before a browser opens; a guard, said the same way
        raise WebToolError(
            f"browse: step {index}: solve needs captcha= — the NAME of a secret holding your captcha solver's API key"
        )
    if value is True or value == "true":
        solving.solve_now(page, index)
        return
    if isinstance(value, str) and value.strip():
        into = item.get("into")
        if not isinstance(into, str) or not into.strip():
            raise WebToolError(
                f"browse: step {index}: solve with a selector reads an image captcha into a field — "
                f'add "into", such as {{"solve": "#captcha img", "into": "#code"}}'
            )
        solving.read_image(page, value.strip(), into.strip(), index, timeout)
        return
    raise WebToolError(
        f'browse: step {index}: solve is true (the widget on the page) or an image captcha\'s selector with "into"'
    )
