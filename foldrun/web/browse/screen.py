"""A virtual screen (Debian's Xvfb) for a browser with a window, where the machine has none.

An in-step browser starts one for its call and stops it after; a windowed
browser server of the account's pool starts one at boot and keeps it for its
life (servers.py). Each takes the first free display number from :99 up —
two screens never share a number, and a start that loses the race for one
(another Xvfb took it meanwhile) moves on to the next.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

from ..errors import WebToolError
from .util import dies_with_this_process

WINDOW = (1920, 1080)


class Screen:
    """An Xvfb, 1920×1080, started before the browser (or its server) and stopped after it."""

    def __init__(self, die_with_worker: bool = False) -> None:
        self.process: subprocess.Popen | None = None
        self.display = ""
        self.die_with_worker = die_with_worker  # a pod's screen: killed with the worker that started it

    def start(self) -> str:
        binary = shutil.which("Xvfb")
        if binary is None:
            raise WebToolError(
                "browse: headless: false needs a screen, and this machine has neither one (no "
                "DISPLAY) nor Xvfb to make one — install Debian's xvfb, or leave headless unset"
            )
        for number in range(99, 160):  # :99 first, as the spec's pod has it; the next free one beside others
            if Path(f"/tmp/.X11-unix/X{number}").exists() or Path(f"/tmp/.X{number}-lock").exists():
                continue
            process = subprocess.Popen(
                [binary, f":{number}", "-screen", "0", f"{WINDOW[0]}x{WINDOW[1]}x24", "-nolisten", "tcp"],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=dies_with_this_process() if self.die_with_worker else None,
            )
            until = time.monotonic() + 10
            while time.monotonic() < until and process.poll() is None:
                if Path(f"/tmp/.X11-unix/X{number}").exists():
                    self.process, self.display = process, f":{number}"
                    return self.display
                time.sleep(0.05)
            if process.poll() is None:
                process.kill()
            process.wait()
        raise WebToolError("browse: headless: false could not start a virtual screen (Xvfb) for the call")

    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
