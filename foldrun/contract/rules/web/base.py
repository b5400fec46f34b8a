"""What every part of the `web:` check shares: the findings it reports, the
secrets it has read, and the small readers of a value they all use."""

from __future__ import annotations

import re
from typing import Any, Mapping

from ...desk import Desk, Document
from ..providers import Emitter

_TAG_RE = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?$")
HOST_RE = re.compile(
    r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$"
)


def dotted(path: tuple) -> str:
    return ".".join(str(part) for part in path)


def as_list(value: Any) -> list | None:
    """A list as written, a comma-separated string as its items, else None."""
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return None


def is_tag(value: Any) -> bool:
    return isinstance(value, str) and bool(_TAG_RE.match(value.strip()))


class WebCheckBase:
    """One document's `web:` block: where its findings go."""

    def __init__(
        self, desk: Desk, document: Document, emit: Emitter, platform: Mapping[str, int] | None = None
    ) -> None:
        self.desk = desk
        self.document = document
        self.emit = emit
        self.platform = platform or {}
        self.secret_names: list[tuple[tuple, str]] = []  # (path, NAME) the block reads

    def error(self, path: tuple, message: str, code: str) -> None:
        self.emit(path, "error", message, code)

    def warning(self, path: tuple, message: str, code: str) -> None:
        self.emit(path, "warning", message, code)
