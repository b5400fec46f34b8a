"""Links that act without a login: approve/reject and unsubscribe.

Their tokens are derived, never stored: an HMAC (django.core.signing, keyed
by the install's link key) over what the link is bound to. Rotating the key
kills every old link. An approve/reject link is spent once its step has
been decided — read from the step's approval, so nothing needs storing.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlencode

from django.conf import settings
from django.core import signing

from .secrets import link_key

APPROVAL_SALT = "foldrun.notify.approval"
UNSUBSCRIBE_SALT = "foldrun.notify.unsubscribe"
DEFAULT_APPROVE_WITHIN = timedelta(days=7)
UNSUBSCRIBE_VALID = timedelta(days=180)


def public_url() -> str | None:
    url = getattr(settings, "FOLDRUN_PUBLIC_URL", None)
    return url.rstrip("/") if url else None


def _key() -> str:
    return link_key().hex()


class LinkError(Exception):
    """Why a link cannot act: `reason` is tampered, expired or spent."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


# ---------------------------------------------------------------- approvals


@dataclass(frozen=True)
class ApprovalClaim:
    step_id: str
    action: str  # approve | reject
    expires: int
    approver: str  # the address the mail went to when it was an approver, else ""


def approval_token(step_id: str, action: str, expires_at: datetime, approver: str = "") -> str:
    payload = {"s": step_id, "a": action, "x": int(expires_at.timestamp()), "to": approver.lower()}
    return signing.dumps(payload, key=_key(), salt=APPROVAL_SALT, compress=True)


def read_approval_token(token: str, *, now: float | None = None) -> ApprovalClaim:
    """The claim a token carries; LinkError when it was altered or has expired."""
    try:
        data = signing.loads(token, key=_key(), salt=APPROVAL_SALT)
        claim = ApprovalClaim(str(data["s"]), str(data["a"]), int(data["x"]), str(data.get("to") or ""))
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise LinkError(
            "tampered",
            "This link is not valid: it was changed, or it was made with a key this install no longer uses. Nothing was changed.",
        ) from None
    if claim.action not in ("approve", "reject"):
        raise LinkError("tampered", "This link is not valid. Nothing was changed.")
    if (now if now is not None else time.time()) > claim.expires:
        raise LinkError("expired", "This link has expired. Nothing was changed; decide from the dashboard instead.")
    return claim


def approval_links(step_id: str, expires_at: datetime, approver: str = "") -> tuple[str, str] | None:
    """(approveUrl, rejectUrl) for a waiting step, or None without FOLDRUN_PUBLIC_URL."""
    base = public_url()
    if base is None:
        return None
    return (
        f"{base}/decide/{approval_token(step_id, 'approve', expires_at, approver)}",
        f"{base}/decide/{approval_token(step_id, 'reject', expires_at, approver)}",
    )


# -------------------------------------------------------------- unsubscribe


@dataclass(frozen=True)
class UnsubscribeClaim:
    email: str
    category: str
    workspace_id: str  # a workspace's public id for run-alerts/approvals, else ""
    expires: int


def unsubscribe_token(email: str, category: str, workspace_id: str = "", *, now: float | None = None) -> str:
    expires = int((now if now is not None else time.time()) + UNSUBSCRIBE_VALID.total_seconds())
    payload = {"e": email.lower(), "c": category, "w": workspace_id, "x": expires}
    return signing.dumps(payload, key=_key(), salt=UNSUBSCRIBE_SALT, compress=True)


def read_unsubscribe_token(token: str, *, now: float | None = None) -> UnsubscribeClaim:
    try:
        data = signing.loads(token, key=_key(), salt=UNSUBSCRIBE_SALT)
        claim = UnsubscribeClaim(str(data["e"]), str(data["c"]), str(data.get("w") or ""), int(data["x"]))
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise LinkError(
            "tampered",
            "This unsubscribe link is not valid: it was changed, or it was made with a key this install no longer uses. Nothing was changed.",
        ) from None
    if (now if now is not None else time.time()) > claim.expires:
        raise LinkError(
            "expired",
            "This unsubscribe link has expired. Nothing was changed; choose your mail under Profile → Notifications.",
        )
    return claim


def unsubscribe_url(email: str, category: str, workspace_id: str = "") -> str | None:
    base = public_url()
    if base is None:
        return None
    return f"{base}/api/unsubscribe?" + urlencode({"token": unsubscribe_token(email, category, workspace_id)})


# ---------------------------------------------------------------- test reports

REPORT_SALT = "foldrun.browsing.report"
REPORT_VALID = timedelta(minutes=15)


@dataclass(frozen=True)
class ReportClaim:
    report_id: str  # a skill run's (run_…) or a task's (tsk_…) public id
    account_id: str  # its account's public id: a token is good for that account's report only
    expires: int


def report_token(report_id: str, account_id: str, *, now: float | None = None) -> str:
    """A short-lived read-only link token for one report: derived, never stored."""
    expires = int((now if now is not None else time.time()) + REPORT_VALID.total_seconds())
    return signing.dumps({"r": report_id, "a": account_id, "x": expires}, key=_key(), salt=REPORT_SALT, compress=True)


def read_report_token(token: str, *, now: float | None = None) -> ReportClaim:
    try:
        data = signing.loads(token, key=_key(), salt=REPORT_SALT)
        claim = ReportClaim(str(data["r"]), str(data["a"]), int(data["x"]))
    except (signing.BadSignature, KeyError, TypeError, ValueError):
        raise LinkError(
            "tampered",
            "This report link is not valid: it was changed, or it was made with a key this install no longer uses.",
        ) from None
    if (now if now is not None else time.time()) > claim.expires:
        raise LinkError(
            "expired",
            "This report link has expired: report links work for a few minutes. Read the "
            "report again with get_report, or GET /v1/tasks/<id>/report.json, for a new "
            "link.",
        )
    return claim


def report_url(report_id: str, account_id: str, suffix: str = "") -> str:
    """The report page's link (absolute with FOLDRUN_PUBLIC_URL, else a path on this install)."""
    return f"{public_url() or ''}/reports/{report_token(report_id, account_id)}{suffix}"
