"""AES-256-GCM sealing, the one way foldrun seals a value at rest (the vault's
secrets, notify's stored values, a browse state= login). Pure Python.

A sealed value is `nonce (12 bytes) || ciphertext+tag`. The associated data
binds it to where it belongs: a value copied elsewhere does not open.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY_BYTES = 32
NONCE_BYTES = 12


class Unopened(Exception):
    """No key given opens the value (a wrong key, or the value or its associated data changed)."""


def seal(key: bytes, plaintext: bytes, aad: bytes) -> bytes:
    """`plaintext` sealed under the 32-byte `key`, bound to `aad`."""
    nonce = os.urandom(NONCE_BYTES)
    return nonce + AESGCM(key).encrypt(nonce, plaintext, aad)


def open_sealed(keys: Iterable[bytes], sealed: bytes, aad: bytes) -> bytes:
    """The plaintext, opened with the first of `keys` that fits; Unopened when none does."""
    nonce, body = bytes(sealed[:NONCE_BYTES]), bytes(sealed[NONCE_BYTES:])
    for key in keys:
        try:
            return AESGCM(key).decrypt(nonce, body, aad)
        except (InvalidTag, ValueError):  # ValueError: a key of the wrong length
            continue
    raise Unopened()
