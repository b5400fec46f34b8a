"""A browser task's Run page in real Chromium: its steps as a table, and its session's recording playing
inline from the page route — the <video> loads the WebM, knows its length, and seeks (byte ranges)."""

from __future__ import annotations

import pytest

from tests.dashboard import browser_rows as rows
from tests.conftest import wait_in_page


@pytest.mark.e2e
def test_a_recorded_tasks_run_page_shows_its_steps_and_plays_its_recording(
    live_server, signed_in, artifacts, account, workspace, alice, tmp_path
):
    recording = rows.webm(tmp_path / "task.webm", seconds=4)
    task = rows.task(account, workspace, rows.session(account, recording=recording))
    page = signed_in(alice)
    page.goto(f"{live_server.url}/w/rank-desk/runs/{task.run.public_id}")

    table = page.locator("#task-steps")
    assert table.locator("tbody tr").count() == 2
    first = [c.strip() for c in table.locator("tbody tr").nth(0).locator("td").all_inner_texts()]
    assert first[:6] == ["1", "goto", "https://shop.test/pricing", "ok", "812", "$0.0013"]
    assert table.locator("tbody tr").nth(1).locator("td").nth(6).inner_text() == "No element e12 on the page."

    video = page.locator("#recording video")
    video.wait_for()
    # The browser read the file's header through the page route (the session's login) and knows its length.
    wait_in_page(page, "document.querySelector('#recording video').readyState >= 1", timeout=15_000)
    duration = video.evaluate("v => v.duration")
    assert 2.5 < duration < 5, duration
    assert video.evaluate("v => v.error") is None
    # Seeking asks for a byte range; a route without ranges would leave the video unseekable.
    assert video.evaluate("v => v.seekable.length") == 1
    video.evaluate("v => { v.currentTime = 3; }")
    wait_in_page(
        page,
        "(() => { const v = document.querySelector('#recording video'); "
        "return !v.seeking && Math.abs(v.currentTime - 3) < 0.6; })()",
        timeout=15_000,
    )
    page.screenshot(path=str(artifacts / "task-run-page.png"), full_page=True)
