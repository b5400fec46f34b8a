"""The provider presets are part of the file contract; the table lives in foldrun.contract.presets."""

from __future__ import annotations

from foldrun.contract.presets import (
    FORMATS,
    KEY_HEADERS,
    PRESET_NAMES,
    PRESETS,
    Preset,
    closest_presets,
    find_preset,
    get_preset,
    verified_presets,
)

__all__ = [
    "FORMATS",
    "KEY_HEADERS",
    "PRESETS",
    "PRESET_NAMES",
    "Preset",
    "closest_presets",
    "find_preset",
    "get_preset",
    "verified_presets",
]
