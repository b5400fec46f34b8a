"""The gallery from the command line (tools.md, "On a laptop").

    foldrun gallery                        the shelf, and which tools the account keeps its own copy of
    foldrun gallery pull                   refresh the laptop's copy (~/.foldrun/gallery/<host>/) by hand
    foldrun gallery upgrade TOOL [--to WS] the Library page's "update to gallery version"

Exit codes as the rest of the CLI: 0 done, 1 refused (a tool not on the shelf, a copy already current,
no copy to upgrade, the platform unreachable), 2 a usage mistake.
"""

from __future__ import annotations

from .client import CliError, quote_path
from .loader import gallery_copy
from .workspace import missing_workspace


def register(subparsers, common) -> None:
    g = subparsers.add_parser("gallery", parents=[common], help="the gallery shelf: list, pull, upgrade a copy")
    sub = g.add_subparsers(dest="gallery_command", metavar="<pull|upgrade>")
    p = sub.add_parser("pull", parents=[common], help="refresh this laptop's copy of the gallery")
    p.set_defaults(func=cmd_gallery_pull)
    u = sub.add_parser("upgrade", parents=[common], help="bring a kept copy of TOOL to the gallery's version")
    u.add_argument("tool", metavar="TOOL")
    u.add_argument("--to", metavar="WS", help="the workspace's copy (default: the account library's)")
    u.set_defaults(func=cmd_gallery_upgrade)
    g.set_defaults(func=cmd_gallery_list)


def _kept_words(row: dict) -> str:
    copies = row.get("copies") or []
    if not copies:
        return "-"
    return ", ".join(f"{c['workspace'] or 'library'} ({c['mark']})" for c in copies)


def cmd_gallery_list(args, ctx) -> int:
    rows = ctx.api.get("/api/gallery").get("results", [])
    for row in rows:
        row["kept_words"] = _kept_words(row)
    ctx.out.table(
        rows,
        [("name", "TOOL"), ("kept_words", "YOUR COPIES"), ("description", "DESCRIPTION")],
        empty="The gallery has no tools.",
    )
    return 0


def cmd_gallery_pull(args, ctx) -> int:
    manifest = gallery_copy().pull(ctx)
    if ctx.out.json_mode:
        ctx.out.json(manifest)
    else:
        ctx.out.table(manifest["tools"], [("name", "TOOL"), ("files", "FILES")])
        ctx.out.line(f"pulled {len(manifest['tools'])} tool(s) from {manifest['url']} into {manifest['folder']}")
    return 0


def cmd_gallery_upgrade(args, ctx) -> int:
    rows = {r["name"]: r for r in ctx.api.get("/api/gallery").get("results", [])}
    where = f"workspace {args.to}" if args.to else "the account library"
    row = rows.get(args.tool)
    if row is None:
        on_shelf = ", ".join(sorted(rows)) or "none"
        raise CliError(
            f"{args.tool} is not a tool in the gallery (the shelf has: {on_shelf}).",
            code="not_found",
            details={"what": "tool", "name": args.tool, "where": "the gallery", "choices": sorted(rows)},
        )
    copies = row.get("copies") or []
    copy = next((c for c in copies if (c["workspace"] or None) == (args.to or None)), None)
    if copy is None:
        missing = missing_workspace(ctx, args.to) if args.to else None
        if missing is not None:
            raise missing
        kept = [c["workspace"] or "library" for c in copies]
        elsewhere = f" (copies are kept in: {', '.join(kept)})" if kept else ""
        raise CliError(
            f"{where[0].upper()}{where[1:]} keeps no copy of {args.tool}{elsewhere}; "
            f"install it first (the Library page's Install).",
            code="not_found",
            details={"what": "copy", "name": args.tool, "where": where, "choices": kept},
        )
    if copy.get("mark") == "gallery · current":
        raise CliError(f"{args.tool} in {where} is already the gallery's version; nothing to upgrade.", code="current")
    body = {"workspace": args.to} if args.to else {}
    result = ctx.api.post(f"/api/library/gallery/{quote_path(args.tool)}/upgrade", body)
    changed = (result or {}).get("changed") or []
    ctx.out.result(result, f"{args.tool} in {where} updated to the gallery's version ({len(changed)} file(s) changed).")
    return 0
