"""Idempotent starts: an `Idempotency-Key` makes a retried start answer what the first one started.

A client that retries `POST …/runs` after a timeout cannot know whether its first request started a run. With a
key, for a day, the same key and the same request answer the run the first one started (201 again, with the
`Idempotent-Replayed: true` header); the same key with another request is refused (422) naming the key. Keys are
the workspace's own: another workspace's key — another account's above all — never finds a run here.

Safe under concurrency without check-then-create: the key's row is inserted first, under the unique constraint on
(workspace, key), and the start runs in the same transaction. A simultaneous request with the same key waits on
that insert (PostgreSQL's unique index; SQLite's one writer) until the first commits, then finds its row and
answers its run. A start that is refused (no such flow, a budget spent) rolls the key back with it: nothing was
started, so the same key may be sent again.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from typing import Any, TypeVar

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Workspace
from foldrun.api import ApiError

from .models import IdempotencyKey

KEY_HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
KEY_TTL = dt.timedelta(hours=24)
MAX_KEY = 255

Started = TypeVar("Started")


def check_idempotency_key(value: str | None, *, where: str = KEY_HEADER) -> str | None:
    """The key a request gave (`where` names the header or argument), or None when it gave none. A key is 1 to 255
    printable ASCII characters; any other is refused with a sentence naming `where` before anything starts."""
    if value is None:
        return None
    key = value.strip()
    if key and len(key) <= MAX_KEY and all(" " <= ch <= "~" for ch in key):
        return key
    if not key:
        what = "empty"
    elif len(key) > MAX_KEY:
        what = f"{len(key)} characters long"
    else:
        what = "not printable ASCII"
    raise ApiError(
        f"{where}: a key is 1 to {MAX_KEY} printable ASCII characters (a UUID makes a good one), and this one is "
        f"{what}; nothing was started.",
        code="invalid",
        details={"field": where},
    )


def request_hash(endpoint: str, body: Any) -> str:
    """What a request asked, as one hash: the endpoint and its body as canonical JSON (key order and spacing do
    not make two bodies differ)."""
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(f"{endpoint}\n{canonical}".encode()).hexdigest()


def do_start_once(
    workspace: Workspace,
    key: str,
    digest: str,
    start: Callable[[], Started],
    *,
    kept: Callable[[Started], dict[str, Any]],
    found: Callable[[IdempotencyKey], Started | None],
    where: str = KEY_HEADER,
) -> tuple[Started, bool]:
    """Start once per (workspace, key) for KEY_TTL: `start()` is called only when this request's key row was
    inserted, in the same transaction; `kept(started)` are the row's fields naming what it started (run=…,
    task=…), and `found(row)` reads them back for a repeat; `where` names the key in a refusal (the header, an
    MCP argument). Returns what was started and whether it is a replay."""
    for _attempt in range(2):  # a row pruned between our insert's failure and our read: insert again, once
        now = timezone.now()
        with transaction.atomic():
            # An expired key is free again: its one row goes before the insert it would stop. Only that row, so
            # two requests never lock each other's rows in different orders (the chores prune the rest).
            IdempotencyKey.objects.filter(workspace=workspace, key=key, created_at__lte=now - KEY_TTL).delete()
            try:
                with transaction.atomic():
                    row = IdempotencyKey.objects.create(
                        workspace=workspace, key=key, request_hash=digest, created_at=now
                    )
            except IntegrityError:
                row = None
            if row is not None:
                started = start()
                fields = kept(started)
                IdempotencyKey.objects.filter(pk=row.pk).update(**fields)
                return started, False
        earlier = (
            IdempotencyKey.objects.filter(workspace=workspace, key=key, created_at__gt=now - KEY_TTL)
            .select_related("run", "task")
            .first()
        )
        if earlier is None:
            continue
        answer = found(earlier)
        if earlier.request_hash != digest:
            named = f" (it started {getattr(answer, 'public_id', '')})" if answer is not None else ""
            raise ApiError(
                f"{where} {key} was used within the last 24 hours with another request{named}; a key "
                f"stands for one request: send that request again, or use a new key to start something new.",
                code="idempotency_key_reused",
                status_code=422,
                details={"field": where, "key": key},
            )
        if answer is not None:
            return answer, True
    raise ApiError(
        f"{where} {key}: the start it names was being removed just now; send the request again.",
        code="conflict",
        status_code=409,
        details={"field": where, "key": key},
    )


def prune_idempotency_keys(now: dt.datetime | None = None) -> int:
    """Keys older than a day (the chores, once a minute): they no longer match, so their rows go."""
    deleted, _ = IdempotencyKey.objects.filter(created_at__lte=(now or timezone.now()) - KEY_TTL).delete()
    return deleted
