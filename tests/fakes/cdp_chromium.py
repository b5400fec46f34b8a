"""A Chromium with its CDP endpoint on loopback, as a browser session's keeper keeps one: what the in-session browse
tests attach to instead of launching a browser of their own."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import wait_for


@contextmanager
def cdp_chromium(folder: Path, *flags: str) -> Iterator[str]:
    """Start one; yield its `ws://` endpoint once it listens; stop it after. `flags` go before the CDP ones."""
    log = folder / "chromium.log"
    with open(log, "wb") as out:
        process = subprocess.Popen(
            [
                "/usr/bin/chromium",
                "--headless=new",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                *flags,
                "--remote-debugging-address=127.0.0.1",
                "--remote-debugging-port=0",
                f"--user-data-dir={folder / 'profile'}",
                "about:blank",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        found = wait_for(lambda: re.search(rb"DevTools listening on (ws://\S+)", log.read_bytes()), timeout=30)
        yield found.group(1).decode()
    finally:
        process.terminate()
        process.wait(timeout=10)
