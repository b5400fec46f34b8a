"""The steps of `actions`, one module per kind; each registers itself (`registry.step`)."""

from __future__ import annotations

from typing import Any

from ...errors import WebToolError
from ..registry import acting_modes, acting_steps, built_steps
from ..util import steps_of
from . import captcha, forms, keyboard, navigation, network, pointer, reading, storage, webmcp  # noqa: F401 - they register
from .network import mock
from .reading import keep_file

BUILT_STEPS: tuple[str, ...] = built_steps()
# Steps that may have acted: a call carrying one is a write (spec "Slim steps and a lost pod").
ACTING_STEPS: frozenset[str] = acting_steps()


def acts(args: dict) -> bool:
    """True when the call's steps or its mode may have changed something (a click, a fill, script …)."""
    if args.get("js") or str(args.get("mode") or "text").strip().lower() in acting_modes():
        return True
    try:
        steps = steps_of(args.get("actions"))
    except WebToolError:
        return True  # could be either: counts as a write

    def walk(items: Any) -> bool:
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            if ACTING_STEPS & set(item):
                return True
            if walk(item.get("then")) or walk(item.get("else")):
                return True
        return False

    return walk(steps)


__all__ = ["ACTING_STEPS", "BUILT_STEPS", "acts", "keep_file", "mock"]
