"""A test report's HTML page at /reports/<token>, and its failed steps' screenshots.

The page needs no login: its token is derived, bound to one report of one account and short-lived
(notify.links). It only reads — a GET never acts — and an expired or altered link answers a page that says so.
"""

from __future__ import annotations

import base64

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache

from accounts.models import Account
from browsing.errors import SessionError
from browsing.models import SkillRun, Task
from browsing.reports import read_report, scoped_report

from .links import LinkError, read_report_token, report_url


def _claimed(token: str) -> Task | SkillRun:
    claim = read_report_token(token)
    account = Account.objects.filter(public_id=claim.account_id).first()
    try:
        return scoped_report(account, claim.report_id)
    except SessionError:
        raise LinkError("tampered", "This report no longer exists.") from None


@never_cache
def report_page(request: HttpRequest, token: str) -> HttpResponse:
    """The HTML report: read only. An expired or altered link answers a page that says so."""
    try:
        found = _claimed(token)
    except LinkError as exc:
        return render(
            request,
            "browsing/report.html",
            {"problem": exc.reason, "message": exc.message},
            status=410 if exc.reason == "expired" else 403,
        )
    report = read_report(found)
    return render(request, "browsing/report.html", {"report": report})


@never_cache
def report_screenshot(request: HttpRequest, token: str, index: int) -> HttpResponse:
    """A failed step's screenshot, under the report's own token."""
    try:
        found = _claimed(token)
    except LinkError as exc:
        return HttpResponse(exc.message, status=410 if exc.reason == "expired" else 403, content_type="text/plain")
    if not isinstance(found, SkillRun):
        raise Http404("no screenshot")
    state = found.state or {}
    steps = (found.report or {}).get("steps") or []
    step = steps[index] if 0 <= index < len(steps) else None
    shot = None
    if step is not None and step.get("kind") == "assert":
        shot = (state.get("final") or {}).get("screenshot")
    elif step is not None and step.get("kind") == "step":
        shot = step.get("screenshot")
    if not shot or not isinstance(shot, str):
        raise Http404("no screenshot")
    return HttpResponse(base64.b64decode(shot), content_type="image/png")


def link_for(sender, report_id: str, account_id: str, suffix: str = "", **kwargs) -> str:  # noqa: ANN001
    """browsing.reports.report_link's answer: the signed URL of a report's page (or of one of its files)."""
    return report_url(report_id, account_id, suffix)
