"""Desks: init, check, push, deploy, pull, log, diff, workspaces."""
from __future__ import annotations

import base64
import difflib
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterable

import httpx
from foldrun.contract import Desk, Finding, check, platform_from_versions
from foldrun.contract.paths import IGNORED_DIRS, PathError, is_ignored, normalise_path, read_folder
from foldrun.gallery import gallery_files

from .client import LONG_TIMEOUT, ApiFailure, CliError, quote_path
from .loader import laptop
from .output import short_time

TEMPLATES = Path(__file__).parent / "templates" / "desk"
NAME_PLACEHOLDER = "__DESK__"
WORKSPACE_FILE = PurePosixPath(".foldrun") / "workspace"
# check asks the server for its browsers; a server that is slow to answer is skipped.
VERSION_TIMEOUT = httpx.Timeout(5.0, connect=3.0)


def register(subparsers, common) -> None:
    p = subparsers.add_parser("init", parents=[common], help="start a new desk in a folder")
    p.add_argument("path", nargs="?", default=".", metavar="PATH")
    p.add_argument("--name", help="the desk's name (default: the folder's name)")
    p.set_defaults(func=cmd_init)

    p = subparsers.add_parser("check", parents=[common], help="check a desk's files offline")
    p.add_argument("path", nargs="?", default=".", metavar="PATH")
    p.add_argument("--library", type=Path, metavar="DIR",
                   help="a local copy of the account library (`foldrun pull --library DIR`) to resolve against")
    p.add_argument("--to", metavar="WS", help="the workspace whose vault the needed secrets are looked up in "
                                              "(default: PATH/.foldrun/workspace; else the laptop vault)")
    p.set_defaults(func=cmd_check)

    for verb, text in (("push", "send a desk's files to a workspace as one revision"),
                       ("deploy", "push, once the server has checked the whole desk; refused on any error")):
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
    source.add_argument("--from", dest="workspace", metavar="WS", help="the workspace (default: PATH/.foldrun/workspace)")
    source.add_argument("--library", action="store_true", help="the account library instead of a workspace")
    p.add_argument("--at", type=int, metavar="N", help="the files as revision N left them (default: the newest)")
    p.set_defaults(func=cmd_pull)

    p = subparsers.add_parser("log", parents=[common], help="a workspace's revisions, or one file's")
    p.add_argument("file", nargs="?", metavar="PATH_IN_DESK")
    _scope_flags(p)
    p.set_defaults(func=cmd_log)

    p = subparsers.add_parser("diff", parents=[common], help="what changed between two revisions")
    p.add_argument("file", nargs="?", metavar="PATH_IN_DESK")
    _scope_flags(p)
    p.add_argument("--from", dest="from_rev", type=int, metavar="N", help="the older revision (default: the one before --to-rev)")
    p.add_argument("--to-rev", dest="to_rev", type=int, metavar="M", help="the newer revision (default: the newest)")
    p.set_defaults(func=cmd_diff)

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


def _scope_flags(parser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--to", dest="workspace", metavar="WS", help="the workspace (default: ./.foldrun/workspace)")
    scope.add_argument("--library", action="store_true", help="the account library instead of a workspace")


@dataclass(frozen=True)
class Scope:
    """The workspace (or the account library) a command reads or writes."""

    prefix: str                 # /api/workspaces/<ws> or /api/library
    label: str                  # how a sentence names it
    workspace: str | None       # None for the account library


LIBRARY = Scope("/api/library", "the account library", None)


def _scope(args, root: Path, flag: str) -> Scope:
    if getattr(args, "library", False):
        return LIBRARY
    workspace = _workspace_for(root, args.workspace, flag)
    return Scope(f"/api/workspaces/{quote_path(workspace)}", workspace, workspace)


def explain_not_found(ctx, exc: ApiFailure, scope: Scope, *, path: str | None = None,
                      revisions: Iterable[int | None] = ()) -> ApiFailure:
    """Say which thing a 404 was about. The server answers every missing thing
    (and everything of another account) with the same "Not found."; the CLI
    knows what it asked for, and asks once more whether the workspace is there."""
    if exc.status != 404:
        return exc
    if scope.workspace is not None:
        try:
            ctx.api.get(scope.prefix)
        except ApiFailure as probe:
            if probe.status == 404:
                return ApiFailure(f"There is no workspace called {scope.workspace} in this account; "
                                  "`foldrun workspaces` lists them.", status=404, code=exc.code)
            return exc
    asked = [n for n in revisions if n is not None]
    if path is not None:
        at = f" at revision {max(asked)}" if asked else ""
        return ApiFailure(f"{path} is not in {scope.label}{at}.", status=404, code=exc.code)
    if asked:
        return ApiFailure(f"There is no revision {max(asked)} in {scope.label}.", status=404, code=exc.code)
    return exc


@contextmanager
def naming_what_is_missing(ctx, scope: Scope, *, path: str | None = None, revisions: Iterable[int | None] = ()):
    try:
        yield
    except ApiFailure as exc:
        raise explain_not_found(ctx, exc, scope, path=path, revisions=revisions) from None


# findings ------------------------------------------------------------------
def finding_from(data: Any) -> Finding | None:
    """A Finding from the server's JSON form of one."""
    if isinstance(data, Finding):
        return data
    if not isinstance(data, dict) or "message" not in data:
        return None
    return Finding(
        file=str(data.get("file") or data.get("path") or ""),
        line=data.get("line") or None,
        level=str(data.get("level") or "error"),  # type: ignore[arg-type]
        message=str(data["message"]),
        code=str(data.get("code") or ""),
    )


def findings_in(data: Any) -> list[Finding]:
    """Every finding a server answer carries, wherever it put them."""
    found: list[Finding] = []
    if isinstance(data, list):
        for item in data:
            finding = finding_from(item)
            if finding is not None:
                found.append(finding)
        return found
    if isinstance(data, dict):
        for key in ("findings", "errors", "warnings"):
            if isinstance(data.get(key), list):
                for finding in findings_in(data[key]):
                    if finding not in found:
                        found.append(finding)
    return found


def summary(findings: list[Finding]) -> str:
    errors = sum(1 for f in findings if f.level == "error")
    warnings = sum(1 for f in findings if f.level == "warning")
    return f"{errors} error{'' if errors == 1 else 's'}, {warnings} warning{'' if warnings == 1 else 's'}"


# init ----------------------------------------------------------------------
def _slug(text: str) -> str:
    slug = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")
    return slug[:63] or "my-desk"


def scaffold_files(name: str) -> dict[str, str]:
    """The starter desk's files, by relative path, with the name filled in."""
    files: dict[str, str] = {}
    for source in sorted(TEMPLATES.rglob("*")):
        if source.is_file() and "__pycache__" not in source.parts:
            relative = source.relative_to(TEMPLATES).as_posix()
            files[relative] = source.read_text(encoding="utf-8").replace(NAME_PLACEHOLDER, name)
    return files


def cmd_init(args, ctx) -> int:
    root = Path(args.path).expanduser()
    name = _slug(args.name or root.resolve().name)
    files = scaffold_files(name)
    if root.exists() and not root.is_dir():
        raise CliError(f"{root} is a file; init needs a folder.")
    clashes = [p for p in files if (root / p).exists()]
    if clashes:
        raise CliError(f"{root / clashes[0]} already exists; init never overwrites a file, so pick a new or empty folder.")
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    shown = str(root)
    ctx.out.result(
        {"path": str(root.resolve()), "name": name, "files": list(files)},
        [f"Created the {name} desk in {shown}:"]
        + [f"  {p}" for p in files]
        + ["", "Next:", f"  foldrun check {shown}", f"  foldrun workspaces create {name}",
           f"  foldrun push {shown} --to {name}"],
    )
    return 0


# check ---------------------------------------------------------------------
def _desk_root(path: str) -> Path:
    root = Path(path).expanduser()
    if not root.exists():
        raise CliError(f"{root} does not exist.")
    if not root.is_dir():
        raise CliError(f"{root} is not a folder; give the desk's folder.")
    return root


def local_desk(root: Path, library: Path | None = None) -> Desk:
    """The desk in `root` as the server would see it: the gallery shelf shipped
    with this package beneath it, and a local copy of the account library
    when one is given."""
    library_files = read_folder(_desk_root(str(library))) if library is not None else {}
    return Desk.from_folder(root, library=library_files, gallery=gallery_files())


def server_platform(ctx) -> dict[str, int]:
    """The signed-in server's browsers, for check's platform context (a pinned
    user_agent: of another Chrome major warns); {} offline or unreachable,
    where check says nothing about it."""
    if not ctx.signed_in:
        return {}
    try:
        answer = ctx.api.request("GET", "/api/version", timeout=VERSION_TIMEOUT)
    except CliError:
        return {}
    return platform_from_versions(answer.get("browser_versions") if isinstance(answer, dict) else None)


def cmd_check(args, ctx) -> int:
    root = _desk_root(args.path)
    desk = local_desk(root, args.library)
    findings = check(desk, mode="check", platform=server_platform(ctx))
    needed = laptop().needed_secrets(ctx, desk, args.to or _stored_workspace(root))
    errors = sum(1 for f in findings if f.level == "error")
    if ctx.out.json_mode:
        # The server's check answer (ok, errors, warnings, findings), and what the human output says on stderr.
        ctx.out.json({"ok": errors == 0, "errors": errors, "warnings": len(findings) - errors,
                      "findings": [f.to_dict() for f in findings], "secrets": needed,
                      "missing": [n["name"] for n in needed if n["set"] is False]})
    else:
        ctx.out.lines(f.format() for f in findings)
        ctx.out.line(summary(findings))
        # On stderr, like every remark: stdout stays the findings and their count.
        for line in needed_secret_lines(needed):
            ctx.out.note(line)
    return 1 if errors else 0


def needed_secret_lines(needed: list[dict[str, Any]]) -> list[str]:
    """The secrets the desk needs, and which of them the vault its runs read does not hold."""
    if not needed:
        return ["This desk needs no secrets."]
    lines = [f"This desk needs {len(needed)} secret{'' if len(needed) == 1 else 's'}:"]
    for n in needed:
        state = {None: "", True: "  (set)"}.get(n["set"], f"  MISSING from {n['vault']} — {n['fix']}")
        lines.append(f"  {n['name']}  for {', '.join(n['for'])}{state}")
    return lines


# reading a folder for a push -----------------------------------------------
def read_desk_files(root: Path, out=None, skipped: list[str] | None = None) -> tuple[list[dict], int]:
    """Every file a push sends, as `{"path", "content", "encoding"}`, and their total size.

    Skips what `foldrun.contract.paths` never pushes (.git, .venv,
    node_modules, .foldrun …) and symlinks (named in `skipped`, when given, so
    the push can say so). UTF-8 text is sent as is, anything else
    base64-encoded. A path the contract refuses stops the push here, by name.
    """
    root = root.resolve()
    found: list[Path] = []
    for folder, dirs, names in os.walk(root):
        # Prune in place: never walk into node_modules just to skip it.
        linked = sorted(d for d in dirs if d not in IGNORED_DIRS and os.path.islink(os.path.join(folder, d)))
        dirs[:] = sorted(d for d in dirs if d not in IGNORED_DIRS and not os.path.islink(os.path.join(folder, d)))
        for name in sorted(names + linked):
            path = Path(folder) / name
            if path.is_symlink():
                relative_link = path.relative_to(root).as_posix()
                if skipped is not None and not is_ignored(PurePosixPath(relative_link)):
                    skipped.append(relative_link + ("/" if name in linked else ""))
                continue
            if not path.is_file():
                continue
            if is_ignored(PurePosixPath(path.relative_to(root).as_posix())):
                continue
            found.append(path)
    files: list[dict] = []
    total = 0
    for index, path in enumerate(found, 1):
        raw = path.relative_to(root).as_posix()
        try:
            relative = normalise_path(raw)
        except PathError as exc:
            raise CliError(f"Cannot push: {exc}") from None
        data = path.read_bytes()
        total += len(data)
        try:
            files.append({"path": relative, "content": data.decode("utf-8"), "encoding": "utf-8"})
        except UnicodeDecodeError:
            files.append({"path": relative, "content": base64.b64encode(data).decode("ascii"), "encoding": "base64"})
        if out is not None:
            out.progress(f"Reading files: {index}/{len(found)} ({_size(total)})")
    return files, total


def _files(n: int) -> str:
    return f"{n} file" if n == 1 else f"{n} files"


def _size(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024  # type: ignore[assignment]
    return f"{n} B"


def _stored_workspace(root: Path) -> str | None:
    try:
        name = (root / WORKSPACE_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return name or None


def _remember_workspace(root: Path, name: str) -> None:
    path = root / WORKSPACE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(name + "\n", encoding="utf-8")


def _workspace_for(root: Path, given: str | None, flag: str) -> str:
    name = given or _stored_workspace(root)
    if not name:
        raise CliError(f"Name a workspace with {flag} WS; {root / WORKSPACE_FILE} does not say one.")
    return name


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
            else:                        # {"path": "added"}
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
        raise CliError(f"{root} is not a desk: it has no AGENTS.md, agents/ or flows/. Start one with "
                       f"`foldrun init {root}`, or give the desk's folder (push --library sends the account library).")


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


def _check_findings(ctx, scope: Scope, already: list[Finding]) -> list[Finding]:
    """`check`'s findings over what the scope now holds (the server resolves the account library);
    those the push answer already carried are not repeated."""
    try:
        answer = ctx.api.post(f"{scope.prefix}/check", {"files": [], "delete": [], "mode": "check"},
                              timeout=LONG_TIMEOUT)
    except ApiFailure:
        return []  # the push landed; a check that cannot run must not make it look failed
    return [f for f in findings_in(answer) if f not in already]


def cmd_push(args, ctx) -> int:
    verb = args.verb
    root = _desk_root(args.path)
    if args.library:
        scope, remember = LIBRARY, None
    else:
        _require_desk(root)
        workspace = _workspace_for(root, args.to, "--to")
        scope = Scope(f"/api/workspaces/{quote_path(workspace)}", workspace, workspace)
        remember = workspace if _stored_workspace(root) is None else None
    endpoint, target = f"{scope.prefix}/{verb}", scope.label
    api = ctx.api  # fail on "not signed in" before reading a large folder
    skipped: list[str] = []
    files, total = read_desk_files(root, ctx.out, skipped)
    if skipped:
        ctx.out.note(f"Skipped {len(skipped)} symlink{'' if len(skipped) == 1 else 's'} (a push sends files, "
                     f"not links; copy the file in to send it): {', '.join(skipped)}")
    ctx.out.progress(f"Uploading {_files(len(files))} ({_size(total)}) to {target} in one atomic request…", force=True)
    body = {"message": args.message, "files": files, "delete": [], "prune": bool(args.prune)}
    try:
        answer = api.post(endpoint, body, timeout=LONG_TIMEOUT)
    except ApiFailure as failure:
        ctx.out.clear_progress()
        exc = explain_not_found(ctx, failure, scope)
        findings = findings_in(exc.details)
        if ctx.out.json_mode:
            ctx.out.json({"code": exc.code, "message": exc.message, "details": exc.details})
        if findings:
            # The server's message quotes the first finding; say each finding once.
            ctx.out.error(f"The {verb} was refused; nothing was written ({summary(findings)}):")
            for finding in findings:
                ctx.out.error(finding.format())
        else:
            ctx.out.error(exc.message)
        return 1
    ctx.out.clear_progress()
    if remember:
        _remember_workspace(root, remember)
    if ctx.out.json_mode:
        ctx.out.json(answer)
        return 0
    number = _revision_number(answer)
    rows = _mark_generated(_changed_rows(answer), {f["path"] for f in files})
    done = "Deployed" if verb == "deploy" else "Pushed"
    if number is None or (isinstance(answer, dict) and answer.get("unchanged")):
        ctx.out.line(f"Nothing changed in {target}; {_files(len(files))} {'was' if len(files) == 1 else 'were'} already there.")
    else:
        ctx.out.line(_summary_line(done, len(files), target, number, rows))
    if rows:
        ctx.out.line()
        ctx.out.table(rows, [("change", "CHANGE"), ("path", "PATH")])
        generated = [r for r in rows if r.get("generated")]
        if generated:
            ctx.out.line(f"The server wrote {_files(len(generated))} itself (index.md and log.md of each knowledge "
                         "folder a push changes); pull them, never edit them.")
    warnings = findings_in(answer)
    if warnings:
        ctx.out.line()
        ctx.out.lines(f.format() for f in warnings)
    if verb == "push":
        more = _check_findings(ctx, scope, warnings)
        if more:
            ctx.out.line()
            ctx.out.line(f"check found {summary(more)} (a deploy refuses the errors; `foldrun check` says the same):")
            ctx.out.lines(f.format() for f in more)
    return 0


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
    try:
        relative = normalise_path(raw)
    except PathError as exc:
        raise CliError(f"Refused to write a pulled file: {exc}") from None
    target = (root / relative)
    resolved_root = root.resolve()
    # resolve() follows symlinks already on disk: a linked folder cannot lead out either.
    if not target.resolve().is_relative_to(resolved_root):
        raise CliError(f"Refused to write {raw!r}: it would land outside {root}.")
    return target


def cmd_pull(args, ctx) -> int:
    root = Path(args.path).expanduser()
    if root.exists() and not root.is_dir():
        raise CliError(f"{root} is a file; pull needs a folder.")
    scope = _scope(args, root, "--from")
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
    if not args.library and _stored_workspace(root) is None:
        _remember_workspace(root, label)
    at = f" at revision {args.at}" if args.at is not None else ""
    ctx.out.result({"workspace": None if args.library else label, "at": args.at, "files": written},
                   f"Pulled {_files(len(written))} from {label}{at} into {root}.")
    return 0


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
    scope = _scope(args, Path("."), "--to")
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
        shown.append({
            "number": number,
            "kind": row.get("kind"),
            "who": _who(row),
            "when": short_time(row.get("created_at") or row.get("when")),
            "files": _count(row.get("files", row.get("file_count", row.get("size")))),
            "change": "deleted" if row.get("deleted") else None,
            "message": row.get("message") or "",
        })
    if args.file:
        columns = [("number", "REV"), ("kind", "KIND"), ("who", "WHO"), ("when", "WHEN"),
                   ("files", "SIZE"), ("message", "MESSAGE")]
    else:
        columns = [("number", "REV"), ("kind", "KIND"), ("who", "WHO"), ("when", "WHEN"),
                   ("files", "FILES"), ("message", "MESSAGE")]
    ctx.out.table(shown, columns, empty=f"No revisions of {args.file or scope.label} yet.")
    return 0


# diff ----------------------------------------------------------------------
def _unified(entry: dict) -> list[str]:
    """A unified diff from one file entry holding `diff`, or `before`/`after`."""
    if isinstance(entry.get("diff"), str):
        return entry["diff"].splitlines()
    path = entry.get("path", "?")
    before = entry.get("before", entry.get("old")) or ""
    after = entry.get("after", entry.get("new")) or ""
    return list(difflib.unified_diff(str(before).splitlines(), str(after).splitlines(),
                                     f"a/{path}", f"b/{path}", lineterm=""))


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
    scope = _scope(args, Path("."), "--to")
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


# workspaces ----------------------------------------------------------------
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
    import sys

    name = args.name
    path = f"/api/workspaces/{quote_path(name)}"
    try:
        found = ctx.api.get(path)
    except ApiFailure as exc:
        if exc.status == 404:
            raise CliError(f"There is no workspace called {name} in this account; `foldrun workspaces` lists them.") from None
        raise
    role = (ctx.api.get("/api/me").get("account") or {}).get("role")
    if role not in ("owner", "admin"):
        raise CliError(f"Your role ({role}) cannot delete a workspace; ask an owner or admin of the account.")
    runs = int(found.get("run_count") or 0)
    what = (f"Deleting {name} removes its files and every revision, {_runs(runs)} with their traces and artifacts, "
            "its schedules, its secrets and its delivery log. There is no undo.")
    if not args.yes:
        ctx.out.error(what)
        sys.stderr.write(f"Type the workspace's name ({name}) to delete it: ")
        sys.stderr.flush()
        typed = sys.stdin.readline().strip() if sys.stdin else ""
        if typed != name:
            said = f"You typed {typed!r}, not {name}" if typed else "No name was typed"
            raise CliError(f"{said}; nothing was deleted (pass --yes to skip the question in a script).")
    ctx.api.delete(path)
    if _stored_workspace(Path(".")) == name:
        ctx.out.note(f"./{WORKSPACE_FILE} still names {name}; push this folder with --to to another workspace.")
    ctx.out.result({"deleted": name, "id": found.get("id"), "run_count": runs},
                   f"Deleted workspace {name} and its {_runs(runs)}.")
    return 0
