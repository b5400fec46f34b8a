"""A session's extra headers, sealed with the vault's keys: a staging gate's header is a secret."""
from __future__ import annotations

import json

from vault.crypto import open_sealed, seal
from vault.keys import vault_keys

from .models import BrowserSession


def seal_headers(session: BrowserSession, headers: list[dict[str, str]]) -> None:
    if not headers:
        session.sealed_headers, session.sealed_headers_kid = None, ""
        return
    session.sealed_headers_kid, session.sealed_headers = seal(vault_keys(), json.dumps(headers).encode(),
                                                              session.headers_aad())


def open_headers(session: BrowserSession) -> list[dict[str, str]]:
    if not session.sealed_headers:
        return []
    plain = open_sealed(vault_keys(), session.sealed_headers_kid, bytes(session.sealed_headers),
                        session.headers_aad(), name=f"the headers of session {session.public_id}")
    return json.loads(plain)
