"""The page an invite link opens. A GET shows the invite; only a POST accepts."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone

from foldrun.api import ApiError

from .actions import do_accept_invite
from .models import Invite, hash_token


def invite_page(request: HttpRequest, raw: str) -> HttpResponse:
    invite = Invite.objects.select_related("account", "invited_by").filter(token_hash=hash_token(raw)).first()
    problem = None
    if invite is None or invite.accepted_at is not None:
        problem = "This invite link is not valid or was already used."
    elif invite.expires_at <= timezone.now():
        problem = "This invite link has expired; ask for a new one."
    if problem is None and not request.user.is_authenticated:
        return render(request, "accounts/invite_accept.html", {"invite": invite, "needs_login": True, "raw": raw})
    if problem is None and request.method == "POST":
        return _accept(request, raw)
    return render(
        request,
        "accounts/invite_accept.html",
        {"invite": invite, "problem": problem, "raw": raw},
        status=404 if problem else 200,
    )


@login_required
def _accept(request: HttpRequest, raw: str) -> HttpResponse:
    try:
        do_accept_invite(request.user, raw)
    except ApiError as refused:
        return render(
            request, "accounts/invite_accept.html", {"problem": refused.message, "raw": raw}, status=refused.status_code
        )
    return redirect("/")
