"""The API's JSON parser: strings in a request body must be text, and its nesting is bounded."""

from __future__ import annotations

import io
from typing import Any

from rest_framework.parsers import JSONParser

from .errors import ApiError
from .nesting import MAX_DEPTH, sentence, too_deep


def check_depth(raw: bytes, then: str = "nothing was done") -> None:
    """ApiError (400, naming the limit) for a JSON body nested deeper than MAX_DEPTH: Python's parser
    would raise RecursionError on it, and whatever walks the value after it would too."""
    if too_deep(raw):
        raise ApiError(
            f"{sentence()}; at most {MAX_DEPTH} are read, so {then}.", code="too_deep", details={"limit": MAX_DEPTH}
        )


def not_text(value: Any, where: str = "") -> str | None:
    """Where in a parsed body a string holds a NUL or a lone surrogate, or None."""
    if isinstance(value, str):
        return where or "body" if ("\x00" in value or not value.isascii() and _has_surrogate(value)) else None
    if isinstance(value, dict):
        for key, inner in value.items():
            here = f"{where}.{key}" if where else str(key)
            found = not_text(key, here) or not_text(inner, here)
            if found:
                return found
    if isinstance(value, list):
        for index, inner in enumerate(value):
            found = not_text(inner, f"{where}[{index}]" if where else f"[{index}]")
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
    """JSON nested at most MAX_DEPTH deep, whose strings are text. `\\u0000` and a lone surrogate are legal JSON
    escapes but no database column, file or program argument takes them: a 400
    naming the field, rather than a 500 from whatever stores them first."""

    def parse(self, stream, media_type=None, parser_context=None):
        raw = stream.read() if stream is not None else b""
        check_depth(raw)
        data = super().parse(io.BytesIO(raw), media_type, parser_context)
        where = not_text(data)
        if where is not None:
            raise ApiError(
                f"{where}: text may not hold a NUL character or a lone surrogate.",
                code="invalid",
                details={"field": where},
            )
        return data
