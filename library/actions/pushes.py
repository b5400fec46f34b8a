"""The doors a person comes through: a push or a deploy (`check_and_write`),
a dashboard edit and a rollback — validated like a push, then one write.
"""

from __future__ import annotations

from typing import Callable

from accounts.models import Account, Workspace
from foldrun.contract import Finding
from foldrun.contract.findings import sort_findings

from ..models import ChangeKind, scope_key_for
from ..services import file_at
from .checks import RawFile, check_files, generated_hashes
from .writes import FileWrite, WriteRefused, WriteResult, do_write_files, resulting_files

DEPLOY_REFUSED = "The deploy was refused; nothing was written"


def check_and_write(
    *,
    account: Account,
    workspace: Workspace | None,
    raw_files: list[RawFile],
    raw_deletes: list[str],
    kind: str,
    message: str,
    author,
    prune: bool = False,
    deploy_check: Callable[[dict[str, str]], list[Finding]] | None = None,
) -> WriteResult:
    """Validate what a person sent, then write it as one changeset.

    Raises WriteRefused (nothing written) when any file is refused, or when
    `deploy_check` — the whole contract over the resulting desk's text files
    (path → text), returning every finding — finds an error. A refused deploy
    names every finding `foldrun check` prints for the same files: the
    files the push gate refused as well as what the contract says about the
    rest, in the contract's order (`sort_findings`).
    """
    generated = generated_hashes(account, workspace, raw_files)
    writes, findings = check_files(raw_files, raw_deletes, generated=generated)
    errors = [f for f in findings if f.level == "error"]
    if errors and deploy_check is None:
        raise WriteRefused(sort_findings(errors))
    if errors:
        changes = [(w, "") for w in writes]
        raise WriteRefused(
            sort_findings(findings + deploy_check(resulting_files(scope_key_for(account, workspace), changes))),
            code="check_failed",
            lead=DEPLOY_REFUSED,
        )
    verify = None
    if deploy_check is not None:

        def verify(files: dict[str, str]) -> list[Finding]:
            found = sort_findings(findings + deploy_check(files))
            if any(f.level == "error" for f in found):
                raise WriteRefused(found, code="check_failed", lead=DEPLOY_REFUSED)
            return found

    result = do_write_files(
        account=account,
        workspace=workspace,
        writes=writes,
        kind=kind,
        message=message,
        author=author,
        prune=prune,
        verify=verify,
        # State is the bookmark between runs: it travels with a deploy and a
        # deploy never overwrites it (a laptop's copy is older than the runs').
        keep_existing=("state",) if kind in (ChangeKind.PUSH, ChangeKind.DEPLOY) else (),
    )
    result.warnings = sort_findings(list(findings) + list(result.warnings))
    return result


def do_edit_file(
    *,
    account: Account,
    workspace: Workspace | None,
    path: str,
    content: str | None,
    author,
    message: str = "",
) -> WriteResult:
    """A dashboard edit (kind "edit") of one file; `content=None` deletes it.

    The same validation as a push; raises WriteRefused naming the file.
    """
    raw_files = [RawFile(path, content)] if content is not None else []
    raw_deletes = [path] if content is None else []
    return check_and_write(
        account=account,
        workspace=workspace,
        raw_files=raw_files,
        raw_deletes=raw_deletes,
        kind=ChangeKind.EDIT,
        message=message or f"Edit {path}",
        author=author,
    )


def do_rollback(
    *,
    account: Account,
    workspace: Workspace | None,
    path: str,
    to: int,
    author,
    message: str = "",
) -> WriteResult:
    """Write `path` as it was at changeset `to`, as a new revision (kind
    "rollback"). Absent at `to` means the rollback deletes it.

    Preconditions: the path has a history in this scope and `to` exists.
    """
    revision = file_at(account, workspace, path, to)
    if revision is not None and revision.encoding == "base64":
        writes = [FileWrite(path, revision.content, revision.gallery_tool, revision.gallery_sha256, "base64")]
        return do_write_files(
            account=account,
            workspace=workspace,
            writes=writes,
            kind=ChangeKind.ROLLBACK,
            message=message or f"Roll {path} back to revision {to}",
            author=author,
        )
    raw_files = [RawFile(path, revision.content)] if revision is not None else []
    raw_deletes = [path] if revision is None else []
    return check_and_write(
        account=account,
        workspace=workspace,
        raw_files=raw_files,
        raw_deletes=raw_deletes,
        kind=ChangeKind.ROLLBACK,
        message=message or f"Roll {path} back to revision {to}",
        author=author,
    )
