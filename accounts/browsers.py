"""The browsers this install drives, and their versions.

`/api/version` answers them (`browser_versions`, e.g. {"chromium":
"156.0.8078.73"}), and deploy and the server's check compare a pinned
`user_agent:` with them (spec/tools.md, "A pinned user agent has to keep up
with Chrome"). Each binary is asked `--version` once per process: the image's
browsers change only with a new image, which is a new process.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from pathlib import Path

from foldrun.web.browse import engines

# Where each browser is looked for, first found wins. FOLDRUN_CHROMIUM names
# the Chromium the web tool drives (foldrun/web/browse.py reads it too).
_CANDIDATES: dict[str, tuple[str, ...]] = {
    "chromium": ("/usr/bin/chromium", "chromium", "chromium-browser"),
    "chrome": ("/opt/google/chrome/chrome", "google-chrome-stable", "google-chrome"),
}
_VERSION = re.compile(r"\b(\d+\.\d+\.\d+\.\d+)\b")


def _binary(name: str) -> str | None:
    if name == "chromium" and os.environ.get("FOLDRUN_CHROMIUM"):
        return os.environ["FOLDRUN_CHROMIUM"]
    for candidate in _CANDIDATES[name]:
        found = candidate if candidate.startswith("/") and Path(candidate).is_file() else shutil.which(candidate)
        if found:
            return found
    return None


def _version_of(binary: str) -> str | None:
    """`<binary> --version`'s four-part version, or None when it cannot say."""
    try:
        done = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(done.stdout or "")
    return match.group(1) if match else None


@functools.cache
def browser_versions() -> dict[str, str]:
    """{"chromium": "156.0.8078.73", …} for each browser found; {} when there is none.

    What the install wrote down in engines.json first (foldrun/web/browse/engines.py); else each binary asked."""
    written = engines.versions()
    if written:
        return written
    versions: dict[str, str] = {}
    for name in _CANDIDATES:
        binary = _binary(name)
        version = _version_of(binary) if binary else None
        if version:
            versions[name] = version
    return versions
