"""One session's Chromium: launched with a DevTools endpoint on loopback, every connection through a guard proxy.

The browser process is a child of the keeper (browsing/keeper.py) and dies with it (PR_SET_PDEATHSIG), so a
keeper killed with -9 leaves no browser behind. Its profile is a temporary folder of its own: cookies and
storage live as long as the session and never meet another session's.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from foldrun.net.proxy import GuardProxy
from foldrun.web.browse.pool import LAUNCH_ARGS, find_chromium
from foldrun.web.browse.util import dies_with_this_process, stop_group


class StartFailed(Exception):
    """The browser did not start; the message says what it printed."""


@dataclass
class Browser:
    process: subprocess.Popen
    profile: Path
    cdp: str  # ws://127.0.0.1:PORT/devtools/browser/<id>
    proxy: GuardProxy

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        stop_group(self.process)
        self.proxy.close()
        shutil.rmtree(self.profile, ignore_errors=True)


def launch(viewport: dict, proxy: GuardProxy, *, cdp_host: str = "127.0.0.1", timeout: float = 30.0) -> Browser:
    """Start Chromium headless with its DevTools endpoint on `cdp_host`, port chosen by the system."""
    executable = find_chromium()
    if executable is None:
        raise StartFailed("no Chromium on this worker (apt-get install -y chromium, or FOLDRUN_CHROMIUM)")
    profile = Path(tempfile.mkdtemp(prefix="foldrun-session-"))
    args = [
        executable,
        "--headless",
        *LAUNCH_ARGS,
        "--no-default-browser-check",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        f"--remote-debugging-address={cdp_host}",
        "--remote-debugging-port=0",
        # Every connection to the guard, loopback included (Chromium bypasses loopback unless told not to).
        f"--proxy-server={proxy.url}",
        "--proxy-bypass-list=<-loopback>",
        f"--window-size={int(viewport['width'])},{int(viewport['height'])}",
        f"--force-device-scale-factor={viewport.get('deviceScaleFactor') or 1}",
    ]
    if viewport.get("userAgent"):
        args.append(f"--user-agent={viewport['userAgent']}")
    if viewport.get("mobile"):
        args.append("--touch-events=enabled")
    args.append("about:blank")
    log = open(profile / "chromium.log", "wb")  # noqa: SIM115 - the browser writes it for its whole life
    process = subprocess.Popen(
        args,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=dies_with_this_process(),
    )
    log.close()
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_file.exists():
            lines = port_file.read_text().split("\n")
            if len(lines) >= 2 and lines[0].strip().isdigit() and lines[1].strip():
                return Browser(process, profile, f"ws://{cdp_host}:{lines[0].strip()}{lines[1].strip()}", proxy)
        if process.poll() is not None:
            break
        time.sleep(0.05)
    said = (profile / "chromium.log").read_text(errors="replace").strip().splitlines()[-1:] or ["no answer"]
    Browser(process, profile, "", proxy).stop()
    raise StartFailed(f"the browser did not start ({said[0][:200]})")
