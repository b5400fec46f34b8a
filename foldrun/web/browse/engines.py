"""What browser engines this machine has, as the install wrote them down (`engines.json`).

The install (`scripts/bootstrap`, or an image's build) writes the file once:
Chromium from Debian; Google Chrome when it is installed; Playwright's own
Firefox and WebKit builds when they are present. The tool, the deploy and
`GET /api/version` read it, so an engine the machine lacks is refused in one
sentence with the engines it has. Found at FOLDRUN_ENGINES_FILE, else
/opt/browser/engines.json (an image), else var/engines.json beside the code
(a checkout). No file at all: the machine is asked directly, once.

`main([PATH])` writes it (scripts/bootstrap does).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

IMAGE_FILE = Path("/opt/browser/engines.json")
CHECKOUT_FILE = Path(__file__).resolve().parents[3] / "var" / "engines.json"
_VERSION = re.compile(r"\b(\d+\.\d+\.\d+(?:\.\d+)?)\b")
_BINARIES = {
    "chromium": ("/usr/bin/chromium", "chromium", "chromium-browser"),
    "chrome": ("/opt/google/chrome/chrome", "google-chrome-stable", "google-chrome"),
}


def engines_file() -> Path:
    named = os.environ.get("FOLDRUN_ENGINES_FILE")
    if named:
        return Path(named)
    return IMAGE_FILE if IMAGE_FILE.is_file() else CHECKOUT_FILE


def _binary(name: str) -> str | None:
    if name == "chromium" and os.environ.get("FOLDRUN_CHROMIUM"):
        return os.environ["FOLDRUN_CHROMIUM"]
    for candidate in _BINARIES[name]:
        found = candidate if candidate.startswith("/") and Path(candidate).is_file() else shutil.which(candidate)
        if found:
            return found
    return None


def _version(binary: str) -> str | None:
    try:
        done = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=15, stdin=subprocess.DEVNULL, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    match = _VERSION.search(done.stdout or "")
    return match.group(1) if match else None


def _playwright_build(engine: str) -> str | None:
    """Playwright's own Firefox or WebKit build, where `playwright install` put one."""
    root = Path(os.environ.get("PLAYWRIGHT_BROWSERS_PATH") or Path.home() / ".cache" / "ms-playwright")
    folder = {"firefox": "firefox-*", "safari": "webkit-*"}[engine]
    found = sorted(root.glob(folder)) if root.is_dir() else []
    return str(found[-1]) if found else None


def survey() -> dict:
    """What the machine has now: {"engines": {name: {"path", "version"}}}."""
    engines: dict[str, dict] = {}
    for name in _BINARIES:
        binary = _binary(name)
        version = _version(binary) if binary else None
        if binary and version:
            engines[name] = {"path": binary, "version": version}
    for name in ("firefox", "safari"):
        build = _playwright_build(name)
        if build:
            engines[name] = {"path": build, "version": build.rsplit("-", 1)[-1]}
    return {"engines": engines}


def installed() -> dict[str, dict]:
    """The engines the install wrote down; with no file — or a Chromium named by FOLDRUN_CHROMIUM, which
    overrides the record — the machine asked directly."""
    if os.environ.get("FOLDRUN_CHROMIUM") and not os.environ.get("FOLDRUN_ENGINES_FILE"):
        return survey()["engines"]
    return _written(str(engines_file()))


@functools.cache
def _written(path: str) -> dict[str, dict]:
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        engines = data.get("engines") if isinstance(data, dict) else None
        if isinstance(engines, dict):
            return {str(k): dict(v) for k, v in engines.items() if isinstance(v, dict)}
    except (OSError, ValueError):
        pass
    return survey()["engines"]


installed.cache_clear = _written.cache_clear  # type: ignore[attr-defined] - one name to empty it


def versions() -> dict[str, str]:
    return {name: str(info.get("version")) for name, info in installed().items() if info.get("version")}


def write(target: Path) -> dict:
    data = survey()
    target.parent.mkdir(parents=True, exist_ok=True)
    temp = target.with_suffix(".tmp")
    temp.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    temp.replace(target)
    return data


def main(argv: list[str]) -> None:
    where = Path(argv[0]) if argv else engines_file()
    written = write(where)
    listed = ", ".join(f"{name} {info['version']}" for name, info in written["engines"].items()) or "none"
    print(f"• engines: {listed} ({where})")


if __name__ == "__main__":
    main(sys.argv[1:])
