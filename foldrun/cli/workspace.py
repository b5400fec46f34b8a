"""Which workspace a command means: --to, else the one the desk folder was
pushed to; and, for the commands that also take --library, which scope
(a workspace or the account library) and what a 404 in it was about."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Iterable, NamedTuple

from .client import ApiFailure, CliError, quote_path

WORKSPACE_FILE = PurePosixPath(".foldrun") / "workspace"


def stored_workspace(root: Path) -> str | None:
    """The workspace `foldrun push` remembered in ROOT/.foldrun/workspace, if any."""
    try:
        name = (root / WORKSPACE_FILE).read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return name or None


def remember_workspace(root: Path, name: str) -> None:
    path = root / WORKSPACE_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(name + "\n", encoding="utf-8")


def desk_workspace(given: str | None, root: Path = Path("."), flag: str = "--to") -> str:
    """--to WS, else the workspace this desk folder was pushed to."""
    name = given or stored_workspace(root)
    if not name:
        shown = f"./{WORKSPACE_FILE}" if root == Path(".") else str(root / WORKSPACE_FILE)
        raise CliError(
            f"Name a workspace with {flag} WS; {shown} does not say one.",
            code="no_workspace",
            details={"what": "workspace", "where": shown},
        )
    return name


def scope_flags(parser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--to", dest="workspace", metavar="WS", help="the workspace (default: ./.foldrun/workspace)")
    scope.add_argument("--library", action="store_true", help="the account library instead of a workspace")


class Scope(NamedTuple):
    """The workspace (or the account library) a command reads or writes (a NamedTuple: no dataclasses import
    on every `foldrun` call)."""

    prefix: str  # /api/workspaces/<ws> or /api/library
    label: str  # how a sentence names it
    workspace: str | None  # None for the account library


LIBRARY = Scope("/api/library", "the account library", None)


def scope_of(args, root: Path, flag: str) -> Scope:
    if getattr(args, "library", False):
        return LIBRARY
    workspace = desk_workspace(args.workspace, root, flag)
    return Scope(f"/api/workspaces/{quote_path(workspace)}", workspace, workspace)


def explain_not_found(
    ctx, exc: ApiFailure, scope: Scope, *, path: str | None = None, revisions: Iterable[int | None] = ()
) -> ApiFailure:
    """Say which thing a 404 was about. The server answers every missing thing
    (and everything of another account) with the same "Not found."; the CLI
    knows what it asked for, and asks once more whether the workspace is there."""
    if exc.status != 404:
        return exc
    if scope.workspace is not None:
        missing = missing_workspace(ctx, scope.workspace)
        if missing is not None:
            return missing
    asked = [n for n in revisions if n is not None]
    if path is not None:
        at = f" at revision {max(asked)}" if asked else ""
        folder = str(PurePosixPath(path).parent)
        beside = files_in_folder(ctx, scope, folder, max(asked) if asked else None)
        shown = "its top folder" if folder == "." else f"{folder}/"
        there = f"; {shown} holds {', '.join(PurePosixPath(p).name for p in beside)}" if beside else ""
        return ApiFailure(
            f"{path} is not in {scope.label}{at}{there}.",
            status=404,
            code=exc.code,
            details={
                "what": "file",
                "name": path,
                "where": scope.label,
                "revision": max(asked) if asked else None,
                "choices": beside,
            },
        )
    if asked:
        head = head_revision(ctx, scope)
        there = f"its newest is revision {head}" if head else "it has no revisions yet"
        return ApiFailure(
            f"There is no revision {max(asked)} in {scope.label}; {there}.",
            status=404,
            code=exc.code,
            details={
                "what": "revision",
                "name": max(asked),
                "where": scope.label,
                "newest": head or None,  # the choices are 1 to newest: a range, not a list
            },
        )
    return exc


def files_in_folder(ctx, scope: Scope, folder: str, at: int | None) -> list[str]:
    """The files of the scope in `folder` ("." the top), by path — what a missing file's sentence offers."""
    try:
        listing = ctx.api.list(f"{scope.prefix}/files", params={"at": at} if at is not None else None)
    except ApiFailure:
        return []
    paths = [str(item["path"]) if isinstance(item, dict) else str(item) for item in listing]
    return sorted(p for p in paths if str(PurePosixPath(p).parent) == folder)


def head_revision(ctx, scope: Scope) -> int:
    """The scope's newest revision number (0 when it has none, or the server would not say)."""
    try:
        newest = ctx.api.get(f"{scope.prefix}/revisions", params={"page_size": 1}).get("results") or []
    except ApiFailure:
        return 0
    number = newest[0].get("number") if newest and isinstance(newest[0], dict) else None
    return number if isinstance(number, int) else 0


def workspace_names(ctx) -> list[str] | None:
    """The workspaces the signed-in token can see (None when the server would not say)."""
    try:
        return sorted(str(w.get("name")) for w in ctx.api.list("/api/workspaces") if isinstance(w, dict))
    except ApiFailure:
        return None


def missing_workspace(ctx, workspace: str) -> ApiFailure | None:
    """The failure that names a workspace the token cannot see, with the ones it can; None when it is there
    (the server answers every missing thing, and everything of another account, with the same "Not found.")."""
    try:
        ctx.api.get(f"/api/workspaces/{quote_path(workspace)}")
        return None
    except ApiFailure as probe:
        if probe.status != 404:
            return None
    names = workspace_names(ctx)
    if names:
        choices = f"this token can see {', '.join(names)}"
    elif names == []:
        choices = "this token sees none yet; `foldrun workspaces create NAME` makes one"
    else:
        choices = "`foldrun workspaces` lists them"
    return ApiFailure(
        f"There is no workspace called {workspace} in this account; {choices}.",
        status=404,
        code="not_found",
        details={"what": "workspace", "name": workspace, "where": ctx.api.url, "choices": names or []},
    )


@contextmanager
def naming_what_is_missing(ctx, scope: Scope, *, path: str | None = None, revisions: Iterable[int | None] = ()):
    try:
        yield
    except ApiFailure as exc:
        raise explain_not_found(ctx, exc, scope, path=path, revisions=revisions) from None
