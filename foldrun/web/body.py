"""What a response is, read one way by `fetch` and by crawl, map, extract, answer and monitor.

Both keep a response as a content type and the bytes; what kind of thing it is
(`media_type`, `is_html`, `is_text`) and how its bytes become text (the header's
charset, else an HTML page's own `<meta charset>`, else UTF-8) are said here once.
"""

from __future__ import annotations

import re

USER_AGENT = "Mozilla/5.0 (compatible; foldrun-web/1.0; +https://foldrun.dev/bot)"
HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_TYPES = (
    "text/",
    "application/json",
    "application/xml",
    "application/rss+xml",
    "application/atom+xml",
    "application/feed+json",
    "application/ld+json",
    "application/javascript",
    "application/x-yaml",
    "application/yaml",
    "+json",
    "+xml",
)
_META_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_.:-]+)""", re.I)


class Body:
    """For a dataclass with `content_type: str` and `body: bytes`."""

    content_type: str
    body: bytes

    @property
    def media_type(self) -> str:
        return self.content_type.split(";")[0].strip().lower()

    def is_html(self) -> bool:
        if self.media_type in HTML_TYPES:
            return True
        return not self.media_type and self.body[:512].lstrip().lower().startswith((b"<!doctype html", b"<html"))

    def is_text(self) -> bool:
        return self.is_html() or any(t in self.media_type for t in TEXT_TYPES)

    @property
    def text(self) -> str:
        charset = "utf-8"
        if "charset=" in self.content_type:
            charset = self.content_type.split("charset=", 1)[1].split(";")[0].strip().strip('"') or "utf-8"
        elif self.is_html():  # no charset in the header: the page's own <meta charset>
            found = _META_CHARSET.search(self.body[:4096])
            if found:
                charset = found.group(1).decode("ascii", errors="replace")
        try:
            return self.body.decode(charset, errors="replace")
        except LookupError:
            return self.body.decode("utf-8", errors="replace")
