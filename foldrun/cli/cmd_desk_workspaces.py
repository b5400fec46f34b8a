"""The account's workspaces: list, create, delete."""

from __future__ import annotations

import sys
from pathlib import Path

from .client import ApiFailure, CliError, quote_path
from .output import short_time
from .workspace import WORKSPACE_FILE, missing_workspace, stored_workspace


def register(subparsers, common) -> None:
    p = subparsers.add_parser("workspaces", parents=[common], help="list the account's workspaces")
    p.set_defaults(func=cmd_workspaces)
    sub = p.add_subparsers(dest="workspaces_command", metavar="<action>")
    create = sub.add_parser("create", parents=[common], help="create a workspace")
    create.add_argument("name", metavar="NAME")
    create.add_argument("--description", default=None)
    create.set_defaults(func=cmd_workspaces_create)
    delete = sub.add_parser("delete", parents=[common], help="delete a workspace and its files, runs and secrets")
    delete.add_argument("name", metavar="NAME")
    delete.add_argument("--yes", action="store_true", help="do not ask for the name to be typed (for scripts)")
    delete.set_defaults(func=cmd_workspaces_delete)


WORKSPACE_COLUMNS = [
    ("name", "NAME"),
    ("id", "ID"),
    ("created_at", "CREATED", short_time),
    ("description", "DESCRIPTION", lambda v: v or ""),
]


def cmd_workspaces(args, ctx) -> int:
    rows = ctx.api.list("/api/workspaces")
    ctx.out.table(rows, WORKSPACE_COLUMNS, empty="No workspaces yet; create one with `foldrun workspaces create NAME`.")
    return 0


def cmd_workspaces_create(args, ctx) -> int:
    body = {"name": args.name}
    if args.description is not None:
        body["description"] = args.description
    created = ctx.api.post("/api/workspaces", body)
    ws_id = created.get("id") if isinstance(created, dict) else None
    ctx.out.result(created, f"Created workspace {args.name}" + (f" ({ws_id})." if ws_id else "."))
    return 0


def _runs(n: int) -> str:
    return f"{n} run" if n == 1 else f"{n} runs"


def cmd_workspaces_delete(args, ctx) -> int:
    name = args.name
    path = f"/api/workspaces/{quote_path(name)}"
    try:
        found = ctx.api.get(path)
    except ApiFailure as exc:
        if exc.status == 404:
            raise (missing_workspace(ctx, name) or exc) from None
        raise
    role = (ctx.api.get("/api/me").get("account") or {}).get("role")
    if role not in ("owner", "admin"):
        raise CliError(f"Your role ({role}) cannot delete a workspace; ask an owner or admin of the account.")
    runs = int(found.get("run_count") or 0)
    what = (
        f"Deleting {name} removes its files and every revision, {_runs(runs)} with their traces and artifacts, "
        "its schedules, its secrets and its delivery log. There is no undo."
    )
    if not args.yes:
        ctx.out.error(what)
        sys.stderr.write(f"Type the workspace's name ({name}) to delete it: ")
        sys.stderr.flush()
        typed = sys.stdin.readline().strip() if sys.stdin else ""
        if typed != name:
            said = f"You typed {typed!r}, not {name}" if typed else "No name was typed"
            raise CliError(f"{said}; nothing was deleted (pass --yes to skip the question in a script).")
    ctx.api.delete(path)
    if stored_workspace(Path(".")) == name:
        ctx.out.note(f"./{WORKSPACE_FILE} still names {name}; push this folder with --to to another workspace.")
    ctx.out.result(
        {"deleted": name, "id": found.get("id"), "run_count": runs}, f"Deleted workspace {name} and its {_runs(runs)}."
    )
    return 0
