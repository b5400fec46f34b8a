"""mode=a11y runs axe-core in the page (the built-in checks only without it); mode=vitals grades INP after an
interaction. Real Chromium against pages this file serves."""

from __future__ import annotations

import json

import pytest

from foldrun.web.browse import assets
from foldrun.web.browse.registry import MODES
from tests.fakes.website import TestSite, html

pytestmark = pytest.mark.e2e

AXE_VERSION = json.loads((assets.AXE_FILE.parent / "package.json").read_text())["version"]

_SLOW_BUTTON = """<!doctype html><html lang="en"><head><title>Slow</title></head><body><main><h1>Slow</h1>
<button id="go">Go</button><p id="out"></p>
<script>document.getElementById('go').addEventListener('click', () => {
  const until = performance.now() + 300; while (performance.now() < until) {}
  document.getElementById('out').textContent = 'done';
});</script></main></body></html>"""

ROUTES = {
    # no alt, a button with no name, no lang — and a CSP that lets no script in, which axe must get past
    "/shop": (
        200,
        {"content-type": "text/html", "content-security-policy": "script-src 'none'"},
        b"<!doctype html><html><head><title>Shop</title></head><body><main><h1>Shop</h1>"
        b'<img src="/tile.png"><img src="/tile.png"><button id="icon"></button></main></body></html>',
    ),
    "/clean": html(
        b'<!doctype html><html lang="en"><head><title>Clean</title></head><body><main><h1>Clean</h1>'
        b"<p>Nothing to fix.</p></main></body></html>"
    ),
    "/slow": html(_SLOW_BUTTON.encode()),
}


@pytest.fixture(scope="module")
def pages():
    with TestSite(ROUTES) as server:
        yield server


def test_a11y_reports_axe_cores_violations_with_the_elements_and_the_fix_past_the_pages_csp(browse, pages, tmp_path):
    out = browse().call({"action": "browse", "url": f"{pages.url}/shop", "mode": "a11y"})
    lines = out.splitlines()
    assert lines[0].startswith(f"axe-core {AXE_VERSION}: ") and lines[0].endswith(
        f"broken on {pages.url}/shop (outputs/a11y.json)"
    )
    assert "[image-alt] critical — Images must have alternative text (2 elements)" in lines
    assert "[button-name] critical — Buttons must have discernible text (1 element)" in lines
    assert "[html-has-lang] serious — <html> element must have a lang attribute (1 element)" in lines
    button = lines[lines.index("[button-name] critical — Buttons must have discernible text (1 element)") + 1]
    assert button.startswith("    #icon: any of: Element does not have inner text that is visible to screen readers;")
    report = json.loads((tmp_path / "outputs/a11y.json").read_text())
    assert report["engine"] == f"axe-core {AXE_VERSION}"
    images = next(v for v in report["violations"] if v["rule"] == "image-alt")
    assert images["count"] == 2 and images["elements"][0]["html"] == '<img src="/tile.png">'
    assert images["help_url"].startswith("https://dequeuniversity.com/rules/axe/")
    # worst first: every critical rule is listed before the serious ones
    impacts = [v["impact"] for v in report["violations"]]
    assert impacts == sorted(impacts, key=["critical", "serious", "moderate", "minor"].index)


def test_a11y_on_a_page_with_nothing_to_fix_says_so_in_one_line(browse, pages):
    out = browse().call({"action": "browse", "url": f"{pages.url}/clean", "mode": "a11y"})
    assert out == f"axe-core {AXE_VERSION} found no violations on {pages.url}/clean"


def test_without_axe_core_the_built_in_checks_run_and_say_so(browse, pages, tmp_path, monkeypatch):
    monkeypatch.setattr(assets, "AXE_FILE", tmp_path / "no-axe" / "axe.min.js")  # an image built without it
    out = browse().call({"action": "browse", "url": f"{pages.url}/shop", "mode": "a11y"})
    assert out.startswith(
        "axe-core is not in this image; the built-in checks ran instead\n"
        '[image-alt] 2 × images with no alt attribute — give each an alt (alt="" when it is '
        "decorative)\n    img"
    )
    assert json.loads((tmp_path / "outputs/a11y.json").read_text())[0]["rule"] == "image-alt"


def test_vitals_grade_inp_after_a_click_that_blocks_the_page_for_300_ms(browse, pages, tmp_path):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{pages.url}/slow",
            "mode": "vitals",
            "actions": [{"click": "#go"}, {"wait": "text", "text": "done"}],
        }
    )
    # On a loaded machine the 300 ms handler can outlast the click's 1.5 s first try: the click is then noted as
    # pressed and not pressed again (steps/pointer.py), a note before the vitals (a blank line between, as every
    # note is set apart from what follows); it counts as the interaction.
    lines = [line for line in out.splitlines() if line and not line.startswith("click #go (the page took longer than")]
    assert [line.split(":")[0] for line in lines] == ["LCP", "CLS", "FCP", "TTFB", "INP", "load", "weight"]
    inp = json.loads((tmp_path / "outputs/vitals.json").read_text())["INP"]
    assert inp["value"] >= 300 and inp["interactions"] == 1
    grade = "needs improvement" if inp["value"] <= 500 else "poor"  # 200 ms and 500 ms are the bounds
    assert inp["grade"] == grade
    assert f"INP: {inp['value']} ms ({grade}) over 1 interaction" in out.splitlines()


def test_vitals_with_no_interaction_say_inp_needs_one(browse, pages, tmp_path):
    out = browse().call({"action": "browse", "url": f"{pages.url}/clean", "mode": "vitals"})
    assert "INP: none — no interaction in this call (a click, a tap or a key in actions gives one)" in out.splitlines()
    vitals = json.loads((tmp_path / "outputs/vitals.json").read_text())
    assert vitals["CLS"]["grade"] == "good" and vitals["INP"] == {
        "value": None,
        "unit": " ms",
        "grade": None,
        "interactions": 0,
    }


def test_the_audits_are_registered_as_reads():
    assert (MODES["a11y"].acts, MODES["vitals"].acts) == (False, False)
    assert MODES["vitals"].prepare is not None
