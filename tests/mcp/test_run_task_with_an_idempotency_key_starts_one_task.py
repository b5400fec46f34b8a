"""Issue 34, item 2, on MCP: run_task takes an `idempotencyKey`. run_task starts something that costs (a browser
session's place and the browser agent's model calls), and an MCP client that gives up waiting before run_task's
90 s and calls again would start it twice: with the key, for 24 hours, the same key and arguments (the wait aside)
answer the task the first call started; other arguments are refused naming the key; another account's key never
finds the task; a bad key is `invalid_input` naming the argument. In process, on a session still waiting for a
browser (no worker, no Chromium): the task stays running and each call returns after its one-second wait."""

from __future__ import annotations

import datetime as dt

import pytest
from django.utils import timezone

from accounts.models import Workspace
from browsing.models import BrowserSession, Task
from foldrun.mcp.call import McpCall
from foldrun.mcp.server import run_tool
from runs.models import IdempotencyKey

pytestmark = pytest.mark.django_db

KEY = "task-7f3e-cart-total"
GOAL = "Add the first product to the cart and report the cart total"


def waiting_session(account) -> BrowserSession:
    """A session queued for a browser for the next hour: a task on it waits, and so does each call."""
    return BrowserSession.objects.create(
        account=account, status="starting", queued_until=timezone.now() + dt.timedelta(hours=1)
    )


@pytest.fixture
def alices(alice, workspace) -> tuple[McpCall, BrowserSession]:
    account = alice.memberships.get().account
    return McpCall(account=account, user=alice, token_id="tok_test"), waiting_session(account)


def run_task(call: McpCall, session: BrowserSession, *, goal: str = GOAL, key: str | None = KEY, wait: int = 1):
    args = {"goal": goal, "sessionId": session.public_id, "waitSeconds": wait}
    if key is not None:
        args["idempotencyKey"] = key
    return run_tool(call, "run_task", args)


def test_the_same_key_and_arguments_answer_the_task_the_first_call_started(alices):
    call, session = alices
    first = run_task(call, session)
    again = run_task(call, session, wait=2)  # a different wait is the same request
    assert (first.is_error, again.is_error) == (False, False)
    assert first.structured["status"] == again.structured["status"] == "running"
    assert again.structured["taskId"] == first.structured["taskId"]
    assert Task.objects.count() == 1
    assert IdempotencyKey.objects.get(key=KEY).task.public_id == first.structured["taskId"]


def test_without_a_key_each_call_starts_its_own_task(alices):
    call, session = alices
    assert (
        run_task(call, session, key=None).structured["taskId"] != run_task(call, session, key=None).structured["taskId"]
    )
    assert Task.objects.count() == 2


def test_the_same_key_with_another_goal_is_refused_naming_the_key(alices):
    call, session = alices
    first = run_task(call, session).structured["taskId"]
    other = run_task(call, session, goal="Read the pricing page")
    assert other.is_error is True
    assert other.structured["error"] == {
        "code": "idempotency_key_reused",
        "message": f"idempotencyKey {KEY} was used within the last 24 hours with another request (it started "
        f"{first}); a key stands for one request: send that request again, or use a new key to start something new.",
        "details": {"field": "idempotencyKey", "key": KEY},
    }
    assert Task.objects.count() == 1


def test_another_accounts_same_key_never_finds_the_task(alices, charlie):
    call, session = alices
    mine = run_task(call, session).structured["taskId"]
    account = charlie.memberships.get().account
    Workspace.objects.create(account=account, name="charlies-desk")
    theirs = run_task(McpCall(account=account, user=charlie, token_id="tok_c"), waiting_session(account))
    assert theirs.is_error is False
    assert theirs.structured["taskId"] != mine
    assert Task.objects.get(public_id=theirs.structured["taskId"]).account == account


def test_a_key_older_than_a_day_starts_a_new_task(alices):
    call, session = alices
    first = run_task(call, session).structured["taskId"]
    IdempotencyKey.objects.update(created_at=timezone.now() - dt.timedelta(hours=25))
    assert run_task(call, session).structured["taskId"] != first
    assert Task.objects.count() == 2


@pytest.mark.parametrize("key", ["", "k" * 256, "k" * 10_240, "clé"])
def test_a_key_that_is_empty_too_long_or_not_ascii_is_invalid_input_naming_it(alices, key):
    call, session = alices
    result = run_task(call, session, key=key)
    assert result.is_error is True
    assert result.structured["error"]["code"] == "invalid_input"
    assert [issue["path"] for issue in result.structured["error"]["details"]["issues"]] == ["idempotencyKey"]
    assert Task.objects.count() == 0


@pytest.mark.parametrize(("key", "what"), [("   ", "empty"), ("clé", "not printable ASCII")])
def test_a_key_of_spaces_or_not_ascii_is_refused_with_the_sentence_naming_the_argument(alices, key, what):
    call, session = alices
    result = run_task(call, session, key=key)
    assert result.structured["error"]["message"] == (
        "idempotencyKey: a key is 1 to 255 printable ASCII characters (a UUID makes a good one), and this one is "
        f"{what}; nothing was started."
    )
    assert Task.objects.count() == 0
