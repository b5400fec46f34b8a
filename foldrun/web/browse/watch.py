"""Watching a browse call: its page live on the Run page (a CDP screencast), and its recording (`video`).

The live view is Chromium's `Page.startScreencast` — a frame when the page changes — thinned to at most three a
second and handed to the step's host (`WebTool.live_frames`), which keeps it where the Run page reads it, scoped to the
step. A call that signs in (a `login` step, a field filled from a secret) is never streamed and never recorded:
what it typed is on the page it drew. `web: {browse: {live_view: false}}` turns the stream off for an agent.

`video` (a call's `video=` or the block's `video: true`) keeps every frame of the same screencast and encodes them
as `.webm` under `outputs/` when the call ends — one file per page: a popup or a new tab the call opens is recorded
from the moment it opens, as a file of its own beside the first (`…-tab2.webm`) (webm.py, the encoder a recorded browser session uses: Playwright's
own `record_video_dir` needs a downloaded ffmpeg build this install does not have), so it is kept with the run's
files and the Run page plays it once the run finishes.
"""

from __future__ import annotations

import base64
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from ..errors import WebToolError
from ..net import scrub_url
from .webm import encode

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from .call import Call

FRAME_GAP = 1 / 3  # at most three frames a second reach the Run page
FLUSH_TICK = 0.1  # how often a thinned-out last frame is looked at again
MAX_VIDEO_FRAMES = 20_000  # a video keeps at most this many frames (about 11 minutes of a page changing at 30/s)
VIDEO_DEFAULT = "outputs/videos/browse-{n}.webm"
SIGNS_IN_VIDEO = (
    "video: not recorded — a call that signs in is never kept (its page shows what it typed); sign in "
    "with session= or state= and record the next call"
)

Sink = Callable[[str, "bytes | None", str], None]  # (kind "frame" | "end", jpeg, the page's address)


def _on(value: Any) -> bool:
    return value not in (None, "", False, "false", "False")


class Screencast:
    """One page's frames. For the live view they are thinned to FRAME_GAP apart, and the newest frame a gap held
    back is sent when its time comes (a flusher thread), so the last state of a page that stopped changing is what
    the Run page shows. For a video every frame is kept with its time, each shown until the next."""

    def __init__(self, page: "Page", sink: Sink | None, keep: list | None) -> None:
        self.sink = sink
        self.keep = keep
        self.page = page
        self.lock = threading.Lock()
        # Held around every hand-off to the sink, so none comes after the `end` stop() sends: a frame Playwright's
        # thread or the flusher picked as the call ended would otherwise land after it and say `live` again.
        self.sending = threading.RLock()
        self.closed = False
        self.pending: tuple[bytes, str] | None = None
        self.sent_at = 0.0
        self.url = scrub_url(page.url)
        self.stopping = threading.Event()
        self.session = page.context.new_cdp_session(page)
        self.session.on("Page.screencastFrame", self._frame)
        self.session.send("Page.startScreencast", {"format": "jpeg", "quality": 60, "everyNthFrame": 1})
        self.flusher = None
        if sink is not None:
            self.flusher = threading.Thread(target=self._flush_loop, name="foldrun-screencast", daemon=True)
            self.flusher.start()

    def _frame(self, params: dict) -> None:  # in Playwright's thread, while the call runs
        try:
            self.session.send("Page.screencastFrameAck", {"sessionId": int(params["sessionId"])})
        except Exception:  # noqa: BLE001 - the page went away; its last frame stands
            pass
        try:
            self.url = scrub_url(self.page.url)  # no user:pass of a URL reaches the Run page
        except Exception:  # noqa: BLE001 - the page closing: its last address stands
            pass
        if self.url.startswith("about:"):
            return  # the blank tab before the first page opens is nothing to watch
        jpeg = base64.b64decode(params["data"])
        if self.keep is not None and len(self.keep) < MAX_VIDEO_FRAMES:
            self.keep.append((jpeg, float((params.get("metadata") or {}).get("timestamp") or time.time())))
        if self.sink is None:
            return
        with self.lock:
            self.pending = (jpeg, self.url)
        self._send_if_due()

    def _send_if_due(self) -> None:
        sink = self.sink  # None once another page of the call took the panel
        with self.lock:
            if sink is None or self.pending is None or time.monotonic() - self.sent_at < FRAME_GAP:
                return
            frame, self.pending = self.pending, None
            self.sent_at = time.monotonic()
        with self.sending:
            if self.closed:
                return  # the call ended and its panel says `last seen`; this frame came too late to show
            try:
                sink("frame", frame[0], frame[1])
            except Exception:  # noqa: BLE001 - a frame lost is a frame lost; the call goes on
                pass

    def _flush_loop(self) -> None:
        while not self.stopping.wait(FLUSH_TICK):
            self._send_if_due()

    def stop(self) -> None:
        """The call ended: the newest frame goes out, then the panel says `last seen`; the video's last frame
        lasts until now."""
        self.stopping.set()
        try:
            self.session.send("Page.stopScreencast")
        except Exception:  # noqa: BLE001 - a closed page
            pass
        if self.keep:
            self.keep.append((self.keep[-1][0], max(time.time(), self.keep[-1][1] + 0.04)))
        if self.flusher is None:
            return
        self.flusher.join(timeout=1)
        with self.sending:
            self.closed = True
            sink = self.sink
            with self.lock:
                frame, self.pending = self.pending, None
            if sink is None:  # not the page on the panel: the one that is says `last seen`
                return
            try:
                if frame is not None:
                    sink("frame", frame[0], frame[1])
                sink("end", None, self.url)
            except Exception:  # noqa: BLE001 - the panel's sink is gone; the call's end is not its
                pass


def signs_in(call: "Call") -> bool:
    """A `login` step or a field filled from a secret somewhere in the call's steps."""
    return bool(call.secrets_in_steps)


class Watch:
    """A call's screencasts: its first page's, and one for every page the call opens — a popup, a new tab. The
    live view follows the newest page open (back to the one before when it closes); when the call records, every
    page is kept as a .webm of its own."""

    def __init__(self, call: "Call", page: "Page", sink: Sink | None) -> None:
        self.call = call
        self.sink = sink
        recording = call.recording
        self.casts = [Screencast(page, sink, recording.frames if recording is not None else None)]
        self.context = page.context
        self.context.on("page", self._opened)

    def _live(self) -> list[Screencast]:
        return [cast for cast in self.casts if cast.sink is not None]

    def _opened(self, page: "Page") -> None:  # in Playwright's thread, as the page opens
        recording = self.call.recording
        if recording is None and self.sink is None:
            return
        try:
            cast = Screencast(page, self.sink, recording.new_page() if recording is not None else None)
        except Exception:  # noqa: BLE001 - a page gone as it opened has nothing to keep or show
            return
        for earlier in self._live():
            earlier.sink = None  # one page on the panel at a time: the one the call just opened
        self.casts.append(cast)
        if self.sink is not None:
            page.on("close", lambda _page: self._closed(cast))

    def _closed(self, cast: Screencast) -> None:
        """The live page closed: the panel goes back to the newest page still open."""
        if cast.sink is None:
            return
        cast.sink = None
        for earlier in reversed(self.casts):
            if earlier is not cast and not earlier.page.is_closed():
                earlier.sink = self.sink
                return

    def stop(self) -> None:
        # A session's context outlives the call: its next pages are not this call's.
        try:
            self.context.remove_listener("page", self._opened)
        except Exception:  # noqa: BLE001 - a closed context
            pass
        live = self._live()
        for cast in self.casts:
            if cast not in live:
                cast.stop()
        for cast in live:  # last, so the panel's `last seen` is the page the call ended on
            cast.stop()


def start_watch(call: "Call", page: "Page") -> Watch | None:
    """The call's screencasts: its live view unless the agent turned it off, the call signs in, or nothing keeps
    frames; and its video's frames (every page's) when it records one. None when it does neither."""
    sink = getattr(call.tool, "live_frames", None)
    if call.block.get("live_view") is False or signs_in(call):
        sink = None
    if sink is None and call.recording is None:
        return None
    try:
        return Watch(call, page, sink)
    except Exception:  # noqa: BLE001 - an engine without a screencast shows nothing; the call goes on
        return None


def video_target(call: "Call", args: dict) -> Path | None:
    """Where this call's video goes, or None. A call's own `video=` in a call that signs in is refused (as trace
    and har are); a video the block asks for is skipped for that call, and the call says so."""
    asked, own = args.get("video"), _on(args.get("video"))
    if not own and not _on(call.block.get("video")):
        return None
    if signs_in(call):
        if own:
            raise WebToolError(
                "browse: a call that signs in keeps no video — its page shows every field it filled; "
                "sign in with session= and record the next call"
            )
        call.notes.append(SIGNS_IN_VIDEO)
        return None
    tool = call.tool
    tool.videos = getattr(tool, "videos", 0) + 1
    default = VIDEO_DEFAULT.format(n=tool.videos)
    value = asked if own else call.block.get("video")
    if value is True or str(value).lower() == "true":
        raw = default
    else:
        raw = str(value).strip()
        if not raw.lower().endswith(".webm"):
            raise WebToolError(f'browse: video= is "true" or a .webm path, such as {VIDEO_DEFAULT.format(n=1)}')
        if not own:  # the block's one path, for every call of the step: numbered after the first
            raw = raw if tool.videos == 1 else f"{raw[:-5]}-{tool.videos}.webm"
    return tool.save_target(raw)


class Recording:
    """A call's video: each page's screencast frames — the call's first page, then every page it opened, in the
    order they opened — encoded as one WebM per page once the call is over (`browse-1.webm`,
    `browse-1-tab2.webm`, …), all listed on the call's event for the Run page."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.frames: list[tuple[bytes, float]] = []  # the first page's
        self.more: list[list[tuple[bytes, float]]] = []  # each page the call opened

    def new_page(self) -> list:
        frames: list[tuple[bytes, float]] = []
        self.more.append(frames)
        return frames

    def target_for(self, number: int) -> Path:
        return self.target if number == 1 else self.target.with_name(f"{self.target.stem}-tab{number}.webm")

    def save(self, call: "Call") -> None:
        tool = call.tool
        pages, self.frames, self.more = [self.frames, *self.more], [], []
        for number, frames in enumerate(pages, 1):
            target = self.target_for(number)
            try:
                size = encode(frames, target)
            except Exception:  # noqa: BLE001 - a frame the encoder cannot read loses the video, not the call
                size = 0
            if not size:
                call.notes.append(
                    "video: not recorded — the page drew no frame to keep"
                    if number == 1
                    else f"video: tab {number} not recorded — it drew no frame to keep"
                )
                continue
            path = tool.relative(target)
            call.notes.append(f"video: {path}" if number == 1 else f"video: {path} (tab {number}, opened by the call)")
            call.recordings.setdefault("video", []).append(path)
