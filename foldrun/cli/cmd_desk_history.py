"""A workspace's (or the account library's) revisions: log, diff."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

from .client import quote_path
from .output import short_time
from .workspace import naming_what_is_missing, scope_flags, scope_of


def register(subparsers, common) -> None:
    p = subparsers.add_parser(
        "log", parents=[common], help="a workspace's revisions, or one file's (a run's trace: `foldrun logs RUN`)"
    )
    p.add_argument("file", nargs="?", metavar="PATH_IN_DESK")
    scope_flags(p)
    p.set_defaults(func=cmd_log)

    p = subparsers.add_parser("diff", parents=[common], help="what changed between two revisions")
    p.add_argument("file", nargs="?", metavar="PATH_IN_DESK")
    scope_flags(p)
    p.add_argument(
        "--from", dest="from_rev", type=int, metavar="N", help="the older revision (default: the one before --to-rev)"
    )
    p.add_argument("--to-rev", dest="to_rev", type=int, metavar="M", help="the newer revision (default: the newest)")
    p.set_defaults(func=cmd_diff)


# log -----------------------------------------------------------------------
def _count(value: Any) -> Any:
    return len(value) if isinstance(value, (list, dict)) else value


def _who(row: dict) -> Any:
    for key in ("who", "author", "run"):
        value = row.get(key)
        if isinstance(value, dict):
            value = value.get("email") or value.get("id")
        if value:
            return value
    return None


def cmd_log(args, ctx) -> int:
    scope = scope_of(args, Path("."), "--to")
    with naming_what_is_missing(ctx, scope, path=args.file):
        if args.file:
            rows = ctx.api.list(f"{scope.prefix}/files/{quote_path(args.file)}/history")
        else:
            rows = ctx.api.list(f"{scope.prefix}/revisions")
    if ctx.out.json_mode:
        ctx.out.json(rows)
        return 0
    shown = []
    for row in rows:
        number = row.get("number", row.get("revision"))
        if isinstance(number, dict):
            number = number.get("number")
        shown.append(
            {
                "number": number,
                "kind": row.get("kind"),
                "who": _who(row),
                "when": short_time(row.get("created_at") or row.get("when")),
                "files": _count(row.get("files", row.get("file_count", row.get("size")))),
                "change": "deleted" if row.get("deleted") else None,
                "message": row.get("message") or "",
            }
        )
    if args.file:
        columns = [
            ("number", "REV"),
            ("kind", "KIND"),
            ("who", "WHO"),
            ("when", "WHEN"),
            ("files", "SIZE"),
            ("message", "MESSAGE"),
        ]
    else:
        columns = [
            ("number", "REV"),
            ("kind", "KIND"),
            ("who", "WHO"),
            ("when", "WHEN"),
            ("files", "FILES"),
            ("message", "MESSAGE"),
        ]
    ctx.out.table(shown, columns, empty=f"No revisions of {args.file or scope.label} yet.")
    return 0


# diff ----------------------------------------------------------------------
def _unified(entry: dict) -> list[str]:
    """A unified diff from one file entry holding `diff`, or `before`/`after`."""
    import difflib  # only a diff the server did not write itself needs it; every other command skips its import

    if isinstance(entry.get("diff"), str):
        return entry["diff"].splitlines()
    path = entry.get("path", "?")
    before = entry.get("before", entry.get("old")) or ""
    after = entry.get("after", entry.get("new")) or ""
    return list(
        difflib.unified_diff(str(before).splitlines(), str(after).splitlines(), f"a/{path}", f"b/{path}", lineterm="")
    )


def diff_lines(answer: Any) -> list[str]:
    if isinstance(answer, str):
        return answer.splitlines()
    if isinstance(answer, dict):
        if isinstance(answer.get("diff"), str):
            return answer["diff"].splitlines()
        entries = answer.get("files", answer.get("results", answer.get("diffs")))
    else:
        entries = answer
    lines: list[str] = []
    for entry in entries or []:
        if isinstance(entry, dict):
            lines.extend(_unified(entry))
    return lines


def _colour_diff(ctx, lines: Iterable[str]) -> Iterable[str]:
    for line in lines:
        if line.startswith(("+++", "---")):
            yield ctx.out.colour(line, "1")
        elif line.startswith("+"):
            yield ctx.out.colour(line, "32")
        elif line.startswith("-"):
            yield ctx.out.colour(line, "31")
        elif line.startswith("@@"):
            yield ctx.out.colour(line, "36")
        else:
            yield line


def cmd_diff(args, ctx) -> int:
    scope = scope_of(args, Path("."), "--to")
    params = {"from": args.from_rev, "to": args.to_rev, "path": args.file}
    with naming_what_is_missing(ctx, scope, path=args.file, revisions=[args.from_rev, args.to_rev]):
        answer = ctx.api.get(f"{scope.prefix}/diff", params=params)
    if ctx.out.json_mode:
        ctx.out.json(answer)
        return 0
    lines = diff_lines(answer)
    if not lines:
        ctx.out.note("No differences.")
        return 0
    ctx.out.lines(_colour_diff(ctx, lines))
    return 0
