"""Budgets that stop exactly at the cap: a call's cost is reserved before it goes out, against the run's
`budget:` and the workspace's window, so concurrent `each:` instances see each other's reservations."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from django.db import connection

from foldrun.engine import StepRequest, run_step
from foldrun.engine.errors import BudgetExceeded
from foldrun.engine.local import LocalHost
from runs import budget
from runs.actions import check_start_run
from runs.models import Run, TraceEvent, Try
from tests.conftest import wait_for
from tests.runs.engine_helpers import SECRETS, desk
from tests.runs.helpers import drive, push


def priced_agent(name: str, fake, *, output: int = 10) -> str:
    """$1 per million input tokens, $10 per million output (4,000 tokens out cost $0.04) unless told."""
    return (
        f"---\nname: {name}\ndescription: test agent\ntools: [read]\n"
        f"provider: {{name: anthropic, base_url: '{fake.base_url}', model: claude-sonnet-4-5, "
        f"price: {{input: 1, output: {output}}}}}\n---\nYou do the work.\n"
    )


@pytest.mark.e2e
def test_five_each_instances_with_a_ten_cent_cap_never_spend_past_it(
    celery_worker_process, workspace, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/lister/agent.md": priced_agent("lister", fake_provider),
            "agents/reader/agent.md": priced_agent("reader", fake_provider),
            "flows/fan.md": "---\nname: fan\nbudget: 0.10\n---\n1. [[lister]] — List.\n"
            "2. [[reader]] — Read {{item}}.\n   each: lines\n",
        },
    )
    fake_provider.reply_text("a\nb\nc\nd\ne", usage=(10, 10))
    for _ in range(5):  # each would cost $0.04 if it could: $0.20 for five, twice the cap
        fake_provider.reply_text("read it all", usage=(10, 4000), delay=0.5)
    run = check_start_run(workspace=workspace, user=alice, flow="fan")
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=90)
    assert done.status == "failed"
    assert done.cost_usd <= Decimal("0.10")
    assert sum(t.cost_usd for t in Try.objects.filter(step__run=done)) == done.cost_usd
    stopped = done.steps.filter(index=2, instance__isnull=False, status="failed")
    assert stopped.exists()
    assert all(
        s.error.startswith("budget reached: the run spent $") and "of its $0.10 budget at step 2" in s.error
        for s in stopped
    )
    asked = [r.body["max_tokens"] for r in fake_provider.requests[1:]]
    assert len(asked) < 5 and min(asked) < 4096  # the last paid call was cut to what was left
    lowered = TraceEvent.objects.filter(run=done, kind="budget", data__line__startswith="budget: max_tokens lowered")
    assert lowered.exists()


def test_a_workspace_window_budget_stops_the_call_that_would_pass_it(workspace, alice, fake_provider):
    # $100 per million out: the first call costs $0.40 of the $0.42 day; what is left pays for fewer
    # than the 256 tokens a useful reply needs, so the second call is not made.
    push(
        workspace,
        {
            "AGENTS.md": "---\nbudget: {day: 0.42}\n---\n",
            "agents/spender/agent.md": priced_agent("spender", fake_provider, output=100),
            "state/a.txt": "a",
            "flows/once.md": "---\nname: once\n---\n1. [[spender]] — Spend.\n",
        },
    )
    fake_provider.reply_tool_use("Read", {"path": "state/a.txt"}, usage=(10, 4000))
    fake_provider.reply_text("never asked")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="once"))
    assert run.status == "failed"
    assert len(fake_provider.requests) == 1
    assert run.cost_usd == Decimal("0.40001")
    step = run.steps.get()
    assert step.error == (
        "budget reached: the workspace spent $0.40 of its $0.42 daily budget at step 1 "
        "(spender); no further model or paid call was made"
    )
    assert "refused" not in step.limits_line
    line = TraceEvent.objects.get(run=run, kind="budget", data__line__startswith="budget reached")
    assert line.data["line"] == step.error


def test_a_run_without_a_budget_holds_no_reservation_so_a_window_set_later_counts_what_it_spent(
    workspace, alice, fake_provider
):
    # Nothing caps the first run: its call is granted without a reservation, and settling it must give back
    # nothing. Had it given back what it never held, the run's reserved_usd would stay below zero, and the
    # day's window set afterwards would count $0.04 spent as nothing.
    push(
        workspace,
        {
            "agents/spender/agent.md": priced_agent("spender", fake_provider),
            "flows/once.md": "---\nname: once\n---\n1. [[spender]] — Spend.\n",
        },
    )
    fake_provider.reply_text("spent", usage=(10, 4000))
    first = drive(check_start_run(workspace=workspace, user=alice, flow="once"))
    assert (first.status, first.cost_usd, first.reserved_usd) == ("completed", Decimal("0.04001"), 0)
    push(workspace, {"AGENTS.md": "---\nbudget: {day: 0.042}\n---\n"})
    fake_provider.reply_text("never asked")
    second = drive(check_start_run(workspace=workspace, user=alice, flow="once"))
    assert second.status == "failed"
    assert len(fake_provider.requests) == 1
    assert second.steps.get().error == (
        "budget reached: the workspace spent $0.04 of its $0.04 daily budget at "
        "step 1 (spender); no further model or paid call was made"
    )
    assert second.reserved_usd == 0


def test_a_call_answered_and_a_call_refused_both_give_back_their_booking_while_the_run_goes_on(
    workspace, alice, fake_provider
):
    # The run stops at step 2's gate: nothing has ended it, so what it holds then is what its calls left.
    push(
        workspace,
        {
            "agents/spender/agent.md": priced_agent("spender", fake_provider),
            "flows/capped.md": "---\nname: capped\nbudget: 0.10\n---\n1. [[spender]] — Spend.\n"
            "   retry: 1\n2. [[spender]] ! — Publish.\n",
        },
    )
    fake_provider.reply_status(
        400, body={"type": "error", "error": {"type": "invalid_request_error", "message": "not this time"}}
    )
    fake_provider.reply_text("spent", usage=(10, 10))
    run = drive(check_start_run(workspace=workspace, user=alice, flow="capped"))
    assert run.status == "awaiting-approval"
    assert [t.status for t in run.steps.get(index=1).tries.order_by("n")] == ["failed", "completed"]
    assert (run.cost_usd, run.reserved_usd) == (Decimal("0.00011"), 0)


def test_a_run_that_ends_gives_back_the_reservation_of_a_call_its_lost_worker_never_settled(
    workspace, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/spender/agent.md": priced_agent("spender", fake_provider),
            "flows/capped.md": "---\nname: capped\nbudget: 0.10\n---\n1. [[spender]] — Spend.\n",
        },
    )
    run = check_start_run(workspace=workspace, user=alice, flow="capped")
    # A call reserved for by a worker that died before its answer came: nothing will ever settle it.
    assert budget.reserve(run, Decimal("0.04"), Decimal("0.01"), where="step 1 (spender)") == Decimal("0.04")
    fake_provider.reply_text("spent", usage=(10, 10))
    run = drive(run)
    assert run.status == "completed"
    assert run.cost_usd == Decimal("0.00011")
    assert run.reserved_usd == 0  # held while the run went on; given back when it ended


@pytest.mark.django_db(transaction=True)
def test_five_reservations_racing_for_one_cap_are_granted_no_more_than_it(workspace):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="race", budget_usd=Decimal("0.10"))
    start = threading.Barrier(5)
    grants: list[Decimal] = []
    refusals: list[str] = []

    def one() -> None:
        try:
            start.wait()
            grants.append(budget.reserve(run, Decimal("0.04"), Decimal("0.01"), where="step 2 (reader)"))
        except BudgetExceeded as exc:
            refusals.append(str(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=one) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(grants) == Decimal("0.10")  # 0.04 + 0.04 + the 0.02 that was left
    assert sorted(grants) == [Decimal("0.02"), Decimal("0.04"), Decimal("0.04")]
    assert (
        refusals
        == [
            "budget reached: the run spent $0.1000 of its $0.10 budget at step 2 (reader); no "
            "further model or paid call was made"
        ]
        * 2
    )
    run.refresh_from_db()
    assert run.reserved_usd == Decimal("0.10")
    budget.settle(run, Decimal("0.04"), Decimal("0.03"), 10, 2000)
    run.refresh_from_db()
    assert (run.cost_usd, run.reserved_usd) == (Decimal("0.03"), Decimal("0.06"))


def test_a_local_run_lowers_max_tokens_to_what_its_budget_pays_for(fake_provider):
    files = {
        "agents/worker/agent.md": priced_agent("worker", fake_provider).replace(
            "model: claude-sonnet-4-5", "key: '${ANTHROPIC_API_KEY}', model: claude-sonnet-4-5"
        )
    }
    fake_provider.reply_text("a long answer", usage=(10, 4000))
    host = LocalHost(SECRETS, budget=Decimal("0.02"))
    result = run_step(desk(files), StepRequest(run_id="run_l", label="1", agent="worker", task="Go."), host)
    asked = fake_provider.requests[0].body["max_tokens"]
    assert 256 <= asked < 2000  # $0.02 at $10 per million output tokens, less the input's bound
    assert result.status == "completed"
    assert result.cost <= Decimal("0.02") and host.reserved == 0
    assert any(
        kind == "budget" and data["line"].startswith(f"budget: max_tokens lowered from 4096 to {asked}")
        for kind, data in host.events
    )
