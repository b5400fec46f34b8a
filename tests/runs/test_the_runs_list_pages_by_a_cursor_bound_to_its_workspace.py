"""Issue 31 item 1: the runs list pages by cursor — newest first by (created, id), a `next` link with the same
filters, `before=`, filters by flow, status, trigger, verdict and time — and a cursor from another workspace or
one changed by hand is a 400 with a sentence, never another workspace's rows."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

from django.utils import timezone

from accounts.models import Account, Workspace
from runs.models import Run

START = timezone.now().replace(microsecond=0) - timedelta(days=2)


def make_runs(workspace: Workspace, total: int) -> list[Run]:
    """`total` runs, three to each second (runs created at the same instant are ordered by id), newest first."""
    flows, statuses, triggers = ["weekly", "daily"], ["completed", "failed", "running"], ["api", "schedule", "cli"]
    Run.objects.bulk_create(
        [
            Run(
                account=workspace.account,
                workspace=workspace,
                name=flows[i % 2],
                status=statuses[i % 3],
                trigger=triggers[i % 3],
                verdict="GOOD" if i % 4 == 0 else "BAD",
                created_at=START + timedelta(seconds=i // 3),
            )
            for i in range(total)
        ]
    )
    return list(Run.objects.filter(workspace=workspace).order_by("-created_at", "-public_id"))


def every_page(api, url: str) -> tuple[list[str], int]:
    """The ids of every page, following `next` until it is null, and how many pages there were."""
    ids, pages = [], 0
    while url:
        answer = api.get(url)
        assert answer.status_code == 200, answer.content
        ids += [r["id"] for r in answer.json()["runs"]]
        url, pages = answer.json()["next"], pages + 1
    return ids, pages


def before_of(link: str) -> str:
    return parse_qs(urlsplit(link).query)["before"][0]


def test_following_next_reads_every_run_once_newest_first_even_where_runs_share_an_instant(alice_api, workspace):
    made = make_runs(workspace, 130)
    ids, pages = every_page(alice_api, "/api/workspaces/rank-desk/runs?limit=50")
    assert pages == 3
    assert ids == [r.public_id for r in made]


def test_a_run_started_while_paging_neither_shifts_nor_repeats_the_older_pages(alice_api, workspace):
    made = make_runs(workspace, 10)
    first = alice_api.get("/api/workspaces/rank-desk/runs?limit=4").json()
    Run.objects.create(account=workspace.account, workspace=workspace, name="weekly")
    second = alice_api.get(first["next"]).json()
    assert [r["id"] for r in second["runs"]] == [r.public_id for r in made[4:8]]


def test_next_keeps_the_filters_and_the_filters_cover_flow_status_trigger_verdict_and_time(alice_api, workspace):
    made = make_runs(workspace, 60)
    wanted = [r.public_id for r in made if r.name == "weekly" and r.verdict == "GOOD"]
    first = alice_api.get("/api/workspaces/rank-desk/runs", {"flow": "weekly", "verdict": "GOOD", "limit": 5}).json()
    assert "flow=weekly" in first["next"] and "verdict=GOOD" in first["next"] and "limit=5" in first["next"]
    assert every_page(alice_api, first["next"])[0] == wanted[5:]
    for field, value in [("status", "failed"), ("trigger", "schedule")]:
        rows = alice_api.get("/api/workspaces/rank-desk/runs", {field: value, "limit": 500}).json()["runs"]
        assert [r["id"] for r in rows] == [r.public_id for r in made if getattr(r, field) == value]
    since, until = START + timedelta(seconds=5), START + timedelta(seconds=10)
    rows = alice_api.get(
        "/api/workspaces/rank-desk/runs",
        {"created_after": since.isoformat(), "created_before": until.isoformat(), "limit": 500},
    ).json()["runs"]
    assert [r["id"] for r in rows] == [r.public_id for r in made if since <= r.created_at < until]
    assert len(rows) == 15


def test_a_cursor_from_another_workspace_is_a_400_and_never_its_rows(alice_api, charlie_api, charlie, workspace):
    make_runs(workspace, 6)
    other = Workspace.objects.create(account=workspace.account, name="other-desk")
    make_runs(other, 6)
    theirs = Workspace.objects.create(account=Account.objects.get(name="Other Co"), name="rank-desk")
    make_runs(theirs, 6)
    from_other = alice_api.get("/api/workspaces/other-desk/runs?limit=2").json()["next"]
    from_charlie = charlie_api.get("/api/workspaces/rank-desk/runs?limit=2").json()["next"]
    for link in (from_other, from_charlie):
        answer = alice_api.get("/api/workspaces/rank-desk/runs", {"before": before_of(link)})
        assert answer.status_code == 400
        assert answer.json() == {
            "code": "invalid",
            "message": "before: this cursor is not one this workspace's runs list gave (it belongs to another, or "
            "was changed); start again from the first page, without before.",
            "details": {"field": "before"},
        }


def test_a_cursor_changed_by_hand_or_made_up_is_a_400_naming_before(alice_api, workspace):
    make_runs(workspace, 6)
    cursor = before_of(alice_api.get("/api/workspaces/rank-desk/runs?limit=2").json()["next"])
    for bad in (cursor[:-1] + ("A" if cursor[-1] != "A" else "B"), "x" + cursor, "not-a-cursor", ":", "%00"):
        answer = alice_api.get("/api/workspaces/rank-desk/runs", {"before": bad})
        assert (bad, answer.status_code, answer.json()["details"]) == (bad, 400, {"field": "before"})


def test_offset_and_page_are_refused_with_how_to_page_instead_of_ignored(alice_api, workspace):
    make_runs(workspace, 3)
    for field in ("offset", "page"):
        answer = alice_api.get("/api/workspaces/rank-desk/runs", {field: "2"})
        assert answer.status_code == 400
        assert answer.json()["message"] == (
            f"{field}: the runs list pages by cursor, not by {field}; follow the answer's `next` link "
            "(or pass its `before`)."
        )
