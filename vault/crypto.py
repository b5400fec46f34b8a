"""AES-256-GCM for values at rest. Pure Python (no Django): the laptop vault
uses the same sealing as the server's.

A sealed value is `nonce (12 bytes) || ciphertext+tag`, stored beside the id
of the key that sealed it (the first 12 hex characters of the key's SHA-256,
never the key). The associated data binds a value to its row, so a value
copied onto another secret's row does not open.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import os
from dataclasses import dataclass

from foldrun import sealing
from foldrun.sealing import KEY_BYTES, NONCE_BYTES  # noqa: F401 - the vault's names for them


class VaultKeyError(Exception):
    """The vault's keys are absent or malformed; the message names FOLDRUN_VAULT_KEYS."""


class UndecryptableSecret(Exception):
    """A value no configured key opens. Refused by name, never read as empty."""

    def __init__(self, name: str, source: str = "FOLDRUN_VAULT_KEYS") -> None:
        super().__init__(
            f"the secret {name} could not be decrypted with any key in {source} "
            "— it was sealed under a key that is no longer configured"
        )
        self.name = name


@dataclass(frozen=True)
class Key:
    id: str
    material: bytes = b""

    def __repr__(self) -> str:  # never print the material
        return f"Key(id={self.id!r})"


def key_id(material: bytes) -> str:
    return hashlib.sha256(material).hexdigest()[:12]


def parse_keys(entries: list[str] | tuple[str, ...], *, source: str = "FOLDRUN_VAULT_KEYS") -> list[Key]:
    """Decode base64 keys, newest first. Each must be exactly 32 bytes."""
    keys: list[Key] = []
    for position, entry in enumerate(entries, start=1):
        text = (entry or "").strip()
        try:
            material = base64.b64decode(text, validate=True)
        except (binascii.Error, ValueError):
            raise VaultKeyError(
                f"{source}: entry {position} is not base64; each key is 32 random bytes, base64-encoded "
                '(python -c "import os,base64;print(base64.b64encode(os.urandom(32)).decode())")'
            ) from None
        if len(material) != KEY_BYTES:
            raise VaultKeyError(
                f"{source}: entry {position} decodes to {len(material)} bytes; an AES-256 key is 32 bytes"
            )
        keys.append(Key(key_id(material), material))
    if not keys:
        raise VaultKeyError(
            f"{source} is not set; the vault needs at least one base64-encoded 32-byte key "
            "(newest first, comma-separated)"
        )
    return keys


def new_key_text() -> str:
    return base64.b64encode(os.urandom(KEY_BYTES)).decode()


def seal(keys: list[Key], plaintext: bytes, aad: bytes) -> tuple[str, bytes]:
    """Seal under the newest key; returns (key id, sealed bytes)."""
    newest = keys[0]
    return newest.id, sealing.seal(newest.material, plaintext, aad)


def open_sealed(
    keys: list[Key], kid: str, sealed: bytes, aad: bytes, *, name: str, source: str = "FOLDRUN_VAULT_KEYS"
) -> bytes:
    """Open with the key named by `kid` (any key if that id is unknown)."""
    ordered = [k for k in keys if k.id == kid] + [k for k in keys if k.id != kid]
    try:
        return sealing.open_sealed([k.material for k in ordered], sealed, aad)
    except sealing.Unopened:
        raise UndecryptableSecret(name, source) from None
