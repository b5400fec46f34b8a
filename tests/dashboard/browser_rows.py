"""Rows of the browser's records for page tests: a recorded session, a finished task on it (its run in the
workspace), a smoke test — written directly, as a real run would leave them."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
from django.utils import timezone

from browsing.models import BrowserSession, SkillRun, Task
from runs.models import Run

STEPS = [
    {
        "op": "goto",
        "ref": "https://shop.test/pricing",
        "provider": "anthropic",
        "ok": True,
        "ms": 812,
        "costMicros": 1300,
        "error": None,
    },
    {
        "op": "click",
        "ref": "e12",
        "provider": "anthropic",
        "ok": False,
        "ms": 95,
        "costMicros": 20,
        "error": "No element e12 on the page.",
    },
]


def webm(target: Path, *, seconds: int = 3) -> Path:
    """A small real WebM (VP8, grey frames, one a second), as the keeper writes one."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with av.open(str(target), mode="w", format="webm") as container:
        stream = container.add_stream("libvpx", rate=1)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        stream.codec_context.time_base = Fraction(1, 1000)
        for n in range(seconds):
            frame = av.VideoFrame(64, 48, "yuv420p")
            for plane in frame.planes:
                plane.update(bytes([128]) * plane.buffer_size)
            frame.pts, frame.time_base = n * 1000, Fraction(1, 1000)
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return target


def session(account, *, recording: Path | None = None, **fields) -> BrowserSession:
    now = timezone.now()
    values = {
        "status": "closed",
        "end_reason": "stopped",
        "status_reason": "Stopped by a caller.",
        "live_at": now,
        "closed_at": now,
        "options": {"record": recording is not None},
    }
    values.update(fields)
    if recording is not None:
        values.update(recording=str(recording), recording_bytes=recording.stat().st_size)
    return BrowserSession.objects.create(account=account, **values)


def task(account, workspace, on: BrowserSession, *, finished: bool = True, **fields) -> Task:
    run = Run.objects.create(
        account=account, workspace=workspace, name="task:browser-agent", status="completed" if finished else "running"
    )
    values = {
        "goal": "Find the price of the Pro plan.",
        "status": "finished" if finished else "running",
        "ok": True if finished else None,
        "stopped_by": "done" if finished else "",
        "steps": STEPS if finished else [],
        "cost_micros": 1320 if finished else 0,
        "answer": "The Pro plan is $29 a month." if finished else "",
        "finished_at": timezone.now() if finished else None,
    }
    values.update(fields)
    return Task.objects.create(account=account, session=on, run=run, **values)


def smoke(account, on: BrowserSession | None, **fields) -> SkillRun:
    values = {
        "skill": "smoke-uat",
        "status": "passed",
        "inputs": {"url": "https://shop.test/"},
        "finished_at": timezone.now(),
        "phase": "done",
        "report": {
            "id": "",
            "kind": "smoke",
            "skill": "smoke-uat",
            "verdict": "pass",
            "steps": [
                {
                    "index": 0,
                    "path": "1",
                    "kind": "load",
                    "label": "open the start page",
                    "status": "passed",
                    "ok": True,
                    "ms": 300,
                    "error": None,
                }
            ],
            "notes": ["Checked on the start page only."],
        },
    }
    values.update(fields)
    run = SkillRun.objects.create(account=account, session=on, **values)
    if run.report:
        run.report["id"] = run.public_id
        run.save(update_fields=["report"])
    return run
