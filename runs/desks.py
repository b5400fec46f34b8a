"""What a run reads of its workspace: the desk at the run's revision (cached per process), the head revision,
and the run's own copy of its inputs and flow settings. A plain module under actions, the lifecycle package and host."""

from __future__ import annotations

import threading
from typing import Any
from collections import OrderedDict

from django.db.models import CharField, OuterRef, Subquery, Value
from django.db.models.functions import Cast, Coalesce, Concat

from accounts.models import Workspace
from library.models import Changeset, scope_key_for
from library.services import desk_for_workspace

from .models import Run


def _scope(prefix: str, column: str) -> Concat:
    """The scope key of the outer row's `column` (an account's or a workspace's id), spelled as scope_key_for
    spells it: "lib:<account id>" or "ws:<workspace id>"."""
    return Concat(Value(prefix), Cast(OuterRef(column), output_field=CharField()), output_field=CharField())


def library_head(account: str = "account_id") -> Coalesce:
    """The public id of the account library's newest revision ("" when it has none), as a subquery of a
    query whose rows carry the account in `account` (a field, or a path to one): desk_at's cache key read in a
    query made anyway, not in one of its own."""
    newest = Changeset.objects.filter(scope_key=_scope("lib:", account)).order_by("-number")
    return Coalesce(Subquery(newest.values("public_id")[:1]), Value(""), output_field=CharField())


def head_changeset(workspace: Workspace) -> Changeset | None:
    """The workspace's newest revision, carrying `library_head` (see library_head) for desk_at."""
    return (
        Changeset.objects.filter(scope_key=scope_key_for(workspace.account, workspace))
        .annotate(library_head=library_head())
        .order_by("-number")
        .first()
    )


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


_DESKS = _Recent(32)


def desk_at(
    workspace: Workspace, number: int | None, *, changeset: Changeset | None = None, library_head: str | None = None
):
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
        here = (
            Changeset.objects.filter(scope_key=scope_key_for(workspace.account, workspace), number=number)
            .values_list("public_id", flat=True)
            .first()
        )
    if library_head is None:
        library_head = getattr(changeset, "library_head", None)
    if library_head is None:
        library_head = (
            Changeset.objects.filter(scope_key=scope_key_for(workspace.account, None))
            .order_by("-number")
            .values_list("public_id", flat=True)
            .first()
        )
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
