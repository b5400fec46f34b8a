"""A browser session's page that went, mid-call, to an address its guard refused: the call's sentence for it.

A session's browser belongs to its keeper (browsing/keeper.py), whose guard proxy checks every connection of it
and answers a refused one with 403 (plain http) or refuses the tunnel (https). The call driving the page does not
hold that proxy, so it cannot read the guard's list; what it sees is a top-level navigation — a clicked link, a
redirect hop, a script's `location =` — that answered 403 or whose tunnel failed. Such a navigation is the guard's
refusal only when foldrun.net's own predicate refuses its host too (the install's one opt-in decides both, and a
public site answering 403 is no refusal), and then it is `was not opened — <why>`: the sentence runs/browser_tasks.py
reads as a task stopped by `navigation_blocked`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import WebToolError
from ..net import scrub_url

if TYPE_CHECKING:
    from .call import Call

TUNNEL_FAILED = ("ERR_TUNNEL_CONNECTION_FAILED", "ERR_PROXY_CONNECTION_FAILED")


def watch_refusals(call: "Call", context: Any) -> list[str]:
    """Listen on the session's context for top-level navigations the guard may have refused; the URLs seen."""
    seen: list[str] = []

    def top_level(request: Any) -> bool:
        try:
            return bool(request.is_navigation_request() and request.frame.parent_frame is None)
        except Exception:  # noqa: BLE001 - a frame already gone: not a page's own navigation any more
            return False

    def answered(response: Any) -> None:
        if response.status == 403 and top_level(response.request):
            seen.append(response.url)

    def failed(request: Any) -> None:
        if any(code in str(request.failure or "") for code in TUNNEL_FAILED) and top_level(request):
            seen.append(request.url)

    for event, handler in (("response", answered), ("requestfailed", failed)):
        context.on(event, handler)
        call.listeners.append((context, event, handler))
    return seen


def raise_if_refused(call: "Call", seen: list[str]) -> None:
    """`browse: <url> was not opened — <why>` for the first navigation seen whose host the guard refuses."""
    for url in seen:
        reason = call.host_refusal(url)
        if reason:
            raise WebToolError(f"browse: {scrub_url(url)} was not opened — {reason}")
