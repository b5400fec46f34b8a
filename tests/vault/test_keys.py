"""Vault keys: several accepted, rotation re-seals under the newest, clear errors naming FOLDRUN_VAULT_KEYS."""

from __future__ import annotations

import base64

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from vault.actions import do_set_secret, resolve_secrets, reveal
from vault.apps import check_vault_keys
from vault.crypto import UndecryptableSecret, VaultKeyError, key_id
from vault.keys import vault_keys
from vault.models import Secret

OLD = base64.b64encode(b"o" * 32).decode()
NEW = base64.b64encode(b"n" * 32).decode()


def test_an_absent_key_list_names_the_setting():
    with override_settings(FOLDRUN_VAULT_KEYS=[], DEBUG=False):
        with pytest.raises(VaultKeyError, match="^FOLDRUN_VAULT_KEYS is not set; the vault needs at least one"):
            vault_keys()


def test_a_key_of_the_wrong_length_names_the_entry():
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW, base64.b64encode(b"short").decode()]):
        with pytest.raises(VaultKeyError) as info:
            vault_keys()
    assert str(info.value) == "FOLDRUN_VAULT_KEYS: entry 2 decodes to 5 bytes; an AES-256 key is 32 bytes"


def test_start_up_checks_refuse_a_malformed_key():
    with override_settings(FOLDRUN_VAULT_KEYS=["not base64!!"]):
        errors = check_vault_keys()
    assert [e.id for e in errors] == ["vault.E001"]
    assert errors[0].msg.startswith("FOLDRUN_VAULT_KEYS: entry 1 is not base64")


def test_in_development_a_key_is_made_under_the_data_dir(tmp_path):
    with override_settings(FOLDRUN_VAULT_KEYS=[], DEBUG=True, DATA_DIR=tmp_path):
        first = vault_keys()
        again = vault_keys()
    assert first[0].id == again[0].id
    assert (tmp_path / "vault.key").stat().st_mode & 0o777 == 0o600


def test_rotation_reseals_under_the_newest_key(account, workspace):
    with override_settings(FOLDRUN_VAULT_KEYS=[OLD]):
        do_set_secret(account, workspace, "ROTATE_ME", value="v-123")
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW, OLD]):
        assert reveal(Secret.objects.get(name="ROTATE_ME")) == "v-123"  # the old key still opens it
        call_command("rotate_vault_keys")
    row = Secret.objects.get(name="ROTATE_ME")
    assert row.key_id == key_id(b"n" * 32)
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW]):
        assert reveal(row) == "v-123"


def test_a_value_no_key_opens_is_refused_by_name_never_read_as_empty(account, workspace):
    with override_settings(FOLDRUN_VAULT_KEYS=[OLD]):
        do_set_secret(account, workspace, "LOST_KEY", value="v")
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW]):
        with pytest.raises(UndecryptableSecret) as info:
            reveal(Secret.objects.get(name="LOST_KEY"))
        found = resolve_secrets(workspace, ["LOST_KEY"])
        with pytest.raises(
            CommandError,
            match="could not be decrypted with any key in FOLDRUN_VAULT_KEYS and were left as they are: LOST_KEY",
        ):
            call_command("rotate_vault_keys")
    assert str(info.value) == (
        "the secret LOST_KEY could not be decrypted with any key in FOLDRUN_VAULT_KEYS "
        "— it was sealed under a key that is no longer configured"
    )
    assert "LOST_KEY" not in found and "LOST_KEY" in found.failed


def test_a_sealed_value_moved_to_another_row_does_not_open(account, workspace):
    a = do_set_secret(account, workspace, "FIRST", value="one")
    b = do_set_secret(account, workspace, "SECOND", value="two")
    Secret.objects.filter(pk=b.pk).update(sealed=a.sealed, key_id=a.key_id)
    with pytest.raises(UndecryptableSecret):
        reveal(Secret.objects.get(pk=b.pk))


def test_the_api_answers_a_sentence_not_a_500_when_the_keys_are_broken(alice_api):
    with override_settings(FOLDRUN_VAULT_KEYS=["bad!!"]):
        answer = alice_api.put("/api/secrets/SOME_KEY", {"value": "v"}, format="json")
    assert answer.status_code == 503
    assert answer.json()["message"].startswith("FOLDRUN_VAULT_KEYS: entry 1 is not base64")
