"""A browse call on the account's pod, by the spec's lost-pod rules ("Slim steps and a lost pod").

A call that meets a closed browser asks the browser once more; if it no
longer answers, the pod is gone and the tool reconnects — three tries, 1, 2
and 4 seconds apart, each a line on the run when the call returns. A call
that never reached the pod is tried again; one that only read is run once
more; one that may have acted is not sent again and fails saying so. Still
gone after three tries: a call that only read runs in a browser inside the
step (`running chromium inside the step`); one that may have acted fails.
"""
from __future__ import annotations

import time
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable

from ..errors import WebToolError
from .pool import PodGone, PodUnreachable
from .steps import acts

if TYPE_CHECKING:  # pragma: no cover
    from ..tool import WebTool

DELAYS = (1.0, 2.0, 4.0)
_DROPPED = ("Target page, context or browser has been closed", "Browser closed", "browser has been closed",
            "Browser has been closed", "WebSocket", "ECONNRESET", "Connection closed", "Target closed")


def dropped(exc: BaseException) -> bool:
    return isinstance(exc, (PodGone, PodUnreachable)) or any(word in str(exc) for word in _DROPPED)


def _at() -> str:
    return datetime.now(timezone.utc).strftime("%H:%M:%SZ")


def run_on_pod(tool: "WebTool", args: dict, call: Callable[[], str], in_step: Callable[[], str],
               sleep: Callable[[float], None] = time.sleep) -> str:
    """`call()` on the pod, by the lost-pod rules; `in_step()` renders it in a browser of the step's own."""
    pool = tool.browsers
    lines: list[str] = []
    wrote = acts(args)
    try:
        try:
            return pool.run(call)
        except Exception as exc:  # noqa: BLE001 - judged below; anything else is raised as it was
            if not dropped(exc):
                raise
            reached = not isinstance(exc, PodUnreachable)
            if reached and _still_answers(pool):
                raise  # a page the agent closed leaves the browser answering: the agent's own error
        for number, delay in enumerate(DELAYS, 1):
            sleep(delay)
            try:
                pool.run(pool.reconnect)
            except Exception:  # noqa: BLE001 - not back yet
                lines.append(f"browser pod: reconnect failed (try {number} of 3, at {_at()})")
                continue
            at = _at()
            if reached and wrote:
                lines.append(f"browser pod: reconnected (try {number} of 3, at {at})")
                raise WebToolError("browse: the browser pod closed during this call, after it may have acted "
                                   "(it clicks, fills, types or runs script); it was not sent again — look at the "
                                   "page before repeating it")
            try:
                answer = pool.run(call)
            except Exception as again:  # noqa: BLE001
                if not dropped(again):
                    lines.append(f"browser pod: reconnected (try {number} of 3, at {at})")
                    raise
                lines.append(f"browser pod: reconnected (try {number} of 3, at {at}), but the pod closed again")
                lines.append("browser pod: lost — the call dropped again after the reconnect")
                break
            lines.append(f"browser pod: reconnected (try {number} of 3, at {at})")
            return answer
        else:
            lines.append("browser pod: lost — no answer after 3 reconnects")
        if reached and wrote:
            raise WebToolError("browse: the browser pod was lost during this call, after it may have acted (it "
                               "clicks, fills, types or runs script); it was not sent again — look at the page "
                               "before repeating it")
        lines.append("browser pod: running chromium inside the step")
        return in_step()
    finally:
        for line in lines:
            tool.log(line)
        tool.pod_lines.extend(lines)


def _still_answers(pool: Any) -> bool:
    try:
        return bool(pool.run(pool.connected))
    except Exception:  # noqa: BLE001
        return False
