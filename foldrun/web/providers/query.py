"""What a search adapter is handed, and what it hands back (the shape the model already knows)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ..shapes import Found, Hit  # noqa: F401 - re-exported for the adapters

DAYS = {"day": 1, "week": 7, "month": 31, "year": 366}


@dataclass(frozen=True)
class Query:
    text: str
    count: int
    site: str | None
    time_range: str | None
    language: str  # `en`, from the tag `en-AU`
    region: str | None  # `AU`, from the tag or `region:`

    def since(self, fmt: str = "%Y-%m-%d") -> str | None:
        if not self.time_range:
            return None
        return (dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=DAYS[self.time_range])).strftime(fmt)

    @property
    def with_site(self) -> str:
        """The query with `site:` in it, for the APIs whose only domain filter is Google's operator."""
        return f"{self.text} site:{self.site}" if self.site else self.text


def query_of(text: str, count: int, site: str | None, time_range: str | None, tag: str) -> Query:
    lang, _, country = tag.partition("-")
    return Query(text, count, site, time_range, lang.lower() or "en", country.upper() or None)
