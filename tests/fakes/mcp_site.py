"""The local test site of the MCP tools: a small product site on loopback, as a browser agent meets one.

`arena()` builds it on `website.TestSite` (one loopback HTTP server, each answer in one write):

- `/` the home page, linking every page below, the broken `/old-page` (404) among them;
- `/pricing/` a pricing table (Free, Pro $12 a month, Team $40 a month);
- `/login` a sign-in form (`demo@example.com` / `PASSWORD`, posted) leading to `/dashboard` ("Welcome back");
  a wrong password answers the form again with "Invalid password";
- `/console-error` a page that logs an error to the console and throws an uncaught one;
- `/late-console-error` a page that logs an error 2 s after it loads (while nobody is looking at it);
- `/robots.txt` (everything but `/private/`, and the sitemap) and `/sitemap.xml`, which also lists `/unlinked`,
  a page no link reaches;
- `/about`, `/blog/`, two posts and `/blog/archive` (depth 3 from home) for crawls, and `/private/drafts`,
  which robots.txt disallows;
- `/media` images, a video, an audio clip, iframes and a script on other hosts (`localhost:<port>` answers;
  the `example.*` hosts never resolve) for a scrape's inventory;
- `/later` a page whose last paragraph a script writes 600 ms after load (for `waitForText`);
- `/brochure.pdf` a file, not a page.

Other tests add pages to `site.routes` or in small commits here.
"""

from __future__ import annotations

import base64
from urllib.parse import parse_qs

from .website import Answer, TestSite, html, urlset

TITLE = "Test Arena · a practice site for browser agents"
EMAIL = "demo@example.com"
PASSWORD = "demo-password-1"
# A 1×1 transparent PNG: a real image the browser decodes.
PIXEL = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=")
THIRD_PARTY = ("cdn.example.net", "video.example.org", "analytics.example.com")


def layout(title: str, body: str, *, head: str = "", lang: str = "en") -> bytes:
    """A page of the site: its header navigation, the content in `<main>`, a footer."""
    nav = (
        '<header><nav><a href="/">Test Arena</a> <a href="/pricing/">Pricing</a> <a href="/login">Sign in</a> '
        '<a href="/blog/">Blog</a></nav></header>'
    )
    return (
        f'<!doctype html><html lang="{lang}"><head><meta charset="utf-8"><title>{title}</title>{head}</head>'
        f"<body>{nav}<main>{body}</main><footer>© Test Arena</footer></body></html>"
    ).encode()


def _form(note: str = "") -> bytes:
    return layout(
        "Sign in · Test Arena",
        (
            "<h1>Sign in</h1>"
            + (f'<p class="error" role="alert">{note}</p>' if note else "")
            + '<form method="post" action="/login"><label>Email <input name="email" type="email"></label> '
            '<label>Password <input name="password" type="password"></label> '
            '<button type="submit">Sign in</button></form>'
        ),
    )


def _login(request: dict) -> Answer:
    if request.get("method") != "POST":
        return html(_form())
    fields = parse_qs(request.get("body", b"").decode("utf-8", errors="replace"))
    email, password = (fields.get("email") or [""])[0], (fields.get("password") or [""])[0]
    if email == EMAIL and password == PASSWORD:
        return (
            303,
            {"location": "/dashboard", "set-cookie": "arena=signed-in; Path=/; HttpOnly", "content-type": "text/plain"},
            b"",
        )
    return html(_form("Invalid password"), status=200)


def _dashboard(request: dict) -> Answer:
    if "arena=signed-in" not in (request.get("headers") or {}).get("Cookie", ""):
        return 302, {"location": "/login", "content-type": "text/plain"}, b""
    return html(layout("Dashboard · Test Arena", f"<h1>Welcome back</h1><p>Signed in as {EMAIL}.</p>"))


def arena() -> TestSite:
    """The site, not yet started: `with arena() as site:` then `site.url`."""
    site = TestSite()

    def base() -> str:
        return site.url

    def home(_request: dict) -> Answer:
        return html(
            layout(
                TITLE,
                (
                    "<h1>A practice site for browser agents</h1>"
                    "<p>Test Arena is a small product site with the pages an agent meets: a pricing table, a sign-in "
                    "form, a blog and a page that breaks. Use it to try scraping, crawling and smoke tests.</p>"
                    '<ul><li><a href="/pricing/">Pricing</a></li><li><a href="/login">Sign in</a></li>'
                    '<li><a href="/about">About</a></li><li><a href="/media">Media</a></li>'
                    '<li><a href="/console-error">Console error</a></li><li><a href="/old-page">Old page</a></li>'
                    '<li><a href="https://other.example.com/partners">Partners</a></li>'
                    '<li><a href="mailto:hello@example.com">Write to us</a></li></ul>'
                ),
                head='<meta name="description" content="A practice site for browser agents.">',
            )
        )

    def media(_request: dict) -> Answer:
        badge = f"http://localhost:{site.port}/static/badge.png"
        return html(
            layout(
                "Media · Test Arena",
                (
                    "<h1>Media</h1><p>Pictures, a clip and embeds from other hosts.</p>"
                    '<img src="/static/logo.png" alt="Test Arena logo">'
                    '<img src="https://cdn.example.net/photo.jpg" alt="A photo">'
                    f'<img src="{badge}" alt="A badge">'
                    '<video src="/static/clip.mp4" controls></video>'
                    '<audio src="/static/jingle.mp3" controls></audio>'
                    '<iframe src="https://video.example.org/embed/42" title="A video"></iframe>'
                    '<iframe src="/about" title="About us"></iframe>'
                ),
                head='<script src="https://analytics.example.com/tag.js" async></script>',
            )
        )

    site.routes.update(
        {
            "/": home,
            "/pricing/": html(
                layout(
                    "Pricing · Test Arena",
                    (
                        "<h1>Pricing</h1><table><tr><th>Plan</th><th>Price</th></tr>"
                        "<tr><td>Free</td><td>$0</td></tr><tr><td>Pro</td><td>$12 a month</td></tr>"
                        "<tr><td>Team</td><td>$40 a month</td></tr></table>"
                        '<p><a href="/login">Sign in</a> to change your plan.</p>'
                    ),
                    head='<meta name="description" content="Plans and prices.">',
                )
            ),
            "/login": _login,
            "/dashboard": _dashboard,
            "/console-error": html(
                layout(
                    "Console error · Test Arena",
                    (
                        "<h1>Console error</h1><p>This page logs an error to the console.</p>"
                        "<script>console.error('Widget failed to load'); setTimeout(function () { "
                        "throw new Error('The widget crashed'); }, 0);</script>"
                    ),
                )
            ),
            "/late-console-error": html(
                layout(
                    "Late console error · Test Arena",
                    (
                        "<h1>Late console error</h1><p>This page logs an error two seconds after it loads.</p>"
                        "<script>setTimeout(function () { console.error('The late widget failed'); }, 2000);</script>"
                    ),
                )
            ),
            "/about": html(
                layout(
                    "About · Test Arena", ('<h1>About</h1><p>Made for testing.</p><a href="/blog/">Read the blog</a>')
                )
            ),
            "/blog/": html(
                layout(
                    "Blog · Test Arena",
                    (
                        '<h1>Blog</h1><ul><li><a href="/blog/first-post">First post</a></li>'
                        '<li><a href="/blog/second-post">Second post</a></li><li><a href="/private/drafts">Drafts</a></li>'
                        '<li><a href="/brochure.pdf">Brochure</a></li></ul>'
                    ),
                )
            ),
            "/blog/first-post": html(
                layout(
                    "First post · Test Arena", ('<h1>First post</h1><p>Hello.</p><a href="/blog/second-post">Next</a>')
                )
            ),
            "/blog/second-post": html(
                layout(
                    "Second post · Test Arena", ('<h1>Second post</h1><p>Again.</p><a href="/blog/archive">Archive</a>')
                )
            ),
            "/blog/archive": html(layout("Archive · Test Arena", "<h1>Archive</h1><p>Older posts.</p>")),
            "/private/drafts": html(layout("Drafts · Test Arena", "<h1>Drafts</h1>")),
            "/unlinked": html(layout("Unlinked · Test Arena", "<h1>Unlinked</h1><p>Only the sitemap names me.</p>")),
            "/media": media,
            "/later": html(
                layout(
                    "Later · Test Arena",
                    (
                        '<h1>Later</h1><p id="late"></p><script>setTimeout(function () { '
                        "document.getElementById('late').textContent = 'The late paragraph is here.'; }, 600);</script>"
                    ),
                )
            ),
            "/brochure.pdf": (200, {"content-type": "application/pdf"}, b"%PDF-1.4\n% a brochure, not a page\n"),
            "/static/logo.png": (200, {"content-type": "image/png"}, PIXEL),
            "/static/badge.png": (200, {"content-type": "image/png"}, PIXEL),
            "/robots.txt": lambda _r: (
                200,
                {"content-type": "text/plain"},
                f"User-agent: *\nDisallow: /private/\n\nSitemap: {base()}/sitemap.xml\n".encode(),
            ),
            "/sitemap.xml": lambda _r: (
                200,
                {"content-type": "application/xml"},
                urlset(
                    [f"{base()}/", f"{base()}/pricing/", f"{base()}/about", f"{base()}/blog/", f"{base()}/unlinked"]
                ).encode(),
            ),
        }
    )
    return site
