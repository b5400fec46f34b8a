"""A desk on this machine: init starts one in a folder, check checks its files offline."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .client import CliError
from .loader import desk_folder
from .workspace import stored_workspace

TEMPLATES = Path(__file__).parent / "templates" / "desk"
NAME_PLACEHOLDER = "__DESK__"

# check asks the server for its browsers; a server that is slow to answer is skipped.
VERSION_TIMEOUT = 5.0  # seconds


def register(subparsers, common) -> None:
    p = subparsers.add_parser("init", parents=[common], help="start a new desk in a folder")
    p.add_argument("path", nargs="?", default=".", metavar="PATH")
    p.add_argument("--name", help="the desk's name (default: the folder's name)")
    p.set_defaults(func=cmd_init)

    p = subparsers.add_parser("check", parents=[common], help="check a desk's files offline")
    p.add_argument("path", nargs="?", default=".", metavar="PATH")
    p.add_argument(
        "--library",
        type=Path,
        metavar="DIR",
        help="a local copy of the account library (`foldrun pull --library DIR`) to resolve against",
    )
    p.add_argument(
        "--to",
        metavar="WS",
        help="the workspace whose vault the needed secrets are looked up in "
        "(default: PATH/.foldrun/workspace; else the laptop vault)",
    )
    p.set_defaults(func=cmd_check)


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
        raise CliError(
            f"{root / clashes[0]} already exists; init never overwrites a file, so pick a new or empty folder."
        )
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    shown = str(root)
    ctx.out.result(
        {"path": str(root.resolve()), "name": name, "files": list(files)},
        [f"Created the {name} desk in {shown}:"]
        + [f"  {p}" for p in files]
        + [
            "",
            "Next:",
            f"  foldrun check {shown}",
            f"  foldrun workspaces create {name}",
            f"  foldrun deploy {shown} --to {name}",
        ],
    )
    return 0


# check ---------------------------------------------------------------------
def desk_root(path: str) -> Path:
    """The desk folder PATH names (check's and push's); anything else is refused by name."""
    root = Path(path).expanduser()
    if not root.exists():
        raise CliError(f"{root} does not exist.")
    if not root.is_dir():
        raise CliError(f"{root} is not a folder; give the desk's folder.")
    return root


def server_platform(ctx) -> dict | None:
    """The signed-in server's browsers, for check's platform context (a pinned
    user_agent: of another Chrome major warns); {} offline or unreachable,
    where check says nothing about it."""
    if not ctx.signed_in:
        return None
    try:
        answer = ctx.api.request("GET", "/api/version", timeout=VERSION_TIMEOUT)
    except CliError:
        return None
    return answer.get("browser_versions") if isinstance(answer, dict) else None


def cmd_check(args, ctx) -> int:
    root = desk_root(args.path)
    folder = desk_folder()
    desk = folder.local_desk(root, desk_root(str(args.library)) if args.library is not None else None)
    findings = folder.check_desk(desk, server_platform(ctx))
    needed = folder.needed_secrets(ctx, desk, args.to or stored_workspace(root))
    errors = sum(1 for f in findings if f.level == "error")
    if ctx.out.json_mode:
        # The server's check answer (ok, errors, warnings, findings), and what the human output says on stderr.
        ctx.out.json(
            {
                "ok": errors == 0,
                "errors": errors,
                "warnings": len(findings) - errors,
                "findings": [f.to_dict() for f in findings],
                "secrets": needed,
                "missing": [n["name"] for n in needed if n["set"] is False],
            }
        )
    else:
        ctx.out.lines(f.format() for f in findings)
        ctx.out.line(summary(findings))
        # On stderr, like every remark: stdout stays the findings and their count.
        for line in needed_secret_lines(needed):
            ctx.out.note(line)
    return 1 if errors else 0


def summary(findings: list) -> str:
    """The count under check's findings; push says its findings with it too."""
    errors = sum(1 for f in findings if f.level == "error")
    warnings = sum(1 for f in findings if f.level == "warning")
    return f"{errors} error{'' if errors == 1 else 's'}, {warnings} warning{'' if warnings == 1 else 's'}"


def needed_secret_lines(needed: list[dict[str, Any]]) -> list[str]:
    """The secrets the desk needs, and which of them the vault its runs read does not hold."""
    if not needed:
        return ["This desk needs no secrets."]
    lines = [f"This desk needs {len(needed)} secret{'' if len(needed) == 1 else 's'}:"]
    for n in needed:
        state = {None: "", True: "  (set)"}.get(n["set"], f"  MISSING from {n['vault']} — {n['fix']}")
        lines.append(f"  {n['name']}  for {', '.join(n['for'])}{state}")
    return lines
