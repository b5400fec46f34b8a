"""mode=map and mode=crawl in the browser: the links a page's script builds are followed, the same host only,
robots.txt honoured, three tabs loading at a time, the crawl resumable — real Chromium against a site this file
serves."""

from __future__ import annotations

import json
import threading

import pytest

from foldrun.web import WebToolError
from tests.fakes.website import TestSite, html, urlset, xml

pytestmark = pytest.mark.e2e


def _page(title: str, links: list[str]) -> bytes:
    """A page whose links only its script writes (a plain crawl sees none), loading a slow script first."""
    return (
        f'<!doctype html><html lang="en"><head><title>{title}</title></head><body><main><h1>{title}</h1>'
        f'<p>The {title} page.</p><nav id="links"></nav></main><script src="/slow.js?{title}"></script>'
        f"<script>for (const href of {json.dumps(links)}) {{ const a = document.createElement('a'); a.href = href;"
        f" a.textContent = href; document.getElementById('links').append(a, ' '); }}</script></body></html>"
    ).encode()


class Walked(TestSite):
    __test__ = False

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = 0
        self.most_at_once = 0
        self.together = threading.Condition()
        self.flaky = 0
        base = lambda: self.url  # noqa: E731 - the port is known once bound
        self.routes.update(
            {
                "/robots.txt": lambda r: (
                    200,
                    {"content-type": "text/plain"},
                    f"User-agent: *\nDisallow: /private/\nSitemap: {base()}/sitemap.xml\n".encode(),
                ),
                "/sitemap.xml": lambda r: xml(urlset([f"{base()}/", f"{base()}/listed"])),
                "/slow.js": self._slow,
                "/": lambda r: html(
                    _page(
                        "home",
                        ["/a", "/b", "/c", "/private/x", base().replace("127.0.0.1", "localhost") + "/elsewhere"],
                    )
                ),
                "/a": lambda r: html(_page("a", ["/d", "/"])),
                "/b": lambda r: html(_page("b", ["/gone", "/flaky"])),
                "/c": lambda r: html(_page("c", [])),
                "/d": lambda r: html(_page("d", [])),
                "/listed": lambda r: html(_page("listed", [])),
                "/flaky": self._flaky,
                "/private/x": lambda r: html(_page("private", [])),
            }
        )

    def _slow(self, _request: dict):  # noqa: ANN202
        # Each page's script is held until three are asked for at once (or 3 s pass): tabs that load side by
        # side all arrive while the first is held, however slowly a loaded machine starts them; tabs that load
        # one after another never do.
        with self.together:
            self.in_flight += 1
            self.most_at_once = max(self.most_at_once, self.in_flight)
            self.together.notify_all()
            self.together.wait_for(lambda: self.most_at_once >= 3, timeout=3)
            self.in_flight -= 1
        return 200, {"content-type": "text/javascript"}, b"window.slow = true;"

    def _flaky(self, _request: dict):  # noqa: ANN202
        self.flaky += 1
        if self.flaky == 1:
            return 503, {"content-type": "text/plain"}, b"busy"
        return html(_page("flaky", []))


@pytest.fixture
def walked():
    with Walked() as server:
        yield server


def test_map_lists_the_sitemap_and_the_links_scripts_build_on_the_same_host_robots_honoured(browse, walked, tmp_path):
    out = browse().call({"action": "browse", "url": f"{walked.url}/", "mode": "map", "timeout": 60})
    lines = out.splitlines()
    base = walked.url
    assert set(lines[1:]) == {
        f"{base}/",
        f"{base}/listed",
        f"{base}/a",
        f"{base}/b",
        f"{base}/c",
        f"{base}/d",
        f"{base}/gone",
        f"{base}/flaky",
    }
    assert lines[0].startswith(f"8 URLs on {base}, from its sitemaps (2 listed) and the links on ")
    assert lines[0].endswith(" rendered pages (outputs/map.txt)")
    assert (tmp_path / "outputs/map.txt").read_text() == "\n".join(lines[1:]) + "\n"
    assert "/private/x" not in walked.seen and not any("elsewhere" in s for s in walked.seen)


def test_map_stops_at_its_limit(browse, walked):
    out = browse().call({"action": "browse", "url": f"{walked.url}/", "mode": "map", "limit": 3})
    assert out.splitlines()[0].endswith("; stopped at limit=3") and len(out.splitlines()) == 4


def test_crawl_writes_each_rendered_page_three_tabs_at_a_time_and_the_same_call_carries_on(browse, walked, tmp_path):
    tool = browse()
    call = {"action": "browse", "url": f"{walked.url}/", "mode": "crawl", "limit": 4, "timeout": 60}
    first = tool.call(call)
    base = walked.url
    assert first.splitlines()[:5] == [
        f"crawled {base}/ in the browser: 4 pages this call, 4 in all, in outputs/crawl/ (index: outputs/crawl/index.txt)",
        f"- {base}/ → outputs/crawl/index.md",
        f"- {base}/a → outputs/crawl/a.md",
        f"- {base}/b → outputs/crawl/b.md",
        f"- {base}/c → outputs/crawl/c.md",
    ]
    assert f"- {base}/private/x: disallowed by robots.txt" in first.splitlines()
    assert first.splitlines()[-1] == (
        "3 more pages found and not yet read — the same call again carries on (cursor: outputs/crawl/.cursor.json)"
    )
    assert walked.most_at_once == 3  # /a, /b and /c loaded side by side
    assert (tmp_path / "outputs/crawl/a.md").read_text().startswith("# a\n\nThe a page.")

    second = tool.call(call)
    assert second.splitlines()[0] == (
        f"resumed the crawl of {base}/ in the browser: 2 pages this call, 6 in all, in "
        f"outputs/crawl/ (index: outputs/crawl/index.txt)"
    )
    assert f"- {base}/d → outputs/crawl/d.md" in second.splitlines()  # the link /a's script wrote
    assert f"- {base}/gone: HTTP 404" in second.splitlines()
    assert f"- {base}/flaky → outputs/crawl/flaky.md" in second.splitlines()  # a 503 answered the second time
    assert walked.flaky == 2
    assert second.splitlines()[-1] == "nothing left to read on the site: the crawl is complete"
    index = (tmp_path / "outputs/crawl/index.txt").read_text().splitlines()
    assert index[:2] == [f"{base}/\tindex.md", f"{base}/a\ta.md"] and f"{base}/gone\t-\tHTTP 404" in index


def test_a_site_whose_robots_disallow_the_start_is_not_crawled(browse, walked):
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{walked.url}/private/x", "mode": "crawl"})
    assert str(caught.value) == (
        f"{walked.url}/robots.txt disallows {walked.url}/private/x for crawlers, so no pages were crawled"
    )


@pytest.mark.parametrize(
    "call, said",
    [
        ({"mode": "text", "limit": 5}, "browse: limit= goes with mode=map or mode=crawl; this call reads mode=text"),
        (
            {"mode": "crawl", "limit": 0},
            "browse: limit= is the most pages to walk, a whole number from 1 to 5,000; 0 is not",
        ),
        (
            {"mode": "map", "limit": "many"},
            'browse: limit= is the most pages to walk, a whole number from 1 to 5,000; "many" is not',
        ),
    ],
)
def test_limit_out_of_place_is_refused_before_a_browser_opens(browse, browsers, walked, call, said):
    launches = browsers.launches
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{walked.url}/", **call})
    assert str(caught.value) == said
    assert browsers.launches == launches
