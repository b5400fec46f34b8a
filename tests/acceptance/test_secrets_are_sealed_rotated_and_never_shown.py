"""Issue 4, item 1 (audit4): secrets sealed with AES-256-GCM at rest, key
rotation by command, names never values, and no value on the command line."""

from __future__ import annotations

import base64
import io
import sys

import pytest
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from django.core.management import call_command
from django.db import connection
from django.test import override_settings

from tests.cli.conftest import cli, foldrun_home, signed_in_as  # noqa: F401
from vault.actions import do_set_secret, resolve_secrets
from vault.models import OAuthPending, Secret

OLD = base64.b64encode(b"O" * 32).decode()
NEW = base64.b64encode(b"N" * 32).decode()
PLANTED = "sk-audit4-planted-at-rest-1234"


def raw_rows(table: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {table}")
        return cursor.fetchall()


def as_bytes(cell) -> bytes:
    if isinstance(cell, memoryview):
        return bytes(cell)
    if isinstance(cell, (bytes, bytearray)):
        return bytes(cell)
    return str(cell).encode()


def test_the_stored_row_does_not_carry_the_value_in_any_column(alice_api, workspace):
    alice_api.put("/api/workspaces/rank-desk/secrets/OPENAI_API_KEY", {"value": PLANTED}, format="json")
    rows = raw_rows(Secret._meta.db_table)
    assert len(rows) == 1
    assert all(PLANTED.encode() not in as_bytes(cell) for cell in rows[0])
    assert all(base64.b64encode(PLANTED.encode()) not in as_bytes(cell) for cell in rows[0])


def test_the_sealed_column_is_aes_256_gcm_under_the_configured_key(account, workspace):
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW]):
        row = do_set_secret(account, workspace, "GCM_CHECK", value=PLANTED)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT sealed FROM {Secret._meta.db_table} WHERE id = %s", [row.pk])
        sealed = as_bytes(cursor.fetchone()[0])
    nonce, body = sealed[:12], sealed[12:]
    aad = f"foldrun-vault/{account.pk}/{workspace.pk}/GCM_CHECK".encode()
    # Opened here with the cryptography package directly: a 32-byte key is AES-256, the tag is GCM's.
    assert AESGCM(b"N" * 32).decrypt(nonce, body, aad).decode() == PLANTED
    assert len(body) == len(PLANTED) + 16


def test_two_seals_of_one_value_differ(account, workspace):
    first = do_set_secret(account, workspace, "ONE", value=PLANTED)
    second = do_set_secret(account, workspace, "TWO", value=PLANTED)
    assert bytes(first.sealed)[:12] != bytes(second.sealed)[:12]


def test_a_dashboard_connect_in_flight_keeps_the_client_secret_sealed(alice_api, workspace, settings):
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example"
    alice_api.post(
        "/api/oauth/start",
        {"name": "X_OAUTH", "provider": "github", "client_id": "c", "client_secret": PLANTED},
        format="json",
    )
    rows = raw_rows(OAuthPending._meta.db_table)
    assert len(rows) == 1
    assert all(PLANTED.encode() not in as_bytes(cell) for cell in rows[0])


def test_the_rotation_command_reseals_everything_under_the_newest_key(account, workspace, settings):
    settings.FOLDRUN_PUBLIC_URL = "https://foldrun.example"
    with override_settings(FOLDRUN_VAULT_KEYS=[OLD]):
        do_set_secret(account, None, "ACCOUNT_ONE", value=PLANTED + "-a")
        do_set_secret(account, workspace, "DESK_ONE", value=PLANTED + "-w")
        do_set_secret(
            account,
            workspace,
            "DESK_OAUTH",
            oauth_recipe={"token_url": "https://x.example/token", "client_id": "c", "access_token": PLANTED + "-t"},
        )
    out = io.StringIO()
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW, OLD]):
        call_command("rotate_vault_keys", stdout=out)
    assert out.getvalue() == "Re-encrypted 3 value(s) under the newest key.\n"
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW]):  # the old key dropped
        found = resolve_secrets(workspace, ["ACCOUNT_ONE", "DESK_ONE", "DESK_OAUTH"])
    assert {n: r.value for n, r in found.items()} == {
        "ACCOUNT_ONE": PLANTED + "-a",
        "DESK_ONE": PLANTED + "-w",
        "DESK_OAUTH": PLANTED + "-t",
    }
    assert found.failed == {}


def test_rotating_twice_has_nothing_left_to_do(account, workspace):
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW, OLD]):
        do_set_secret(account, workspace, "DESK_ONE", value=PLANTED)
        out = io.StringIO()
        call_command("rotate_vault_keys", stdout=out)
    assert out.getvalue() == "Re-encrypted 0 value(s) under the newest key.\n"


def test_an_undecryptable_value_is_refused_by_name_by_a_run_resolving_it(account, workspace):
    with override_settings(FOLDRUN_VAULT_KEYS=[OLD]):
        do_set_secret(account, workspace, "LOST", value=PLANTED)
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW]):
        found = resolve_secrets(workspace, ["LOST"])
    assert "LOST" not in found and found.missing == []
    assert found.failed["LOST"].startswith("the secret LOST could not be decrypted with any key in FOLDRUN_VAULT_KEYS")


# ---------------------------------------------------------------- the command line


@pytest.fixture
def alice_cli(cli, signed_in_as, alice, workspace, transactional_db):
    signed_in_as(alice)
    return cli


def test_a_value_given_on_the_command_line_is_refused_and_not_echoed(alice_cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    done = alice_cli("secrets", "set", "OPENAI_API_KEY", PLANTED)
    assert done.code == 2
    assert PLANTED not in done.out + done.err
    assert done.err == (
        "foldrun secrets set takes no value on the command line, where it would land in shell history and process "
        "listings; nothing was stored and it is not repeated here. Type it at the prompt or pipe it on stdin (and "
        "treat a value already typed there as exposed).\n"
    )
    assert Secret.objects.count() == 0


def test_a_value_given_on_the_command_line_with_a_workspace_is_refused_too(alice_cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO("x"))
    done = alice_cli("secrets", "set", "OPENAI_API_KEY", "--to", "rank-desk", PLANTED)
    assert done.code == 2
    assert PLANTED not in done.out + done.err
    assert Secret.objects.count() == 0


def test_the_listing_names_scope_who_and_when_and_never_the_value(alice_cli, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.StringIO(PLANTED))
    alice_cli("secrets", "set", "OPENAI_API_KEY", "--to", "rank-desk")
    listing = alice_cli("secrets", "list", "--to", "rank-desk", "--json")
    row = listing.json[0]
    assert (row["name"], row["scope"], row["updated_by"]) == (
        "OPENAI_API_KEY",
        "workspace rank-desk",
        "alice@example.com",
    )
    assert row["updated_at"]
    assert PLANTED not in listing.out
