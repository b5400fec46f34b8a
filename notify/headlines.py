"""A run notification's headline, the same on a server and a laptop (notifications.md: a `blocked` run is
sent "with the headline `⛔ <flow> blocked`"). No Django: the laptop's runner uses it too."""

from __future__ import annotations


def first_line(text: str) -> str:
    return (text or "").strip().split("\n", 1)[0].strip()


def headline_text(flow: str, event: str, *, headline: str, error: str, status: str) -> str:
    """The headline of `event` for a run of `flow` whose engine headline, error and status are given."""
    if event == "blocked":
        return f"⛔ {flow} blocked"
    if event == "sla":
        return f"⏰ {flow} has passed its sla: and is still running"
    reason = first_line(error)
    if event == "failed" and (not headline or reason.startswith(headline.strip())):
        # The engine's headline of a failed run is its error line, which does
        # not name the flow: on a phone, "rankings failed: …" is the message.
        return f"{flow} failed" + (f": {reason}" if reason else "")
    if headline:
        return headline.strip()
    if event == "awaiting-approval":
        return f"⏸ {flow} is waiting for approval"
    return f"{flow} {status}"
