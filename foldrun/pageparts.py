"""Parts of a dashboard page that an app above the page's own app fills in.

The apps import one way — accounts, library, vault, runs, notify, bottom up
(`.importlinter`'s `apps-one-way`) — yet a few pages show what an app above
theirs holds: the home page (accounts) lists runs, the workspace page
(library) shows runs and which secrets the vault holds, the Triggers tab
(runs) ends with notify's deliveries. Such a page sends its app's Django
signal (`accounts.signals.home_parts`, `library.signals.workspace_parts`,
`runs.signals.triggers_parts`); the apps above connect a part to it in their
`AppConfig.ready()`, and each part answers the context keys it adds. The page
names no app above it, so a part can be added without touching it.
"""

from __future__ import annotations

from typing import Any

from django.dispatch import Signal


def fill(signal: Signal, sender: type, **kwargs: Any) -> dict[str, Any]:
    """Every connected part's context keys, merged in the order they were connected.
    A part that fails fails the page (`send`, not `send_robust`): a page with a silently
    missing part would be wrong without saying so."""
    context: dict[str, Any] = {}
    for _receiver, part in signal.send(sender=sender, **kwargs):
        context.update(part or {})
    return context
