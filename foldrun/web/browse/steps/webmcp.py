"""The `webmcp` step: call a tool the page offers through WebMCP by name; its answer joins the results."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...errors import WebToolError
from ..registry import step
from ..webmcp import call_tool, offer_context

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from ..call import Call


@step("webmcp", acts=True, capability="webmcp", prepare=offer_context)
def webmcp(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    if not isinstance(value, str) or not value.strip():
        raise WebToolError(
            'browse: a webmcp step names one of the page\'s tools, such as {"webmcp": "add_to_cart", '
            '"input": {"sku": "A1"}} (mode=webmcp lists them)'
        )
    given = item.get("input", {})
    if not isinstance(given, dict):
        raise WebToolError(f"browse: the webmcp step's input for {value} is a JSON object of the tool's arguments")
    call.results.append({"webmcp": value.strip(), "value": call_tool(call, page, value.strip(), given)})
