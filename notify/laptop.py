"""Notifications on a laptop install (`foldrun run --local`): no worker to
retry from and no database, so a webhook is one attempt, with the same
headers a server sends, and no log. No Django needed.

For the local runner, after a run ends::

    from notify.laptop import notify_local_run
    notify_local_run(desk, event="completed", run={...}, secrets=laptop_vault)

`desk` is a `foldrun.contract.Desk` (its `files` and `library` give the
workspace's and the account's AGENTS.md; a workspace block replaces the
account's whole).
"""

from __future__ import annotations

import json
import time
from typing import Mapping

from foldrun.contract.findings import ContractError
from foldrun.contract.frontmatter import split_frontmatter
from foldrun.contract.rules.notify import NotifyConfig, parse_notify
from foldrun.ids import new_id

from .headlines import headline_text
from .signing import delivery_headers
from .webhook import Outcome, post_once


def deliver_once(url: str, event: str, payload: dict, *, signing_secret: str | None = None) -> Outcome:
    """POST `payload` to `url` once, signed when a secret is given."""
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = delivery_headers(
        delivery_id=new_id("dlv"),
        event=event,
        attempt=1,
        body=body,
        timestamp=int(time.time()),
        secrets=[signing_secret.encode()] if signing_secret else [],
    )
    return post_once(url, body, headers)


def local_config(desk) -> NotifyConfig | None:
    """The `notify:` a local desk runs under: its AGENTS.md, else the library's."""
    for files in (desk.files, desk.library):
        text = files.get("AGENTS.md")
        if not text:
            continue
        try:
            meta = split_frontmatter(text, "AGENTS.md", required=False).meta
        except ContractError:
            continue
        if "notify" in meta:
            return parse_notify(meta["notify"]).config
    return None


def local_payload(
    *,
    workspace: str,
    run_id: str,
    flow: str,
    status: str,
    verdict: str | None,
    headline: str,
    summary: str,
    cost_usd: float,
    started_at: str | None,
    finished_at: str | None,
    event: str | None = None,
    error: str = "",
) -> dict:
    """The spec's body for a laptop run (links need a server: none here). With `event`, the headline is the
    server's for that event (`⛔ <flow> blocked`, `<flow> failed: …`), not only the engine's."""
    cost = round(float(cost_usd or 0), 4)
    if event is not None:
        headline = headline_text(flow, event, headline=headline, error=error, status=status)
    return {
        "text": f"{headline} · {workspace}/{run_id} · ${cost:.2f}",
        "workspace": workspace,
        "runId": run_id,
        "flow": flow,
        "status": status,
        "verdict": verdict,
        "summary": summary,
        "costUsd": cost,
        "startedAt": started_at,
        "finishedAt": finished_at,
        "approveUrl": None,
        "rejectUrl": None,
        "links": [],
    }


def notify_local_run(desk, *, event: str, payload: dict, secrets: Mapping[str, str]) -> Outcome | None:
    """Send `event` to the desk's webhook once, when it asked for it.
    Returns the outcome, or None when nothing was to be sent (no webhook,
    an event it did not ask for, or a URL secret missing from the vault)."""
    config = local_config(desk)
    if config is None or not config.is_webhook or not config.wants(event):
        return None
    url = config.url or secrets.get(config.url_secret or "")
    if not url:
        return None
    signing = secrets.get(config.signing_secret) if config.signing_secret else None
    if config.signing_secret and not signing:
        return Outcome(
            False,
            None,
            0,
            "",
            f"the signing secret {config.signing_secret} is not in the laptop vault, so nothing was sent unsigned",
        )
    return deliver_once(url, event, payload, signing_secret=signing)
