"""Credits: a finished run's cost is drawn once; owners get one low-balance
mail from the platform's own sender."""

from decimal import Decimal


from accounts.credits import do_add_credits
from accounts.models import Account, CreditCharge
from runs.models import Run
from runs.signals import emit
from tests.notify.conftest import send_outbox


def _finish(workspace, cost: str, django_capture_on_commit_callbacks) -> Run:
    run = Run.objects.create(
        account=workspace.account, workspace=workspace, name="weekly", status="completed", cost_usd=Decimal(cost)
    )
    with django_capture_on_commit_callbacks(execute=True):
        emit(run, "completed")
    return run


def test_a_finished_run_is_drawn_from_the_credits_once(alice, workspace, django_capture_on_commit_callbacks):
    Account.objects.filter(pk=workspace.account_id).update(credits_usd=Decimal("20"))
    run = _finish(workspace, "1.25", django_capture_on_commit_callbacks)
    with django_capture_on_commit_callbacks(execute=True):
        emit(run, "completed")
    assert Account.objects.get(pk=workspace.account_id).credits_usd == Decimal("18.75")
    assert CreditCharge.objects.filter(run_public_id=run.public_id).count() == 1


def test_an_unmetered_account_is_never_charged(alice, workspace, django_capture_on_commit_callbacks):
    _finish(workspace, "3", django_capture_on_commit_callbacks)
    assert Account.objects.get(pk=workspace.account_id).credits_usd is None
    assert CreditCharge.objects.count() == 0


def test_falling_below_the_warning_level_mails_the_owners_once_from_the_platform(
    alice, bob, workspace, django_capture_on_commit_callbacks
):
    Account.objects.filter(pk=workspace.account_id).update(credits_usd=Decimal("6"), low_balance_usd=Decimal("5"))
    _finish(workspace, "2", django_capture_on_commit_callbacks)
    _finish(workspace, "0.5", django_capture_on_commit_callbacks)
    warnings = [m for m in send_outbox() if "low on credits" in m.subject]
    assert [m.to for m in warnings] == [["alice@example.com"]]
    assert warnings[0].from_email == "foldrun <hello@foldrun.io>"
    assert warnings[0].subject == "foldrun: Acme is low on credits"


def test_a_top_up_arms_the_next_warning(alice, workspace, django_capture_on_commit_callbacks):
    Account.objects.filter(pk=workspace.account_id).update(credits_usd=Decimal("6"), low_balance_usd=Decimal("5"))
    _finish(workspace, "2", django_capture_on_commit_callbacks)
    do_add_credits(Account.objects.get(pk=workspace.account_id), Decimal("10"))
    _finish(workspace, "10", django_capture_on_commit_callbacks)
    assert len([m for m in send_outbox() if "low on credits" in m.subject]) == 2


def test_the_warning_goes_through_the_platform_even_when_the_account_has_its_own_resend_key(
    alice, workspace, django_capture_on_commit_callbacks
):
    from vault.actions import do_set_secret

    do_set_secret(workspace.account, None, "RESEND_API_KEY", value="re_test_key_of_the_account")
    do_set_secret(workspace.account, None, "EMAIL_FROM", value="desk@acme.example")
    Account.objects.filter(pk=workspace.account_id).update(credits_usd=Decimal("1"))
    _finish(workspace, "0.1", django_capture_on_commit_callbacks)
    assert [m.from_email for m in send_outbox() if "low on credits" in m.subject] == ["foldrun <hello@foldrun.io>"]


def test_staff_top_up_from_the_command_line(workspace):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("add_credits", workspace.account.public_id, "25", stdout=out)
    assert out.getvalue().strip() == "Acme now has $25.00 of credits."


def test_a_top_up_that_is_not_a_number_is_refused_by_name(workspace):
    import pytest
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError) as refused:
        call_command("add_credits", workspace.account.public_id, "lots")
    assert str(refused.value) == "amount: 'lots' is not a number of dollars."
