"""Public ids: a prefix and random base32, never an integer key."""

from __future__ import annotations

import secrets

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"  # Crockford: no i, l, o, u
# Each random byte to one of the 32 letters by its low five bits: 256 is a multiple of 32, so every letter is
# equally likely, as with secrets.choice — which drew each letter through a call of its own, and a run's start
# (its row and each step's) and each step's try and trace lines make ids.
_LETTERS = bytes(_ALPHABET[n % 32].encode()[0] for n in range(256))


def new_id(prefix: str, length: int = 16) -> str:
    return f"{prefix}_" + secrets.token_bytes(length).translate(_LETTERS).decode()


class PublicId:
    """A field default: `public_id = models.CharField(default=PublicId("run"), ...)`."""

    def __init__(self, prefix: str, length: int = 16) -> None:
        self.prefix = prefix
        self.length = length

    def deconstruct(self) -> tuple[str, tuple, dict]:
        # What Django's @deconstructible would answer, written out so this module (and with it a laptop
        # run's webhook, notify/laptop.py) imports no Django.
        return "foldrun.ids.PublicId", (self.prefix,), {}

    def __call__(self) -> str:
        return new_id(self.prefix, self.length)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PublicId) and (other.prefix, other.length) == (self.prefix, self.length)


def public_id_field(prefix: str, length: int = 16):
    from django.db import models

    return models.CharField(
        max_length=40,
        unique=True,
        editable=False,
        default=PublicId(prefix) if length == 16 else PublicId(prefix, length=length),
    )
