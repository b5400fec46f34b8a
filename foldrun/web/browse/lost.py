"""A browse call on the account's pod, by the spec's lost-pod rules ("Slim steps and a lost pod").

A call that meets a closed browser asks the browser once more; if it no
longer answers, the pod is gone and the tool reconnects — three tries, 1, 2
and 4 seconds apart, each a line on the run when the call returns. A call
that never reached the pod is tried again; one that only read is run once
more; one that may have acted is not sent again and fails saying so. Still
gone after three tries, the step's try ends (`PodLostError`, the engine's
`PodLost`): the run re-runs a step that had only read with a browser inside
the step, and fails one that had written. `summary` is the try's pod line.
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
_DROPPED = (
    "Target page, context or browser has been closed",
    "Browser closed",
    "browser has been closed",
    "Browser has been closed",
    "WebSocket",
    "ECONNRESET",
    "Connection closed",
    "Target closed",
)


class PodLostError(Exception):
    """Still gone after three reconnects: the step's try ends (the adapter raises the engine's PodLost)."""

    def __init__(self, message: str, reached: bool) -> None:
        super().__init__(message)
        self.reached = reached


def dropped(exc: BaseException) -> bool:
    return isinstance(exc, (PodGone, PodUnreachable)) or any(word in str(exc) for word in _DROPPED)


def _at() -> str:
    return datetime.now(timezone.utc).strftime("%H:%M:%SZ")


def run_on_pod(
    tool: "WebTool", args: dict, call: Callable[[], str], sleep: Callable[[float], None] = time.sleep
) -> str:
    """`call()` on the pod, by the lost-pod rules; still gone, PodLostError ends the step's try."""
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
                raise WebToolError(
                    "browse: the browser pod closed during this call, after it may have acted "
                    "(it clicks, fills, types or runs script); it was not sent again — look at the "
                    "page before repeating it"
                )
            try:
                answer = pool.run(call)
            except Exception as again:  # noqa: BLE001 - judged by `dropped`; else raised as it was
                if not dropped(again):
                    lines.append(f"browser pod: reconnected (try {number} of 3, at {at})")
                    raise
                lines.append(f"browser pod: reconnected (try {number} of 3, at {at}), but the pod closed again")
                lines.append("browser pod: lost — the call dropped again after the reconnect")
                raise PodLostError("browser pod lost — the call dropped again after the reconnect", reached) from again
            lines.append(f"browser pod: reconnected (try {number} of 3, at {at})")
            return answer
        lines.append("browser pod: lost — no answer after 3 reconnects")
        raise PodLostError("browser pod lost — no answer after 3 reconnects", reached)
    finally:
        for line in lines:
            tool.log(line)
        tool.pod_lines.extend(lines)


def summary(lines: list[str]) -> str:
    """The try's pod line from its calls' lines, as the step card says it: `2 reconnects (2 got through)`,
    `3 reconnects; browser pod lost`, `1 reconnect, which reached the pod but it closed again; browser pod lost`.
    A reconnect got through only when the call went on after it; a pod lost in the end let none through."""
    tries = [line for line in lines if "reconnect failed (" in line or "reconnected (" in line]
    if not tries:
        return ""
    count = f"{len(tries)} reconnect{'s' if len(tries) != 1 else ''}"
    if not any("browser pod: lost" in line for line in lines):
        through = sum(1 for line in tries if "reconnected (" in line)
        return f"{count} ({through} got through)"
    again = sum(1 for line in tries if "but the pod closed again" in line)
    if again:
        which = (
            "which reached the pod but it closed again"
            if again == 1
            else f"{again} of which reached the pod but it closed again"
        )
        return f"{count}, {which}; browser pod lost"
    return f"{count}; browser pod lost"


def _still_answers(pool: Any) -> bool:
    try:
        return bool(pool.run(pool.connected))
    except Exception:  # noqa: BLE001 - any failure to answer is "not answering"
        return False
