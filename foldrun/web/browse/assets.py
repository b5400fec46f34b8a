"""The scripts the install puts beside the code that browse (and the smoke test) inject into a page.

`scripts/bootstrap` installs each from npm at a pinned version under `var/<name>-npm/`; an image's build does
the same. One loader, so the smoke test's accessibility check and `mode=a11y` run the same axe-core.
"""

from __future__ import annotations

import functools
from pathlib import Path

VAR = Path(__file__).resolve().parents[3] / "var"
AXE_FILE = VAR / "axe-npm" / "node_modules" / "axe-core" / "axe.min.js"
AXE_MISSING = "axe-core is not installed on this worker (./scripts/bootstrap puts it in var/axe-npm)"


@functools.cache
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def axe_source() -> str | None:
    """axe.min.js, or None when the install has none (the caller says what runs instead)."""
    return _read(AXE_FILE) if AXE_FILE.is_file() else None  # read once found; looked for again until then


def inject_axe(page) -> bool:  # noqa: ANN001 - a Playwright Page
    """axe-core in the page, through DevTools rather than a <script> tag, so a page's CSP cannot keep it out.
    False when the install has no axe-core."""
    source = axe_source()
    if source is None:
        return False
    page.evaluate(source + "\n;undefined")
    return True
