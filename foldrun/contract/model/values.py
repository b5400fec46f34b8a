"""The values the parsers share: names, limits, durations, rates, near-miss hints, cron and time zones, and the per-Desk cache."""

from __future__ import annotations

import difflib
import re
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

from ..desk import Desk, Document
from ..findings import Finding
from ..placeholders import PLACEHOLDER

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
SECRET_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")  # as the vault names them
PLACEHOLDER_RE = PLACEHOLDER  # the one `${NAME}` grammar (placeholders.py)
EVENT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
DURATION_RE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
RATE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*/\s*(s|m|h)\s*$")

BUILTIN_GROUPS = ("read", "write", "code", "search", "history", "ask", "desks")
SDK_NAMES = {"Read": "read", "Glob": "read", "Grep": "read", "Write": "write", "Edit": "write", "Bash": "code"}
WEB_ACTIONS = ("search", "fetch", "browse", "crawl", "map", "extract", "answer", "monitor")
TRANSPORTS = ("http", "script", "mcp")
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
STEP_OPTIONS = ("each", "max", "verify", "retry", "on-fail", "limits", "wait", "ask")
VERIFY_KINDS = ("file", "reply", "grows")
DEFAULT_APPROVE_WITHIN = timedelta(days=7)


def limit_key(key: str) -> str:
    """The canonical form of a `limits:` key: `desk-email` and `desk_email` are one."""
    return str(key).strip().replace("-", "_")


def parse_duration(value: Any) -> timedelta | None:
    """`30m`, `2h`, `2d`, `1w` -> timedelta; None when it is not one."""
    if not isinstance(value, str):
        return None
    match = DURATION_RE.match(value)
    if not match or int(match.group(1)) < 1:
        return None
    amount, unit = int(match.group(1)), match.group(2)
    return {
        "m": timedelta(minutes=amount),
        "h": timedelta(hours=amount),
        "d": timedelta(days=amount),
        "w": timedelta(weeks=amount),
    }[unit]


def parse_rate(value: Any) -> tuple[float, int] | None:
    """`5/s`, `100/m` -> (calls, per seconds); None when it is not one."""
    match = RATE_RE.match(str(value)) if isinstance(value, (str, int)) else None
    if not match or float(match.group(1)) <= 0:
        return None
    return float(match.group(1)), {"s": 1, "m": 60, "h": 3600}[match.group(2)]


def is_whole(value: Any, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def closest(word: str, candidates: set[str] | list[str], n: int = 3) -> list[str]:
    """The nearest candidates (difflib), only those about as near as the best."""
    scored = []
    for candidate in sorted(candidates):
        matcher = difflib.SequenceMatcher(None, word, candidate)
        if matcher.real_quick_ratio() >= 0.75 and matcher.quick_ratio() >= 0.75:
            ratio = matcher.ratio()
            if ratio >= 0.75:
                scored.append((ratio, candidate))
    if not scored:
        return []
    best = max(r for r, _c in scored)
    return [c for r, c in sorted(scored, key=lambda rc: (-rc[0], rc[1])) if r >= best - 0.1][:n]


def did_you_mean(word: str, candidates, wrap: str = "{}") -> str:
    near = closest(word, candidates)
    if not near:
        return ""
    shown = [wrap.format(n) for n in near]
    return f"; did you mean {' or '.join(shown)}?"


def as_list(value: Any) -> list[str]:
    """A YAML list of names, or one comma-separated string of them."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple)):
        return [str(item).strip() for item in value if item is not None and str(item).strip()]
    return [str(value)]


# --- cron ---------------------------------------------------------------

_CRON_MACROS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_CRON_FIELDS = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, {m: i + 1 for i, m in enumerate("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split())}),
    ("day of week", 0, 7, {d: i for i, d in enumerate("SUN MON TUE WED THU FRI SAT".split())}),
)


def _cron_value(text: str, low: int, high: int, names: dict[str, int]) -> int | None:
    upper = text.upper()
    if upper in names:
        return names[upper]
    if text.isdigit():
        number = int(text)
        return number if low <= number <= high else None
    return None


def cron_problem(expression: Any) -> str | None:
    """None when `expression` is a five-field cron (or @daily and kin), else why not."""
    if not isinstance(expression, str) or not expression.strip():
        return "it is empty"
    text = expression.strip()
    if text.startswith("@"):
        return None if text.lower() in _CRON_MACROS else f"{text} is not one of {', '.join(sorted(_CRON_MACROS))}"
    fields = text.split()
    if len(fields) != 5:
        return f"it has {len(fields)} field{'s' if len(fields) != 1 else ''}, not 5"
    for raw, (label, low, high, names) in zip(fields, _CRON_FIELDS):
        for part in raw.split(","):
            base, _, step = part.partition("/")
            if step and (not step.isdigit() or int(step) < 1):
                return f"the {label} field has a step {step!r} that is not a whole number"
            if base == "*":
                continue
            if base.count("-") == 1 and not base.startswith("-"):
                first, last = base.split("-")
                a, b = _cron_value(first, low, high, names), _cron_value(last, low, high, names)
                if a is None or b is None:
                    return f"the {label} field {raw!r} has a value outside {low}-{high}"
                continue
            if _cron_value(base, low, high, names) is None:
                return f"the {label} field {raw!r} has a value outside {low}-{high}"
    return None


_TZ_DATABASE: list[bool] = []


def _has_tz_database(available) -> bool:
    if not _TZ_DATABASE:
        _TZ_DATABASE.append(bool(available()))
    return _TZ_DATABASE[0]


def timezone_problem(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "is empty"
    if not _has_tz_database(available_timezones):
        return None  # a machine without a time-zone database cannot judge; the server will
    try:
        ZoneInfo(value.strip())
    # Not in the database; a path-like key ("../x", "/etc/x"); a folder ("America") or a name too long to open.
    except (ZoneInfoNotFoundError, ValueError, OSError):
        return "is not a time zone foldrun knows"
    return None


# --- parsing ----------------------------------------------------------------


def cached_model(desk: Desk, document: Document, kind: str, build):
    key = (kind, document.scope, document.path)
    if key not in desk.cache:
        desk.cache[key] = build()
    return desk.cache[key]


def as_str(value: Any) -> str:
    return "" if value is None else str(value).strip()


def timezone_problems(document: Document, value: Any, problems: list[Finding]) -> None:
    if value is None:
        return
    why = timezone_problem(value)
    if why:
        problems.append(
            Finding(
                document.path,
                document.line_of("timezone"),
                "error",
                f"timezone: {value} {why}; use an IANA name such as Australia/Sydney.",
                "timezone.unknown",
            )
        )
