"""`GET /api/health`: is this install able to do its work right now — for a load balancer or a person.

It answers 200 when the database and the broker answer and a worker, beat and the browser service have each
been heard from recently, 503 otherwise, with one sentence per problem. The browser service (the worker that
keeps sessions' browsers open, on a queue of its own) is reported apart from the workers, with its capacity:
how many browsers are open of how many the install keeps (a full service is busy, not unhealthy). No login:
a load balancer has none. No secrets: a failing connection is named, never described with its URL or the
driver's message (either can carry a password).

Worker and beat are judged by their heartbeats (foldrun/heartbeats.py).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import connection
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from browsing.actions import holding_a_browser, install_capacity
from foldrun.celery import app
from foldrun.heartbeats import BROWSERS, ROLES, seconds_since

log = logging.getLogger(__name__)


def _database() -> str | None:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception:  # any driver error means the same thing here
        log.warning("health: the database did not answer", exc_info=True)
        return "the database did not answer"
    return None


def _broker() -> str | None:
    if app.conf.task_always_eager:
        return None
    try:
        with app.connection_for_write() as conn:
            conn.ensure_connection(max_retries=1, timeout=2)
    except Exception:  # kombu raises per transport
        log.warning("health: the broker did not answer", exc_info=True)
        return "the broker did not answer"
    return None


def _browsers() -> dict[str, int]:
    """How many browsers are open (sessions holding a place) of the install's capacity; {} when the count fails."""
    try:
        return {"open": holding_a_browser().count(), "capacity": install_capacity()}
    except Exception:  # the database answered SELECT 1 a moment ago; a failure now is reported there next time
        log.warning("health: the open browser sessions could not be counted", exc_info=True)
        return {}


def report() -> tuple[bool, dict[str, Any]]:
    stale = settings.FOLDRUN_HEALTH_STALE_SECONDS
    problems: list[str] = []
    checks: dict[str, Any] = {}
    for name, probe in (("database", _database), ("broker", _broker)):
        problem = probe()
        checks[name] = {"ok": problem is None}
        if problem:
            problems.append(problem)
    for role in (*ROLES, BROWSERS):
        said = "browser service worker" if role == BROWSERS else role
        ago = seconds_since(role)
        fresh = ago is not None and ago <= stale
        checks[role] = {"ok": fresh, "last_seen_seconds_ago": None if ago is None else round(ago, 1)}
        if not fresh:
            when = "never" if ago is None else f"last {int(ago)} seconds ago"
            problems.append(f"no {said} has answered in the last {stale} seconds ({when})")
    if checks["database"]["ok"]:
        checks[BROWSERS].update(_browsers())
    healthy = not problems
    return healthy, {"status": "ok" if healthy else "unhealthy", "checks": checks, "problems": problems}


_CHECK = inline_serializer(
    "HealthCheck",
    {
        "ok": serializers.BooleanField(),
        "last_seen_seconds_ago": serializers.FloatField(required=False, allow_null=True),
    },
)
_BROWSERS = inline_serializer(
    "HealthBrowsers",
    {
        "ok": serializers.BooleanField(help_text="the browser service was heard from recently"),
        "last_seen_seconds_ago": serializers.FloatField(allow_null=True),
        "open": serializers.IntegerField(required=False, help_text="browsers open (sessions holding a place)"),
        "capacity": serializers.IntegerField(
            required=False, help_text="browsers the install keeps open at once (FOLDRUN_BROWSER_CAPACITY)"
        ),
    },
)
_HEALTH = inline_serializer(
    "Health",
    {
        "status": serializers.ChoiceField(choices=["ok", "unhealthy"]),
        "checks": inline_serializer(
            "HealthChecks",
            {
                "database": _CHECK,
                "broker": _CHECK,
                "worker": _CHECK,
                "beat": _CHECK,
                "browsers": _BROWSERS,
            },
        ),
        "problems": serializers.ListField(child=serializers.CharField()),
    },
)


class HealthView(APIView):
    permission_classes = [AllowAny]
    authentication_classes: list = []

    @extend_schema(
        responses={200: _HEALTH, 503: OpenApiResponse(_HEALTH, description="Something is wrong; `problems` says what.")}
    )
    def get(self, request):
        healthy, body = report()
        return Response(body, status=200 if healthy else 503, headers={"Cache-Control": "no-store"})
