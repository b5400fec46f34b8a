"""What a run reads of its workspace: the desk at the run's revision (cached per process), the head revision,
and the run's own copy of its inputs and flow settings. A plain module under actions, orchestrate and host."""
from __future__ import annotations

import threading
from typing import Any
from collections import OrderedDict

from django.db import connection
from django.db.models import CharField
from django.db.models.expressions import RawSQL

from accounts.models import Workspace
from library.models import Changeset, LibraryFile, Revision, scope_key_for
from foldrun.pgcursor import db
from foldrun.prepared import Prepared
from library.services import desk_for_workspace

from .models import Run


def library_head(table: str) -> RawSQL:
    """The public id of the account library's newest revision ("" when it has none), as a subquery of a
    top-level query on `table` whose rows carry the account in `account_id`: desk_at's cache key read in a
    query made anyway, not in one of its own. Spelled as scope_key_for spells a library's scope.

    Written as SQL: the same subquery built with the ORM (Subquery, Concat, Cast, Coalesce) took more CPU to
    compile, on every claim and every start, than the round trip it saves."""
    q = connection.ops.quote_name
    return RawSQL(f"COALESCE((SELECT h.{q('public_id')} FROM {q(Changeset._meta.db_table)} h "
                  f"WHERE h.{q('scope_key')} = ('lib:' || CAST({q(table)}.{q('account_id')} AS TEXT)) "
                  f"ORDER BY h.{q('number')} DESC LIMIT 1), '')", (), output_field=CharField())


def agents_md_heads(table: str) -> RawSQL:
    """The sha256 of AGENTS.md at the head of the run's workspace and of its account's library, as "OWN LIBRARY"
    (each "" where there is none), as a subquery of a top-level query on `table` whose rows carry `workspace_id`
    and `account_id`: a run that ends reads AGENTS.md (its notifications, its budget), and a text it has parsed
    before it need not fetch again (notify/config.py agents_metas). Spelled as scope_key_for spells the scopes,
    and as notify's query finds the files (not deleted, with a head)."""
    q = connection.ops.quote_name
    files, revisions = q(LibraryFile._meta.db_table), q(Revision._meta.db_table)

    def head(scope: str) -> str:
        return (f"COALESCE((SELECT r.{q('sha256')} FROM {files} f JOIN {revisions} r ON r.{q('id')} = f.{q('head_id')} "
                f"WHERE f.{q('scope_key')} = {scope} AND f.{q('path')} = 'AGENTS.md' AND NOT f.{q('deleted')}), '')")

    own = f"('ws:' || CAST({q(table)}.{q('workspace_id')} AS TEXT))"
    library = f"('lib:' || CAST({q(table)}.{q('account_id')} AS TEXT))"
    return RawSQL(f"({head(own)} || ' ' || {head(library)})", (), output_field=CharField())


def _head(scope: str):
    return (Changeset.objects.filter(scope_key=scope)
            .annotate(library_head=library_head(Changeset._meta.db_table)).order_by("-number")[:1])


# Every run's start reads it: compiled once per process (foldrun/prepared.py), as the ORM built it on each start.
_HEAD = Prepared(_head, scope="\x1fno scope key is this one\x1f")


def head_changeset(workspace: Workspace) -> Changeset | None:
    """The workspace's newest revision, carrying `library_head` (see library_head) for desk_at; remembered for
    remembered_head."""
    connection = db()
    head = _HEAD.first(scope=scope_key_for(workspace.account, workspace))
    key = (connection.alias, workspace.pk)
    if head is not None:
        _HEADS.put(key, head)
    else:
        _HEADS.drop(key)
    return head


class _Recent:
    """The values last put for at most `size` keys, the least recently used dropped first; shared by a web
    process's threads, which start runs side by side."""

    def __init__(self, size: int) -> None:
        self._items: OrderedDict[tuple, Any] = OrderedDict()
        self._size = size
        self._lock = threading.Lock()

    def get(self, key: tuple) -> Any:
        with self._lock:
            value = self._items.get(key)
            if value is not None:
                self._items.move_to_end(key)
            return value

    def put(self, key: tuple, value: Any) -> None:
        with self._lock:
            self._items[key] = value
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def drop(self, key: tuple) -> None:
        with self._lock:
            self._items.pop(key, None)


# The head each workspace had when this process last read it, for starts that write their run only if it is
# still the head (head_guard) instead of reading it first: a round trip of every start.
_HEADS = _Recent(256)


def remembered_head(workspace: Workspace) -> Changeset | None:
    """The workspace's head revision as this process last read it (None if it has not), which may have moved
    since: use it only with head_guard."""
    connection = db()
    return _HEADS.get((connection.alias, workspace.pk))


def head_guard(workspace: Workspace, head: Changeset) -> tuple[str, list]:
    """A condition (SQL, values) that holds while `head` is still the workspace's newest revision and the account
    library's newest is still the one `head` carries (`library_head`): what a run started at `head` read. Public
    ids are random, so a row of another database (or a test's, rolled back) never passes for it."""
    connection = db()
    q = connection.ops.quote_name
    table = q(Changeset._meta.db_table)

    def newest(scope_key: str) -> str:
        return (f"COALESCE((SELECT h.{q('public_id')} FROM {table} h WHERE h.{q('scope_key')} = {scope_key} "
                f"ORDER BY h.{q('number')} DESC LIMIT 1), '')")

    return (f"{newest('%s')} = %s AND {newest('%s')} = %s",
            [scope_key_for(workspace.account, workspace), head.public_id, scope_key_for(workspace.account, None),
             head.library_head or ""])


_DESKS = _Recent(32)


def desk_at(workspace: Workspace, number: int | None, *, changeset: Changeset | None = None,
            library_head: str | None = None):
    """The desk a run sees at workspace revision `number` (the head when None).

    `changeset`: that revision's row when the caller has it in hand (saves looking it up). `library_head`:
    the account library's newest revision's public id ("" for none) when the caller read it already (the
    `library_head` subquery, or a changeset from head_changeset carrying it) — else it is looked up.

    Kept in a small per-process cache keyed by the workspace revision and the
    account library's newest revision: a revision never changes once written,
    so a worker running many steps of one desk reads and parses it once — the
    contract caches what it parses on the Desk (`desk.cache`, documents), and
    a cached Desk is handed out as it is. Callers treat it as read-only (its
    file maps and parsed documents are shared by every step of that revision).
    """
    if not number:
        return desk_for_workspace(workspace)
    # Public ids are random: a key can never match another database's rows (or a rolled-back test's).
    if changeset is not None and changeset.number == number and changeset.workspace_id == workspace.pk:
        here = changeset.public_id
    else:
        here = (Changeset.objects.filter(scope_key=scope_key_for(workspace.account, workspace), number=number)
                .values_list("public_id", flat=True).first())
    if library_head is None:
        library_head = getattr(changeset, "library_head", None)
    if library_head is None:
        library_head = (Changeset.objects.filter(scope_key=scope_key_for(workspace.account, None))
                        .order_by("-number").values_list("public_id", flat=True).first())
    if here is None:
        return desk_for_workspace(workspace, at=number)
    key = (here, library_head or "")
    cached = _DESKS.get(key)
    if cached is None:
        cached = desk_for_workspace(workspace, at=number)
        _DESKS.put(key, cached)
    return cached


def flow_meta(run: Run) -> dict:
    return dict((run.inputs or {}).get("__flow__") or {})


def run_inputs(run: Run) -> dict:
    return {k: v for k, v in (run.inputs or {}).items() if k != "__flow__"}
