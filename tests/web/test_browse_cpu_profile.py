"""`cpu_profile=`: where the page's JavaScript spent its time, written as a .cpuprofile for DevTools — real
Chromium against a page that burns time in a function of its own name (spec/tools.md, "The browser, in full")."""

from __future__ import annotations

import json

import pytest

from foldrun.web import WebToolError
from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

ROUTES = {
    "/busy": html(
        page(
            "Busy",
            '<p id="out">-</p><script>function burnCyclesOnLoad() { const end = performance.now() '
            "+ 150; let n = 0; while (performance.now() < end) { n += Math.sqrt(n + 1); } return n; }"
            'document.getElementById("out").textContent = burnCyclesOnLoad() > 0 ? "done" : "?";'
            "</script>",
        )
    ),
}


def test_cpu_profile_writes_where_the_pages_javascript_spent_its_time(browse, pages_site, tmp_path):
    out = browse().call({"action": "browse", "url": f"{pages_site.url}/busy", "cpu_profile": "outputs/busy.cpuprofile"})
    first = out.splitlines()[0]
    assert first.startswith("cpu_profile: outputs/busy.cpuprofile (")
    assert first.endswith("— open it in Chrome DevTools' Performance panel")
    profile = json.loads((tmp_path / "outputs/busy.cpuprofile").read_text())
    assert {"nodes", "startTime", "endTime", "samples", "timeDeltas"} <= set(profile)
    hot = [n for n in profile["nodes"] if n["callFrame"]["functionName"] == "burnCyclesOnLoad"]
    assert hot and hot[0]["callFrame"]["url"] == f"{pages_site.url}/busy"  # the page's start-up is in it
    by_function: dict[str, int] = {}
    for node in profile["nodes"]:
        name = node["callFrame"]["functionName"]
        if name and node["callFrame"]["url"]:
            by_function[name] = by_function.get(name, 0) + profile["samples"].count(node["id"])
    # the page's time went there: no other function of the page has as many samples (however loaded the machine)
    assert by_function["burnCyclesOnLoad"] > 0 and by_function["burnCyclesOnLoad"] == max(by_function.values())
    assert "done" in out


def test_a_cpu_profile_path_that_is_not_a_cpuprofile_is_refused(browse, pages_site):
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{pages_site.url}/busy", "cpu_profile": "outputs/busy.json"})
    assert str(caught.value) == (
        'browse: cpu_profile= is a .cpuprofile path, such as outputs/page.cpuprofile; "outputs/busy.json" is not'
    )
