"""Environment helpers that refuse a bad value with a sentence naming the variable.

Start-up must stop on a misconfiguration rather than limp on: a typo in
DATABASE_URL that silently fell back to SQLite would lose a team's runs.
"""

from __future__ import annotations

import os
from urllib.parse import urlparse

from django.core.exceptions import ImproperlyConfigured


def env_str(name: str, default: str | None = None) -> str:
    value = os.environ.get(name)
    if value is None or value == "":
        if default is None:
            raise ImproperlyConfigured(f"{name} is not set; it is required.")
        return default
    return value


def env_bool(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean; use one of 1, 0, true, false, yes, no, on, off.")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={value!r} is not a whole number.") from None
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={value!r} must be at least {minimum}.")
    return number


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return list(default or [])
    return [item.strip() for item in value.split(",") if item.strip()]


def env_url(name: str, default: str | None, *, schemes: tuple[str, ...]) -> str | None:
    """A URL whose scheme must be one of `schemes`; None when unset and no default."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        parsed = urlparse(value)
        parsed.password  # reading the netloc's parts checks it: an unclosed "[" or a bad port raises here
        parsed.port
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} is not a valid URL ({exc}); check the host and port.") from None
    if parsed.scheme not in schemes:
        raise ImproperlyConfigured(
            f"{name}={_redact(value)!r} is not a valid URL; it must start with "
            + " or ".join(f"{s}://" for s in schemes)
            + "."
        )
    if parsed.scheme in {"http", "https"} and not parsed.netloc:
        raise ImproperlyConfigured(f"{name}={_redact(value)!r} has no host.")
    return value.rstrip("/") if parsed.scheme in {"http", "https"} else value


def _redact(url: str) -> str:
    """Hide a password inside a URL so a start-up error never prints it."""
    try:
        parsed = urlparse(url)
        password = parsed.password
    except ValueError:
        return "(unreadable)"
    if password:
        return url.replace(f":{password}@", ":***@")
    return url
