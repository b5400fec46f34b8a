"""What a session keeps sealed with the vault's keys: its extra headers (a staging gate's header is a secret)
and its proxy URL (which may carry a user name and password). The options on the row show neither."""

from __future__ import annotations

import json
from typing import Any

from vault.crypto import open_sealed, seal
from vault.keys import vault_keys

from .models import BrowserSession


def seal_secrets(session: BrowserSession, headers: list[dict[str, str]], proxy_url: str = "") -> None:
    if not headers and not proxy_url:
        session.sealed_headers, session.sealed_headers_kid = None, ""
        return
    plain = json.dumps({"headers": headers, "proxyUrl": proxy_url}).encode()
    session.sealed_headers_kid, session.sealed_headers = seal(vault_keys(), plain, session.headers_aad())


def open_secrets(session: BrowserSession) -> dict[str, Any]:
    """{"headers": [...], "proxyUrl": "..."} as sealed ({"headers": [], "proxyUrl": ""} when nothing was)."""
    if not session.sealed_headers:
        return {"headers": [], "proxyUrl": ""}
    plain = open_sealed(
        vault_keys(),
        session.sealed_headers_kid,
        bytes(session.sealed_headers),
        session.headers_aad(),
        name=f"the headers of session {session.public_id}",
    )
    kept = json.loads(plain)
    return {"headers": kept.get("headers") or [], "proxyUrl": kept.get("proxyUrl") or ""}
