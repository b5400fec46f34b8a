"""A small web site on loopback for the web tool's own crawl, map, extract, answer and monitor.

Several sites in one: each "host" is a path prefix-free server of its own (one
`TestSite` per scenario), built from a dict of path → (status, headers, body)
plus a few behaviours a dict cannot say: a page that changes between calls, a
page that never finishes, a 503 that answers the second time. Every response
is written in one `sendall` (NOTES.md: two writes cost a keep-alive client ~44 ms).
"""

from __future__ import annotations

import gzip
import json
import time
from typing import Any, Callable

from tests.fakes.loopback import LoopbackServer, QuietHandler

Answer = tuple[int, dict[str, str], bytes]


def page(title: str, body: str, *, head: str = "") -> bytes:
    return (
        f'<!doctype html><html lang="en"><head><title>{title}</title>{head}</head><body>'
        f'<nav><a href="/">Home</a></nav><main>{body}</main><footer>© Example</footer></body></html>'
    ).encode()


def html(body: bytes, status: int = 200) -> Answer:
    return status, {"content-type": "text/html; charset=utf-8"}, body


def xml(body: str, status: int = 200) -> Answer:
    return status, {"content-type": "application/xml"}, body.encode()


def urlset(urls: list[str]) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(f"<url><loc>{u}</loc></url>" for u in urls)
        + "</urlset>"
    )


def sitemap_index(urls: list[str]) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
        + "".join(f"<sitemap><loc>{u}</loc></sitemap>" for u in urls)
        + "</sitemapindex>"
    )


class TestSite(LoopbackServer):
    """`routes`: path → Answer, or a callable(request dict) → Answer. `url` once started."""

    __test__ = False

    def __init__(self, routes: dict[str, Answer | Callable[[dict], Answer]] | None = None) -> None:
        self.routes: dict[str, Any] = dict(routes or {})
        self.seen: list[str] = []
        self.trickle: set[str] = set()  # paths that send a byte a second, forever
        self.hangup: dict[str, int] = {}  # path → how many more requests for it are closed unanswered
        outer = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802
                self._answer("GET", b"")

            def do_POST(self) -> None:  # noqa: N802 - a sign-in form posts; the route sees method and body
                length = int(self.headers.get("content-length") or 0)
                self._answer("POST", self.rfile.read(length) if length else b"")

            def _answer(self, method: str, data: bytes) -> None:
                path = self.path.split("?", 1)[0]
                outer.seen.append(self.path if method == "GET" else f"{method} {self.path}")
                if path in outer.trickle:
                    self._trickle()
                    return
                if outer.hangup.get(path, 0) > 0:  # a wire error: the connection closes with no answer
                    outer.hangup[path] -= 1
                    self.close_connection = True
                    return
                route = outer.routes.get(self.path, outer.routes.get(path))
                if route is None or (method != "GET" and not callable(route)):
                    status, headers, body = (
                        (404, {"content-type": "text/plain"}, b"not found")
                        if route is None
                        else (405, {"content-type": "text/plain", "allow": "GET"}, b"method not allowed")
                    )
                else:
                    status, headers, body = (
                        route({"path": self.path, "headers": dict(self.headers), "method": method, "body": data})
                        if callable(route)
                        else route
                    )
                head = [f"HTTP/1.1 {status} {'OK' if status < 400 else 'Error'}"]
                head += [f"{k}: {v}" for k, v in headers.items()]
                head += [f"content-length: {len(body)}", "", ""]
                # a page gone by now is the server's to take quietly (loopback.py)
                self.wfile.write("\r\n".join(head).encode("latin-1") + body)

            def _trickle(self) -> None:
                try:
                    self.wfile.write(b"HTTP/1.1 200 OK\r\ncontent-type: text/html\r\ncontent-length: 100000000\r\n\r\n")
                    for _ in range(600):
                        self.wfile.write(b"<p>.</p>")
                        self.wfile.flush()
                        time.sleep(0.25)
                except OSError:  # the browser stopped reading, however its socket ended: the trickle's end
                    pass

        # A page's many subresources and three crawl tabs connect at once: room for them to wait.
        super().__init__(Handler, backlog=128)


def docs_site() -> TestSite:
    """The proof site: robots rules, a sitemap index with a gzip sitemap, JSON-LD, a table, a JS-only shell,
    a PDF, a redirect to another host, a 503 that answers the second time, a page that changes between calls."""
    site = TestSite()
    base = lambda: site.url  # noqa: E731 - the port is known once the server is bound
    tries = {"flaky": 0}
    version = {"n": 0}

    def flaky(_request: dict) -> Answer:
        tries["flaky"] += 1
        if tries["flaky"] == 1:
            return 503, {"content-type": "text/plain"}, b"busy"
        return html(page("Flaky", "<h1>Flaky</h1><p>Answered the second time.</p>"))

    def changing(_request: dict) -> Answer:
        version["n"] += 1
        price = "$9" if version["n"] == 1 else "$12"
        extra = "" if version["n"] == 1 else "<p>New: a yearly plan.</p>"
        return html(page("Prices", f"<h1>Prices</h1><p>Pro costs {price} a month.</p><p>Free stays free.</p>{extra}"))

    def sitemap_gz(_request: dict) -> Answer:
        body = gzip.compress(urlset([f"{base()}/guide", f"{base()}/products", f"{base()}/app"]).encode())
        return 200, {"content-type": "application/gzip"}, body

    product_ld = json.dumps(
        {
            "@context": "https://schema.org",
            "@type": "Product",
            "name": "Harbour flat",
            "offers": {"@type": "Offer", "price": "450", "priceCurrency": "AUD"},
        }
    )
    site.routes.update(
        {
            "/robots.txt": lambda r: (
                200,
                {"content-type": "text/plain"},
                f"User-agent: *\nDisallow: /private/\n\nSitemap: {base()}/sitemap_index.xml\n".encode(),
            ),
            "/sitemap_index.xml": lambda r: xml(
                sitemap_index([f"{base()}/sitemap-pages.xml.gz", f"{base()}/sitemap-blog.xml"])
            ),
            "/sitemap-pages.xml.gz": sitemap_gz,
            "/sitemap-blog.xml": lambda r: xml(urlset([f"{base()}/", f"{base()}/blog/inspections"])),
            "/": lambda r: html(
                page(
                    "Example rentals",
                    "<h1>Example rentals</h1><p>Flats to rent.</p>"
                    '<a href="/guide">Guide</a> <a href="/products">Products</a> '
                    '<a href="/blog/inspections">Inspections</a> <a href="/private/admin">Admin</a> '
                    '<a href="/flaky">Flaky</a> <a href="/brochure.pdf">Brochure</a> '
                    '<a href="/elsewhere">Elsewhere</a> <a href="https://other.example/x">Other</a>',
                )
            ),
            "/guide": lambda r: html(
                page(
                    "Renting guide",
                    "<h1>Renting guide</h1><h2>Bond</h2><p>The bond is four weeks "
                    "of rent, held by the state's bond authority.</p><h2>Inspections</h2><p>An owner "
                    "may inspect a rental twice a year with seven days' notice.</p>"
                    "<table><tr><th>Notice</th><th>Days</th></tr><tr><td>Inspection</td><td>7</td>"
                    '</tr></table><a href="/">Home</a>',
                )
            ),
            "/products": lambda r: html(
                page(
                    "Listings",
                    "<h1>Listings</h1><ul>"
                    '<li class="listing"><h3>Harbour flat</h3><span class="tel">02 9999 0000</span><a href="/flats/1">details</a></li>'
                    '<li class="listing"><h3>Garden cottage</h3><span class="tel">02 8888 0000</span><a href="flats/2">details</a></li>'
                    "</ul>",
                    head=f'<script type="application/ld+json">{product_ld}</script>'
                    '<meta property="og:title" content="Listings at Example">',
                )
            ),
            "/blog/inspections": lambda r: html(
                page(
                    "Inspections",
                    "<h1>Inspections</h1><p>Tenants must be given notice in writing before an inspection.</p>",
                )
            ),
            "/private/admin": lambda r: html(page("Admin", "<h1>Secret admin</h1>")),
            "/flaky": flaky,
            "/brochure.pdf": (200, {"content-type": "application/pdf"}, b"%PDF-1.4 fake brochure"),
            "/elsewhere": (302, {"location": "https://other.example/landing"}, b""),
            "/app": (
                200,
                {"content-type": "text/html"},
                b"<!doctype html><html><head><title>App</title></head><body>"
                b'<div id="root"></div><script src="/app.js"></script></body></html>',
            ),
            "/prices": changing,
            "/flats/1": lambda r: html(page("Flat 1", "<h1>Flat 1</h1>")),
            "/flats/2": lambda r: html(page("Flat 2", "<h1>Flat 2</h1>")),
        }
    )
    return site


def generated_site(pages: int) -> TestSite:
    """`pages` pages linked in a chain and a fan, robots.txt allowing all but /private/ — the crawl bench's site."""
    site = TestSite()
    body = "<p>" + "Words of a realistic paragraph about renting, bonds and inspections. " * 20 + "</p>"
    for n in range(pages):
        links = "".join(f'<a href="/p/{m}">page {m}</a> ' for m in (n + 1, n + 2, (n * 7) % pages) if m < pages)
        site.routes[f"/p/{n}"] = html(page(f"Page {n}", f'<h1>Page {n}</h1>{body}{links}<a href="/private/x">x</a>'))
    site.routes["/robots.txt"] = (200, {"content-type": "text/plain"}, b"User-agent: *\nDisallow: /private/\n")
    return site
