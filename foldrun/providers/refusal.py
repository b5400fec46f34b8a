"""The one line a refused model call leaves on the step's trace and failure line.

On a refusal (401, 402, 403, 429) only the allow-listed rate-limit headers of
that one response are kept — an explicit list, not a prefix match — and no
request header is ever read, so no credential can reach the line.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import zoneinfo
from collections.abc import Mapping

REFUSAL_STATUSES = frozenset({401, 402, 403, 429})

_UNIFIED = "anthropic-ratelimit-unified-"
ALLOWED_HEADERS = frozenset(
    [
        _UNIFIED + suffix
        for suffix in (
            "status",
            "reset",
            "representative-claim",
            "fallback-percentage",
            "5h-status",
            "5h-reset",
            "5h-utilization",
            "7d-status",
            "7d-reset",
            "7d-utilization",
            "7d_opus-status",
            "7d_opus-reset",
            "7d_opus-utilization",
            "7d_sonnet-status",
            "7d_sonnet-reset",
            "7d_sonnet-utilization",
            "overage-status",
            "overage-reset",
            "overage-utilization",
            "overage-disabled-reason",
        )
    ]
    + ["retry-after"]
)

TRYING_SECOND = "trying the second supply"
SECOND_REFUSED = "the second supply refused it too"
NO_SECOND = "no second supply is configured"
ENDINGS = (TRYING_SECOND, SECOND_REFUSED, NO_SECOND)

CREDENTIAL_SENTENCE = (
    "the credential was refused (HTTP {status}) and the response carried no "
    "rate-limit headers, so this is the key itself — invalid, revoked, or wrong "
    "for this endpoint — not a spent window"
)

# representative-claim value → (header infix, words)
_WINDOWS = {
    "five_hour": ("5h", "5-hour"),
    "seven_day": ("7d", "7-day"),
    "seven_day_opus": ("7d_opus", "7-day Opus"),
    "seven_day_sonnet": ("7d_sonnet", "7-day Sonnet"),
}


def keep_rate_limit_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The allow-listed headers of a response, names lower-cased; nothing else."""
    return {k.lower(): v for k, v in headers.items() if k.lower() in ALLOWED_HEADERS}


def step_timezone(*cascade: str | None) -> str:
    """The first valid zone of agent → flow → workspace → account, then
    FOLDRUN_TIMEZONE, then UTC. An unknown name is skipped, not fatal: a
    refusal line must still be written."""
    try:
        from django.conf import settings

        fallback = getattr(settings, "FOLDRUN_TIMEZONE", None) if settings.configured else None
    except ImportError:  # a laptop without Django
        fallback = None
    for name in [*cascade, fallback, "UTC"]:
        if not name:
            continue
        try:
            zoneinfo.ZoneInfo(name)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            continue
        return name
    return "UTC"


def _zone_label(tz: str) -> str:
    return tz.rsplit("/", 1)[-1].replace("_", " ")


def _when(epoch: str, tz: str, now: dt.datetime) -> str | None:
    try:
        moment = dt.datetime.fromtimestamp(float(epoch), tz=zoneinfo.ZoneInfo(tz))
    except (ValueError, OverflowError, OSError):
        return None
    text = f"{moment:%H:%M} {_zone_label(tz)}"
    if moment.date() != now.astimezone(zoneinfo.ZoneInfo(tz)).date():
        text += f" on {moment:%a} {moment.day} {moment:%b}"
    return text


def wait_words(retry_after: str | None, now: dt.datetime) -> str | None:
    """`retry-after` as a number people read: 30s, 5m, 2h 10m. Seconds or an
    HTTP date; anything unreadable counts as no promise at all."""
    if retry_after is None:
        return None
    value = retry_after.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = (when - now).total_seconds()
    if seconds < 0:
        return None
    seconds = round(seconds)
    if seconds < 90:
        return f"{seconds}s"
    if seconds < 90 * 60:
        return f"{round(seconds / 60)}m"
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h {round(rest / 60)}m" if rest >= 60 else f"{hours}h"


def _percent(value: str | None) -> int | None:
    try:
        number = float(value) if value is not None else None
    except ValueError:
        return None
    if number is None:
        return None
    return round(number * 100) if number <= 1 else round(number)


def _window_clause(kept: Mapping[str, str], tz: str, now: dt.datetime) -> str | None:
    claim = kept.get(_UNIFIED + "representative-claim")
    infix, words = _WINDOWS.get(claim or "", (None, None))
    if infix is None:
        for candidate in _WINDOWS.values():
            if _UNIFIED + candidate[0] + "-utilization" in kept:
                infix, words = candidate
                break
    if infix is None:
        return None
    pct = _percent(kept.get(f"{_UNIFIED}{infix}-utilization"))
    text = f"the subscription refused this burst — the {words} window"
    text += f" is {pct}% used" if pct is not None else " is spent"
    if kept.get(_UNIFIED + "overage-status") == "rejected":
        reason = kept.get(_UNIFIED + "overage-disabled-reason")
        text += f" but overage is off ({reason.replace('_', ' ')})" if reason else " but overage is off"
    reset = kept.get(f"{_UNIFIED}{infix}-reset") or kept.get(_UNIFIED + "reset")
    when = _when(reset, tz, now) if reset else None
    if when:
        text += f"; it resets at {when}"
    return text


def refusal_line(
    status: int,
    kept: Mapping[str, str],
    *,
    timezone: str = "UTC",
    ending: str = NO_SECOND,
    now: dt.datetime | None = None,
) -> str:
    """The spec's sentence for one refused response. `kept` must already be
    the allow-listed headers (see keep_rate_limit_headers)."""
    now = now or dt.datetime.now(dt.timezone.utc)
    wait = wait_words(kept.get("retry-after"), now) if "retry-after" in kept else None
    window = _window_clause(kept, timezone, now)
    if window is not None:
        line = window + (f", and the provider asked us to wait {wait}" if wait else "")
    elif status in (401, 403) and not kept:
        line = CREDENTIAL_SENTENCE.format(status=status)
    else:
        if status == 429:
            line, joint = "the provider rate-limited this request (HTTP 429)", " and"
        elif status == 402:
            line, joint = (
                ("the provider refused payment for this request (HTTP 402): out of credit or over a spending limit"),
                ", and it",
            )
        else:
            line, joint = f"the provider refused this request (HTTP {status})", " and"
        if wait:
            line += f"{joint} asked us to wait {wait}"
        else:
            line += f"{joint} named no wait, so none is promised"
    return f"{line} — {ending}"
