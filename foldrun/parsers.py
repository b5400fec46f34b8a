"""The API's JSON parser: strings in a request body must be text."""
from __future__ import annotations

from typing import Any

from rest_framework.parsers import JSONParser

from .errors import ApiError


def _not_text(value: Any, where: str = "") -> str | None:
    """Where in a parsed body a string holds a NUL or a lone surrogate, or None."""
    if isinstance(value, str):
        return where or "body" if ("\x00" in value or not value.isascii() and _has_surrogate(value)) else None
    if isinstance(value, dict):
        for key, inner in value.items():
            here = f"{where}.{key}" if where else str(key)
            found = _not_text(key, here) or _not_text(inner, here)
            if found:
                return found
    if isinstance(value, list):
        for index, inner in enumerate(value):
            found = _not_text(inner, f"{where}[{index}]" if where else f"[{index}]")
            if found:
                return found
    return None


def _has_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


class TextJSONParser(JSONParser):
    """JSON whose strings are text. `\\u0000` and a lone surrogate are legal JSON
    escapes but no database column, file or program argument takes them: a 400
    naming the field, rather than a 500 from whatever stores them first."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        where = _not_text(data)
        if where is not None:
            raise ApiError(f"{where}: text may not hold a NUL character or a lone surrogate.", code="invalid",
                           details={"field": where})
        return data
