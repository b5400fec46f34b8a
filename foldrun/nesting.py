"""How deep a JSON text nests, read before it is parsed.

Python's json parser recurses once per `[` or `{`: a body nested a few thousand deep raises
RecursionError (a 500 wherever a body is parsed), and everything that walks the parsed value after it
recurses as well. Every place that parses a JSON body a caller sent — the API's parser, an inbound
webhook, the MCP endpoint — asks `too_deep` first and refuses with `sentence`, naming the limit. Pure
Python, no Django: the MCP endpoint uses it before the SDK parses the message.
"""

from __future__ import annotations

import re
from itertools import accumulate

MAX_DEPTH = 100

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def too_deep(raw: bytes | str, limit: int = MAX_DEPTH) -> bool:
    """True when the JSON text `raw` opens more than `limit` arrays and objects inside one another.

    Brackets inside strings do not count. A text that is not JSON at all is left to the parser to say so.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    if data.count(b"[") + data.count(b"{") <= limit:  # the usual body: nothing to walk
        return False
    brackets = _STRING.sub(b"", data).translate(None, _NOT_BRACKETS)
    return len(brackets) > limit and max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def sentence(limit: int = MAX_DEPTH) -> str:
    return f"The JSON body is nested deeper than {limit} levels (arrays and objects inside one another)"
