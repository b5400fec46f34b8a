"""Runs from the command line.

    foldrun run FLOW --local [--path DIR] [--input k=v] [--test]   the engine on this laptop
    foldrun run FLOW --to WS [--input k=v] [--test] [--wait] [--idempotency-key KEY]   a run on the server
    foldrun runs --to WS [--flow F] [--status S] [--verdict V]     the workspace's runs, a page at a time
                 [--limit N] [--before CURSOR]                     (the next page's command is printed)
    foldrun report RUN --to WS | foldrun report --local last|RUN   the run's report

Local records live in `~/.foldrun/runs/<id>.json` (`last` names the newest);
local secrets come from the laptop vault (`foldrun vault … --local`).
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from .client import ApiFailure, CliError, quote_path
from .loader import laptop
from .workspace import desk_workspace, missing_workspace
from .output import short_time

FINISHED = ("completed", "failed", "cancelled")
PARKED = ("awaiting-approval", "waiting")


def register(subparsers, common) -> None:
    p = subparsers.add_parser("run", parents=[common], help="run a flow, on the server (--to) or here (--local)")
    p.add_argument("flow", metavar="FLOW")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--to", metavar="WS", help="the workspace to run it in (default: the one in ./.foldrun/workspace)"
    )
    where.add_argument("--local", action="store_true", help="run it on this machine, from a desk folder")
    p.add_argument("--path", default=".", metavar="DIR", help="with --local: the desk folder (default: here)")
    p.add_argument("--input", action="append", default=[], metavar="K=V", help="an input for {{K}} (repeatable)")
    p.add_argument("--test", action="store_true", help="a test run: no send-capable secret, no network for programs")
    p.add_argument("--wait", action="store_true", help="with --to: wait for the run to finish and print its report")
    p.add_argument(
        "--idempotency-key",
        metavar="KEY",
        help="with --to: sent as the Idempotency-Key header — for 24 hours the same KEY and inputs answer the run "
        "it started instead of starting another (a retry after a timeout is safe)",
    )
    p.set_defaults(func=cmd_run)

    p = subparsers.add_parser("runs", parents=[common], help="a workspace's runs, newest first")
    p.add_argument("--to", metavar="WS", help="the workspace (default: the one in ./.foldrun/workspace)")
    p.add_argument("--flow", help="only this flow")
    p.add_argument("--status", help="only runs in this status")
    p.add_argument("--verdict", help="only runs with this verdict")
    p.add_argument("--limit", type=int, metavar="N", help="runs per page (default 50, at most 500)")
    p.add_argument("--before", metavar="CURSOR", help="the page after the one that printed this cursor (older runs)")
    p.set_defaults(func=cmd_runs)

    p = subparsers.add_parser("report", parents=[common], help="a run's report: status, verdict, headline, steps")
    p.add_argument("run", metavar="RUN", help="a run id, or `last` for the newest")
    where = p.add_mutually_exclusive_group()
    where.add_argument(
        "--to", metavar="WS", help="the workspace the run is in (default: the one in ./.foldrun/workspace)"
    )
    where.add_argument("--local", action="store_true", help="a run made with `foldrun run --local`")
    p.set_defaults(func=cmd_report)


def _inputs(pairs: list[str]) -> dict[str, str]:
    inputs: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--input {pair}: write it as name=value.", exit_code=2)
        inputs[key.strip()] = value
    return inputs


def workspace_name(given: str | None) -> str:
    """--to, else the workspace this desk folder was pushed to (./.foldrun/workspace)."""
    return desk_workspace(given)


def runs_dir(ctx) -> Path:
    return Path(ctx.config_dir) / "runs"


def ask_on_terminal(question: str) -> str | None:
    if not sys.stdin.isatty():
        return None
    sys.stderr.write(f"{question}\n> ")
    sys.stderr.flush()
    line = sys.stdin.readline()
    return line.strip() if line else None


def cmd_run(args, ctx) -> int:
    inputs = _inputs(args.input)
    key = args.idempotency_key
    if args.local:
        if key is not None:
            raise CliError(
                "--idempotency-key is for a run on the server (--to); a --local run takes none.", exit_code=2
            )
        return laptop(ctx).run_local(args, ctx, inputs)
    if key is not None and not key.isascii():
        # An HTTP header carries ASCII only; the server says the rest (empty, over 255 characters).
        raise CliError("--idempotency-key: a key is 1 to 255 printable ASCII characters.", exit_code=2)
    workspace = workspace_name(args.to)
    path = f"/api/workspaces/{quote_path(workspace)}/runs"
    body = {"flow": args.flow, "inputs": inputs, "test": args.test, "trigger": "cli"}
    with naming_the_workspace(ctx, workspace):
        run, replayed = ctx.api.post_once(path, body, key) if key is not None else (ctx.api.post(path, body), False)
    if not args.wait:
        said = f"Key {key} started {run['id']} before; nothing new was started" if replayed else f"Started {run['id']}"
        ctx.out.result(
            run, f"{said} ({args.flow} in {workspace}). See it with `foldrun report {run['id']} --to {workspace}`."
        )
        return 0
    path = f"/api/workspaces/{quote_path(workspace)}/runs/{run['id']}"
    while True:
        # The light answer each second; the whole run (steps, approvals) once, when it has stopped.
        state = ctx.api.get(f"{path}/status")
        if state["status"] in FINISHED or state["status"] in PARKED:
            break
        ctx.out.progress(f"{state['id']} {state['status']}…")
        time.sleep(1)
    ctx.out.clear_progress()
    run = ctx.api.get(path)
    print_report(ctx, server_record(run))
    if run["status"] in PARKED and not ctx.out.json_mode:
        ctx.out.lines(how_to_decide(ctx, workspace, run))
    return 0 if run["status"] == "completed" else 1


def how_to_decide(ctx, workspace: str, run: dict) -> list[str]:
    """Where a parked run waits and the commands that let it go on."""
    run_id, lines = run["id"], []
    to = f" --to {workspace}"
    for approval in run.get("approvals") or []:
        if approval.get("state") != "pending":
            continue
        step = approval.get("step")
        if approval.get("kind") == "ask":
            lines.append(f"Step {step} asks: {approval.get('question') or '(no question text)'}")
            lines.append(f'  answer it:  foldrun answer {run_id} {step} "TEXT"{to}')
        else:
            who = f" (approvers: {', '.join(approval['approvers'])})" if approval.get("approvers") else ""
            lines.append(f"Step {step} waits for approval{who}.")
            lines.append(f"  approve:  foldrun approve {run_id} {step}{to}")
            lines.append(f"  reject:   foldrun reject {run_id} {step}{to}")
    for step in run.get("steps") or []:
        if step.get("status") == "waiting" and step.get("wait_event"):
            lines.append(
                f"Step {step['index']} waits for the event {step['wait_event']}: POST "
                f"{ctx.api.url}/api/workspaces/{quote_path(workspace)}/runs/{run_id}/events/{step['wait_event']}"
            )
    lines.append(f"  or decide on the dashboard: {ctx.api.url}/w/{quote_path(workspace)}/runs/{run_id}")
    lines.append(f"  stop it:  foldrun cancel {run_id}{to}")
    return lines


def server_record(run: dict) -> dict:
    steps = [
        {
            "step": s["label"],
            "agent": s["agent"],
            "status": s["status"],
            "attempt": s["attempt"],
            "cost_usd": s["cost_usd"],
            "tokens_in": s["tokens_in"],
            "tokens_out": s["tokens_out"],
            "limits": s.get("limits_line", ""),
            "error": s.get("error", ""),
            "tries": s.get("tries") or [],
        }
        for s in run.get("steps", [])
    ]
    return {**run, "steps": steps}


def print_report(ctx, record: dict) -> None:
    if ctx.out.json_mode:
        ctx.out.json(record)
        return
    ctx.out.lines(laptop(ctx).report_lines(record))


@contextmanager
def naming_the_workspace(ctx, workspace: str):
    """A bare "Not found." from the server, said as the workspace that is not there (with those that are)."""
    try:
        yield
    except ApiFailure as exc:
        if exc.status == 404 and exc.code in ("", "not_found") and exc.message == "Not found.":
            raise (missing_workspace(ctx, workspace) or exc) from None
        raise


def newest_runs(ctx, workspace: str, limit: int = 5) -> list[dict]:
    answer = ctx.api.get(f"/api/workspaces/{quote_path(workspace)}/runs", params={"limit": limit})
    return answer["runs"] if isinstance(answer, dict) else answer


def server_run(ctx, workspace: str, run_id: str) -> dict:
    """The run RUN (or `last`, the newest) of the workspace, or a sentence naming what is not there and what is."""
    with naming_the_workspace(ctx, workspace):
        if run_id == "last":
            runs = newest_runs(ctx, workspace, 1)
            if not runs:
                raise CliError(
                    f"There are no runs in {workspace} yet; start one with `foldrun run FLOW --to {workspace}`.",
                    code="not_found",
                    details={"what": "run", "name": "last", "where": workspace, "choices": []},
                )
            run_id = runs[0]["id"]
        try:
            return ctx.api.get(f"/api/workspaces/{quote_path(workspace)}/runs/{quote_path(run_id)}")
        except ApiFailure as exc:
            if exc.status != 404:
                raise
            missing = missing_workspace(ctx, workspace)
            if missing is not None:
                raise missing from None
    raise run_not_found(ctx, workspace, run_id)


def run_not_found(ctx, workspace: str, run_id: str) -> ApiFailure:
    """The failure that names a run the workspace does not have, with its newest runs."""
    ids = [r["id"] for r in newest_runs(ctx, workspace)]
    newest = f"its newest are {', '.join(ids)}" if ids else "it has no runs yet"
    return ApiFailure(
        f"There is no run {run_id} in {workspace}; {newest} (`foldrun runs --to {workspace}` lists them).",
        status=404,
        code="not_found",
        details={"what": "run", "name": run_id, "where": workspace, "choices": ids},
    )


def local_run_not_found(runs: Path, run_id: str, limit: int = 5) -> CliError:
    """The failure that names a local run that is not kept, with the newest that are."""
    kept = sorted(runs.glob("run_*.json"), key=lambda p: p.stat().st_mtime, reverse=True) if runs.is_dir() else []
    ids = [p.stem for p in kept[:limit]]
    newest = f"the newest are {', '.join(ids)}" if ids else "there are none yet"
    return CliError(
        f"There is no local run {run_id} in {runs}; {newest}.",
        code="not_found",
        details={"what": "run", "name": run_id, "where": str(runs), "choices": ids},
    )


def next_cursor(answer: dict | list) -> str | None:
    """The `before` cursor of the answer's `next` link (None on the last page, or from a server without pages)."""
    link = answer.get("next") if isinstance(answer, dict) else None
    if not link:
        return None
    return (parse_qs(urlsplit(link).query).get("before") or [None])[0]


def cmd_runs(args, ctx) -> int:
    given = (
        ("flow", args.flow),
        ("status", args.status),
        ("verdict", args.verdict),
        ("limit", args.limit),
        ("before", args.before),
    )
    params = {k: v for k, v in given if v}
    workspace = workspace_name(args.to)
    try:
        with naming_the_workspace(ctx, workspace):
            answer = ctx.api.get(f"/api/workspaces/{quote_path(workspace)}/runs", params=params)
    except ApiFailure as exc:
        field = exc.details.get("field") if isinstance(exc.details, dict) else None
        choices = exc.details.get("choices") if isinstance(exc.details, dict) else None
        if field in ("status", "verdict") and choices:
            raise CliError(
                f"--{field} {params[field]} is not a run's {field}; use one of: {', '.join(choices)}.",
                exit_code=2,
                code="invalid",
                details={"what": field, "name": params[field], "choices": choices},
            ) from None
        raise
    rows = answer["runs"] if isinstance(answer, dict) else answer
    ctx.out.table(
        rows,
        [
            ("id", "RUN"),
            ("name", "FLOW"),
            ("status", "STATUS"),
            ("verdict", "VERDICT"),
            ("headline", "HEADLINE"),
            ("created_at", "STARTED", short_time),
        ],
        empty="No runs yet." if not args.before else "No older runs.",
    )
    cursor = next_cursor(answer)
    if cursor:  # on stderr: the table (or --json's rows) stays what it was
        again = " ".join([f"--{k} {v}" for k, v in given if v and k != "before"] + [f"--before {cursor}"])
        ctx.out.note(f"Older runs: foldrun runs --to {workspace} {again}")
    return 0


def cmd_report(args, ctx) -> int:
    if args.local:
        runs = runs_dir(ctx)
        run_id = args.run
        if run_id == "last":
            marker = runs / "last"
            if not marker.exists():
                raise CliError(
                    "No local run yet; start one with `foldrun run FLOW --local`.",
                    code="not_found",
                    details={"what": "run", "name": "last", "where": str(runs), "choices": []},
                )
            run_id = marker.read_text().strip()
        path = runs / f"{run_id}.json"
        if not path.exists():
            raise local_run_not_found(runs, run_id)
        print_report(ctx, json.loads(path.read_text(encoding="utf-8")))
        return 0
    workspace = workspace_name(args.to)
    run = server_run(ctx, workspace, args.run)
    print_report(ctx, server_record(run))
    return 0
