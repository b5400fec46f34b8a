"""Signals the library app sends for the apps above it.

`workspace_parts` is sent by the workspace page with `workspace` (found through
the requester's membership); an app above library connects a part answering
the context keys it adds — runs its recent runs and chart, vault the secrets
the desk needs (foldrun/pageparts.py).
"""

from django.dispatch import Signal

workspace_parts = Signal()
