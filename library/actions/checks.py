"""What a person or a run sent, validated: `check_files` turns raw files
and deletions into `FileWrite`s and the findings that refuse or ride along
with them.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass

from django.conf import settings

from accounts.models import Account, Workspace
from foldrun.contract import Desk, Finding
from foldrun.contract.desk import CONCEPT
from foldrun.contract.generated import generated_edit_finding, is_concept, is_reserved
from foldrun.contract.model import concept_of
from foldrun.contract.paths import BINARY_MARKER, PathError, normalise_path
from foldrun.contract.payload import check_payload, decode

from ..models import Revision, scope_key_for
from ..services import sha256_text
from .writes import FileWrite, file_error


@dataclass
class RawFile:
    """A file as the API received it."""

    path: str
    content: str
    encoding: str = "utf-8"


def check_files(
    raw_files: list[RawFile],
    raw_deletes: list[str],
    *,
    generated: dict[str, set[str]] | None = None,
    check_content: bool = True,
) -> tuple[list[FileWrite], list[Finding]]:
    """Validate files and deletions sent by a person; returns writes and
    findings (errors refuse the write, warnings ride along with it).

    Refuses: paths with `..`, absolute or odd characters, a path twice, bytes
    where text belongs, a file over FOLDRUN_MAX_FILE_BYTES (the contract's
    `check_payload`, so a laptop and the server say the same sentence),
    malformed frontmatter, a concept with no `type:`, and any hand edit of a
    generated index.md/log.md. A generated file sent back unchanged (a pulled
    desk pushed again) is dropped silently: the platform rewrites it anyway.
    `current` is the scope's live heads by path. `check_content=False` skips
    the frontmatter checks (what a run writes to memory/ is kept even when
    its frontmatter is poor).
    """
    generated = generated or {}
    limit = settings.FOLDRUN_MAX_FILE_BYTES
    findings: list[Finding] = []
    writes: list[FileWrite] = []
    texts: dict[str, str] = {}
    seen: set[str] = set()
    for raw in raw_files:
        try:
            path = normalise_path(raw.path)
        except PathError as exc:
            findings.append(file_error(str(raw.path), str(exc), "path.refused"))
            continue
        if path in seen:
            findings.append(
                file_error(path, "appears more than once in this request; send each path once.", "path.duplicate")
            )
            continue
        seen.add(path)
        if (raw.encoding or "utf-8") == "base64":
            try:
                data = base64.b64decode(raw.content, validate=True)
            except (binascii.Error, ValueError):
                findings.append(
                    file_error(path, "is marked base64 but its content is not valid base64.", "encoding.invalid")
                )
                continue
        else:
            data = raw.content.encode("utf-8", errors="surrogatepass")
        problem = check_payload(path, data, limit)
        if problem is not None:
            findings.append(problem)
            continue
        text = decode(data)
        if text == BINARY_MARKER:
            # Bytes where bytes may live (storage/, data files): kept as base64.
            writes.append(FileWrite(path, base64.b64encode(data).decode("ascii"), encoding="base64"))
            continue
        if is_reserved(path):
            # Not a hand edit when foldrun itself wrote this text here once:
            # a pulled desk pushed back, even after the log moved on.
            if sha256_text(text) in generated.get(path, ()):
                continue
            findings.append(generated_edit_finding(path))
            continue
        texts[path] = text
        writes.append(FileWrite(path, text))
    for raw_path in raw_deletes:
        try:
            path = normalise_path(raw_path)
        except PathError as exc:
            findings.append(file_error(str(raw_path), str(exc), "path.refused"))
            continue
        if path in seen:
            findings.append(
                file_error(path, "is both written and deleted in this request; do one or the other.", "path.duplicate")
            )
            continue
        seen.add(path)
        if is_reserved(path):
            findings.append(generated_edit_finding(path))
            continue
        writes.append(FileWrite(path, None))
    if check_content and texts:
        findings.extend(_content_findings(texts))
    return writes, findings


def _content_findings(texts: dict[str, str]) -> list[Finding]:
    """Frontmatter that cannot be read, and the contract's own word on each
    concept (an error for no `type:`, warnings for a missing title or
    description) — the per-file part of the contract a plain push runs."""
    desk = Desk(files=texts)
    findings: list[Finding] = []
    for document in desk.documents:
        if document.error is not None:
            findings.append(document.error)
        elif document.kind == CONCEPT and is_concept(document.path):
            findings.extend(concept_of(desk, document).problems)
    return findings


def generated_hashes(account: Account, workspace: Workspace | None, raw_files: list[RawFile]) -> dict[str, set[str]]:
    """For the generated paths among `raw_files`, every hash foldrun wrote
    there in this scope (one query; none when no generated path was sent)."""
    reserved = {normalise_path(r.path) for r in raw_files if _quiet_reserved(r.path)}
    if not reserved:
        return {}
    hashes: dict[str, set[str]] = {}
    rows = Revision.objects.filter(
        file__scope_key=scope_key_for(account, workspace), file__path__in=reserved, deleted=False
    ).values_list("file__path", "sha256")
    for path, sha in rows:
        hashes.setdefault(path, set()).add(sha)
    return hashes


def _quiet_reserved(raw: str) -> bool:
    try:
        return is_reserved(normalise_path(raw))
    except PathError:
        return False
