"""Rotating the vault's keys re-seals every value sealed with them — a secret, a site login's password, a browser
session's extra headers and proxy URL — and each opens again under the new key alone, as it was."""

from __future__ import annotations

import base64
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from browsing.models import BrowserSession
from browsing.sealed import open_secrets, seal_secrets
from vault.actions import do_set_secret, reveal
from vault.crypto import UndecryptableSecret, key_id
from vault.logins import do_set_login, logins_for_session
from vault.models import Secret, SiteLogin

OLD = base64.b64encode(b"o" * 32).decode()
NEW = base64.b64encode(b"n" * 32).decode()
HEADERS = [{"host": "staging.example.com", "name": "X-Gate", "value": "gate-open-123"}]
PROXY = "http://ann:proxy-pw-456@proxy.example.com:3128"


def sealed_session(account) -> BrowserSession:
    session = BrowserSession(account=account, status="closed")
    session.save()  # its public id first: the seal is bound to it
    seal_secrets(session, HEADERS, PROXY)
    session.save()
    return session


def test_rotation_reseals_secrets_logins_and_session_headers_and_each_reads_back_under_the_new_key(account, workspace):
    with override_settings(FOLDRUN_VAULT_KEYS=[OLD]):
        do_set_secret(account, workspace, "ROTATE_ME", value="v-123")
        do_set_login(account, "app.example.com", "default", "ann@example.com", "login-pw-789")
        session = sealed_session(account)
        bare = BrowserSession.objects.create(account=account, status="closed")  # nothing sealed: left alone
    out = StringIO()
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW, OLD]):
        call_command("rotate_vault_keys", stdout=out)
    assert out.getvalue().strip() == "Re-encrypted 3 value(s) under the newest key."
    new = key_id(b"n" * 32)
    session.refresh_from_db()
    assert (
        Secret.objects.get(name="ROTATE_ME").key_id,
        SiteLogin.objects.get(account=account).key_id,
        session.sealed_headers_kid,
    ) == (new, new, new)
    assert BrowserSession.objects.get(pk=bare.pk).sealed_headers is None
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW]):  # the old key dropped: everything still opens
        assert reveal(Secret.objects.get(name="ROTATE_ME")) == "v-123"
        [login] = logins_for_session(account.id, "default")
        assert (login.host, login.username, login.password) == ("app.example.com", "ann@example.com", "login-pw-789")
        assert open_secrets(BrowserSession.objects.get(pk=session.pk)) == {"headers": HEADERS, "proxyUrl": PROXY}
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW, OLD]):
        again = StringIO()
        call_command("rotate_vault_keys", stdout=again)  # a second run has nothing left to do
    assert again.getvalue().strip() == "Re-encrypted 0 value(s) under the newest key."


def test_a_session_header_no_key_opens_is_named_and_left_as_it_was(account):
    with override_settings(FOLDRUN_VAULT_KEYS=[OLD]):
        session = sealed_session(account)
    before = bytes(session.sealed_headers)
    with override_settings(FOLDRUN_VAULT_KEYS=[NEW]):
        with pytest.raises(CommandError, match=f"left as they are: the headers of session {session.public_id}"):
            call_command("rotate_vault_keys", stdout=StringIO())
        with pytest.raises(UndecryptableSecret):
            open_secrets(BrowserSession.objects.get(pk=session.pk))
    assert bytes(BrowserSession.objects.get(pk=session.pk).sealed_headers) == before
