"""What a run event (or a workspace alarm) sends, and the bodies it sends:
the spec's payload fields, the mail's subject and text, approve/reject
links per approver, and the once-per-occurrence alarms (`sla`,
`quarantined`, `budget`).

Nothing here sends: a webhook is a Delivery row (notify/deliveries.py) and
a mail an outbox row (notify/outbox.py), both written in the caller's
transaction and attempted by workers after it commits.
"""

from __future__ import annotations

import json
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Callable

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Workspace
from foldrun.contract.rules.notify import NotifyConfig
from runs.budget import WINDOWS, spent_in_window, window_start
from runs.models import Approval, ApprovalKind, ApprovalState, Schedule

from .config import agents_metas, inherited, notify_config_for
from .deliveries import do_record_delivery
from .headlines import first_line, headline_text
from .links import DEFAULT_APPROVE_WITHIN, approval_links, public_url
from .models import Mark
from .outbox import queue_mail

REDACTED = "[redacted]"


# ------------------------------------------------------------------ payloads


def _iso(value: datetime | None) -> str | None:
    return value.isoformat().replace("+00:00", "Z") if value else None


_first_line = first_line


def headline_for(run, event: str) -> str:
    return headline_text(run.name, event, headline=run.headline or "", error=run.error or "", status=run.status)


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


def workspace_payload(
    workspace: Workspace, text: str, *, flow: str | None = None, status: str | None = None, cost: float | None = None
) -> dict:
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
    config: NotifyConfig | None | object = ...,
) -> None:
    """Send `event` to the workspace's destination when it asked for it.

    `payload_for(address)` builds the body for one recipient (links bound to
    an approver's address when the mail goes to one; "" for anyone else).
    """
    if config is ...:  # not read by the caller (None: read, and the workspace has no notify: block)
        config = notify_config_for(workspace)
    if config is None or not config.wants(event):
        return
    if config.is_webhook:
        body = json.dumps(payload_for(""), ensure_ascii=False)
        do_record_delivery(workspace, event, body, run_public_id=run_public_id, config=config)
    if config.email:
        payload = payload_for(config.email)
        headline = payload["text"].split(" · ", 1)[0]
        queue_mail(
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
        links.append(
            {"step": approval.step.index, "agent": approval.step.agent, "approveUrl": pair[0], "rejectUrl": pair[1]}
        )
    return links


def _approvers_of(approval) -> list[str]:
    names = list(approval.approvers or []) or list(approval.step.approvers or [])
    return [str(n).strip().lower() for n in names if isinstance(n, str) and "@" in n]


def metas_for(workspace: Workspace, event: str, *, heads: str | None = None) -> list[dict] | None:
    """AGENTS.md as `event` reads it (notify:, budget:), read once for the event; None for an event that
    reads it only where it needs it. `heads`: agents_metas' (the run's closing query may carry them)."""
    return agents_metas(workspace, heads=heads) if event in ("completed", "failed") else None


def may_have_quarantine_mark(run) -> bool:
    """Whether a `quarantined` mark of the run's flow can be there to forget. A mark is written only while the
    flow's schedule is quarantined, and goes when a success clears that quarantine (here, in the same
    transaction) or the schedule row goes (receivers.py): none can be there while no schedule of the flow is
    quarantined. `run.quarantined`: whether one was when the run's closing transaction took its lock (the
    closing query's annotation); a run read elsewhere has none, and its mark is looked for."""
    return run.kind == "flow" and getattr(run, "quarantined", True)


def completed_writes_nothing(run, metas: list[dict]) -> bool:
    """True when `completed` certainly writes no row for this run (no mark to forget, no `budget:`, and no
    `notify:` block to send it by, or a run that sends no `completed`). Reads nothing."""
    if may_have_quarantine_mark(run) or isinstance(inherited(run.workspace, "budget", metas=metas), dict):
        return False
    return (
        run.kind in ("adhoc", "eval")
        or run.verdict == "BLOCKED"
        or inherited(run.workspace, "notify", metas=metas) is None
    )


def handle_run_event(run, event: str, approval=None, *, metas: list[dict] | None | object = ...) -> None:
    """What a run event sends: rows only — deliveries and outbox mail —
    written in the caller's transaction (the run's own, see receivers.py),
    attempted by workers once it commits. `metas`: metas_for's answer when
    the caller read it."""
    workspace = run.workspace
    is_flow = run.kind == "flow"
    # AGENTS.md read once for the event, whatever it reads of it (notify:, budget:).
    metas = metas_for(workspace, event) if metas is ... else metas
    if event == "completed":
        if may_have_quarantine_mark(run):
            # A quarantine is forgotten as soon as the flow succeeds again. Mark has no relations or delete
            # signals: one DELETE, not the deletion collector's work.
            Mark.objects.filter(workspace=workspace, event="quarantined", key=run.name)._raw_delete(Mark.objects.db)
        if run.kind in ("adhoc", "eval"):
            pass  # the person who started it is watching it
        elif run.verdict == "BLOCKED":
            pass  # sent as its own `blocked` event; a completed-only list does not hear it
        else:
            dispatch(
                workspace,
                "completed",
                payload_for=lambda _a: run_payload(run, "completed", []),
                run_public_id=run.public_id,
                config=notify_config_for(workspace, metas=metas),
            )
        check_budget(workspace, metas=metas)
    elif event == "blocked":
        if run.kind not in ("adhoc", "eval"):
            dispatch(
                workspace,
                "blocked",
                payload_for=lambda _a: run_payload(run, "blocked", []),
                run_public_id=run.public_id,
            )
    elif event == "failed":
        dispatch(
            workspace,
            "failed",
            payload_for=lambda _a: run_payload(run, "failed", []),
            run_public_id=run.public_id,
            config=notify_config_for(workspace, metas=metas),
        )
        if is_flow:
            _quarantine_from_schedule(run, metas=metas)
        check_budget(workspace, metas=metas)
    elif event == "awaiting-approval":
        _send_awaiting_approval(run, approval)
    elif event == "quarantined":
        # Also noticed from `failed` (the schedule is already marked then);
        # the mark makes the second notice a no-op.
        if is_flow:
            notify_quarantined(workspace, run.name)
    elif event == "sla":
        if once(workspace, "sla", run.public_id):
            dispatch(workspace, "sla", payload_for=lambda _a: run_payload(run, "sla", []), run_public_id=run.public_id)


def _send_awaiting_approval(run, approval) -> None:
    workspace = run.workspace
    config = notify_config_for(workspace)
    dispatch(
        workspace,
        "awaiting-approval",
        payload_for=lambda a: run_payload(run, "awaiting-approval", _gate_links(run, a)),
        run_public_id=run.public_id,
        config=config,
    )
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
        queue_mail(
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


def notify_quarantined(workspace: Workspace, flow: str, *, metas: list[dict] | None = None) -> bool:
    """A flow's `disable_after:` tripped. Sends `quarantined` once per
    occurrence; returns whether it sent. For the runs engine to call.
    `metas`: AGENTS.md as the caller read it (config.agents_metas)."""
    if not once(workspace, "quarantined", flow):
        return False
    text = f"🚫 {flow} is quarantined: it failed too many times in a row and has stopped firing"
    dispatch(
        workspace,
        "quarantined",
        payload_for=lambda _a: workspace_payload(workspace, text, flow=flow, status="quarantined"),
        config=notify_config_for(workspace, metas=metas),
    )
    return True


def forget_quarantine_of_schedule(workspace_id: int, flow: str) -> None:
    """A schedule row that goes takes its quarantine with it (beat removes the row of a flow whose file lost
    its `schedule:`): its mark goes too, so the mark is never there without a quarantined schedule (see
    may_have_quarantine_mark) and the flow's next quarantine is announced as its own."""
    Mark.objects.filter(workspace_id=workspace_id, event="quarantined", key=flow)._raw_delete(Mark.objects.db)


def _quarantine_from_schedule(run, *, metas: list[dict] | None = None) -> None:
    if Schedule.objects.filter(workspace=run.workspace, flow=run.name, quarantined_at__isnull=False).exists():
        notify_quarantined(run.workspace, run.name, metas=metas)


def check_budget(workspace: Workspace, now: datetime | None = None, *, metas: list | None = None) -> list[int]:
    """Send `budget` when the workspace's spend in its window first passes
    80%, then 95%, of `budget:`. Marks are keyed by the window's start, so
    they reset when it turns. Returns the marks sent. `metas`: AGENTS.md as
    the caller read it (config.agents_metas); read here once otherwise, for `budget:` and `notify:` alike."""
    metas = agents_metas(workspace) if metas is None else metas
    raw = inherited(workspace, "budget", metas=metas)
    if not isinstance(raw, dict):
        return []
    now = now or timezone.now()
    sent: list[int] = []
    for window, amount in raw.items():
        if window not in WINDOWS:
            continue
        try:
            limit = Decimal(str(amount))
        except InvalidOperation:  # not a number: no alert for that window, as for an unknown window
            continue
        if not limit.is_finite() or limit <= 0:  # NaN orders against nothing; infinity is no limit
            continue
        start = window_start(window, now)
        spent = spent_in_window(workspace.pk, window, now)
        crossed = [m for m in (80, 95) if Decimal(spent) >= limit * m / 100]
        fresh = [m for m in crossed if once(workspace, "budget", f"{window}:{start.date().isoformat()}:{m}")]
        if fresh:
            mark = max(fresh)
            label = WINDOWS[window]
            text = f"💸 {workspace.name} has spent {mark}% of its {label} budget (${float(spent):.2f} of ${float(limit):.2f})"
            dispatch(
                workspace,
                "budget",
                payload_for=lambda _a, t=text, s=spent: workspace_payload(workspace, t, cost=_cost(s)),
                config=notify_config_for(workspace, metas=metas),
            )
            sent.append(mark)
    return sent
