"""The Run page's timeline picture: one row per step (each `each:` instance its
own row, side by side in time with its siblings), every try a bar from when it
started to when it ended, a wait for a person drawn as an amber band.

Pure layout: takes the steps (with their tries and approvals already loaded)
and returns coordinates for the SVG in templates/runs/_timeline.html, so the
page makes no query of its own here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

WIDTH = 760  # the SVG's viewBox width
LABEL_W = 150  # the left column with the step's label
ROW_H = 24
TOP = 8  # space above the first row
AXIS_H = 26  # the time axis under the rows
MIN_BAR = 3.0  # a try of a few milliseconds is still visible


@dataclass
class Bar:
    x: float
    width: float
    css: str
    title: str


@dataclass
class Row:
    y: float
    label: str
    sub: str
    css: str
    bars: list[Bar] = field(default_factory=list)
    group_start: bool = False


@dataclass
class Tick:
    x: float
    text: str


@dataclass
class Timeline:
    width: int
    height: int
    plot_x: int
    plot_w: int
    rows: list[Row]
    ticks: list[Tick]
    total: str


def seconds_text(seconds: float) -> str:
    """12 s, 3 min 4 s, 2 h 5 min: a duration as a person says it."""
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, sec = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min {sec} s" if sec else f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes} min" if minutes else f"{hours} h"


def _nice_step(span: float) -> float:
    for step in (0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 21600, 43200, 86400):
        if span / step <= 6:
            return step
    return 86400 * 7


def build(run, steps: list, now: datetime) -> Timeline | None:
    """The picture, or None while nothing has started yet."""
    spans: list[tuple[datetime, datetime]] = []
    for step in steps:
        for attempt in step.try_list:
            spans.append((attempt.started_at, attempt.finished_at or now))
        for approval in step.approval_list:
            spans.append((approval.created_at, approval.decided_at or now))
    if not spans:
        return None
    start = min(s for s, _ in spans)
    end = max(e for _, e in spans)
    if run.finished_at and run.finished_at > end:
        end = run.finished_at
    span = max((end - start).total_seconds(), 1.0)
    plot_x, plot_w = LABEL_W, WIDTH - LABEL_W - 12

    def x_of(moment: datetime) -> float:
        return plot_x + plot_w * max(0.0, (moment - start).total_seconds()) / span

    rows: list[Row] = []
    previous_index = None
    for step in steps:
        if step.instance is None and step.has_instances:
            continue  # a fan-out's parent does no work itself; its instances are the rows
        y = TOP + len(rows) * ROW_H
        sub = step.agent if step.instance is None else (step.item or step.agent)
        row = Row(
            y=y,
            label=step.label,
            sub=sub[:22],
            css=step.state_css,
            group_start=previous_index is not None and previous_index != step.index,
        )
        previous_index = step.index
        for approval in step.approval_list:
            left = x_of(approval.created_at)
            right = x_of(approval.decided_at or now)
            what = "question" if approval.kind == "ask" else "approval"
            row.bars.append(
                Bar(
                    x=round(left, 1),
                    width=round(max(right - left, MIN_BAR), 1),
                    css="wait",
                    title=f"step {step.label}: waited {seconds_text(((approval.decided_at or now) - approval.created_at).total_seconds())} for {what} ({approval.state})",
                )
            )
        for attempt in step.try_list:
            left = x_of(attempt.started_at)
            right = x_of(attempt.finished_at or now)
            took = ((attempt.finished_at or now) - attempt.started_at).total_seconds()
            row.bars.append(
                Bar(
                    x=round(left, 1),
                    width=round(max(right - left, MIN_BAR), 1),
                    css=f"try {attempt.status}",
                    title=f"step {step.label}, try {attempt.n}: {attempt.status}, {seconds_text(took)}",
                )
            )
        rows.append(row)
    tick_step = _nice_step(span)
    ticks = []
    t = 0.0
    while t <= span + 1e-9:
        ticks.append(Tick(x=round(plot_x + plot_w * t / span, 1), text=seconds_text(t) if t else "0"))
        t += tick_step
    height = TOP + len(rows) * ROW_H + AXIS_H
    return Timeline(
        width=WIDTH, height=height, plot_x=plot_x, plot_w=plot_w, rows=rows, ticks=ticks, total=seconds_text(span)
    )
