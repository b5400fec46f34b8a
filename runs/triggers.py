"""Triggers: schedules (cron in the flow's timezone, fired by Celery beat) and
inbound webhooks (`POST /api/hooks/<ws>/<flow>`).

Schedules are mirrored from the flows' files into `Schedule` rows by beat
(`runs.fire_schedules`, every few seconds, for each workspace whose head
moved), so a push that adds, changes or removes a `schedule:` is picked up
within seconds without a restart, and a schedule fires within seconds of its
minute. Pages read schedules with `schedules_of` and never write.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import logging
import shutil
import tempfile
import time
import zoneinfo
from pathlib import Path

from croniter import croniter
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from accounts.models import Workspace
from foldrun.contract.desk import FLOW
from foldrun.contract.model import agents_md_of, flow_of
from library.models import Changeset, scope_key_for
from library.services import desk_for_workspace

from .actions import check_start_run
from .models import Run, RunStatus, Schedule, Trigger
from .idempotency import prune_idempotency_keys
from .lifecycle import sandbox_base
from .signals import emit

log = logging.getLogger(__name__)


def next_fire(cron: str, tz_name: str, after: dt.datetime) -> dt.datetime:
    """The next time `cron` fires after `after`, read in `tz_name`, as an aware UTC datetime."""
    try:
        zone = zoneinfo.ZoneInfo(tz_name or "UTC")
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        zone = zoneinfo.ZoneInfo("UTC")
    local = after.astimezone(zone)
    fire = croniter(cron, local).get_next(dt.datetime)
    return fire.astimezone(dt.timezone.utc)


def _wanted_schedules(workspace: Workspace) -> dict[str, tuple[str, str]]:
    """flow name -> (cron, timezone) for every flow with `schedule:` at head."""
    desk = desk_for_workspace(workspace)
    wanted: dict[str, tuple[str, str]] = {}
    default_tz = "UTC"
    defaults = agents_md_of(desk, "workspace")
    if defaults and defaults.timezone:
        default_tz = str(defaults.timezone)
    for document in desk.of_kind(FLOW):
        if document.parsed is None:
            continue
        flow = flow_of(desk, document)
        if flow.schedule:
            wanted[flow.name] = (flow.schedule, flow.timezone or default_tz)
    return wanted


def schedules_of(workspace: Workspace, now: dt.datetime | None = None) -> list[Schedule]:
    """What the pages show: the flows' schedules at head with their next fire times — read, never written
    (a GET never writes; beat keeps the rows in step). Rows beat already keeps lend their last fire and
    quarantine."""
    now = now or timezone.now()
    rows = {s.flow: s for s in Schedule.objects.filter(workspace=workspace)}
    shown = []
    for name, (cron, tz_name) in sorted(_wanted_schedules(workspace).items()):
        row = rows.get(name)
        if row is None or row.cron != cron or row.timezone != tz_name or row.next_fire_at is None:
            row = Schedule(
                workspace=workspace,
                flow=name,
                cron=cron,
                timezone=tz_name,
                next_fire_at=next_fire(cron, tz_name, now),
                last_fired_at=row.last_fired_at if row else None,
                quarantined_at=row.quarantined_at if row else None,
            )
        shown.append(row)
    return shown


def sync_schedules(workspace: Workspace) -> list[Schedule]:
    """Make the workspace's Schedule rows match its flows' `schedule:` at head (beat does, every tick a
    workspace's head moved)."""
    wanted = _wanted_schedules(workspace)
    now = timezone.now()
    rows = {s.flow: s for s in Schedule.objects.filter(workspace=workspace)}
    for name, row in rows.items():
        if name not in wanted:
            row.delete()
    kept: list[Schedule] = []
    for name, (cron, tz_name) in wanted.items():
        row = rows.get(name)
        if row is None or row.cron != cron or row.timezone != tz_name:
            row = row or Schedule(workspace=workspace, flow=name)
            row.cron, row.timezone = cron, tz_name
            row.next_fire_at = next_fire(cron, tz_name, now)
            row.save()
        kept.append(row)
    return kept


def fire_due_schedules(now: dt.datetime | None = None) -> int:
    """Start a run for every schedule that is due; returns how many started."""
    now = now or timezone.now()
    sync_moved_schedules()
    started = 0
    for schedule in Schedule.objects.filter(next_fire_at__lte=now, quarantined_at__isnull=True).select_related(
        "workspace"
    ):
        with transaction.atomic():
            row = Schedule.objects.select_for_update().filter(pk=schedule.pk, next_fire_at__lte=now).first()
            if row is None:
                continue  # another beat tick took it
            row.last_fired_at = now
            row.next_fire_at = next_fire(row.cron, row.timezone, now)
            row.save(update_fields=["last_fired_at", "next_fire_at"])
            try:
                check_start_run(workspace=row.workspace, flow=row.flow, trigger=Trigger.SCHEDULE)
                started += 1
            except Exception as exc:  # noqa: BLE001 - a refusal (budget, broken flow) is logged, the tick goes on
                log.warning("schedule %s/%s did not start: %s", row.workspace.name, row.flow, exc)
    return started


def run_chores(now: dt.datetime | None = None) -> None:
    """Once a minute (its own beat entry, so the schedule tick stays two queries): the `sla` event for runs
    past their flow's `sla:`, sandboxes left behind by lost steps, and Idempotency-Keys older than a day."""
    now = now or timezone.now()
    _check_sla(now)
    sweep_sandboxes()
    prune_idempotency_keys(now)


# workspace public id (random: never reused, not even by a rolled-back test) -> the head revisions (its own,
# its account library's) its schedules were last synced at, in this process.
_SYNCED_AT: dict[str, tuple[int, int]] = {}


def sync_moved_schedules() -> int:
    """Sync the schedules of every workspace whose files (or its account library's) moved since this process
    last did — a tick every few seconds costs two queries when nothing moved."""
    heads: dict[str, int] = dict(
        Changeset.objects.values("scope_key").annotate(head=Max("number")).values_list("scope_key", "head")
    )
    synced = 0
    for workspace in Workspace.objects.filter(files__path__startswith="flows/").distinct().select_related("account"):
        mark = (
            heads.get(scope_key_for(workspace.account, workspace), 0),
            heads.get(scope_key_for(workspace.account, None), 0),
        )
        if _SYNCED_AT.get(workspace.public_id) == mark:
            continue
        try:
            sync_schedules(workspace)
            _SYNCED_AT[workspace.public_id] = mark
            synced += 1
        except Exception:  # one broken desk must not stop the others' schedules
            log.exception("could not read the schedules of workspace %s", workspace.pk)
    return synced


def sweep_sandboxes(max_age: dt.timedelta = dt.timedelta(days=1)) -> int:
    """Remove sandboxes a lost worker left behind (a finished step removes its own at once)."""
    folder = Path(sandbox_base() or tempfile.gettempdir()) / "foldrun-sandboxes"
    removed = 0
    cutoff = time.time() - max_age.total_seconds()
    for entry in folder.glob("foldrun-step-*") if folder.is_dir() else []:
        try:
            if entry.stat().st_mtime < cutoff:
                shutil.rmtree(entry, ignore_errors=True)
                removed += 1
        except OSError:
            continue
    return removed


def _check_sla(now: dt.datetime) -> None:
    """Runs still going past their flow's `sla:` get the `sla` event, once."""
    for run in Run.objects.filter(
        status__in=[RunStatus.RUNNING, RunStatus.QUEUED, RunStatus.AWAITING_APPROVAL, RunStatus.WAITING],
        sla_notified_at__isnull=True,
    ):
        sla = ((run.inputs or {}).get("__flow__") or {}).get("sla")
        if sla and run.created_at + dt.timedelta(seconds=sla) <= now:
            with transaction.atomic():
                if Run.objects.filter(pk=run.pk, sla_notified_at__isnull=True).update(sla_notified_at=now):
                    emit(run, "sla")


# ------------------------------------------------------------------ webhooks


def signature_ok(raw_body: bytes, header: str | None, secret: str) -> bool:
    """`x-signature`: the hex HMAC-SHA256 of the raw body (a `sha256=` prefix is accepted)."""
    if not header or not secret:
        return False
    given = header.strip().removeprefix("sha256=")
    want = hmac.new(secret.encode(), raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(given.encode(), want.encode())
