"""OpenAPI shapes of the sessions API. The answers themselves are built by browsing/records.py, one shape for
the REST routes and the MCP tools; these declarations only document them (and the body POST takes)."""

from __future__ import annotations

import re

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

import foldrun.openapi

from .models import STOPPED_BY, EndReason, SessionStatus, SkillStatus
from .options import (
    BLOCKABLE,
    ENGINES,
    FORBIDDEN_HEADER_PREFIX,
    FORBIDDEN_HEADERS,
    MAX_ALLOW_HOSTS,
    MAX_HEADERS,
    MAX_QUEUE_SECONDS,
    MAX_TIMEOUT_MS,
    MAX_URL,
    MAX_WAIT_FOR_CAPACITY_MS,
    MIN_TIMEOUT_MS,
    SCALE,
    VIEWPORT_HEIGHT,
    VIEWPORT_WIDTH,
    devices,
)

# The shapes browsing.options.read_options takes, as patterns: a host (trimmed and lower-cased there, a trailing
# dot dropped), a header name (an HTTP token) and value (one line), an http(s) URL. `null` for any option is
# the option's default. Every object is closed: read_options names an unknown field as an issue.
_CLOSED = "is not an option of a session"
HOST_PATTERN = (
    r"^\s*(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*"
    r"\.?\s*$"
)


def _any_case(word: str) -> str:
    """`te` as `[Tt][Ee]`: a JSON Schema pattern has no case-insensitive flag."""
    return "".join(f"[{c.upper()}{c.lower()}]" if c.isalpha() else re.escape(c) for c in word)


# An HTTP token that is none of the names read_options refuses (browsing.options.forbidden_header).
HEADER_NAME_PATTERN = (
    rf"^(?!(?:{'|'.join(_any_case(n) for n in FORBIDDEN_HEADERS)})$)"
    rf"(?!{_any_case(FORBIDDEN_HEADER_PREFIX)})"
    r"[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$"
)
HEADER_VALUE_PATTERN = r"^[^\r\n\x00]*$"
HTTP_URL_PATTERN = r"^[Hh][Tt][Tt][Pp][Ss]?://[A-Za-z0-9.-]+(/[^\s\[\]]*)?$"
PROXY_URL_PATTERN = r"^[Hh][Tt][Tt][Pp]://[A-Za-z0-9.-]+(/[^\s\[\]]*)?$"


def _needs(option: str, other: str) -> dict:
    """JSON Schema for "`option` only with `other` (not null)"."""
    return {
        "anyOf": [
            {"not": {"required": [option]}},
            {"properties": {option: {"nullable": True, "enum": [None]}}},
            {"required": [other], "properties": {other: {"type": "string"}}},
        ]
    }


# What read_options refuses across options (OpenAPI 3.0 has no dependentRequired).
SESSION_DEPENDENCIES = [
    _needs("allowHosts", "proxyUrl"),
    _needs("engineVersion", "engineId"),
    {
        "anyOf": [
            {"not": {"required": ["queueForCapacity"]}},
            {"not": {"required": ["waitForCapacityMs"]}},
            {"properties": {"queueForCapacity": {"nullable": True, "enum": [None]}}},
            {"properties": {"waitForCapacityMs": {"nullable": True, "maximum": 0}}},
        ]
    },
]


def _text(pattern: str, **kwargs) -> foldrun.openapi.StrictCharField:
    return foldrun.openapi.StrictCharField(regex_pattern=pattern, **kwargs)


class ViewportSerializer(serializers.Serializer):
    openapi_closed = _CLOSED
    width = serializers.IntegerField(min_value=VIEWPORT_WIDTH[0], max_value=VIEWPORT_WIDTH[1])
    height = serializers.IntegerField(min_value=VIEWPORT_HEIGHT[0], max_value=VIEWPORT_HEIGHT[1])
    deviceScaleFactor = serializers.FloatField(
        required=False,
        allow_null=True,  # noqa: N815
        min_value=SCALE[0],
        max_value=SCALE[1],
    )
    mobile = serializers.BooleanField(required=False, allow_null=True)


class HeaderSerializer(serializers.Serializer):
    openapi_closed = _CLOSED
    host = _text(HOST_PATTERN, help_text="the host it is sent to: staging.example.com, or *.example.com")
    name = _text(
        HEADER_NAME_PATTERN,
        pattern_message="is a name the browser sets itself (Host, Content-Length, a "
        "hop-by-hop or Proxy- header) or not a header name.",
        help_text="an HTTP header name, but not one the browser sets itself: Host, Content-Length, Expect, "
        "the hop-by-hop ones (Connection, Keep-Alive, TE, Trailer, Transfer-Encoding, Upgrade) or "
        "any Proxy-…",
    )
    value = _text(HEADER_VALUE_PATTERN, max_length=8192, allow_blank=True, help_text="kept sealed; never shown again")


class QueueSerializer(serializers.Serializer):
    openapi_closed = _CLOSED
    maxWaitSeconds = serializers.IntegerField(min_value=1, max_value=MAX_QUEUE_SECONDS, allow_null=True)  # noqa: N815


@extend_schema_field(
    {
        "oneOf": [
            {"type": "boolean"},
            {
                "type": "object",
                "additionalProperties": False,
                "properties": {
                    "namespace": {"type": "string", "pattern": r"^[A-Za-z0-9_.-]{1,64}$", "default": "default"},
                    "autoSubmit": {"type": "boolean", "default": True},
                },
            },
        ],
        "nullable": True,
    }
)
class CredentialsField(serializers.JSONField):
    """true, or {namespace, autoSubmit}: logins from the credential vault (never a password here)."""


class SessionCreateSerializer(serializers.Serializer):
    openapi_closed = _CLOSED
    startUrl = _text(HTTP_URL_PATTERN, required=False, allow_null=True, max_length=MAX_URL)  # noqa: N815
    device = serializers.CharField(
        required=False, allow_null=True, help_text='desktop, mobile or a device id such as "Pixel 7"'
    )
    viewport = ViewportSerializer(required=False, allow_null=True)
    record = serializers.BooleanField(required=False, allow_null=True)
    headers = HeaderSerializer(many=True, required=False, allow_null=True, max_length=MAX_HEADERS)
    credentials = CredentialsField(required=False)
    proxyUrl = _text(PROXY_URL_PATTERN, required=False, allow_null=True, max_length=MAX_URL)  # noqa: N815
    allowHosts = serializers.ListField(
        child=_text(HOST_PATTERN),
        required=False,
        allow_null=True,  # noqa: N815
        min_length=1,
        max_length=MAX_ALLOW_HOSTS,
        help_text="needs proxyUrl",
    )
    idleTimeoutMs = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=MIN_TIMEOUT_MS,  # noqa: N815
        max_value=MAX_TIMEOUT_MS,
    )
    maxDurationMs = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=MIN_TIMEOUT_MS,  # noqa: N815
        max_value=MAX_TIMEOUT_MS,
    )
    engineId = serializers.ChoiceField(choices=ENGINES, required=False, allow_null=True)  # noqa: N815
    engine = serializers.ChoiceField(choices=ENGINES, required=False, allow_null=True, help_text="as engineId")
    engineVersion = serializers.ChoiceField(
        choices=[1],
        required=False,
        allow_null=True,  # noqa: N815
        help_text="needs engineId",
    )
    waitForCapacityMs = serializers.IntegerField(
        required=False,
        allow_null=True,
        min_value=0,  # noqa: N815
        max_value=MAX_WAIT_FOR_CAPACITY_MS,
    )
    queueForCapacity = QueueSerializer(
        required=False,
        allow_null=True,  # noqa: N815
        help_text="not with waitForCapacityMs above 0",
    )
    # A list that may be null, of names that may not (a MultipleChoiceField's null would reach its items).
    block = serializers.ListField(child=serializers.ChoiceField(choices=BLOCKABLE), required=False, allow_null=True)
    title = serializers.CharField(required=False, allow_null=True, allow_blank=True, max_length=300)


def openapi_devices(result: dict, generator, request, public) -> dict:
    """drf-spectacular postprocessing hook: a session's `device` is one of the names read_options takes
    (Playwright's device list is read at run time, so it is filled in here, not in the serializer)."""
    device = (
        result.get("components", {})
        .get("schemas", {})
        .get("SessionCreateRequest", {})
        .get("properties", {})
        .get("device")
    )
    if device is not None:
        result["components"]["schemas"]["SessionCreateRequest"]["allOf"] = SESSION_DEPENDENCIES
        device["enum"] = ["desktop", "mobile", *sorted(devices())] + ([None] if device.get("nullable") else [])
    return result


class EndpointsSerializer(serializers.Serializer):
    http = serializers.CharField(help_text="this record")
    cdp = serializers.CharField(
        allow_null=True,
        help_text="the browser's DevTools (a WebSocket, with the session "
        "token); null until live, for a member whose role may "
        "only read, or when the install's public address is "
        "unknown (FOLDRUN_PUBLIC_URL)",
    )
    live = serializers.CharField(
        allow_null=True,
        help_text="a WebSocket (wss:// on an https install) of the session's screen as JPEG frames, base64 text, closed when the session ends (watch-only, with the session token; /v1/sessions/<id>/watch is its page for a person); null until live, for a member whose role may only read, or when the install's public address is unknown",
    )


class SessionSummarySerializer(serializers.Serializer):
    id = serializers.CharField(help_text="sess_us_…")
    status = serializers.ChoiceField(choices=SessionStatus.values)
    engine = serializers.CharField()
    createdAt = serializers.DateTimeField()  # noqa: N815
    endedAt = serializers.DateTimeField(allow_null=True)  # noqa: N815
    endReason = serializers.ChoiceField(choices=EndReason.values, allow_null=True)  # noqa: N815
    title = serializers.CharField(allow_blank=True)


class RecordingSerializer(serializers.Serializer):
    available = serializers.BooleanField(help_text="written when the session ends")
    bytes = serializers.IntegerField()
    url = serializers.CharField(help_text="GET it with the API token: the WebM video")


class SessionSerializer(SessionSummarySerializer):
    reason = serializers.CharField(help_text="why it last changed status")
    liveAt = serializers.DateTimeField(allow_null=True)  # noqa: N815
    lastActivityAt = serializers.DateTimeField()  # noqa: N815
    placement = serializers.ChoiceField(choices=["pool", "queued"])
    queuedUntil = serializers.DateTimeField(allow_null=True)  # noqa: N815
    options = serializers.DictField(help_text="the options it was opened with; header values left out")
    recording = RecordingSerializer(required=False)
    token = serializers.CharField(
        required=False,
        help_text="short-lived session token, while open; only for a member whose role may act (it drives the browser)",
    )
    tokenExpiresAt = serializers.DateTimeField(required=False)  # noqa: N815
    endpoints = EndpointsSerializer(required=False)


class SessionListSerializer(serializers.Serializer):
    sessions = SessionSummarySerializer(many=True)


class StopSerializer(serializers.Serializer):
    deleted = serializers.BooleanField()
    closed = serializers.BooleanField(help_text="true when this call stopped a running browser")


# The API's one error body (the schema's Error component).
ErrorSerializer = foldrun.openapi.ErrorSerializer


# ---------------------------------------------------------------- tasks and reports (read only)


class TaskStepSerializer(serializers.Serializer):
    op = serializers.CharField(help_text="the browse call's first action (click, fill…), navigate or read")
    ref = serializers.CharField(allow_null=True, help_text="the element ref it acted on (e5), when it named one")
    provider = serializers.CharField(allow_null=True)
    ok = serializers.BooleanField()
    ms = serializers.IntegerField()
    costMicros = serializers.IntegerField(help_text="millionths of a US dollar")  # noqa: N815
    error = serializers.CharField(allow_null=True)


class TaskSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="tsk_…")
    sessionId = serializers.CharField()  # noqa: N815
    goal = serializers.CharField()
    status = serializers.ChoiceField(choices=["running", "finished"])
    ok = serializers.BooleanField(allow_null=True)
    stoppedBy = serializers.ChoiceField(choices=list(STOPPED_BY), allow_null=True)  # noqa: N815
    limit = serializers.DictField(allow_null=True)
    reason = serializers.CharField(allow_null=True)
    answer = serializers.CharField(allow_null=True)
    steps = TaskStepSerializer(many=True)
    costMicros = serializers.IntegerField()  # noqa: N815
    ms = serializers.IntegerField()
    startedAt = serializers.DateTimeField()  # noqa: N815
    finishedAt = serializers.DateTimeField(allow_null=True)  # noqa: N815


class ReportStepSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="from 0")
    path = serializers.CharField(help_text="the step's number as the text and the page show it, from 1")
    kind = serializers.CharField()
    label = serializers.CharField(allow_null=True)
    status = serializers.CharField(required=False, help_text="passed, failed or skipped (a smoke test's steps)")
    ok = serializers.BooleanField(allow_null=True)
    ms = serializers.IntegerField()
    error = serializers.CharField(allow_null=True)
    screenshot = serializers.CharField(required=False, help_text="a signed short-lived link, for a failed step")


class ReportSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="run_… or tsk_…")
    kind = serializers.ChoiceField(choices=["smoke", "task", "skill"])
    verdict = serializers.ChoiceField(choices=["pass", "fail", "error", "running"])
    sessionId = serializers.CharField(allow_null=True)  # noqa: N815
    counts = serializers.DictField(child=serializers.IntegerField(), allow_null=True)
    steps = ReportStepSerializer(many=True)
    consoleErrors = serializers.ListField(child=serializers.DictField())  # noqa: N815
    failedRequests = serializers.ListField(child=serializers.DictField())  # noqa: N815
    finalUrl = serializers.CharField(allow_null=True)  # noqa: N815
    notes = serializers.ListField(child=serializers.CharField())
    reportUrl = serializers.CharField(
        allow_null=True,
        help_text="the HTML report; a signed link that works for "  # noqa: N815
        "15 minutes",
    )


class SkillRunSerializer(serializers.Serializer):
    """A skill run as get_skill_run and skill_<name> return it (browsing/skill_results.skill_record)."""

    runId = serializers.CharField(help_text="run_…")  # noqa: N815
    skill = serializers.CharField()
    version = serializers.CharField(allow_null=True, help_text="the library changeset of its SKILL.md, or gallery")
    sessionId = serializers.CharField(allow_null=True, help_text="null for a run denied before it started")  # noqa: N815
    status = serializers.ChoiceField(
        choices=SkillStatus.choices,
        help_text=(
            "running (not ended yet); passed and failed (it ran to a verdict); error (it could not run to a result); "
            "cancelled (stopped before a verdict); denied (it needs a grant that was not given, and never started)"
        ),
    )
    startedAt = serializers.DateTimeField()  # noqa: N815
    ms = serializers.IntegerField()
    summary = serializers.CharField(allow_blank=True)
    reason = serializers.CharField(allow_null=True, help_text="why it stopped without a verdict")
    counts = serializers.DictField(child=serializers.IntegerField(), allow_null=True)
    result = serializers.DictField(allow_null=True, help_text="the verdict and the steps; screenshots left out")
    hasReport = serializers.BooleanField()  # noqa: N815
    reportUrl = serializers.CharField(
        required=False,
        allow_null=True,  # noqa: N815
        help_text="the HTML report; a signed link that works for 15 minutes",
    )
