"""One AES-GCM sealing helper: the vault, notify and a browse state= login all seal through it."""

from __future__ import annotations

import base64
import os

import pytest

from foldrun import sealing
from notify import secrets as notify_secrets
from vault.crypto import Key, UndecryptableSecret, key_id, open_sealed, seal


def test_a_sealed_value_opens_with_its_key_and_its_associated_data_only():
    key, other = os.urandom(32), os.urandom(32)
    sealed = sealing.seal(key, b"planted-value", b"row:1")
    assert sealed[: sealing.NONCE_BYTES] != sealing.seal(key, b"planted-value", b"row:1")[: sealing.NONCE_BYTES]
    assert sealing.open_sealed([other, key], sealed, b"row:1") == b"planted-value"
    with pytest.raises(sealing.Unopened):
        sealing.open_sealed([key], sealed, b"row:2")
    with pytest.raises(sealing.Unopened):
        sealing.open_sealed([other], sealed, b"row:1")


def test_the_vault_s_sealing_is_the_helper_s():
    material = os.urandom(32)
    keys = [Key(key_id(material), material)]
    kid, sealed = seal(keys, b"v", b"aad")
    assert sealing.open_sealed([material], sealed, b"aad") == b"v"
    assert open_sealed(keys, kid, sealing.seal(material, b"w", b"aad"), b"aad", name="X") == b"w"
    with pytest.raises(UndecryptableSecret, match="the secret X could not be decrypted"):
        open_sealed(keys, kid, sealed, b"other", name="X")


def test_notify_s_stored_values_are_the_helper_s(settings):
    material = os.urandom(32)
    settings.FOLDRUN_VAULT_KEYS = [base64.b64encode(material).decode()]
    stored = notify_secrets.seal("https://hooks.example/T0/B0/x")
    assert sealing.open_sealed([material], base64.b64decode(stored), b"notify") == b"https://hooks.example/T0/B0/x"
    assert notify_secrets.unseal(stored) == "https://hooks.example/T0/B0/x"
    settings.FOLDRUN_VAULT_KEYS = [base64.b64encode(os.urandom(32)).decode()]
    assert notify_secrets.unseal(stored) is None
