"""`foldrun logs RUN`: a run's trace — its steps, their model requests, tool calls and results, refusals,
limits and notes — as the Run page shows it (both read foldrun/trace_view.py). `--follow` keeps printing
as the run goes, until it ends; the exit code is then the run's (0 when it completed). `foldrun log` is
something else: a workspace's revisions.
"""

from __future__ import annotations

import time
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Iterable

from .client import quote_path
from .loader import trace_view
from .cmd_run import FINISHED, PARKED, how_to_decide, server_run, workspace_name
from .output import short_time

if TYPE_CHECKING:
    from foldrun.trace_view import EventView

POLL_SECONDS = 1.0


def register(subparsers, common) -> None:
    p = subparsers.add_parser(
        "logs", parents=[common], help="a run's trace: its steps, tool calls and sentences (`log` lists revisions)"
    )
    p.add_argument("run", metavar="RUN", help="a run id, or `last` for the newest")
    p.add_argument("--to", metavar="WS", help="the workspace the run is in (default: the one in ./.foldrun/workspace)")
    p.add_argument("-f", "--follow", action="store_true", help="keep printing as the run goes, until it ends")
    p.set_defaults(func=cmd_logs)


def _clock(value: Any) -> str:
    text = short_time(value)
    return text[11:16] if len(text) >= 16 else text


def _indent(text: str, by: str = "      ") -> list[str]:
    return [by + line for line in text.splitlines()] or [by]


def event_lines(event: EventView) -> list[str]:
    """One trace event as the Run page shows it: its time and title, its facts, its sentence, its JSON."""
    head = f"  {_clock(event.at)}  {'✗ ' if event.error else ''}{event.title}"
    if event.try_n and event.try_n > 1:
        head += f"  (try {event.try_n})"
    if event.facts:
        head += "  · " + " · ".join(event.facts)
    lines = [head]
    if event.line:
        lines.extend(_indent(event.line))
    for block in event.blocks:
        lines.extend(_indent(block.text))
    return lines


def step_title(step: dict) -> str:
    """`Step 2 · writer — Draft the post.`: the agent by name, never the flow line's `[[writer]]`."""
    task = " ".join(str(step.get("task") or "").split())
    item = f" [{step['item']}]" if step.get("item") else ""
    title = f"Step {step.get('index')}{item} · {step.get('agent') or '?'}"
    return title + (f" — {task[:100]}" if task else "")


def _said_in(sentence: Any, said: set[str]) -> bool:
    text = " ".join(str(sentence or "").split())
    return bool(text) and any(s and s in text for s in said)


def step_end_lines(step: dict, said: set[str]) -> list[str]:
    """How a step ended; its error only when the trace has not just said it (a failure's sentence, once)."""
    lines = [f"  → {step.get('status')}" + (f" · ${float(step['cost_usd']):.4f}" if step.get("cost_usd") else "")]
    if step.get("error") and not _said_in(step["error"], said):
        said.add(" ".join(str(step["error"]).split()))
        lines.extend(_indent(str(step["error"]), "    "))
    elif step.get("output"):
        first = (str(step["output"]).strip().splitlines() or [""])[0]
        lines.append(f"    {first[:160]}")
    return lines


class Printer:
    """Prints a run's trace once, event by event; `update` prints only what is new since the last call."""

    def __init__(self, out) -> None:
        self.out = out
        self.events_seen = 0
        self.headed: set[str] = set()
        self.ended: set[str] = set()
        self.run_headed = False
        self.told_parked = False
        self.said: set[str] = set()  # the sentences printed: a failure's is said once

    def update(self, run: dict, events: list[dict], decide: Iterable[str] = ()) -> None:
        """Print `events` (the trace written since the last call) and what `run` says has ended since."""
        steps = {s["id"]: s for s in run.get("steps") or []}
        if not self.run_headed:
            self.run_headed = True
            self.out.line(
                f"{run['id']}  {run.get('name') or ''}  in {run.get('workspace') or ''}  "
                f"(started {short_time(run.get('created_at'))})"
            )
        for raw in events:
            step = steps.get(raw.get("step"))
            if step is not None and step["id"] not in self.headed:
                self.headed.add(step["id"])
                self.out.line(step_title(step))
            elif step is None and "run" not in self.headed:
                self.headed.add("run")
                self.out.line("The run")
            event = trace_view().view(
                SimpleNamespace(
                    pk=0,
                    at=raw.get("at"),
                    try_n=raw.get("try_n") or 0,
                    kind=raw.get("kind") or "",
                    data=raw.get("data"),
                )
            )
            if event.line:
                self.said.add(" ".join(event.line.split()))
            self.out.lines(event_lines(event))
        self.events_seen += len(events)
        for step in run.get("steps") or []:
            if step["status"] in ("completed", "failed", "cancelled", "skipped") and step["id"] not in self.ended:
                if step["id"] not in self.headed:
                    self.headed.add(step["id"])
                    self.out.line(step_title(step))
                self.ended.add(step["id"])
                self.out.lines(step_end_lines(step, self.said))
        if run["status"] in PARKED and not self.told_parked:
            self.told_parked = True
            self.out.lines(decide)
        elif run["status"] not in PARKED:
            self.told_parked = False
        if run["status"] in FINISHED:
            verdict = f" · {run['verdict']}" if run.get("verdict") else ""
            headline = (
                f" — {run['headline']}" if run.get("headline") and not _said_in(run["headline"], self.said) else ""
            )
            cost = f" · ${float(run['cost_usd']):.4f}" if run.get("cost_usd") is not None else ""
            self.out.line(f"{run['id']} {run['status']}{verdict}{cost}{headline}")
            if run.get("error") and not _said_in(run["error"], self.said) and run["error"] != run.get("headline"):
                self.out.line(f"  {run['error']}")


def read_trace(ctx, path: str, after: str | None) -> tuple[list[dict], str | None, str]:
    """The run's trace events after the cursor `after` (all of them without one), a page at a time: the events,
    the cursor to go on from later, and the run's status as the last page saw it."""
    events: list[dict] = []
    while True:
        page = ctx.api.get(f"{path}/trace", params={"after": after} if after else None)
        events += page.get("events") or []
        after = page.get("cursor") or after
        if not page.get("next"):
            return events, after, page.get("status") or ""


def cmd_logs(args, ctx) -> int:
    workspace = workspace_name(args.to)
    run = server_run(ctx, workspace, args.run)
    printer = Printer(ctx.out)
    path = f"/api/workspaces/{quote_path(workspace)}/runs/{quote_path(run['id'])}"
    events, after, _ = read_trace(ctx, path, None)
    trace = list(events)
    while True:
        if not ctx.out.json_mode:  # under --json: the whole trace once, when it is all there
            printer.update(run, events, how_to_decide(ctx, workspace, run) if run["status"] in PARKED else ())
        if not args.follow or run["status"] in FINISHED:
            break
        time.sleep(POLL_SECONDS)
        # Only what was written since; the run itself (its steps' summaries) again only when something moved.
        events, after, status = read_trace(ctx, path, after)
        trace += events
        if events or status != run["status"]:
            run = ctx.api.get(path)
    if ctx.out.json_mode:
        ctx.out.json(
            {
                "id": run["id"],
                "status": run["status"],
                "verdict": run.get("verdict"),
                "steps": run.get("steps") or [],
                "trace": trace,
            }
        )
    # Following, the exit code is the run's: 0 when it completed. Printing what is there so far always succeeds.
    if args.follow:
        return 0 if run["status"] == "completed" else 1
    return 0
