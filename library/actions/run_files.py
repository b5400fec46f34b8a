"""What a run writes: memory/, state/ and storage/, never knowledge/."""

from __future__ import annotations

import base64

from accounts.models import Account, Workspace
from foldrun.contract import Finding
from foldrun.contract.paths import PathError, normalise_path

from ..models import ChangeKind
from .checks import RawFile, check_files
from .writes import RUN_WRITABLE, WriteRefused, WriteResult, do_write_files, file_error, in_dir


def do_write_run_files(
    run_public_id: str,
    *,
    account: Account,
    workspace: Workspace,
    files: dict[str, str | bytes | None],
    message: str = "",
) -> WriteResult:
    """What a run wrote to memory/ and state/ (and storage/), as one changeset
    of kind "run" attributed to `run_public_id`. Text or bytes (bytes that are
    not UTF-8 are kept as a binary file where the contract allows one);
    `None` deletes a file.

    Knowledge is given, not learned: a path under knowledge/ — or anywhere but
    memory/, state/ and storage/ — is refused and nothing is written.
    """
    findings: list[Finding] = []
    raw_files: list[RawFile] = []
    raw_deletes: list[str] = []
    for raw_path, content in files.items():
        try:
            path = normalise_path(raw_path)
        except PathError as exc:
            findings.append(file_error(str(raw_path), str(exc), "path.refused"))
            continue
        if in_dir(path, ("knowledge",)):
            findings.append(
                file_error(path, f"{path}: knowledge/ is given, not learned; a run may not write it.", "run.knowledge")
            )
        elif not in_dir(path, RUN_WRITABLE):
            findings.append(file_error(path, f"{path}: a run writes only memory/, state/ and storage/.", "run.outside"))
        elif content is None:
            raw_deletes.append(path)
        elif isinstance(content, bytes):
            raw_files.append(RawFile(path, base64.b64encode(content).decode("ascii"), "base64"))
        else:
            raw_files.append(RawFile(path, content))
    if findings:
        raise WriteRefused(findings)
    writes, problems = check_files(raw_files, raw_deletes, check_content=False)
    if problems:
        raise WriteRefused(problems)
    return do_write_files(
        account=account,
        workspace=workspace,
        writes=writes,
        kind=ChangeKind.RUN,
        message=message or f"Written by {run_public_id}",
        run_public_id=run_public_id,
    )
