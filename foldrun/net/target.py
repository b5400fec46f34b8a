"""A GET's target from a URL string, exactly as httpx.URL makes it, without its whole parse on every page.

httpx.URL validates, IDNA-encodes and percent-quotes every part of a URL on every call: ~20-40 µs, as
much as converting a small crawled page. The pages of one site share their scheme and authority, and
most paths and queries are printable ASCII that httpx's quoting leaves as written: for those the
origin's parse is kept (by its exact text) and the rest sent as it is; any other URL is parsed whole.
"""

from __future__ import annotations

import re

import httpx

_ORIGINS: dict[str, tuple[str, bytes, bytes, int | None]] = {}
_KEPT = 256
# A scheme, an authority, and then a path and query that httpx's quote() keeps as written: printable
# ASCII but space, `"#<>` and, in the path, `?`{}` (a `%` is kept too: as an escape it is left alone,
# and alone it is in both safe sets).
_PLAIN = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://[^/?#]*)(/[!$-;=@-_a-z|~]*(?:\?[!$-;=?-~]*)?)")


def request_target(url: str) -> tuple[str, bytes, bytes, int | None, bytes]:
    """(scheme, raw_scheme, raw_host, port, raw_path) of `url` as httpx.URL(url) has them; its errors as its."""
    plain = _PLAIN.fullmatch(url) if len(url) <= 65536 else None
    # a "." or ".." segment is dropped by httpx's normalisation: such a path is parsed whole
    if plain is not None and "/." not in plain.group(2):
        start, rest = plain.groups()
        origin = _ORIGINS.get(start)
        if origin is None:
            try:
                parsed = httpx.URL(start)
            except httpx.InvalidURL:
                parsed = None  # said by the whole parse below, in its words
            if parsed is not None:
                origin = (parsed.scheme, parsed.raw_scheme, parsed.raw_host, parsed.port)
                if len(_ORIGINS) >= _KEPT:
                    _ORIGINS.clear()
                _ORIGINS[start] = origin
        if origin is not None:
            return (*origin, rest.encode("ascii"))
    parsed = httpx.URL(url)
    return parsed.scheme, parsed.raw_scheme, parsed.raw_host, parsed.port, parsed.raw_path
