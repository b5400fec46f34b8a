"""Writes to library files. Every write is one Changeset (see models).

`do_write_files` is the single door: pushes, deploys, dashboard edits, runs
writing memory/state, rollbacks and gallery updates all come through it. The
`check_*` functions turn what a person or a run sent into validated
`FileWrite`s, or raise `WriteRefused` naming every file that was refused —
in which case nothing is written.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import logging
from dataclasses import dataclass, field
from typing import Callable, Iterable

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Max, OuterRef, Subquery
from django.utils import timezone

from accounts.models import Account, Workspace
from foldrun.contract import Desk, Finding
from foldrun.contract.findings import sort_findings
from foldrun.contract.desk import CONCEPT, GENERATED_NAMES
from foldrun.contract.generated import LogEntry, concept_root, generated_edit_finding, render_index, render_log
from foldrun.contract.model import concept_of
from foldrun.contract.paths import BINARY_MARKER, PathError, normalise_path
from foldrun.contract.payload import check_payload, decode

from foldrun.gallery import gallery_tools

from .models import ChangeKind, Changeset, LibraryFile, Revision, scope_key_for
# Reading lives in services (one direction: actions → services); these names stay importable from here.
from .services import MARK_CURRENT, copy_is_unedited, copy_mark, copy_of, file_at, files_at, sha256_text, tool_paths  # noqa: F401

log = logging.getLogger(__name__)

# A push with prune never deletes what runs and people accumulate.
PRUNE_KEEPS = ("memory", "state", "storage")
# Above this many paths, fetching the scope's heads in one query beats an IN list.
_IN_LIST_LIMIT = 900


@dataclass(frozen=True)
class FileWrite:
    """One file to write; `content=None` deletes it.

    `content` is text for encoding "utf-8", base64 text for "base64".
    """

    path: str
    content: str | None
    gallery_tool: str = ""
    gallery_sha256: str = ""
    encoding: str = "utf-8"


@dataclass
class WriteResult:
    changeset: Changeset | None
    changed: list[dict] = field(default_factory=list)   # [{"path", "action"}]
    warnings: list[Finding] = field(default_factory=list)


class WriteRefused(Exception):
    """A write that was refused as a whole; nothing was written.

    `findings` name each file and why. `code` is the API error code.
    """

    def __init__(self, findings: list[Finding], *, code: str = "files_refused", lead: str = "Nothing was written") -> None:
        self.findings = findings
        self.code = code
        # The message leads with an error: that is what stopped the write.
        lead_finding = next((f for f in findings if f.level == "error"), findings[0] if findings else None)
        first = lead_finding.format() if lead_finding is not None else "the write was refused."
        more = f" (and {len(findings) - 1} more; see details.findings)" if len(findings) > 1 else ""
        self.message = f"{lead}: {first}{more}"
        super().__init__(self.message)


def content_bytes(content: str, encoding: str) -> bytes:
    return base64.b64decode(content) if encoding == "base64" else content.encode("utf-8")


def sha256_of(content: str, encoding: str = "utf-8") -> str:
    """The hash of the file's bytes (the decoded bytes for a base64 file)."""
    return hashlib.sha256(content_bytes(content, encoding)).hexdigest()


INDEX_NAME, LOG_NAME = GENERATED_NAMES


def is_reserved(path: str) -> bool:
    """Any index.md / log.md under a knowledge/ or memory/ directory: the top
    ones are generated, and a nested one would read as if it were."""
    return concept_root(path) is not None and path.rsplit("/", 1)[-1] in GENERATED_NAMES


def is_concept(path: str) -> bool:
    return concept_root(path) is not None and path.endswith(".md") and not is_reserved(path)


def _error(path: str, message: str, code: str, line: int | None = None) -> Finding:
    return Finding(path, line, "error", message, code)


def _in_dir(path: str, names: Iterable[str]) -> bool:
    """True when `path` lies in one of `names` at the top of the desk or of an agent's own folder."""
    parts = path.split("/")
    if len(parts) >= 2 and parts[0] in names:
        return True
    return len(parts) >= 4 and parts[0] == "agents" and parts[2] in names


# ---------------------------------------------------------------- validation


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
            findings.append(_error(str(raw.path), str(exc), "path.refused"))
            continue
        if path in seen:
            findings.append(_error(path, "appears more than once in this request; send each path once.", "path.duplicate"))
            continue
        seen.add(path)
        if (raw.encoding or "utf-8") == "base64":
            try:
                data = base64.b64decode(raw.content, validate=True)
            except (binascii.Error, ValueError):
                findings.append(_error(path, "is marked base64 but its content is not valid base64.", "encoding.invalid"))
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
            findings.append(_error(str(raw_path), str(exc), "path.refused"))
            continue
        if path in seen:
            findings.append(_error(path, "is both written and deleted in this request; do one or the other.", "path.duplicate"))
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


# ---------------------------------------------------------------- the write


def _lock_scope(account: Account, workspace: Workspace | None) -> None:
    # Serialise writers of one scope so changeset numbers never collide.
    if workspace is not None:
        Workspace.objects.select_for_update().filter(pk=workspace.pk).first()
    else:
        Account.objects.select_for_update().filter(pk=account.pk).first()


def _heads(scope_key: str, paths: set[str] | None) -> dict[str, LibraryFile]:
    """One query: the scope's LibraryFile rows (all, or those at `paths`) with
    their head revision's metadata — never its content."""
    query = LibraryFile.objects.filter(scope_key=scope_key).select_related("head").defer("head__content")
    if paths is not None and len(paths) <= _IN_LIST_LIMIT:
        query = query.filter(path__in=paths)
    rows = {f.path: f for f in query}
    if paths is not None and len(paths) > _IN_LIST_LIMIT:
        rows = {p: f for p, f in rows.items() if p in paths}
    return rows


def _live(row: LibraryFile | None) -> bool:
    return row is not None and not row.deleted and row.head_id is not None


def _prunable(path: str) -> bool:
    return not _in_dir(path, PRUNE_KEEPS) and not is_reserved(path)


def do_write_files(
    *,
    account: Account,
    workspace: Workspace | None,
    writes: list[FileWrite],
    kind: str,
    message: str = "",
    author=None,
    run_public_id: str = "",
    prune: bool = False,
    verify: Callable[[dict[str, str]], list[Finding]] | None = None,
    keep_existing: tuple[str, ...] = (),
) -> WriteResult:
    """Write `writes` as one changeset, all or nothing, with bulk queries.

    Preconditions: paths are normalised and every content was validated by
    the caller (`check_files`). Unchanged files are skipped; when nothing
    changes, nothing is written and the result's changeset is None.

    `prune` deletes live files the write does not mention, except under
    memory/, state/, storage/ and the generated index.md/log.md. Every
    knowledge/ or memory/ directory the write touches has its index.md and
    log.md regenerated in the same changeset. `verify`, when given, is called
    inside the transaction with the resulting files (path → text); it returns
    warnings or raises WriteRefused, which rolls everything back.
    `keep_existing` names directories (state/) whose live files this write
    never overwrites: the server's copy is kept, with a warning.
    """
    scope_key = scope_key_for(account, workspace)
    kept: list[Finding] = []
    with transaction.atomic():
        _lock_scope(account, workspace)
        mentioned = {w.path for w in writes}
        heads = _heads(scope_key, None if prune else mentioned)
        if prune:
            writes = list(writes) + [
                FileWrite(path, None)
                for path, row in heads.items()
                if path not in mentioned and _live(row) and _prunable(path)
            ]
        changes: list[tuple[FileWrite, str]] = []  # (write, action)
        for write in writes:
            row = heads.get(write.path)
            live = _live(row)
            if write.content is None:
                if live:
                    changes.append((write, "deleted"))
                continue
            if live:
                head = row.head
                same = head.sha256 == sha256_of(write.content, write.encoding) and head.encoding == write.encoding
                if same and (not write.gallery_tool or head.gallery_sha256 == write.gallery_sha256):
                    continue
                if keep_existing and _in_dir(write.path, keep_existing):
                    kept.append(Finding(
                        write.path, None, "warning",
                        "is already on the server and differs; a deploy never overwrites state/, so the server's copy "
                        "was kept (delete it first to replace it).",
                        "state.kept",
                    ))
                    continue
                if not write.gallery_tool and head.gallery_tool:
                    write = FileWrite(write.path, write.content, head.gallery_tool, head.gallery_sha256, write.encoding)
            changes.append((write, "modified" if live else "added"))
        if not changes and verify is None:
            return WriteResult(None, warnings=kept)

        number = (Changeset.objects.filter(scope_key=scope_key).aggregate(n=Max("number"))["n"] or 0) + 1
        now = timezone.now()
        who = run_public_id or (author.email if author is not None else "foldrun")
        changes += _generated_changes(scope_key, heads, changes, number, now, who, message)
        _refuse_file_folder_clashes(scope_key, changes)

        warnings: list[Finding] = list(kept)
        if verify is not None:
            warnings += verify(_resulting_files(scope_key, changes))
            if not changes:
                return WriteResult(None, warnings=warnings)

        changeset = Changeset.objects.create(
            account=account, workspace=workspace, scope_key=scope_key, number=number, kind=kind,
            message=message, author=author, run_public_id=run_public_id, created_at=now,
        )
        missing = [w.path for w, _ in changes if w.path not in heads]
        if missing:
            created = LibraryFile.objects.bulk_create(
                [LibraryFile(account=account, workspace=workspace, scope_key=scope_key, path=p) for p in missing],
                batch_size=500,
            )
            if connection.features.can_return_rows_from_bulk_insert:
                heads.update({f.path: f for f in created})
            else:  # pragma: no cover - every backend we run returns ids
                heads.update(_heads(scope_key, set(missing)))
        revisions = []
        for write, _action in changes:
            content = write.content or ""
            encoding = write.encoding if write.content is not None else "utf-8"
            revisions.append(Revision(
                file_id=heads[write.path].pk, changeset=changeset, number=number, content=content,
                sha256=sha256_of(content, encoding), size=len(content_bytes(content, encoding)),
                deleted=write.content is None, encoding=encoding,
                gallery_tool=write.gallery_tool, gallery_sha256=write.gallery_sha256,
            ))
        Revision.objects.bulk_create(revisions, batch_size=500)
        # Point every touched path at its new revision: three set-based updates.
        touched = Revision.objects.filter(changeset=changeset)
        LibraryFile.objects.filter(pk__in=touched.values("file_id")).update(
            head=Subquery(Revision.objects.filter(file_id=OuterRef("pk"), number=number).values("pk")[:1])
        )
        LibraryFile.objects.filter(pk__in=touched.filter(deleted=True).values("file_id")).update(deleted=True)
        LibraryFile.objects.filter(pk__in=touched.filter(deleted=False).values("file_id")).update(deleted=False)
        changed = sorted(({"path": w.path, "action": a} for w, a in changes), key=lambda c: c["path"])
        return WriteResult(changeset, changed, warnings)


def _ancestors(path: str) -> list[str]:
    """"a/b/c.md" → ["a", "a/b"]: the folders a path lies in."""
    parts = path.split("/")
    return ["/".join(parts[:n]) for n in range(1, len(parts))]


def _refuse_file_folder_clashes(scope_key: str, changes: list[tuple[FileWrite, str]]) -> None:
    """Raise WriteRefused when a file would land where the desk (once
    `changes` land) has a folder, or inside a path that is a file: no folder
    on a laptop can hold both, so such a desk could never be pulled. Only
    added paths can clash; one query, for the scope's live paths."""
    added = [w.path for w, action in changes if action == "added"]
    if not added:
        return
    live = set(LibraryFile.objects.filter(scope_key=scope_key, deleted=False, head__isnull=False)
               .values_list("path", flat=True))
    for write, _action in changes:
        if write.content is None:
            live.discard(write.path)
        else:
            live.add(write.path)
    holder: dict[str, str] = {}  # folder → one file inside it
    for path in sorted(live):
        for folder in _ancestors(path):
            holder.setdefault(folder, path)
    findings: list[Finding] = []
    for path in sorted(added):
        inside = next((folder for folder in _ancestors(path) if folder in live), None)
        if inside is not None:
            findings.append(_error(path, f"would lie inside {inside}, which is a file; a path cannot be both a file and "
                                         "a folder.", "path.clash"))
        elif path in holder:
            findings.append(_error(path, f"is a folder holding {holder[path]}; a path cannot be both a file and a "
                                         "folder.", "path.clash"))
    if findings:
        raise WriteRefused(findings)


def _resulting_files(scope_key: str, changes: list[tuple[FileWrite, str]]) -> dict[str, str]:
    """Every live text file of the scope once `changes` land (for `verify`)."""
    files = {
        f.path: f.head.content
        for f in LibraryFile.objects.filter(scope_key=scope_key, deleted=False, head__isnull=False).select_related("head")
        if f.head.encoding == "utf-8"
    }
    for write, _action in changes:
        if write.content is None:
            files.pop(write.path, None)
        elif write.encoding == "utf-8":
            files[write.path] = write.content
        else:
            files.pop(write.path, None)
    return files


_LOG_ACTIONS = {"added": "created", "modified": "updated", "deleted": "deleted"}


def _generated_changes(
    scope_key: str,
    heads: dict[str, LibraryFile],
    changes: list[tuple[FileWrite, str]],
    number: int,
    now,
    who: str,
    message: str,
) -> list[tuple[FileWrite, str]]:
    """index.md and log.md for every concept directory `changes` touch."""
    by_root: dict[str, list[tuple[FileWrite, str]]] = {}
    for write, action in changes:
        root = concept_root(write.path)
        if root is not None and is_concept(write.path):
            by_root.setdefault(root, []).append((write, action))
    extra: list[tuple[FileWrite, str]] = []
    when = now
    for root, root_changes in sorted(by_root.items()):
        rows = LibraryFile.objects.filter(
            scope_key=scope_key, path__startswith=root + "/", deleted=False, head__isnull=False
        ).select_related("head")
        existing = {f.path: f.head for f in rows}
        concepts = {p: r.content for p, r in existing.items() if is_concept(p) and r.encoding == "utf-8"}
        for write, _action in root_changes:
            if write.content is None:
                concepts.pop(write.path, None)
            else:
                concepts[write.path] = write.content
        index_path, log_path = f"{root}/{INDEX_NAME}", f"{root}/{LOG_NAME}"
        # `heads` may not hold the generated rows when the write named only some paths.
        for row in LibraryFile.objects.filter(scope_key=scope_key, path__in=[index_path, log_path]):
            heads.setdefault(row.path, row)
        if not concepts:
            for path in (index_path, log_path):
                if path in existing:
                    extra.append((FileWrite(path, None), "deleted"))
            continue
        prefix = root + "/"
        index = render_index({p[len(prefix):]: t for p, t in concepts.items()})
        previous_log = existing[log_path].content if log_path in existing else ""
        entries = [
            LogEntry(when, who, _LOG_ACTIONS[action], write.path[len(prefix):], message)
            for write, action in sorted(root_changes, key=lambda c: c[0].path)
        ]
        log = render_log(previous_log, entries)
        for path, text in ((index_path, index), (log_path, log)):
            head = existing.get(path)
            if head is None or head.sha256 != sha256_text(text):
                extra.append((FileWrite(path, text), "modified" if head is not None else "added"))
    return extra


# ---------------------------------------------------------------- the doors


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
        raise WriteRefused(sort_findings(findings + deploy_check(_resulting_files(scope_key_for(account, workspace), changes))),
                           code="check_failed", lead=DEPLOY_REFUSED)
    verify = None
    if deploy_check is not None:
        def verify(files: dict[str, str]) -> list[Finding]:
            found = sort_findings(findings + deploy_check(files))
            if any(f.level == "error" for f in found):
                raise WriteRefused(found, code="check_failed", lead=DEPLOY_REFUSED)
            return found

    result = do_write_files(
        account=account, workspace=workspace, writes=writes, kind=kind, message=message,
        author=author, prune=prune, verify=verify,
        # State is the bookmark between runs: it travels with a deploy and a
        # deploy never overwrites it (a laptop's copy is older than the runs').
        keep_existing=("state",) if kind in (ChangeKind.PUSH, ChangeKind.DEPLOY) else (),
    )
    result.warnings = sort_findings(list(findings) + list(result.warnings))
    return result


DEPLOY_REFUSED = "The deploy was refused; nothing was written"


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
        account=account, workspace=workspace, raw_files=raw_files, raw_deletes=raw_deletes,
        kind=ChangeKind.EDIT, message=message or f"Edit {path}", author=author,
    )


RUN_WRITABLE = ("memory", "state", "storage")


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
            findings.append(_error(str(raw_path), str(exc), "path.refused"))
            continue
        if _in_dir(path, ("knowledge",)):
            findings.append(_error(path, f"{path}: knowledge/ is given, not learned; a run may not write it.", "run.knowledge"))
        elif not _in_dir(path, RUN_WRITABLE):
            findings.append(_error(path, f"{path}: a run writes only memory/, state/ and storage/.", "run.outside"))
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
        account=account, workspace=workspace, writes=writes, kind=ChangeKind.RUN,
        message=message or f"Written by {run_public_id}", run_public_id=run_public_id,
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
            account=account, workspace=workspace, writes=writes, kind=ChangeKind.ROLLBACK,
            message=message or f"Roll {path} back to revision {to}", author=author,
        )
    raw_files = [RawFile(path, revision.content)] if revision is not None else []
    raw_deletes = [path] if revision is None else []
    return check_and_write(
        account=account, workspace=workspace, raw_files=raw_files, raw_deletes=raw_deletes,
        kind=ChangeKind.ROLLBACK, message=message or f"Roll {path} back to revision {to}", author=author,
    )


# ---------------------------------------------------------------- gallery


class GalleryError(Exception):
    """A gallery request that cannot be done; `status` is the HTTP answer."""

    def __init__(self, message: str, *, code: str, status: int) -> None:
        super().__init__(message)
        self.message, self.code, self.status = message, code, status


def _gallery_writes(name: str, heads: dict[str, Revision]) -> list[FileWrite]:
    """The shelf's files of tool `name` as writes marked with their origin,
    and deletions for files of an existing copy the shelf no longer has."""

    shelf = gallery_tools()[name]
    writes = [FileWrite(p, t, gallery_tool=name, gallery_sha256=sha256_text(t)) for p, t in sorted(shelf.items())]
    writes += [FileWrite(p, None) for p in tool_paths(name, heads) if p not in shelf]
    return writes


def do_install_gallery_tool(
    *, account: Account, workspace: Workspace | None, name: str, author, upgrade: bool = False
) -> WriteResult:
    """Copy gallery tool `name` into the account library (or `workspace`), or
    with `upgrade=True` bring an existing copy to the shelf's current files —
    "update to gallery version". Kind "gallery"; the previous version stays
    one revision back. Raises GalleryError for an unknown tool (404) or an
    upgrade with no copy to upgrade (409).
    """

    if name not in gallery_tools():
        raise GalleryError("Not found.", code="not_found", status=404)
    heads = files_at(account, workspace, with_content=False)
    where = f"workspace {workspace.name}" if workspace is not None else "the account library"
    if upgrade and not copy_of(heads, name):
        raise GalleryError(
            f"{where[0].upper()}{where[1:]} keeps no copy of {name}; install it first.", code="not_installed", status=409
        )
    verb = "Update" if upgrade else "Install"
    return do_write_files(
        account=account, workspace=workspace, writes=_gallery_writes(name, heads), kind=ChangeKind.GALLERY,
        message=f"{verb} {name} from the gallery" + (" (update to gallery version)" if upgrade else ""), author=author,
    )


def sync_gallery_copies() -> list[Changeset]:
    """Bring every unedited gallery copy, in every scope, to the shelf's
    current files. A copy any of whose files was edited is the account's and
    is never changed. Idempotent: a copy already current writes nothing.
    Run by `manage.py sync_gallery` and after every migrate (a new platform
    version).
    """

    shelf_tools = gallery_tools()
    scopes = (
        LibraryFile.objects.filter(deleted=False, head__gallery_tool__in=list(shelf_tools))
        .values_list("account_id", "workspace_id").distinct()
    )
    written: list[Changeset] = []
    for account_id, workspace_id in sorted(set(scopes), key=lambda s: (s[0], s[1] or 0)):
        account = Account.objects.get(pk=account_id)
        workspace = Workspace.objects.get(pk=workspace_id) if workspace_id else None
        for name, shelf in sorted(shelf_tools.items()):
            try:
                result = _follow_gallery(account, workspace, name, shelf)
            except WriteRefused as exc:
                # A new shelf file clashes with a path the account keeps: the copy stays as it is.
                log.warning("gallery copy of %s in %s not followed: %s", name, scope_key_for(account, workspace), exc.message)
                continue
            if result is not None and result.changeset is not None:
                written.append(result.changeset)
    return written


def _follow_gallery(account: Account, workspace: Workspace | None, name: str, shelf: dict[str, str]) -> WriteResult | None:
    """One unedited copy brought to the shelf's files; None when there is nothing to follow."""

    with transaction.atomic():
        # Decide under the scope's lock, so an edit that lands between
        # reading the copy and writing it can never be overwritten.
        _lock_scope(account, workspace)
        heads = files_at(account, workspace, with_content=False)
        copy = copy_of(heads, name)
        if not copy or not copy_is_unedited(copy, name) or copy_mark(copy, shelf) == MARK_CURRENT:
            return None
        return do_write_files(
            account=account, workspace=workspace, writes=_gallery_writes(name, heads),
            kind=ChangeKind.GALLERY, message=f"Follow the gallery: {name} updated with the platform",
        )
