"""A run's next step continues in the same worker task (issue 8 item 9): what the chain does, and what it costs.

`lifecycle.run_steps_from` is the body of the `runs.run_step` task; it is called here in this process, as the
worker calls it. A further plain step is taken in the closing transaction of the step before it and run at
once; anything that parks, fans out or waits ends the chain; a row not as the chain last saw it is read again.
"""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Account, CreditCharge, Workspace
from runs import lifecycle
from runs.actions import check_start_run, do_cancel_run
from runs.models import Run, Step, TraceEvent, Try
from tests.fakes.providers import Reply
from tests.runs.helpers import agent_file, push
from vault.actions import do_set_secret


def flows(fake) -> dict[str, str]:
    return {
        "agents/a/agent.md": agent_file("a", fake, tools="[]"),
        "flows/one.md": "---\nname: one\n---\n1. [[a]] — Say GOOD.\n",
        "flows/three.md": "---\nname: three\n---\n1. [[a]] — One.\n2. [[a]] — Two after {{steps.1.output}}.\n"
        "3. [[a]] — Say GOOD.\n",
        "flows/gated.md": "---\nname: gated\n---\n1. [[a]] — One.\n2. [[a]] ! — Two.\n",
    }


def start(workspace, flow: str) -> tuple[Run, Step]:
    run = check_start_run(workspace=workspace, flow=flow)
    return run, run.steps.get(index=1)


def test_the_steps_of_a_run_run_in_one_task_each_with_its_try_its_spend_and_its_trace(workspace, fake_provider):
    push(workspace, flows(fake_provider))
    for n in range(3):
        fake_provider.reply_text(f"GOOD {n}", usage=(10, 5))
    run, first = start(workspace, "three")
    words = lifecycle.run_steps_from(first.pk)
    run.refresh_from_db()
    assert words == "completed; completed; completed"
    assert (run.status, run.headline, run.tokens_in, run.tokens_out) == ("completed", "GOOD 2", 30, 15)
    steps = list(run.steps.order_by("index"))
    assert [(s.status, s.attempt, s.output, s.tokens_in, s.lease_holder) for s in steps] == [
        ("completed", 1, "GOOD 0", 10, ""),
        ("completed", 1, "GOOD 1", 10, ""),
        ("completed", 1, "GOOD 2", 10, ""),
    ]
    assert steps[1].task == "Two after GOOD 0."  # filled from the step before, in the chain
    tries = list(Try.objects.filter(step__run=run).order_by("step__index"))
    assert [(t.n, t.status, t.status_reason, t.tokens_in, t.tokens_out, t.cost_usd > 0) for t in tries] == [
        (1, "completed", "the step completed", 10, 5, True)
    ] * 3
    assert sum(t.cost_usd for t in tries) == run.cost_usd == sum(s.cost_usd for s in steps)
    assert all(t.finished_at is not None and t.started_at <= t.finished_at for t in tries)
    for step in steps:  # each step's whole trace: its limits, its model request, its closing line
        kinds = list(TraceEvent.objects.filter(step=step).order_by("pk").values_list("kind", flat=True))
        assert kinds == ["limit", "model_request", "limit"], (step.index, kinds)


def test_a_gate_ends_the_chain_and_parks_the_run_for_a_person(workspace, fake_provider):
    push(workspace, flows(fake_provider))
    fake_provider.reply_text("GOOD", usage=(1, 1))
    run, first = start(workspace, "gated")
    assert lifecycle.run_steps_from(first.pk) == "completed"
    run.refresh_from_db()
    second = run.steps.get(index=2)
    assert (run.status, second.status, second.attempt) == ("awaiting-approval", "awaiting-approval", 0)
    assert not Try.objects.filter(step=second).exists()


@pytest.mark.django_db(transaction=True)
def test_a_run_cancelled_while_a_step_of_its_chain_runs_takes_no_further_step(account, fake_provider):
    workspace = Workspace.objects.create(account=account, name="rank-desk")
    push(workspace, flows(fake_provider))
    seen: list[str] = []

    def model(body: dict) -> Reply:
        task = body["messages"][0]["content"]
        seen.append(task if isinstance(task, str) else task[0]["text"])
        if len(seen) == 2:  # while step 2 waits on its model call, someone cancels the run
            worker = threading.Thread(target=lambda: (do_cancel_run(Run.objects.get(pk=run.pk)), connection.close()))
            worker.start()
            worker.join()
        return Reply(blocks=[{"type": "text", "text": "GOOD"}], usage=(1, 1))

    fake_provider.responder = model
    run, first = start(workspace, "three")
    assert lifecycle.run_steps_from(first.pk) == "completed; completed"
    run.refresh_from_db()
    assert [s for s in seen] == ["One.", "Two after GOOD."]
    assert run.status == "cancelled"
    assert list(run.steps.order_by("index").values_list("status", flat=True)) == ["completed", "completed", "cancelled"]
    assert not Try.objects.filter(step__run=run, step__index=3).exists()
    assert not Try.objects.filter(step__run=run, status="running").exists()


def _statements(ctx) -> list[str]:
    return [q["sql"] for q in ctx.captured_queries]


def test_a_run_ending_on_an_unmetered_account_with_an_empty_vault_reads_neither_the_account_nor_the_vault(
    workspace, fake_provider, django_capture_on_commit_callbacks
):
    # The step's optional provider key (a local base_url needs none) is answered from the claim's own query,
    # and the charge after commit sees the account unmetered as the closing transaction read it.
    push(workspace, flows(fake_provider))
    fake_provider.reply_text("GOOD", usage=(1, 1))
    run, first = start(workspace, "one")
    with CaptureQueriesContext(connection) as ctx, django_capture_on_commit_callbacks(execute=True):
        assert lifecycle.run_steps_from(first.pk) == "completed"
    assert Run.objects.get(pk=run.pk).status == "completed"
    assert not [sql for sql in _statements(ctx) if sql.startswith('SELECT "vault_secret"')]
    assert not [sql for sql in _statements(ctx) if sql.startswith('SELECT "accounts_account"')]
    assert not CreditCharge.objects.exists()


@pytest.mark.django_db(transaction=True)  # the task's transactions its own, not savepoints in a test's
def test_a_run_whose_last_step_ends_in_its_task_ends_in_place_without_a_savepoint(workspace, fake_provider):
    # The end of the run (no quarantine to clear, no notification to write) is plain UPDATEs in the step's closing
    # transaction: no SAVEPOINT around the move on, none around its notifications.
    push(workspace, flows(fake_provider))
    fake_provider.reply_text("GOOD — all done\nthe details", usage=(1, 1))
    run, first = start(workspace, "one")
    with CaptureQueriesContext(connection) as ctx:
        assert lifecycle.run_steps_from(first.pk) == "completed"
    assert not [sql for sql in _statements(ctx) if "SAVEPOINT" in sql.upper()]
    run = Run.objects.get(pk=run.pk)
    assert (run.status, run.status_reason, run.verdict, run.headline, run.summary) == (
        "completed",
        "every step ended",
        "GOOD",
        "GOOD — all done",
        "the details",
    )
    assert run.finished_at is not None
    step, attempt = run.steps.get(), Try.objects.get(step__run=run)
    assert (step.status, step.output, step.lease_holder) == ("completed", "GOOD — all done\nthe details", "")
    assert (attempt.status, attempt.status_reason, attempt.tokens_in) == ("completed", "the step completed", 1)
    assert attempt.finished_at is not None and attempt.seconds > 0


def test_a_metered_account_is_drawn_for_a_run_that_ended_in_its_step(
    workspace, fake_provider, django_capture_on_commit_callbacks
):
    Account.objects.filter(pk=workspace.account_id).update(credits_usd=Decimal("20"))
    push(workspace, flows(fake_provider))
    fake_provider.reply_text("GOOD", usage=(1000, 1000))
    run, first = start(workspace, "one")
    with django_capture_on_commit_callbacks(execute=True):
        assert lifecycle.run_steps_from(first.pk) == "completed"
    run.refresh_from_db()
    assert run.cost_usd > 0
    charge = CreditCharge.objects.get(run_public_id=run.public_id)
    assert charge.amount_usd == run.cost_usd
    assert Account.objects.get(pk=workspace.account_id).credits_usd == Decimal("20") - run.cost_usd


def test_a_secret_in_the_vault_is_read_for_the_step_that_names_it(workspace, fake_provider):
    # Any secret in the account's vault and the step's lookup goes to the vault: here the provider key itself.
    do_set_secret(workspace.account, None, "ANTHROPIC_API_KEY", value="sk-ant-held-in-the-vault")
    push(workspace, flows(fake_provider))
    fake_provider.reply_text("GOOD", usage=(1, 1))
    run, first = start(workspace, "one")
    with CaptureQueriesContext(connection) as ctx:
        assert lifecycle.run_steps_from(first.pk) == "completed"
    assert [sql for sql in _statements(ctx) if sql.startswith('SELECT "vault_secret"')]
    lines = [e.data for e in TraceEvent.objects.filter(run=run, kind="secret")]
    assert lines == [{"name": "ANTHROPIC_API_KEY", "store": "account vault", "for": "provider"}]
    assert fake_provider.requests[-1].headers["x-api-key"] == "sk-ant-held-in-the-vault"
