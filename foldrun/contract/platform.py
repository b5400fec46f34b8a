"""What the platform's browsers are, as `check` needs them.

The server reads its browsers' versions once (`/api/version` answers them as
`browser_versions`, e.g. `{"chromium": "156.0.8078.73"}`); the CLI reads the
same answer from the server it is signed in to. Both turn them into the
`platform` context `check` takes, so a laptop and a deploy warn alike:

    platform_from_versions({"chromium": "156.0.8078.73"}) -> {"chromium_major": 156}
"""

from __future__ import annotations

import re
from typing import Any, Mapping

# The browsers whose Chrome major a pinned user agent must match.
BROWSERS: tuple[str, ...] = ("chromium", "chrome")
_MAJOR = re.compile(r"(\d+)\.")


def platform_from_versions(versions: Any) -> dict[str, int]:
    """`{"<browser>_major": N}` for each known browser with a readable version; {} for anything else."""
    platform: dict[str, int] = {}
    if not isinstance(versions, Mapping):
        return platform
    for name in BROWSERS:
        version = versions.get(name)
        match = _MAJOR.match(version) if isinstance(version, str) else None
        if match:
            platform[f"{name}_major"] = int(match.group(1))
    return platform
