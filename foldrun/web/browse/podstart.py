"""Starting one browser pod's server: Playwright's `run-server` in a process group of its own, killed with the
worker, and the wait for the address it prints — bounded, so a server that never answers is a failed start
(servers.py's pool raises it to the call that wanted the pod), not a caller held forever."""

from __future__ import annotations

import os
import re
import secrets
import select
import subprocess
import threading
import time

from ..errors import WebToolError
from .screen import Screen
from .util import dies_with_this_process, stop_group

_LISTENING = re.compile(r"Listening on (ws://\S+)")
POD_START_SECONDS = 30.0  # how long a pod's server has to say where it listens before it counts as not started


def start_windowed() -> tuple[subprocess.Popen, str, Screen]:
    """A server whose browsers have a window: its own Xvfb first (killed with the worker, as the server is),
    then the server on that display. The screen goes when the server does, however the server went (a watcher
    waits on it), so a server killed with -9 leaves no Xvfb behind."""
    screen = Screen(die_with_worker=True)
    display = screen.start()
    try:
        process, ws = start_server(display)
    except BaseException:  # however the server's start ends, its screen goes with it; raised again
        screen.stop()
        raise

    def _screen_follows_server() -> None:
        process.wait()
        screen.stop()

    threading.Thread(target=_screen_follows_server, name="foldrun-browser-pod-screen", daemon=True).start()
    return process, ws, screen


def start_server(display: str | None = None) -> tuple[subprocess.Popen, str]:
    """Playwright's own server on loopback, port 0, under a random path; (process, ws address). With `display`,
    the browsers it launches draw their windows on that screen."""
    from playwright._impl._driver import compute_driver_executable

    node, cli = compute_driver_executable()
    token = secrets.token_urlsafe(24)
    return serve(
        [str(node), str(cli), "run-server", "--host", "127.0.0.1", "--port", "0", "--path", f"/{token}", "--unsafe"],
        env={**os.environ, "PW_TEST_SCREENSHOT_NO_FONTS_READY": "1", **({"DISPLAY": display} if display else {})},
    )


def serve(argv: list[str], env: dict[str, str], within: float = POD_START_SECONDS) -> tuple[subprocess.Popen, str]:
    """Start a pod's server (`argv`, its own process group, killed with the worker) and wait at most `within`
    seconds for its "Listening on ws://…" line; (process, ws address). A server that exits first, or says
    nothing of the kind in time, is stopped with its group and the pool's failed-start error is raised."""
    process = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        preexec_fn=dies_with_this_process(),
        env=env,
    )
    ws, last, exited = _listening(process, time.monotonic() + within)
    if ws:
        return process, ws
    stop_group(process, grace=2)
    if process.stdout is not None:
        process.stdout.close()
    said = f'; it last said "{last[:200]}"' if last else ""
    why = (
        "its server stopped before it gave an address" if exited else f"its server gave no address within {within:g} s"
    )
    raise WebToolError(f"browse: the browser pod did not start ({why}{said})")


def _listening(process: subprocess.Popen, deadline: float) -> tuple[str, str, bool]:
    """(ws address or "", the last line the server printed, whether it exited) once it names its address, exits,
    or the deadline passes. The pipe is read with select and os.read, never a blocking readline: a server that
    prints nothing, or half a line, must not hold the caller past the deadline."""
    fd = process.stdout.fileno() if process.stdout else -1
    pending, last = b"", ""
    while fd >= 0:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        readable, _, _ = select.select([fd], [], [], left)
        if not readable:
            break
        chunk = os.read(fd, 4096)
        *lines, pending = (pending + chunk).split(b"\n")
        for raw in lines + ([pending] if not chunk else []):
            text = raw.decode("utf-8", "replace").strip()
            last = text or last
            match = _LISTENING.search(text)
            if match:
                return match.group(1), last, False
        if not chunk:  # the end of the pipe: the server is gone, or closed its output (as good as gone)
            return "", last, True
    partial = pending.decode("utf-8", "replace").strip()  # half a line, never ended: what it was saying
    return "", partial or last, process.poll() is not None
