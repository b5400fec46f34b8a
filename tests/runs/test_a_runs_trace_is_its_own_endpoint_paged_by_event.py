"""Issue 31 item 1: a run's trace is its own endpoint, oldest first, at most 500 events a page, with a `next`
link while more were written and a `cursor` to poll from later; a cursor from another run or changed by hand is a
400 with a sentence. The run's own answer carries its steps' summaries, and `…/status` is the light one."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from runs.models import Run, Step, TraceEvent, Try


def long_run(workspace, events: int = 2000, name: str = "weekly") -> Run:
    """A run whose second step made `events` tool calls (a call and its result each), after a run-level log line
    and a short first step."""
    run = Run.objects.create(account=workspace.account, workspace=workspace, name=name, status="running")
    first, second = Step.objects.bulk_create(
        [Step(run=run, index=1, agent="writer", status="completed"), Step(run=run, index=2, agent="writer")]
    )
    Try.objects.bulk_create([Try(step=first, n=1, status="completed"), Try(step=second, n=1, status="running")])
    rows = [TraceEvent(run=run, kind="log", data={"message": "started"})]
    rows += [TraceEvent(run=run, step=first, try_n=1, kind="log", data={"message": "first"})]
    rows += [
        TraceEvent(run=run, step=second, try_n=1, kind="tool_call", data={"id": f"t{i}", "name": "read"})
        for i in range(events)
    ]
    TraceEvent.objects.bulk_create(rows, batch_size=1000)
    return run


def after_of(link: str) -> str:
    return parse_qs(urlsplit(link).query)["after"][0]


def test_a_2000_call_step_reads_in_pages_of_500_oldest_first_each_event_with_its_step(alice_api, workspace):
    run = long_run(workspace)
    url, pages, events = f"/api/workspaces/rank-desk/runs/{run.public_id}/trace", [], []
    while url:
        page = alice_api.get(url).json()
        pages.append(len(page["events"]))
        events += page["events"]
        url = page["next"]
    assert pages == [500, 500, 500, 500, 2]
    first, second = run.steps.order_by("index")
    assert [e["step"] for e in events[:3]] == [None, first.public_id, second.public_id]
    assert [e["data"]["id"] for e in events[2:]] == [f"t{i}" for i in range(2000)]
    assert page["run"] == run.public_id and page["status"] == "running"


def test_the_last_pages_cursor_reads_only_what_was_written_after_it(alice_api, workspace):
    run = long_run(workspace, events=3)
    base = f"/api/workspaces/rank-desk/runs/{run.public_id}/trace"
    page = alice_api.get(base).json()
    assert (len(page["events"]), page["next"]) == (5, None)
    assert alice_api.get(base, {"after": page["cursor"]}).json()["events"] == []
    TraceEvent.objects.create(run=run, kind="log", data={"message": "later"})
    later = alice_api.get(base, {"after": page["cursor"]}).json()
    assert [e["data"] for e in later["events"]] == [{"message": "later"}]
    assert alice_api.get(base, {"after": later["cursor"]}).json()["cursor"] == later["cursor"]


def test_limit_asks_for_fewer_and_never_more_than_500(alice_api, workspace):
    run = long_run(workspace, events=10)
    base = f"/api/workspaces/rank-desk/runs/{run.public_id}/trace"
    page = alice_api.get(base, {"limit": 4}).json()
    assert len(page["events"]) == 4 and "limit=4" in page["next"]
    too_many = alice_api.get(base, {"limit": 501})
    assert too_many.status_code == 400
    assert too_many.json()["details"] == {"field": "limit"}


def test_a_trace_cursor_from_another_run_or_changed_by_hand_is_a_400(alice_api, workspace):
    run, other = long_run(workspace, events=10), long_run(workspace, events=10, name="daily")
    theirs = alice_api.get(f"/api/workspaces/rank-desk/runs/{other.public_id}/trace", {"limit": 2}).json()
    cursor = after_of(theirs["next"])
    base = f"/api/workspaces/rank-desk/runs/{run.public_id}/trace"
    for bad in (cursor, cursor[:-1] + ("A" if cursor[-1] != "A" else "B"), "made-up"):
        answer = alice_api.get(base, {"after": bad})
        assert answer.status_code == 400
        assert answer.json() == {
            "code": "invalid",
            "message": "after: this cursor is not one this run's trace gave (it belongs to another, or was "
            "changed); start again from its first page, without after.",
            "details": {"field": "after"},
        }


def test_a_run_with_no_trace_yet_has_an_empty_page_and_no_cursor(alice_api, workspace):
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly")
    page = alice_api.get(f"/api/workspaces/rank-desk/runs/{run.public_id}/trace").json()
    assert page == {"run": run.public_id, "status": "queued", "events": [], "next": None, "cursor": None}


def test_the_status_answer_is_the_runs_state_without_steps_or_trace(bob_api, workspace):
    run = long_run(workspace, events=5)
    answer = bob_api.get(f"/api/workspaces/rank-desk/runs/{run.public_id}/status").json()
    assert answer["id"] == run.public_id and answer["status"] == "running"
    assert set(answer) == {
        "id",
        "status",
        "status_reason",
        "verdict",
        "headline",
        "error",
        "cost_usd",
        "started_at",
        "finished_at",
    }
