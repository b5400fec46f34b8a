"""Where an http tool's call goes: always under its `base`, path and all.

`base: https://api.example.com/v1` is an allowlist of a host *and* a path. A path parameter is one
segment, percent-encoded whole — a `/`, `?`, `#` or `%` in it cannot start another segment, a query
or a fragment — and `.` or `..` as a whole parameter is refused, since the far side would resolve it.
The generic tool's own path is resolved here, dot segments (also written `%2e`, or with a backslash,
which some servers read as `/`) included, and must land under base's path; what is sent is that
resolved path, so the HTTP library has nothing left to resolve differently.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

_PLACEHOLDER = re.compile(r"\{([^{}/]+)\}")


class OutsideBase(ValueError):
    """The call would leave the tool's `base`; the message is the sentence."""


def base_parts(base: str) -> tuple[str, str, str]:
    """(scheme, netloc, path without a trailing slash) of a tool's `base`."""
    try:
        parts = urlsplit(base)
    except ValueError:
        raise OutsideBase(f"base: {base!r} is not a URL") from None
    return parts.scheme, parts.netloc, parts.path.rstrip("/")


def path_segment(name: str, value: object) -> str:
    """One path parameter's value as one segment, or OutsideBase for a value no segment can carry."""
    text = value if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else str(value)
    if text in ("", ".", ".."):
        raise OutsideBase(f"{name}: {text!r} cannot be a path parameter — it would name no segment or another one")
    return quote(text, safe="")


def fill_template(template: str, values: dict[str, object]) -> str:
    """`/items/{id}` with each `{name}` replaced by its value as one segment; OutsideBase for a missing one."""

    def one(match: re.Match) -> str:
        name = match.group(1)
        if name not in values:
            raise OutsideBase(f"{name}: this path parameter is required")
        return path_segment(name, values[name])

    return _PLACEHOLDER.sub(one, template)


def _segments(path: str) -> list[str]:
    """`path` resolved as the strictest server would read it: `\\` and `%5c` as `/`, `%2e` as `.`."""
    strict = re.sub(r"%5c", "/", path.replace("\\", "/"), flags=re.I)
    out: list[str] = []
    for segment in strict.split("/"):
        word = unquote(segment)
        if word == "..":
            if out:
                out.pop()
            else:
                out.append("..")  # above the root: can only be outside base
        elif word != "." and segment != "":
            out.append(segment)
    return out


def resolve(base: str, path: str) -> tuple[str, list[tuple[str, str]]]:
    """The URL to send for `path` relative to `base` (no query), and the query pairs `path` carried.

    OutsideBase when the path names another host, or resolves outside base's path.
    """
    scheme, netloc, base_path = base_parts(base)
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", path) or path.startswith(("//", "\\\\", "/\\", "\\/")):
        raise OutsideBase(f"the path must be relative to {base}")
    path = path.split("#", 1)[0]  # a fragment is never sent
    raw_path, _, query = path.partition("?")
    joined = f"{base_path}/{raw_path.lstrip('/')}" if raw_path.strip("/") else base_path or "/"
    wanted, under = _segments(joined), _segments(base_path)
    if wanted[: len(under)] != under or ".." in wanted:
        raise OutsideBase(f"the path must stay under {base} — {raw_path!r} resolves outside it")
    # the literal dot segments resolved here, so the HTTP library (which resolves them too) sends this path
    sent = "/" + "/".join(seg for seg in _literal_resolved(joined))
    if joined.endswith("/") and not sent.endswith("/"):
        sent += "/"
    return urlunsplit((scheme, netloc, sent, "", "")), parse_qsl(query, keep_blank_values=True)


def _literal_resolved(path: str) -> list[str]:
    out: list[str] = []
    for segment in path.split("/"):
        if segment == "..":
            if out:
                out.pop()
        elif segment not in (".", ""):
            out.append(segment)
    return out
