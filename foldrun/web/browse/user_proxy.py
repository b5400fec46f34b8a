"""`proxy`: the user's own HTTP proxy, from a secret, chained behind the guard proxy.

spec/tools.md, "The browser, in full": the NAME of a secret holding `http://user:pass@host:port`; a missing secret
is refused by name. The browser is still pointed at the guard on loopback — it never holds the proxy's URL or its
credentials — and the guard hands every connection on to the user's proxy with the Proxy-Authorization it builds
here, after checking the address that proxy is at (and the host the page asked for against allowed_domains).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from ..errors import WebToolError
from ..net import Upstream

if TYPE_CHECKING:  # pragma: no cover
    from .call import Call

SHAPE = "http://user:pass@host:port"


def user_proxy(call: "Call") -> Upstream | None:
    """The proxy the call's `proxy` setting names (call, identity, block), or None when none is set."""
    name = call.setting("proxy")
    if name in (None, "", False):
        return None
    if not isinstance(name, str):
        raise WebToolError(f"browse: proxy= is the NAME of a secret holding a proxy URL, {SHAPE}")
    try:
        value = call.secret_value(name).strip()
    except (KeyError, LookupError):  # the reader has no such name: say which, never guess
        raise WebToolError(
            f"browse: proxy: the secret {name} is not available to this step — declare it under "
            f"secrets: and set it to {SHAPE}"
        ) from None
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        parts, port = None, None
    if parts is None or parts.scheme != "http" or not parts.hostname:
        raise WebToolError(f"browse: proxy: the secret {name} does not hold an HTTP proxy URL; it holds {SHAPE}")
    if parts.password:  # redacted wherever it shows, beside the whole URL
        call.secrets[f"{name} password"] = unquote(parts.password)
    authorization = ""
    if parts.username is not None:
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        authorization = "Basic " + base64.b64encode(pair.encode()).decode("ascii")
    return Upstream(parts.hostname, port or 80, authorization, name)
