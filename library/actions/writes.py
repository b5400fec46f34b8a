"""The one write: `do_write_files` turns validated `FileWrite`s into one
Changeset, all or nothing, regenerating the index.md and log.md of every
concept directory it touches. The types every door shares live here too.
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import Callable, Iterable

from django.db import connection, transaction
from django.db.models import Max, OuterRef, Subquery
from django.utils import timezone

from accounts.models import Account, Workspace
from foldrun.contract import Finding
from foldrun.contract.desk import GENERATED_NAMES
from foldrun.contract.generated import LogEntry, concept_root, is_concept, is_reserved, render_index, render_log

from ..models import Changeset, LibraryFile, Revision, scope_key_for
from ..services import sha256_text

# What runs and people accumulate: a run may write there (run_files), and a push with prune never deletes it.
RUN_WRITABLE = ("memory", "state", "storage")
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
    changed: list[dict] = field(default_factory=list)  # [{"path", "action"}]
    warnings: list[Finding] = field(default_factory=list)


class WriteRefused(Exception):
    """A write that was refused as a whole; nothing was written.

    `findings` name each file and why. `code` is the API error code.
    """

    def __init__(
        self, findings: list[Finding], *, code: str = "files_refused", lead: str = "Nothing was written"
    ) -> None:
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


def file_error(path: str, message: str, code: str, line: int | None = None) -> Finding:
    return Finding(path, line, "error", message, code)


def in_dir(path: str, names: Iterable[str]) -> bool:
    """True when `path` lies in one of `names` at the top of the desk or of an agent's own folder."""
    parts = path.split("/")
    if len(parts) >= 2 and parts[0] in names:
        return True
    return len(parts) >= 4 and parts[0] == "agents" and parts[2] in names


def lock_scope(account: Account, workspace: Workspace | None) -> None:
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
    return not in_dir(path, RUN_WRITABLE) and not is_reserved(path)


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
        lock_scope(account, workspace)
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
                if keep_existing and in_dir(write.path, keep_existing):
                    kept.append(
                        Finding(
                            write.path,
                            None,
                            "warning",
                            "is already on the server and differs; a deploy never overwrites state/, so the server's copy "
                            "was kept (delete it first to replace it).",
                            "state.kept",
                        )
                    )
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
            warnings += verify(resulting_files(scope_key, changes))
            if not changes:
                return WriteResult(None, warnings=warnings)

        changeset = Changeset.objects.create(
            account=account,
            workspace=workspace,
            scope_key=scope_key,
            number=number,
            kind=kind,
            message=message,
            author=author,
            run_public_id=run_public_id,
            created_at=now,
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
            revisions.append(
                Revision(
                    file_id=heads[write.path].pk,
                    changeset=changeset,
                    number=number,
                    content=content,
                    sha256=sha256_of(content, encoding),
                    size=len(content_bytes(content, encoding)),
                    deleted=write.content is None,
                    encoding=encoding,
                    gallery_tool=write.gallery_tool,
                    gallery_sha256=write.gallery_sha256,
                )
            )
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
    """ "a/b/c.md" → ["a", "a/b"]: the folders a path lies in."""
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
    live = set(
        LibraryFile.objects.filter(scope_key=scope_key, deleted=False, head__isnull=False).values_list(
            "path", flat=True
        )
    )
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
            findings.append(
                file_error(
                    path,
                    f"would lie inside {inside}, which is a file; a path cannot be both a file and a folder.",
                    "path.clash",
                )
            )
        elif path in holder:
            findings.append(
                file_error(
                    path,
                    f"is a folder holding {holder[path]}; a path cannot be both a file and a folder.",
                    "path.clash",
                )
            )
    if findings:
        raise WriteRefused(findings)


def resulting_files(scope_key: str, changes: list[tuple[FileWrite, str]]) -> dict[str, str]:
    """Every live text file of the scope once `changes` land (for `verify`)."""
    files = {
        f.path: f.head.content
        for f in LibraryFile.objects.filter(scope_key=scope_key, deleted=False, head__isnull=False).select_related(
            "head"
        )
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
        index = render_index({p[len(prefix) :]: t for p, t in concepts.items()})
        previous_log = existing[log_path].content if log_path in existing else ""
        entries = [
            LogEntry(when, who, _LOG_ACTIONS[action], write.path[len(prefix) :], message)
            for write, action in sorted(root_changes, key=lambda c: c[0].path)
        ]
        log = render_log(previous_log, entries)
        for path, text in ((index_path, index), (log_path, log)):
            head = existing.get(path)
            if head is None or head.sha256 != sha256_text(text):
                extra.append((FileWrite(path, text), "modified" if head is not None else "added"))
    return extra
