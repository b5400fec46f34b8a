"""A desk's files to and from the server: push, deploy, pull."""

from __future__ import annotations

import argparse
import base64
from pathlib import Path
from typing import Any

from .client import LONG_TIMEOUT, ApiFailure, CliError, quote_path
from .cmd_desk import desk_root, needed_secret_lines, summary
from .loader import desk_folder
from .workspace import (
    LIBRARY,
    Scope,
    desk_workspace,
    explain_not_found,
    naming_what_is_missing,
    remember_workspace,
    scope_of,
    stored_workspace,
)


def register(subparsers, common) -> None:
    for verb, text in (
        ("push", "send a desk's files to a workspace as one revision"),
        ("deploy", "push, once the server has checked the whole desk; refused on any error"),
    ):
        p = subparsers.add_parser(verb, parents=[common], help=text)
        p.add_argument("path", nargs="?", default=".", metavar="PATH")
        target = p.add_mutually_exclusive_group()
        target.add_argument("--to", metavar="WS", help="the workspace (default: the one in PATH/.foldrun/workspace)")
        target.add_argument("--library", action="store_true", help="the account library instead of a workspace")
        p.add_argument("-m", "--message", default="", help="why: kept with the revision")
        p.add_argument("--prune", action="store_true", help="delete files the workspace has and PATH does not")
        p.set_defaults(func=cmd_push, verb=verb)

    p = subparsers.add_parser("pull", parents=[common], help="write a workspace's files into a folder")
    p.add_argument("path", nargs="?", default=".", metavar="PATH")
    source = p.add_mutually_exclusive_group()
    source.add_argument("--to", dest="workspace", metavar="WS", help="the workspace (default: PATH/.foldrun/workspace)")
    # --to, as every other command names the workspace; --from, its first spelling, still works, unlisted.
    source.add_argument("--from", dest="workspace", metavar="WS", help=argparse.SUPPRESS)
    source.add_argument("--library", action="store_true", help="the account library instead of a workspace")
    p.add_argument("--at", type=int, metavar="N", help="the files as revision N left them (default: the newest)")
    p.set_defaults(func=cmd_pull)


def read_desk_files(root: Path, out=None, skipped: list[str] | None = None) -> tuple[list[dict], int]:
    """Every file a push sends and their total size (foldrun/cli/desk_folder.py says which)."""
    return desk_folder().read_desk_files(root, out, skipped)


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _revision_number(data: Any) -> Any:
    if not isinstance(data, dict):
        return None
    revision = data.get("revision", data.get("number"))
    if isinstance(revision, dict):
        return revision.get("number", revision.get("id"))
    return revision


def _changed_rows(data: Any) -> list[dict]:
    """The changed files of a push answer as rows `{path, change}`."""
    if not isinstance(data, dict):
        return []
    changed = data.get("changed", data.get("files", data.get("changes")))
    if isinstance(data.get("revision"), dict) and changed is None:
        changed = data["revision"].get("changed", data["revision"].get("files"))
    rows: list[dict] = []
    if isinstance(changed, dict):
        for key, value in changed.items():
            if isinstance(value, list):  # {"added": [...], "changed": [...], "deleted": [...]}
                rows.extend({"path": p if isinstance(p, str) else p.get("path"), "change": key} for p in value)
            else:  # {"path": "added"}
                rows.append({"path": key, "change": value})
    elif isinstance(changed, list):
        for item in changed:
            if isinstance(item, str):
                rows.append({"path": item, "change": "changed"})
            elif isinstance(item, dict):
                change = item.get("change") or item.get("action") or item.get("status") or item.get("kind") or "changed"
                rows.append({"path": item.get("path"), "change": change})
    return sorted(rows, key=lambda r: str(r["path"]))


DESK_MARKERS = ("AGENTS.md", "agents", "flows")


def _require_desk(root: Path) -> None:
    """A push of a folder that is no desk (a home folder, a project's root) is refused before any upload."""
    if not any((root / marker).exists() for marker in DESK_MARKERS):
        raise CliError(
            f"{root} is not a desk: it has no AGENTS.md, agents/ or flows/. Start one with "
            f"`foldrun init {root}`, or give the desk's folder (push --library sends the account library)."
        )


def _summary_line(done: str, sent: int, target: str, number: Any, rows: list[dict]) -> str:
    """What the server wrote, counted the way its `changed` list says (generated files apart)."""
    counts: dict[str, int] = {}
    for row in rows:
        if not row.get("generated"):
            counts[str(row["change"])] = counts.get(str(row["change"]), 0) + 1
    written = sum(counts.values())
    kept = max(sent - sum(n for change, n in counts.items() if change != "deleted"), 0)
    parts = [f"{n} {change}" for change, n in sorted(counts.items())]
    if kept:
        parts.append(f"{kept} unchanged")
    said = f" ({', '.join(parts)})" if parts and (kept or written != sent) else ""
    return f"{done} {_files(sent)} to {target}: revision {number}{said}."


def _mark_generated(rows: list[dict], sent: set[str]) -> list[dict]:
    """index.md/log.md the server wrote beside changed knowledge, not sent by this push."""
    for row in rows:
        path = str(row["path"])
        if path not in sent and path.rsplit("/", 1)[-1] in ("index.md", "log.md") and row["change"] != "deleted":
            row["generated"] = True
            row["change"] = f"{row['change']} (generated)"
    return rows


def _check_findings(ctx, scope: Scope, already: list) -> list:
    """`check`'s findings over what the scope now holds (the server resolves the account library);
    those the push answer already carried are not repeated."""
    try:
        answer = ctx.api.post(
            f"{scope.prefix}/check", {"files": [], "delete": [], "mode": "check"}, timeout=LONG_TIMEOUT
        )
    except ApiFailure:
        return []  # the push landed; a check that cannot run must not make it look failed
    return [f for f in desk_folder().findings_in(answer) if f not in already]


def cmd_push(args, ctx) -> int:
    verb = args.verb
    root = desk_root(args.path)
    workspace: str | None = None
    if args.library:
        scope, remember = LIBRARY, None
    else:
        _require_desk(root)
        workspace = desk_workspace(args.to, root)
        scope = Scope(f"/api/workspaces/{quote_path(workspace)}", workspace, workspace)
        remember = workspace if stored_workspace(root) is None else None
    endpoint, target = f"{scope.prefix}/{verb}", scope.label
    api = ctx.api  # fail on "not signed in" before reading a large folder
    skipped: list[str] = []
    files, total = read_desk_files(root, ctx.out, skipped)
    if skipped:
        ctx.out.note(
            f"Skipped {len(skipped)} symlink{'' if len(skipped) == 1 else 's'} (a push sends files, "
            f"not links; copy the file in to send it): {', '.join(skipped)}"
        )
    ctx.out.progress(f"Uploading {_files(len(files))} ({_size(total)}) to {target} in one atomic request…", force=True)
    body = {"message": args.message, "files": files, "delete": [], "prune": bool(args.prune)}
    try:
        answer = api.post(endpoint, body, timeout=LONG_TIMEOUT)
    except ApiFailure as failure:
        ctx.out.clear_progress()
        exc = explain_not_found(ctx, failure, scope)
        findings = desk_folder().findings_in(exc.details)
        if ctx.out.json_mode or not findings:
            # Under --json the one error object main prints, its `findings` beside `code` and `message`.
            raise exc from None
        # The server's message quotes the first finding; say each finding once.
        ctx.out.error(f"The {verb} was refused; nothing was written ({summary(findings)}):")
        for finding in findings:
            ctx.out.error(finding.format())
        return 1
    ctx.out.clear_progress()
    if remember:
        remember_workspace(root, remember)
    number = _revision_number(answer)
    unchanged = number is None or (isinstance(answer, dict) and bool(answer.get("unchanged")))
    rows = _mark_generated(_changed_rows(answer), {f["path"] for f in files})
    warnings = desk_folder().findings_in(answer)
    # What the runs (and a signed webhook) will need from the vault, as check says it: a deploy that went
    # through can still not run for want of a secret.
    needed = (
        desk_folder().needed_secrets(ctx, desk_folder().local_desk(root), workspace)
        if verb == "deploy" and workspace is not None
        else []
    )
    more = _check_findings(ctx, scope, warnings) if verb == "push" else []
    if ctx.out.json_mode:
        ctx.out.json(
            push_result(verb, workspace, len(files), None if unchanged else number, rows, warnings + more, needed)
            | {"skipped": skipped}
        )
        return 0
    done = "Deployed" if verb == "deploy" else "Pushed"
    if unchanged:
        ctx.out.line(
            f"Nothing changed in {target}; {_files(len(files))} {'was' if len(files) == 1 else 'were'} already there."
        )
    else:
        ctx.out.line(_summary_line(done, len(files), target, number, rows))
    if rows:
        ctx.out.line()
        ctx.out.table(rows, [("change", "CHANGE"), ("path", "PATH")])
        generated = [r for r in rows if r.get("generated")]
        if generated:
            ctx.out.line(
                f"The server wrote {_files(len(generated))} itself (index.md and log.md of each knowledge "
                "folder a push changes); pull them, never edit them."
            )
    if warnings:
        ctx.out.line()
        ctx.out.lines(f.format() for f in warnings)
    if verb == "deploy" and workspace is not None:
        for line in needed_secret_lines(needed):
            ctx.out.note(line)
    if more:
        ctx.out.line()
        ctx.out.line(f"check found {summary(more)} (a deploy refuses the errors; `foldrun check` says the same):")
        ctx.out.lines(f.format() for f in more)
    return 0


def push_result(
    verb: str, workspace: str | None, sent: int, revision: Any, rows: list[dict], findings: list, needed: list[dict]
) -> dict[str, Any]:
    """push's and deploy's answer under --json (docs/index.md lists the fields): where the files went, the
    revision made (None when nothing changed), each changed file, check's findings and the secrets needed."""
    errors = sum(1 for f in findings if f.level == "error")
    return {
        "verb": verb,
        "workspace": workspace,
        "library": workspace is None,
        "revision": revision,
        "unchanged": revision is None,
        "sent": sent,
        "changed": [
            {
                "path": r["path"],
                "change": str(r["change"]).removesuffix(" (generated)"),
                "generated": bool(r.get("generated")),
            }
            for r in rows
        ],
        "errors": errors,
        "warnings": len(findings) - errors,
        "findings": [f.to_dict() for f in findings],
        "secrets": needed,
        "missing": [n["name"] for n in needed if n["set"] is False],
    }


# pull ----------------------------------------------------------------------
def _file_content(answer: Any) -> bytes:
    if isinstance(answer, str):
        return answer.encode("utf-8")
    if isinstance(answer, dict):
        content = answer.get("content")
        if content is None and isinstance(answer.get("file"), dict):
            return _file_content(answer["file"])
        content = content or ""
        if answer.get("encoding") == "base64":
            return base64.b64decode(content)
        return str(content).encode("utf-8")
    raise CliError("The server's answer for a file had no content.")


def safe_target(root: Path, raw: str) -> Path:
    """Where `raw` goes under `root`; refuses a path that would leave it."""
    target = root / desk_folder().pulled_path(raw)
    resolved_root = root.resolve()
    # resolve() follows symlinks already on disk: a linked folder cannot lead out either.
    if not target.resolve().is_relative_to(resolved_root):
        raise CliError(f"Refused to write {raw!r}: it would land outside {root}.")
    return target


def cmd_pull(args, ctx) -> int:
    root = Path(args.path).expanduser()
    if root.exists() and not root.is_dir():
        raise CliError(f"{root} is a file; pull needs a folder.")
    scope = scope_of(args, root, "--to")
    label = scope.label
    base = f"{scope.prefix}/files"
    params = {"at": args.at} if args.at is not None else None
    with naming_what_is_missing(ctx, scope, revisions=[args.at]):
        listing = ctx.api.list(base, params=params)
    paths = [item["path"] if isinstance(item, dict) else str(item) for item in listing]
    root.mkdir(parents=True, exist_ok=True)
    # Every path is checked before anything is written.
    targets = [(p, safe_target(root, p)) for p in paths]
    written: list[dict] = []
    for index, (path, target) in enumerate(targets, 1):
        ctx.out.progress(f"Pulling {index}/{len(targets)}: {path}")
        with naming_what_is_missing(ctx, scope, path=path, revisions=[args.at]):
            data = _file_content(ctx.api.get(f"{base}/{quote_path(path)}", params=params))
        target = safe_target(root, path)  # again: an earlier file may have been a symlink
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written.append({"path": path, "size": len(data)})
    if not args.library and stored_workspace(root) is None:
        remember_workspace(root, label)
    at = f" at revision {args.at}" if args.at is not None else ""
    ctx.out.result(
        {"workspace": None if args.library else label, "at": args.at, "files": written},
        f"Pulled {_files(len(written))} from {label}{at} into {root}.",
    )
    return 0
