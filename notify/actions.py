"""Notification actions: what a run event sends, webhook deliveries and their
attempts, redelivery, the test send, and the once-per-occurrence alarms.

`check_*` validates and scopes; `do_*` changes data in one transaction and
queues work with `transaction.on_commit`.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone as dt_timezone
from decimal import Decimal
from typing import Callable

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q, Sum
from django.utils import timezone

from accounts.models import Membership, Role, Workspace
from foldrun.api import ApiError
from foldrun.contract.rules.notify import NotifyConfig

from .config import inherited, notify_config_for, webhook_url
from .email import SendResult, send_mail, send_platform_mail
from .links import DEFAULT_APPROVE_WITHIN, approval_links, public_url
from .models import (
    MAX_ATTEMPTS,
    RETRY_DELAYS,
    Attempt,
    Delivery,
    DeliveryStatus,
    Endpoint,
    Mark,
    SigningKeyState,
)
from .secrets import fingerprint, read_secret, seal, unseal
from .signing import delivery_headers
from .webhook import Outcome, post_once

log = logging.getLogger(__name__)

# A worker holds a claimed delivery this long; past it, the sweep assumes the
# worker was lost and hands the attempt to another (a batch: name lookups + 8 s, with margin).
LEASE = timedelta(seconds=120)
# After a signing secret changes, deliveries are signed under both for a day.
ROTATION_OVERLAP = timedelta(hours=24)

REDACTED = "[redacted]"


# ------------------------------------------------------------------ payloads


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


def _first_line(text: str) -> str:
    return (text or "").strip().split("\n", 1)[0].strip()


def headline_for(run, event: str) -> str:
    flow = run.name
    if event == "blocked":
        return f"⛔ {flow} blocked"
    if event == "sla":
        return f"⏰ {flow} has passed its sla: and is still running"
    reason = _first_line(run.error)
    if event == "failed" and (not run.headline or reason.startswith(run.headline.strip())):
        # The engine's headline of a failed run is its error line, which does
        # not name the flow: on a phone, "rankings failed: …" is the message.
        return f"{flow} failed" + (f": {reason}" if reason else "")
    if run.headline:
        return run.headline.strip()
    if event == "awaiting-approval":
        return f"⏸ {flow} is waiting for approval"
    return f"{flow} {run.status}"


def subject_for(headline: str, summary: str) -> str:
    """The headline, then the summary: read on a phone, it is the whole message."""
    line = _first_line(summary)
    subject = headline if not line or line.startswith(headline) or headline.startswith(line) else f"{headline} — {line}"
    return subject if len(subject) <= 200 else subject[:199] + "…"


def _cost(value: Decimal | float | None) -> float:
    return round(float(value or 0), 4)


def run_payload(run, event: str, links: list[dict]) -> dict:
    """The body of a run notification: exactly the spec's fields."""
    headline = headline_for(run, event)
    cost = _cost(run.cost_usd)
    first = links[0] if links else {}
    return {
        "text": f"{headline} · {run.workspace.name}/{run.public_id} · ${cost:.2f}",
        "workspace": run.workspace.name,
        "runId": run.public_id,
        "flow": run.name,
        "status": run.status,
        "verdict": run.verdict or None,
        "summary": run.summary or "",
        "costUsd": cost,
        "startedAt": _iso(run.started_at),
        "finishedAt": _iso(run.finished_at),
        "approveUrl": first.get("approveUrl"),
        "rejectUrl": first.get("rejectUrl"),
        "links": links,
    }


def workspace_payload(workspace: Workspace, text: str, *, flow: str | None = None, status: str | None = None,
                      cost: float | None = None) -> dict:
    """The same shape for an event about no single run (`quarantined`, `budget`, `test`)."""
    return {
        "text": text,
        "workspace": workspace.name,
        "runId": None,
        "flow": flow,
        "status": status,
        "verdict": None,
        "summary": "",
        "costUsd": cost,
        "startedAt": None,
        "finishedAt": None,
        "approveUrl": None,
        "rejectUrl": None,
        "links": [],
    }


def render_body(payload: dict) -> str:
    """The mail body: the text line, then every field by its spec name."""
    lines = [payload["text"], ""]
    for key in ("workspace", "runId", "flow", "status", "verdict", "costUsd", "startedAt", "finishedAt"):
        if payload.get(key) is not None:
            lines.append(f"{key}: {payload[key]}")
    if payload.get("summary"):
        lines += ["", "summary:", payload["summary"]]
    for link in payload.get("links") or []:
        lines += [
            "",
            f"Step {link['step']} ({link['agent']}) is waiting for a decision:",
            f"  approveUrl: {link['approveUrl']}",
            f"  rejectUrl: {link['rejectUrl']}",
        ]
    return "\n".join(lines).rstrip() + "\n"


def redact_body(body: str) -> str:
    """The body as the delivery log shows it: approve/reject links hidden,
    because they decide without a login and every role can read the log."""
    try:
        data = json.loads(body)
    except ValueError:
        return body
    if not isinstance(data, dict):
        return body
    for key in ("approveUrl", "rejectUrl"):
        if data.get(key):
            data[key] = REDACTED
    for link in data.get("links") or []:
        if isinstance(link, dict):
            for key in ("approveUrl", "rejectUrl"):
                if link.get(key):
                    link[key] = REDACTED
    return json.dumps(data, ensure_ascii=False)


# ------------------------------------------------------------------ dispatch


def _mail_category(event: str) -> str:
    return "approvals" if event == "awaiting-approval" else "run-alerts"


def dispatch(
    workspace: Workspace,
    event: str,
    *,
    payload_for: Callable[[str], dict],
    run_public_id: str = "",
    config: NotifyConfig | None = None,
) -> None:
    """Send `event` to the workspace's destination when it asked for it.

    `payload_for(address)` builds the body for one recipient (links bound to
    an approver's address when the mail goes to one; "" for anyone else).
    """
    config = config if config is not None else notify_config_for(workspace)
    if config is None or not config.wants(event):
        return
    if config.is_webhook:
        body = json.dumps(payload_for(""), ensure_ascii=False)
        do_record_delivery(workspace, event, body, run_public_id=run_public_id)
    if config.email:
        payload = payload_for(config.email)
        headline = payload["text"].split(" · ", 1)[0]
        send_mail(
            to=config.email,
            subject=subject_for(headline, payload.get("summary") or ""),
            body=render_body(payload),
            category=_mail_category(event),
            account=workspace.account,
            workspace=workspace,
        )


def _gate_links(run, approver: str) -> list[dict]:
    """A pair of links per step waiting at a `!` gate (an `ask:` or a
    `wait: event` park gets none)."""
    from runs.models import Approval, ApprovalKind, ApprovalState

    links = []
    pending = (
        Approval.objects.filter(run=run, state=ApprovalState.PENDING, kind=ApprovalKind.GATE)
        .select_related("step")
        .order_by("step__index", "step__instance", "pk")
    )
    for approval in pending:
        expires = approval.expires_at or (approval.created_at + DEFAULT_APPROVE_WITHIN)
        bound = approver if approver and approver.lower() in _approvers_of(approval) else ""
        pair = approval_links(approval.step.public_id, expires, bound)
        if pair is None:
            return []
        links.append({"step": approval.step.index, "agent": approval.step.agent,
                      "approveUrl": pair[0], "rejectUrl": pair[1]})
    return links


def _approvers_of(approval) -> list[str]:
    names = list(approval.approvers or []) or list(approval.step.approvers or [])
    return [str(n).strip().lower() for n in names if isinstance(n, str) and "@" in n]


def handle_run_event(run, event: str, approval=None) -> None:
    """What a run event sends. Called once per event, after its commit."""
    workspace = run.workspace
    is_flow = run.kind == "flow"
    if event == "completed":
        if is_flow:
            # A quarantine is forgotten as soon as the flow succeeds again.
            Mark.objects.filter(workspace=workspace, event="quarantined", key=run.name).delete()
        if run.kind in ("adhoc", "eval"):
            pass  # the person who started it is watching it
        elif run.verdict == "BLOCKED":
            pass  # sent as its own `blocked` event; a completed-only list does not hear it
        else:
            dispatch(workspace, "completed", payload_for=lambda _a: run_payload(run, "completed", []),
                     run_public_id=run.public_id)
        check_budget(workspace)
    elif event == "blocked":
        if run.kind not in ("adhoc", "eval"):
            dispatch(workspace, "blocked", payload_for=lambda _a: run_payload(run, "blocked", []),
                     run_public_id=run.public_id)
    elif event == "failed":
        dispatch(workspace, "failed", payload_for=lambda _a: run_payload(run, "failed", []),
                 run_public_id=run.public_id)
        if is_flow:
            _quarantine_from_schedule(run)
        check_budget(workspace)
    elif event == "awaiting-approval":
        _send_awaiting_approval(run, approval)
    elif event == "quarantined":
        # Also noticed from `failed` (the schedule is already marked then);
        # the mark makes the second notice a no-op.
        if is_flow:
            notify_quarantined(workspace, run.name)
    elif event == "sla":
        if once(workspace, "sla", run.public_id):
            dispatch(workspace, "sla", payload_for=lambda _a: run_payload(run, "sla", []),
                     run_public_id=run.public_id)


def _send_awaiting_approval(run, approval) -> None:
    workspace = run.workspace
    config = notify_config_for(workspace)
    dispatch(workspace, "awaiting-approval", payload_for=lambda a: run_payload(run, "awaiting-approval", _gate_links(run, a)),
             run_public_id=run.public_id, config=config)
    # The step's approvers hear of it whatever `notify:` says: a gate with
    # links bound to their own address; an `ask:` with its question, to be
    # answered on the run page (an answer is words, not a click).
    if approval is None or approval.kind not in ("gate", "ask"):
        return
    already = (config.email or "").lower() if (config and config.email and config.wants("awaiting-approval")) else ""
    for address in _approvers_of(approval):
        if address == already:
            continue
        payload = run_payload(run, "awaiting-approval", _gate_links(run, address))
        body = render_body(payload)
        if approval.kind == "ask":
            base = public_url()
            where = f"\nAnswer it on the run page: {base}/w/{workspace.name}/runs/{run.public_id}\n" if base else ""
            body += f"\nStep {approval.step.index} ({approval.step.agent}) asks:\n{approval.question}\n{where}"
        send_mail(
            to=address,
            subject=subject_for(payload["text"].split(" · ", 1)[0], run.summary),
            body=body,
            category="approvals",
            account=workspace.account,
            workspace=workspace,
        )


# ------------------------------------------------------- once per occurrence


def once(workspace: Workspace, event: str, key: str) -> bool:
    """True the first time (workspace, event, key) is seen; False ever after."""
    try:
        with transaction.atomic():
            Mark.objects.create(workspace=workspace, event=event, key=key[:200])
    except IntegrityError:
        return False
    return True


def notify_quarantined(workspace: Workspace, flow: str) -> bool:
    """A flow's `disable_after:` tripped. Sends `quarantined` once per
    occurrence; returns whether it sent. For the runs engine to call."""
    if not once(workspace, "quarantined", flow):
        return False
    text = f"🚫 {flow} is quarantined: it failed too many times in a row and has stopped firing"
    dispatch(workspace, "quarantined", payload_for=lambda _a: workspace_payload(workspace, text, flow=flow,
                                                                               status="quarantined"))
    return True


def _quarantine_from_schedule(run) -> None:
    from runs.models import Schedule

    if Schedule.objects.filter(workspace=run.workspace, flow=run.name, quarantined_at__isnull=False).exists():
        notify_quarantined(run.workspace, run.name)


WINDOWS = ("day", "week", "month")


def window_start(window: str, now: datetime) -> datetime:
    day = now.astimezone(dt_timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    if window == "day":
        return day
    if window == "week":
        return day - timedelta(days=day.weekday())
    return day.replace(day=1)


def check_budget(workspace: Workspace, now: datetime | None = None) -> list[int]:
    """Send `budget` when the workspace's spend in its window first passes
    80%, then 95%, of `budget:`. Marks are keyed by the window's start, so
    they reset when it turns. Returns the marks sent."""
    from runs.models import Run

    raw = inherited(workspace, "budget")
    if not isinstance(raw, dict):
        return []
    now = now or timezone.now()
    sent: list[int] = []
    for window, amount in raw.items():
        if window not in WINDOWS:
            continue
        try:
            limit = Decimal(str(amount))
        except Exception:
            continue
        if limit <= 0:
            continue
        start = window_start(window, now)
        spent = Run.objects.filter(workspace=workspace, created_at__gte=start).aggregate(s=Sum("cost_usd"))["s"] or 0
        crossed = [m for m in (80, 95) if Decimal(spent) >= limit * m / 100]
        fresh = [m for m in crossed if once(workspace, "budget", f"{window}:{start.date().isoformat()}:{m}")]
        if fresh:
            mark = max(fresh)
            label = {"day": "daily", "week": "weekly", "month": "monthly"}[window]
            text = f"💸 {workspace.name} has spent {mark}% of its {label} budget (${float(spent):.2f} of ${float(limit):.2f})"
            dispatch(workspace, "budget", payload_for=lambda _a, t=text, s=spent: workspace_payload(
                workspace, t, cost=_cost(s)))
            sent.append(mark)
    return sent


# ---------------------------------------------------------------- deliveries


def _endpoint_state(workspace: Workspace, url: str | None) -> Endpoint | None:
    """The workspace's endpoint row for `url`, started afresh when the URL changed."""
    if not url:
        return None
    print_ = fingerprint(url)
    endpoint = Endpoint.objects.filter(workspace=workspace).first()
    created = False
    if endpoint is None:
        # Two runs ending at once in a new workspace both get here: the
        # savepoint lets the loser read the winner's row instead of failing.
        try:
            with transaction.atomic():
                endpoint = Endpoint.objects.create(workspace=workspace, fingerprint=print_)
                created = True
        except IntegrityError:
            endpoint = Endpoint.objects.get(workspace=workspace)
    if not created and endpoint.fingerprint != print_:
        Endpoint.objects.filter(pk=endpoint.pk).update(
            fingerprint=print_, failing_since=None, disabled_at=None, owner_mailed_at=None, last_success_at=None
        )
        endpoint.refresh_from_db()
    return endpoint


def do_record_delivery(workspace: Workspace, event: str, body: str, *, run_public_id: str = "",
                       now: datetime | None = None) -> Delivery:
    """Record a webhook delivery before its first attempt and queue that attempt.

    A delivery to a switched-off endpoint is recorded `skipped` and not tried.
    """
    now = now or timezone.now()
    config = notify_config_for(workspace)
    url = webhook_url(workspace, config) if config is not None else None
    with transaction.atomic():
        endpoint = _endpoint_state(workspace, url)
        skipped = endpoint is not None and endpoint.disabled_at is not None
        delivery = Delivery.objects.create(
            account=workspace.account,
            workspace=workspace,
            event=event,
            run_public_id=run_public_id,
            body=body,
            status=DeliveryStatus.SKIPPED if skipped else DeliveryStatus.PENDING,
            next_attempt_at=None if skipped else now,
            finished_at=now if skipped else None,
            endpoint_fingerprint=endpoint.fingerprint if endpoint else "",
        )
        if not skipped:
            transaction.on_commit(kick_drain)
    return delivery


KICK = "deliveries"


def kick_drain() -> None:
    """See that a drain of due deliveries is on its way (see `Kick`). A
    broker failure loses nothing: the row is due and the sweep finds it."""
    from .models import Kick
    from .tasks import drain_deliveries

    try:
        if not Kick.objects.filter(name=KICK, pending=False).update(pending=True):
            if Kick.objects.filter(name=KICK).exists():
                return  # one is already on its way
            try:
                with transaction.atomic():
                    Kick.objects.create(name=KICK, pending=True)
            except IntegrityError:
                return
        drain_deliveries.delay()
    except Exception as exc:  # noqa: BLE001 — any broker or database hiccup; the sweep is the backstop
        log.warning("could not queue a delivery drain (%s); the sweep will", type(exc).__name__)


def drain(max_seconds: float = 30.0) -> int:
    """Attempt due deliveries in batches until none is left (or for
    `max_seconds`, then hand on to a fresh drain). Returns how many."""
    from .models import Kick

    Kick.objects.filter(name=KICK).update(pending=False)
    started = time.monotonic()
    done = 0
    while True:
        results = perform_batch([], fill=True)
        done += len(results)
        if not results:
            return done
        if len(results) == BATCH or time.monotonic() - started > max_seconds:
            # More is waiting: let another worker process join in (or take over).
            kick_drain()
        if time.monotonic() - started > max_seconds:
            return done


def _enqueue(task, pk: int, countdown: float | None = None) -> None:
    """Queue an attempt. A broker hiccup loses nothing: the row is due in the
    database and the beat sweep picks it up."""
    try:
        if countdown:
            task.apply_async((pk,), countdown=countdown)
        else:
            task.delay(pk)
    except Exception as exc:  # noqa: BLE001 — any broker failure; the sweep is the backstop
        log.warning("could not queue delivery %s (%s); the sweep will", pk, type(exc).__name__)


class MissingSecret(Exception):
    """A secret `notify:` names is in neither vault; the message says which."""


def signing_secrets(workspace: Workspace, config: NotifyConfig | None, now: datetime) -> list[bytes]:
    """The keys to sign with, newest first: the current value of
    `signing_secret:`, plus the previous one for a day after it changed."""
    if config is None or not config.signing_secret:
        return []
    value = read_secret(workspace.account, workspace, config.signing_secret)
    if not value:
        raise MissingSecret(
            f"the signing secret {config.signing_secret} is in neither the workspace's vault nor the account's, "
            "so nothing was sent unsigned"
        )
    print_ = fingerprint(value)
    with transaction.atomic():
        state = SigningKeyState.objects.select_for_update().filter(workspace=workspace, name=config.signing_secret).first()
        if state is None:
            SigningKeyState.objects.create(workspace=workspace, name=config.signing_secret, fingerprint=print_,
                                           current_ciphertext=seal(value))
            return [value.encode()]
        if state.fingerprint != print_:
            state.previous_ciphertext = state.current_ciphertext
            state.current_ciphertext = seal(value)
            state.fingerprint = print_
            # The day counts from when the vault took the new value, not from
            # the first delivery to notice it.
            state.rotated_at = min(now, _secret_changed_at(workspace, config.signing_secret) or now)
            state.save(update_fields=["previous_ciphertext", "current_ciphertext", "fingerprint", "rotated_at"])
    keys = [value.encode()]
    if state.rotated_at and now - state.rotated_at < ROTATION_OVERLAP:
        previous = unseal(state.previous_ciphertext)
        if previous and previous != value:
            keys.append(previous.encode())
    return keys


def _secret_changed_at(workspace: Workspace, name: str) -> datetime | None:
    """When the secret `name` (nearest wins) last took a value in the vault."""
    from vault.models import Secret

    rows = Secret.objects.filter(account=workspace.account, name=name).filter(
        Q(workspace=workspace) | Q(workspace__isnull=True))
    nearest = sorted(rows, key=lambda r: r.workspace_id is None)  # the workspace's own first
    return nearest[0].updated_at if nearest else None


def _destination(workspace: Workspace, now: datetime) -> tuple[str | None, list[bytes], Outcome | None]:
    """(URL, signing keys, None) for a workspace's webhook now, or an
    Outcome saying why nothing can be sent."""
    try:
        config = notify_config_for(workspace)
        url = webhook_url(workspace, config) if config is not None and config.is_webhook else None
        secrets = signing_secrets(workspace, config, now) if url else []
    except MissingSecret as exc:
        return None, [], Outcome(False, None, 0, "", str(exc))
    except Exception as exc:  # noqa: BLE001 — recorded as this attempt's error, so it is retried, not looped on
        log.exception("reading notify: of workspace %s failed", workspace.public_id)
        return None, [], Outcome(False, None, 0, "", f"could not read notify: or its secrets now ({type(exc).__name__})")
    if not url:
        if config is not None and config.url_secret:
            return None, [], Outcome(False, None, 0, "", f"the webhook URL secret {config.url_secret} is in neither "
                                                         "the workspace's vault nor the account's")
        return None, [], Outcome(False, None, 0, "", "the workspace's notify: names no webhook URL now")
    return url, secrets, None


def _post(delivery: Delivery, number: int, url: str, secrets: list[bytes]) -> Outcome:
    body = delivery.body.encode()
    headers = delivery_headers(
        delivery_id=delivery.public_id,
        event=delivery.event,
        attempt=number,
        body=body,
        timestamp=int(time.time()),
        secrets=secrets,
    )
    return post_once(url, body, headers)


def _send_attempt(delivery: Delivery, number: int, now: datetime) -> tuple[Outcome, str | None]:
    """POST the delivery's body as attempt `number`, reading the URL and the
    signing secret now. Returns the outcome and the URL it went to."""
    url, secrets, refused = _destination(delivery.workspace, now)
    if refused is not None:
        return refused, None
    return _post(delivery, number, url, secrets), url


def claim(delivery_pk: int, now: datetime) -> bool:
    """Take a due delivery for one attempt; False when another worker holds
    it, it is not due, or it is finished. A conditional update, so two
    workers handed the same delivery send it once."""
    return bool(_due(now).filter(pk=delivery_pk).update(lease_until=now + LEASE))


def _due(now: datetime):
    return Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now).filter(
        Q(lease_until__isnull=True) | Q(lease_until__lt=now)
    )


# A worker takes up to this many due deliveries at once and posts them in
# parallel: the per-attempt cost of the task, the queries and the commits is
# shared, and one slow receiver holds up no more than one round of 8 s.
BATCH = 16


def _claim_many(pks: list[int], now: datetime, fill: bool) -> list[Delivery]:
    """Claim `pks` (those still due) and, with `fill`, other due deliveries
    up to BATCH. Conditional updates under a fresh token: what this worker
    got is exactly what carries its token."""
    token = uuid.uuid4().hex
    lease = now + LEASE
    if not pks:
        # A drain: the oldest due ones nobody holds; rows another drain is
        # claiming right now are skipped rather than waited for.
        with transaction.atomic():
            pks_due = list(_due(now).select_for_update(skip_locked=True).order_by("next_attempt_at")
                           .values_list("pk", flat=True)[:BATCH])
            if pks_due:
                _due(now).filter(pk__in=pks_due).update(lease_until=lease, lease_token=token)
        return list(Delivery.objects.select_related("workspace", "workspace__account").filter(lease_token=token))
    own = _due(now).filter(pk__in=pks).update(lease_until=lease, lease_token=token)
    if not own:
        # Another worker's batch took it (or it is not due): every other due
        # delivery has its own task or the sweep, so this one stops here.
        return []
    if fill and len(pks) < BATCH:
        others = list(_due(now).exclude(pk__in=pks).order_by("next_attempt_at").values_list("pk", flat=True)[
            : BATCH - len(pks)])
        if others:
            _due(now).filter(pk__in=others).update(lease_until=lease, lease_token=token)
    return list(Delivery.objects.select_related("workspace", "workspace__account").filter(lease_token=token))


@dataclass
class AttemptResult:
    attempt: Attempt
    next_attempt_at: datetime | None
    gave_up: bool


@dataclass
class _Sent:
    delivery: Delivery
    number: int
    outcome: Outcome
    url: str | None
    started: datetime
    finished: datetime
    redelivery: bool = False


def perform_attempt(delivery_pk: int, *, now: datetime | None = None,
                    clock: Callable[[], datetime] | None = None) -> AttemptResult | None:
    """Claim a due delivery, make its next attempt and record it.

    None when it was not claimable (not due, held, or done). `clock` gives
    the time the attempt finished (the retry delay counts from it).
    """
    results = perform_batch([delivery_pk], now=now, clock=clock, fill=False)
    return results[0] if results else None


def perform_batch(pks: list[int], *, now: datetime | None = None, clock: Callable[[], datetime] | None = None,
                  fill: bool = True) -> list[AttemptResult]:
    """Claim due deliveries (`pks`, topped up to BATCH with other due ones
    when `fill`), post them in parallel and record every attempt."""
    now = now or timezone.now()
    deliveries = _claim_many(pks, now, fill)
    if not deliveries:
        return []
    destinations: dict[int, tuple[str | None, list[bytes], Outcome | None]] = {}
    for delivery in deliveries:
        if delivery.workspace_id not in destinations:
            destinations[delivery.workspace_id] = _destination(delivery.workspace, now)

    def send(delivery: Delivery) -> _Sent:
        url, secrets, refused = destinations[delivery.workspace_id]
        number = delivery.attempts_made + 1
        outcome = refused if refused is not None else _post(delivery, number, url, secrets)
        return _Sent(delivery, number, outcome, url if refused is None else None, now, now)

    if len(deliveries) == 1:
        sent = [send(deliveries[0])]
    else:
        sent = list(_pool().map(send, deliveries))
    # One finishing time for the batch (the slowest attempt's end): retries
    # count from it, and rows that share it are updated together.
    finished = clock() if clock else now + timedelta(milliseconds=max(i.outcome.duration_ms for i in sent))
    for item in sent:
        item.finished = finished
    return _record_many(sent)


_pool_lock = threading.Lock()
_executor: ThreadPoolExecutor | None = None
_executor_pid = 0


def _pool() -> ThreadPoolExecutor:
    """One thread pool per process (made after a prefork worker forks)."""
    global _executor, _executor_pid
    with _pool_lock:
        if _executor is None or _executor_pid != os.getpid():
            _executor = ThreadPoolExecutor(max_workers=BATCH, thread_name_prefix="notify-post")
            _executor_pid = os.getpid()
        return _executor


def _record(delivery_pk: int, number: int, outcome: Outcome, url: str | None, *, started: datetime,
            finished: datetime, redelivery: bool, workspace: Workspace | None = None) -> AttemptResult:
    delivery = Delivery.objects.select_related("workspace").get(pk=delivery_pk)
    return _record_many([_Sent(delivery, number, outcome, url, started, finished, redelivery)])[0]


def _record_many(items: list[_Sent]) -> list[AttemptResult]:
    """Write the attempts down and set what comes next, in one transaction.
    Precondition: the caller holds each delivery's lease, so no other worker
    touches those rows."""
    from .tasks import attempt_delivery

    results: list[AttemptResult] = []
    retries: list[tuple[int, datetime]] = []
    rows = []
    for item in items:
        d = item.delivery
        next_at: datetime | None = None
        gave_up = False
        d.attempts_made, d.lease_until, d.lease_token = item.number, None, ""
        if item.outcome.ok:
            d.status, d.next_attempt_at, d.finished_at = DeliveryStatus.SUCCEEDED, None, item.finished
        elif item.redelivery:
            d.status, d.next_attempt_at, d.finished_at = DeliveryStatus.FAILED, None, item.finished
        elif item.number >= MAX_ATTEMPTS:
            d.status, d.next_attempt_at, d.finished_at = DeliveryStatus.FAILED, None, item.finished
            gave_up = True
        else:
            next_at = item.finished + timedelta(seconds=RETRY_DELAYS[item.number - 1])
            d.next_attempt_at = next_at
            retries.append((d.pk, next_at))
        rows.append(Attempt(
            delivery_id=d.pk, number=item.number, redelivery=item.redelivery, started_at=item.started,
            status_code=item.outcome.status_code, duration_ms=item.outcome.duration_ms,
            response_excerpt=item.outcome.excerpt[:500], error=item.outcome.error[:500], ok=item.outcome.ok,
        ))
        results.append(AttemptResult(rows[-1], next_at, gave_up))
    with transaction.atomic():
        Attempt.objects.bulk_create(rows)
        # Rows that end the same way share one UPDATE (a batch is mostly one group).
        fields = ["attempts_made", "lease_until", "lease_token", "status", "next_attempt_at", "finished_at"]
        groups_by_values: dict[tuple, list[int]] = {}
        for item in items:
            values = tuple(getattr(item.delivery, f) for f in fields)
            groups_by_values.setdefault(values, []).append(item.delivery.pk)
        for values, pks in groups_by_values.items():
            Delivery.objects.filter(pk__in=pks).update(**dict(zip(fields, values)))
        # The endpoint, once per workspace and URL in this batch.
        groups: dict[tuple[int, str], list[tuple[_Sent, AttemptResult]]] = {}
        for item, result in zip(items, results):
            if item.url:
                groups.setdefault((item.delivery.workspace_id, item.url), []).append((item, result))
        for (_ws, url), members in groups.items():
            workspace = members[0][0].delivery.workspace
            endpoint = _endpoint_state(workspace, url)
            accepted = [i for i, _r in members if i.outcome.ok]
            if accepted:
                if endpoint.failing_since is not None or endpoint.disabled_at is not None:
                    # The first accepted attempt (a redelivery or a test too) switches it back on.
                    Endpoint.objects.filter(pk=endpoint.pk).update(
                        failing_since=None, disabled_at=None, owner_mailed_at=None,
                        last_success_at=max(i.finished for i in accepted),
                    )
                continue
            if endpoint.failing_since is None:
                first = min(i.started for i, _r in members)
                Endpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=True).update(failing_since=first)
            gave_up = [i for i, r in members if r.gave_up]
            if gave_up:
                _maybe_switch_off(endpoint.pk, workspace, max(i.finished for i in gave_up))
        for pk, next_at in retries:
            delay = max(0.0, (next_at - timezone.now()).total_seconds())
            transaction.on_commit(lambda pk=pk, delay=delay: _enqueue(attempt_delivery, pk, countdown=delay))
    return results


def _maybe_switch_off(endpoint_pk: int, workspace: Workspace, now: datetime) -> None:
    """Switch the endpoint off when it has failed for FOLDRUN_WEBHOOK_DISABLE_DAYS
    running, and mail the owner — once, even when two workers give up at once
    (the conditional update lets exactly one through)."""
    cutoff = now - timedelta(days=settings.FOLDRUN_WEBHOOK_DISABLE_DAYS)
    switched = Endpoint.objects.filter(
        pk=endpoint_pk, disabled_at__isnull=True, failing_since__isnull=False, failing_since__lte=cutoff
    ).update(disabled_at=now)
    if not switched:
        return
    mailed = Endpoint.objects.filter(pk=endpoint_pk, owner_mailed_at__isnull=True).update(owner_mailed_at=now)
    if mailed:
        transaction.on_commit(lambda: _mail_owner_switched_off(workspace))


def _mail_owner_switched_off(workspace: Workspace) -> None:
    owner = (
        Membership.objects.filter(account=workspace.account, role=Role.OWNER)
        .select_related("user").order_by("created_at", "pk").first()
    )
    if owner is None or not owner.user.email:
        return
    days = settings.FOLDRUN_WEBHOOK_DISABLE_DAYS
    send_platform_mail(
        to=owner.user.email,
        subject=f"The notification webhook of {workspace.name} has been switched off",
        body=(
            f"Every attempt to deliver {workspace.name}'s notifications to its webhook has failed for {days} days "
            "running, so foldrun has switched the webhook off. Deliveries made while it is off are recorded as "
            "skipped, not attempted.\n\n"
            f"To turn it back on, fix the receiver and press Redeliver on a delivery, or send a test "
            f"(foldrun notify test --to {workspace.name}): the first accepted one switches it on. "
            "Changing the URL in notify: starts it fresh.\n"
        ),
        category="account",
    )


# --------------------------------------------------------------- redelivery


def check_redeliver(workspace: Workspace, delivery_id: str) -> Delivery:
    delivery = Delivery.objects.filter(workspace=workspace, public_id=delivery_id).first()
    if delivery is None:
        from foldrun.api import NotFound

        raise NotFound()
    if delivery.status == DeliveryStatus.PENDING:
        raise ApiError(
            f"Delivery {delivery.public_id} is still being retried on its schedule; redeliver it once it has finished.",
            code="delivery_pending", status_code=409,
        )
    return delivery


def do_redeliver(delivery: Delivery) -> Attempt:
    """One attempt now: the same id and body, signed afresh. Goes even to a
    switched-off endpoint — an accepted redelivery is how it comes back on."""
    started = timezone.now()
    # Hold the row while sending so two presses make two ordered attempts, not one number twice.
    taken = Delivery.objects.filter(pk=delivery.pk, lease_until__isnull=True).exclude(
        status=DeliveryStatus.PENDING).update(lease_until=started + LEASE)
    if not taken:
        raise ApiError(f"Delivery {delivery.public_id} is being sent right now; try again in a moment.",
                       code="delivery_busy", status_code=409)
    delivery.refresh_from_db()
    number = delivery.attempts_made + 1
    outcome, url = _send_attempt(delivery, number, started)
    finished = started + timedelta(milliseconds=outcome.duration_ms)
    return _record(delivery.pk, number, outcome, url, started=started, finished=finished, redelivery=True,
                   workspace=delivery.workspace).attempt


# ------------------------------------------------------------------ test send


def do_send_test(workspace: Workspace) -> dict:
    """Send one real message to the saved destination and report what came back."""
    config = notify_config_for(workspace)
    if config is None:
        raise ApiError(
            f"{workspace.name} has no notify: destination; add notify: to its AGENTS.md or the account's.",
            code="no_destination", status_code=400,
        )
    text = f"✅ Test notification from foldrun for {workspace.name}"
    payload = workspace_payload(workspace, text)
    result: dict = {"workspace": workspace.name}
    if config.is_webhook:
        started = timezone.now()
        with transaction.atomic():
            delivery = Delivery.objects.create(
                account=workspace.account, workspace=workspace, event="test",
                body=json.dumps(payload, ensure_ascii=False), status=DeliveryStatus.FAILED,
                lease_until=started + LEASE,
            )
        outcome, url = _send_attempt(delivery, 1, started)
        finished = started + timedelta(milliseconds=outcome.duration_ms)
        attempt = _record(delivery.pk, 1, outcome, url, started=started, finished=finished, redelivery=True).attempt
        result.update({
            "destination": "webhook",
            "ok": attempt.ok,
            "deliveryId": delivery.public_id,
            "statusCode": attempt.status_code,
            "durationMs": attempt.duration_ms,
            "response": attempt.response_excerpt,
            "message": (f"The receiver answered {attempt.status_code}." if attempt.ok
                        else f"The receiver did not accept it: {attempt.error.rstrip('.')}."
                        + (f" It said: {attempt.response_excerpt}" if attempt.response_excerpt else "")),
        })
    if config.email:
        sent: SendResult = send_mail(
            to=config.email, subject=text, body=render_body(payload), category="run-alerts",
            account=workspace.account, workspace=workspace,
        )
        result.update({"destination": "email", "ok": sent.sent, "to": config.email, **{
            "provider": sent.provider, "statusCode": sent.status_code, "messageId": sent.message_id,
            "message": sent.message}})
    return result


# ---------------------------------------------------------------- retention


def do_purge_old_deliveries(now: datetime | None = None) -> int:
    """Drop deliveries older than the 30-day log (finished ones only)."""
    from .models import LOG_RETENTION_DAYS

    cutoff = (now or timezone.now()) - timedelta(days=LOG_RETENTION_DAYS)
    from .models import MailSend

    deleted, _ = Delivery.objects.filter(created_at__lt=cutoff).exclude(status=DeliveryStatus.PENDING).delete()
    MailSend.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def due_delivery_ids(now: datetime | None = None, limit: int = 20000) -> list[int]:
    """Pending deliveries whose attempt is due and that nobody holds."""
    now = now or timezone.now()
    return list(
        Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now)
        .filter(Q(lease_until__isnull=True) | Q(lease_until__lt=now))
        .order_by("next_attempt_at")
        .values_list("pk", flat=True)[:limit]
    )
