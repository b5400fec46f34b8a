"""The Tools tab in real Chromium: a browse screenshot tested from the page lands in the tool's scratch, listed
under the test with a download that is the picture; bob reads and downloads but has no Clear button (and his
POST is refused); alice clears it; charlie gets a 404 for the file."""

from __future__ import annotations

import pytest

from runs.models import ScratchFile
from tests.e2e.conftest import chromium, signed_in  # noqa: F401 - real Chromium, signed in on the live server
from tests.fakes.website import TestSite, html, page

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def shop():
    with TestSite({"/shop": html(page("Shop", "<h1>Harbour flat</h1><p>450 a week.</p>"))}) as server:
        yield server


def test_a_screenshot_tested_from_the_tools_tab_is_kept_downloaded_and_cleared(
    live_server, signed_in, workspace, alice, bob, bob_web, charlie_web, shop
):
    tab = signed_in(alice)
    tab.goto(f"{live_server.url}/w/rank-desk/tools/")
    assert (
        tab.locator("#tool-scratch")
        .inner_text()
        .endswith("No tool has a scratch yet: a Tool Test that leaves something in state/ or outputs/ starts one.")
    )
    tab.select_option("#tool-name", "web")
    tab.fill("#tool-arguments", f'{{"action": "browse", "url": "{shop.url}/shop", "mode": "screenshot"}}')
    tab.click("form[aria-label='Test a tool'] button")
    tab.locator("#tool-result").wait_for(timeout=120_000)
    kept = ScratchFile.objects.get(workspace=workspace, tool="web")
    assert kept.path.startswith("outputs/") and kept.path.endswith(".png"), tab.locator("#tool-result").inner_text()
    link = tab.locator(f"#tool-scratch .scratch[data-tool='web'] a:text-is('{kept.path}')")
    with tab.expect_download() as download:
        link.click()
    assert download.value.suggested_filename == kept.path.rsplit("/", 1)[-1]
    with open(download.value.path(), "rb") as picture:
        assert picture.read() == bytes(kept.content)
    assert bytes(kept.content).startswith(b"\x89PNG")

    reader = signed_in(bob)
    reader.goto(f"{live_server.url}/w/rank-desk/tools/")
    assert reader.locator(f"#tool-scratch a:text-is('{kept.path}')").count() == 1
    assert reader.locator("#tool-scratch button").count() == 0
    assert bob_web.post("/w/rank-desk/tools/web/scratch/clear").status_code == 403
    assert bob_web.get(f"/w/rank-desk/tools/web/scratch/{kept.path}").content == bytes(kept.content)
    assert charlie_web.get(f"/w/rank-desk/tools/web/scratch/{kept.path}").status_code == 404
    assert ScratchFile.objects.filter(workspace=workspace).count() == 1

    tab.click("#tool-scratch form[aria-label='Clear the scratch of web'] button")
    tab.locator("#tool-scratch").get_by_text("No tool has a scratch yet").wait_for()
    assert ScratchFile.objects.filter(workspace=workspace).count() == 0
