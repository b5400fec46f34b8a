"""A browsing step's part of its Run page: the browser live under the step (its newest frame, the address it is
on, `live` while the call runs and `last seen` after), and what the step kept to watch it by — its videos played
inline once the run finishes (byte ranges, so they seek), its trace and HAR as downloads.

Every route finds the step through the reader's own run (`pages._run` on the workspace of their membership), so
another account's run, frame or video is a 404 like a missing one. Nothing here writes.
"""

from __future__ import annotations

from datetime import datetime, timezone as dt_timezone

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse

from accounts.access import current_membership, workspace_for_user
from foldrun.ranged import ranged_bytes

from . import live_view
from .models import Artifact, Run, Step

LABELS = {"trace": "trace", "har": "HAR"}


def _step(request: HttpRequest, ws: str, run_id: str, step_id: str) -> tuple[Run, Step]:
    workspace, _ = workspace_for_user(current_membership(request), ws)
    run = Run.objects.filter(workspace=workspace, public_id=run_id).first()
    step = Step.objects.filter(run=run, public_id=step_id).first() if run is not None else None
    if step is None:
        raise Http404
    return run, step


def panel(run: Run, step: Step, ws: str) -> dict | None:
    """The step's live panel, or None when it has no frame held (and is not running: a running step's empty
    panel keeps asking, so the first frame shows as soon as it is drawn)."""
    line = live_view.read(step.public_id)
    running = step.status == "running" and not run.is_finished
    if line is None and not running:
        return None
    url = reverse("run-browser", args=[ws, run.public_id, step.public_id])
    return {
        "step": step.public_id,
        "url": url,
        "polling": running or bool(line and line["live"]),
        "frame": f"{url}/frame?n={line['seq']}" if line else "",
        "address": (line or {}).get("url", ""),
        "live": bool(line and line["live"] and running),
        "seq": (line or {}).get("seq", 0),
        "seen_text": (
            datetime.fromtimestamp(float(line["at"]), tz=dt_timezone.utc).strftime("%H:%M:%S UTC") if line else ""
        ),
    }


def watch_part(run: Run, steps: list[Step], ws: str) -> None:
    """Each step's `browser` panel and `recordings` (trace, HAR, videos: what its browse calls said they kept),
    in two queries whatever the number of steps."""
    kept: dict[int, dict[str, list[str]]] = {}
    for step_id, recordings in run.trace.filter(kind="web", data__has_key="recordings").values_list(
        "step_id", "data__recordings"
    ):
        for kind, paths in (recordings or {}).items():
            kept.setdefault(step_id, {}).setdefault(kind, []).extend(paths if isinstance(paths, list) else [paths])
    artifacts: dict[tuple[int, str], Artifact] = {}
    if kept:
        for artifact in run.artifacts.filter(step_id__in=list(kept)).only("public_id", "path", "step_id", "size"):
            artifacts[(artifact.step_id, artifact.path)] = artifact
    for step in steps:
        step.browser = panel(run, step, ws)
        step.recordings = []
        for kind, paths in kept.get(step.pk, {}).items():
            for path in dict.fromkeys(paths):
                artifact = artifacts.get((step.pk, path))
                if artifact is None:
                    continue
                download = f"/api/workspaces/{ws}/runs/{run.public_id}/artifacts/{artifact.public_id}"
                step.recordings.append(
                    {
                        "kind": kind,
                        "label": LABELS.get(kind, kind),
                        "path": path,
                        "size": artifact.size,
                        "href": (
                            reverse("run-video", args=[ws, run.public_id, artifact.public_id])
                            if kind == "video"
                            else download
                        ),
                        "plays": kind == "video" and run.is_finished,
                    }
                )


@login_required
def browser_panel(request: HttpRequest, ws: str, run_id: str, step_id: str) -> HttpResponse:
    """The panel alone, for its own poll: a 204 while the frame it has is still the newest."""
    run, step = _step(request, ws, run_id, step_id)
    part = panel(run, step, ws)
    if (
        part is not None
        and request.GET.get("seq") == str(part["seq"])
        and request.GET.get("live") == str(int(part["live"]))
    ):
        return HttpResponse(status=204)  # the same frame, the same badge
    return render(request, "runs/_step_browser_panel.html", {"browser": part})


@login_required
def browser_frame(request: HttpRequest, ws: str, run_id: str, step_id: str) -> HttpResponse:
    _run, step = _step(request, ws, run_id, step_id)
    data = live_view.frame(step.public_id)
    if data is None:
        raise Http404
    response = HttpResponse(data, content_type="image/jpeg")
    response["Cache-Control"] = "private, no-store"
    return response


@login_required
def step_video(request: HttpRequest, ws: str, run_id: str, artifact_id: str) -> HttpResponse:
    """A step's video for the page's <video>, with byte ranges so it seeks."""
    workspace, _ = workspace_for_user(current_membership(request), ws)
    run = Run.objects.filter(workspace=workspace, public_id=run_id).first()
    artifact = (
        Artifact.objects.filter(run=run, public_id=artifact_id, path__endswith=".webm").first()
        if run is not None
        else None
    )
    if artifact is None:
        raise Http404
    return ranged_bytes(request, bytes(artifact.content), "video/webm", filename=artifact.path.rsplit("/", 1)[-1])
