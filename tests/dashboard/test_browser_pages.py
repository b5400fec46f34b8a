"""Sessions, tasks and skill runs on the dashboard: marked among the runs, the Browser sessions tab, a task's
steps and recording on its Run page, a smoke test's page with its report link — the account's own only."""

from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from accounts.models import Workspace
from browsing.models import BrowserSession, SkillRun, Task
from browsing.tokens import WATCH, token_ok

from . import browser_rows as rows

pytestmark = pytest.mark.django_db


def web(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def recorded(account, workspace, tmp_path) -> Task:
    return rows.task(account, workspace, rows.session(account, recording=rows.webm(tmp_path / "rec.webm")))


def test_a_task_run_is_marked_task_among_the_runs_and_on_the_home_and_workspace_pages(recorded, alice):
    smoke_step = rows.task(
        recorded.account,
        recorded.run.workspace,
        recorded.session,
        skill_run=rows.smoke(recorded.account, recorded.session),
        flow_index=0,
    )
    client = web(alice)
    listed = client.get("/w/rank-desk/runs/").content.decode()
    for run_id, kind in ((recorded.run.public_id, "task"), (smoke_step.run.public_id, "smoke test")):
        row = re.search(rf'<tr>\s*<td><a href="/w/rank-desk/runs/{run_id}">.*?</tr>', listed, re.S).group(0)
        assert f'data-kind="{kind}">{kind}</span>' in row
    assert 'data-kind="task">task</span>' in client.get("/").content.decode()
    assert 'data-kind="task">task</span>' in client.get("/w/rank-desk/").content.decode()


def test_smoke_tests_and_skills_are_listed_with_their_kind_and_status_colour(account, workspace, alice):
    smoke = rows.smoke(account, None, status="failed")
    other = rows.smoke(account, None, skill="seo-audit", status="running", report=None, finished_at=None)
    listed = web(alice).get("/w/rank-desk/runs/").content.decode()
    section = listed[listed.index('id="skill-runs"') :]
    assert f'href="/w/rank-desk/skill-runs/{smoke.public_id}"' in section
    assert 'data-kind="smoke test">smoke test</span>' in section
    assert '<span class="badge status-failed">failed</span>' in section
    assert f'href="/w/rank-desk/skill-runs/{other.public_id}"' in section
    assert 'data-kind="skill">skill</span>' in section
    assert '<span class="badge status-running">running</span>' in section


def test_the_run_page_of_a_task_shows_its_steps_with_costs_and_plays_its_recording(recorded, alice):
    page = web(alice).get(f"/w/rank-desk/runs/{recorded.run.public_id}").content.decode()
    table = page[page.index('id="task-steps"') : page.index("</table>", page.index('id="task-steps"'))]
    cells = [html.unescape(re.sub(r"<[^>]+>", "", c)).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", table, re.S)]
    assert cells == [
        "1",
        "goto",
        "https://shop.test/pricing",
        "ok",
        "812",
        "$0.0013",
        "",
        "2",
        "click",
        "e12",
        "failed",
        "95",
        "<$0.0001",
        "No element e12 on the page.",
    ]
    assert "stopped by done" in page
    assert 'id="task-cost">$0.0013</dd>' in page
    video = f'src="/w/rank-desk/sessions/{recorded.session.public_id}/recording"'
    assert f'<video controls preload="metadata" {video}' in page


def test_the_recording_is_served_with_byte_ranges_so_the_video_seeks(recorded, alice):
    client = web(alice)
    url = f"/w/rank-desk/sessions/{recorded.session.public_id}/recording"
    whole = b"".join(client.get(url).streaming_content)
    assert whole[:4] == b"\x1a\x45\xdf\xa3"  # the EBML header a WebM starts with
    part = client.get(url, HTTP_RANGE="bytes=10-19")
    assert part.status_code == 206
    assert part["Content-Range"] == f"bytes 10-19/{len(whole)}"
    assert b"".join(part.streaming_content) == whole[10:20]
    tail = client.get(url, HTTP_RANGE="bytes=-5")
    assert b"".join(tail.streaming_content) == whole[-5:]
    past = client.get(url, HTTP_RANGE=f"bytes={len(whole)}-")
    assert (past.status_code, past["Content-Range"]) == (416, f"bytes */{len(whole)}")
    assert client.get(url)["Accept-Ranges"] == "bytes"


def test_the_api_recording_also_answers_a_range(recorded, alice_api):
    part = alice_api.get(f"/v1/sessions/{recorded.session.public_id}/recording", HTTP_RANGE="bytes=0-3")
    assert part.status_code == 206
    assert b"".join(part.streaming_content) == b"\x1a\x45\xdf\xa3"


def test_a_task_still_running_shows_no_steps_yet_and_no_video(account, workspace, alice):
    running = rows.task(
        account,
        workspace,
        rows.session(account, status="live", end_reason="", closed_at=None, options={"record": True}),
        finished=False,
    )
    answer = web(alice).get(f"/w/rank-desk/runs/{running.run.public_id}")
    assert answer.status_code == 200
    page = answer.content.decode()
    assert "No steps yet — they appear when the task ends." in page
    assert "<video" not in page
    assert "The recording is written when the session ends." in page


def test_a_session_whose_recording_is_missing_has_no_video_and_its_recording_is_404(
    account, workspace, alice, tmp_path
):
    lost = rows.task(account, workspace, rows.session(account, recording=rows.webm(tmp_path / "gone.webm")))
    (tmp_path / "gone.webm").unlink()
    client = web(alice)
    assert "<video" not in client.get(f"/w/rank-desk/runs/{lost.run.public_id}").content.decode()
    assert client.get(f"/w/rank-desk/sessions/{lost.session.public_id}/recording").status_code == 404
    unrecorded = rows.session(account)
    assert client.get(f"/w/rank-desk/sessions/{unrecorded.public_id}/recording").status_code == 404


def test_the_browser_sessions_tab_lists_the_accounts_sessions_with_why_they_ended(recorded, alice, charlie):
    live = rows.session(recorded.account, status="live", end_reason="", status_reason="", closed_at=None)
    theirs = rows.session(charlie.memberships.first().account)
    page = web(alice).get("/w/rank-desk/sessions/").content.decode()
    assert f'<tr id="{recorded.session.public_id}">' in page and f'<tr id="{live.public_id}">' in page
    assert theirs.public_id not in page
    assert page.index(live.public_id) < page.index(recorded.session.public_id)  # newest first
    row = page[page.index(f'<tr id="{recorded.session.public_id}">') :]
    row = row[: row.index("</tr>")]
    assert "stopped by a caller" in row and "Stopped by a caller." in row
    assert f'href="/w/rank-desk/sessions/{recorded.session.public_id}/recording">recording</a>' in row
    assert '<span class="badge status-completed">closed</span>' in row
    live_row = page[page.index(f'<tr id="{live.public_id}">') :]
    assert '<span class="badge status-running">live</span>' in live_row[: live_row.index("</tr>")]
    assert "not recorded" in live_row[: live_row.index("</tr>")]


def test_a_live_session_on_the_sessions_tab_links_its_watch_page_with_a_token_that_opens_it(recorded, alice):
    live = rows.session(recorded.account, status="live", end_reason="", status_reason="", closed_at=None)
    page = web(alice).get("/w/rank-desk/sessions/").content.decode()
    live_row = page[page.index(f'<tr id="{live.public_id}">') :]
    live_row = live_row[: live_row.index("</tr>")]
    link = re.search(
        rf'<a class="small" href="/v1/sessions/{live.public_id}/watch\?token=([^"]+)" '
        rf'rel="noreferrer">watch</a>',
        live_row,
    )
    assert link is not None and token_ok(live.public_id, html.unescape(link.group(1)), uses=(WATCH,))
    assert not token_ok(live.public_id, html.unescape(link.group(1)))  # watch-only: the CDP relay refuses it
    closed_row = page[page.index(f'<tr id="{recorded.session.public_id}">') :]
    assert "/watch?" not in closed_row[: closed_row.index("</tr>")]  # an ended session has nothing to watch


def test_a_smoke_tests_page_links_its_signed_report_and_lists_its_flow(recorded, alice):
    smoke = rows.smoke(recorded.account, recorded.session)
    step = rows.task(recorded.account, recorded.run.workspace, recorded.session, skill_run=smoke, flow_index=0)
    page = web(alice).get(f"/w/rank-desk/skill-runs/{smoke.public_id}").content.decode()
    link = re.search(r'<a href="([^"]+)" id="report-link">', page).group(1)
    assert "/reports/" in link
    assert f'href="/w/rank-desk/runs/{step.run.public_id}"' in page
    assert "open the start page" in page
    assert f'src="/w/rank-desk/sessions/{recorded.session.public_id}/recording"' in page
    report = Client().get(link[link.index("/reports/") :])  # the link works without a login
    assert report.status_code == 200 and smoke.public_id in report.content.decode()


def test_a_running_smoke_test_without_a_session_or_report_opens(account, workspace, alice):
    smoke = rows.smoke(account, None, status="running", report=None, finished_at=None, phase="start")
    answer = web(alice).get(f"/w/rank-desk/skill-runs/{smoke.public_id}")
    assert answer.status_code == 200
    assert "<video" not in answer.content.decode()


def test_another_accounts_session_task_and_smoke_test_are_not_found(recorded, charlie, alice):
    smoke = rows.smoke(recorded.account, recorded.session)
    other = charlie.memberships.first().account
    Workspace.objects.create(account=other, name="rank-desk")
    client = web(charlie)
    for url in (
        f"/w/rank-desk/runs/{recorded.run.public_id}",
        f"/w/rank-desk/skill-runs/{smoke.public_id}",
        f"/w/rank-desk/sessions/{recorded.session.public_id}/recording",
    ):
        assert client.get(url).status_code == 404, url
    page = client.get("/w/rank-desk/sessions/").content.decode()
    assert recorded.session.public_id not in page
    assert smoke.public_id not in client.get("/w/rank-desk/runs/").content.decode()


def test_the_viewer_reads_the_browser_pages_and_nothing_is_written_on_get(recorded, bob):
    smoke = rows.smoke(recorded.account, recorded.session)
    before = [list(m.objects.values()) for m in (BrowserSession, Task, SkillRun)]
    client = web(bob)
    for url in (
        "/w/rank-desk/runs/",
        "/w/rank-desk/sessions/",
        f"/w/rank-desk/runs/{recorded.run.public_id}",
        f"/w/rank-desk/skill-runs/{smoke.public_id}",
        f"/w/rank-desk/sessions/{recorded.session.public_id}/recording",
    ):
        assert client.get(url).status_code == 200, url
    assert [list(m.objects.values()) for m in (BrowserSession, Task, SkillRun)] == before


def test_the_run_page_keeps_polling_until_the_task_is_written_after_its_run_ended(account, workspace, alice):
    task = rows.task(account, workspace, rows.session(account), finished=False)
    task.run.status = "completed"
    task.run.save(update_fields=["status"])
    client = web(alice)
    url = f"/w/rank-desk/runs/{task.run.public_id}"
    page = client.get(url).content.decode()
    assert 'hx-trigger="every 2s"' in page
    since = re.search(r'"since": "(\w+)"', page).group(1)
    assert client.get(url, {"since": since}, headers={"HX-Request": "true"}).status_code == 204
    Task.objects.filter(pk=task.pk).update(status="finished", ok=True, stopped_by="done", steps=rows.STEPS)
    swapped = client.get(url, {"since": since}, headers={"HX-Request": "true"})
    assert swapped.status_code == 200
    assert "stopped by done" in swapped.content.decode() and 'hx-trigger="every 2s"' not in swapped.content.decode()
