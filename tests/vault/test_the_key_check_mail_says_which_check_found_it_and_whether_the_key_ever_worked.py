"""Issue 32, item 4 (wording): the owners' mail about a broken provider key says which check found it — "the
daily key check" only for the once-a-day one (providers.md: "Once a day, every provider block … is asked"),
a check forced through `POST /api/account/providers` (what `foldrun account providers --check` sends) says it
was forced — and it never says a key "worked before" when that key had never been checked."""

from __future__ import annotations

from tests.notify.conftest import send_outbox
from tests.vault.test_key_probe import PLANTED, desk  # noqa: F401 - the desk fixture
from vault.probe import check_account_providers
from vault.tasks import probe_account_providers


def mail_lines(body: str) -> list[str]:
    return body.splitlines()


def test_the_daily_check_of_a_key_never_checked_before_does_not_say_it_worked_before(
    desk, account, alice, fake_provider
):
    fake_provider.reply_status(401)
    probe_account_providers(account.pk)
    [mail] = send_outbox()
    assert mail.subject == "foldrun: a provider key does not work for Acme"
    lines = mail_lines(mail.body)
    assert lines[0] == "The daily key check found a provider key that does not work now:"
    assert lines[3] == "  never checked before"
    assert "worked" not in mail.body.split("\n\nRuns", 1)[0]
    assert PLANTED not in mail.body


def test_the_daily_check_of_a_key_that_worked_at_its_last_check_says_so(desk, account, alice, fake_provider):
    fake_provider.reply_text("ok")
    check_account_providers(account.pk)
    fake_provider.reply_status(401)
    probe_account_providers(account.pk, force=True)
    [mail] = send_outbox()
    assert mail.subject == "foldrun: a provider key stopped working for Acme"
    lines = mail_lines(mail.body)
    assert lines[0] == "The daily key check found a provider key that does not work now:"
    assert lines[3] == "  it worked at the last check"


def test_a_forced_check_does_not_call_itself_the_daily_key_check(desk, account, alice, alice_api, fake_provider):
    fake_provider.reply_status(401)
    assert alice_api.post("/api/account/providers").status_code == 200
    [mail] = send_outbox()
    assert mail_lines(mail.body)[0] == "A key check forced by hand found a provider key that does not work now:"
    assert "daily" not in mail.body
