"""Loopback stand-ins for the far side of `web`: a small web site, SearXNG, Brave, Tavily, Jina.

Each speaks its service's documented wire (paths, parameters, headers, JSON
shapes) and records what it received, so a test can assert what went out.
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any, Callable
from urllib.parse import parse_qsl, urlsplit

from tests.fakes.loopback import LoopbackServer, QuietHandler

Answer = tuple[int, dict[str, str], bytes]


class Loopback(LoopbackServer):
    """A threaded HTTP server on 127.0.0.1 answering through `respond(request) -> (status, headers, body)`."""

    def __init__(self, respond: Callable[[dict], Answer]) -> None:
        self.seen: list[dict[str, Any]] = []
        outer = self

        class Handler(QuietHandler):
            def _any(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                parts = urlsplit(self.path)
                request = {
                    "method": self.command,
                    "path": parts.path,
                    "query": dict(parse_qsl(parts.query)),
                    "raw_path": self.path,
                    "headers": {k.lower(): v for k, v in self.headers.items()},
                    "body": (self.rfile.read(length) if length else b"").decode(),
                }
                outer.seen.append(request)
                status, headers, body = respond(request)
                self.send_response(status)
                for key, value in headers.items():
                    self.send_header(key, value)
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                if self.command != "HEAD":  # a client gone by now is the server's to take quietly (loopback.py)
                    self.wfile.write(body)

            do_GET = do_POST = do_HEAD = _any

        super().__init__(Handler)


def html(body: str, status: int = 200, headers: dict[str, str] | None = None) -> Answer:
    return status, {"content-type": "text/html; charset=utf-8", **(headers or {})}, body.encode()


def as_json(data: Any, status: int = 200) -> Answer:
    return status, {"content-type": "application/json"}, json.dumps(data).encode()


ARTICLE = """<!doctype html><html lang="en"><head><title>Owner inspections</title>
<meta name="description" content="How owners inspect a rental.">
<link rel="canonical" href="/articles/inspections">
<meta property="og:title" content="Owner inspections — a guide">
<link rel="alternate" hreflang="de" href="/de/articles/inspections">
<link rel="alternate" type="application/rss+xml" href="/feed.xml" title="Feed">
<script type="application/ld+json">{"@type": "Article", "headline": "Owner inspections"}</script>
</head><body>
<nav><a href="/">Home</a> <a href="/about">About us</a></nav>
<main><h1>Owner inspections</h1>
<p>An owner may inspect a rental <strong>twice a year</strong> with notice. Read the <a href="/rules">rules</a>.</p>
<h2>What to bring</h2><ul><li>The lease</li><li>A camera</li></ul>
<table><tr><th>Day</th><th>Notice</th></tr><tr><td>Weekday</td><td>7 days</td></tr></table>
<img src="/a.png"><img src="/b.png" alt="">
</main>
<footer>Copyright Example Pty Ltd</footer>
<script>console.log("analytics")</script>
</body></html>"""

SHELL = """<!doctype html><html><head><title>App</title></head>
<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>
<script src="/static/app.js"></script></body></html>"""

APP_JS = """document.getElementById('root').innerHTML =
  '<h1>Rendered listings</h1><ul><li class="listing"><h3>Harbour flat</h3><span class="tel">02 9999 0000</span>' +
  '<a href="/flats/1">details</a></li><li class="listing"><h3>Garden cottage</h3><span class="tel">02 8888 0000</span>' +
  '<a href="/flats/2">details</a></li></ul>';"""

FORM = """<!doctype html><html lang="en"><head><title>Sign up</title></head><body>
<main><h1>Sign up</h1>
<form id="f" onsubmit="event.preventDefault(); document.getElementById('out').textContent =
  'Thanks ' + document.getElementById('name').value + ' (' + document.getElementById('plan').value + ')' +
  (document.getElementById('terms').checked ? ' agreed' : ''); localStorage.setItem('signed', 'yes');">
<label for="name">Name</label> <input id="name" name="name">
<label for="plan">Plan</label> <select id="plan"><option value="free">Free</option><option value="pro">Pro</option></select>
<label><input type="checkbox" id="terms"> I agree</label>
<button type="submit">Delete</button> <button type="submit" id="go">Send</button>
</form>
<p id="out"></p>
<div style="height: 3000px"></div><p id="far">the bottom</p>
</main></body></html>"""

FEED = """<?xml version="1.0"?><rss version="2.0"><channel><title>Example news</title>
<item><title>Inspections change</title><link>https://example.com/a</link><pubDate>Mon, 30 Nov 2026 09:00:00 GMT</pubDate>
<description>&lt;p&gt;From &lt;b&gt;January&lt;/b&gt;.&lt;/p&gt;</description></item>
<item><title>Notice periods</title><link>https://example.com/b</link></item></channel></rss>"""

LOGIN = """<!doctype html><html><head><title>Login</title></head><body>
<form method="post" action="/login"><input name="user"><button>Sign in</button></form></body></html>"""


class Site(Loopback):
    """A small web site: an article, a JavaScript-built page, a form, redirects, a slow page, a big one."""

    def __init__(self) -> None:
        self.pages: dict[str, Answer] = {
            "/article": html(ARTICLE),
            "/app": html(SHELL),
            "/static/app.js": (200, {"content-type": "application/javascript"}, APP_JS.encode()),
            "/form": html(FORM),
            "/json": as_json({"items": [1, 2, 3]}),
            "/png": (200, {"content-type": "image/png"}, b"\x89PNG\r\n\x1a\n" + bytes(range(256))),
            "/missing": html("<html><body><h1>Not here</h1></body></html>", status=404),
            "/hop": (302, {"location": "/article"}, b""),
            "/big": (200, {"content-type": "text/plain"}, b"x" * (11 * 1024 * 1024)),
            "/login": html(LOGIN),
            "/empty": (200, {"content-type": "text/html"}, b""),
            "/feed.xml": (200, {"content-type": "application/rss+xml"}, FEED.encode()),
            "/report.pdf": (200, {"content-type": "application/pdf"}, b"%PDF-1.4\n%%EOF\n"),
            "/latin": (
                200,
                {"content-type": "text/html"},
                '<html><head><meta charset="iso-8859-1"><title>Café</title></head><body><p>Crème brûlée</p>'
                "</body></html>".encode("latin-1"),
            ),
            "/account": html("<html><body><p>signed out</p></body></html>"),
        }
        self.draft = ""
        super().__init__(self.respond)

    def respond(self, request: dict) -> Answer:
        path = request["path"]
        if path == "/slow":
            time.sleep(2)
            return html("<p>late</p>")
        if path == "/login" and request["method"] == "POST":
            return 302, {"location": "/account", "set-cookie": "sid=abc123; Path=/; HttpOnly"}, b""
        if path == "/account" and "sid=abc123" in request["headers"].get("cookie", ""):
            return html("<html><body><p>signed in as alice</p></body></html>")
        if path == "/buttons":
            count = int(request["query"].get("n") or 2)
            buttons = "".join(
                f"<button onclick=\"document.title = 'deleted {i}'\">Delete</button>" for i in range(1, count + 1)
            )
            return html(
                f"<html><head><title>Cart</title></head><body><main>{buttons}"
                f'<a href="/checkout">Checkout</a></main></body></html>'
            )
        if path == "/broken":
            return html(
                "<html><head><title>Broken</title></head><body><script>throw new Error('boom in the page')"
                "</script></body></html>"
            )
        if path == "/echo-headers":
            return html(
                f"<html><body><p id=cookie>cookie {request['headers'].get('cookie')}</p>"
                f"<p id=team>team {request['headers'].get('x-team')}</p></body></html>"
            )
        if path == "/draft" and request["method"] == "POST":
            self.draft = request["body"]
            return 303, {"location": "/draft"}, b""
        if path == "/draft":
            saved = "<p>Draft saved</p>" if self.draft else ""
            return html(
                f"<html><body>{saved}<form method=post action=/draft><input name=t>"
                f"<button>Save</button></form></body></html>"
            )
        if path == "/fake-save":
            return html(
                "<html><body><p id=s></p><button onclick=\"document.getElementById('s').textContent="
                "'Draft saved'\">Save</button></body></html>"
            )
        if path == "/dialog":
            return html(
                "<html><body><p id=r></p><button onclick=\"document.getElementById('r').textContent="
                "String(prompt('Name?'))\">Ask</button></body></html>"
            )
        if path == "/pictures":
            return html('<html><body><p>pictures</p><img src="/png"><img src="/png?2"></body></html>')
        if path == "/covered":
            return html("""<html><body>
<div style="position:fixed;top:0;left:0;width:100%;height:100%;background:rgba(0,0,0,.5);z-index:10">cookies?</div>
<button id="go" onclick="document.getElementById('r').textContent='clicked'">Go</button>
<label><input type="checkbox" id="terms" style="opacity:0;width:0;height:0;margin:0"><span>I agree</span></label>
<p id="r"></p></body></html>""")
        if path == "/signin" and request["method"] == "POST":
            form = dict(parse_qsl(request["body"]))
            if form.get("username") == "alice" and form.get("password") == "pa55-w0rd-long":
                return 303, {"location": "/account", "set-cookie": "sid=abc123; Path=/"}, b""
            return html(f"<p>wrong password {form.get('password')}</p>", status=403)
        if path == "/signin":
            return html(
                "<html><body><form method=post action=/signin><input name=username autocomplete=username>"
                "<input type=password name=password><button>Sign in</button></form></body></html>"
            )
        if path == "/upload":
            return html(
                "<html><body><input type=file id=f onchange=\"document.getElementById('n').textContent="
                "this.files[0].name + ' ' + this.files[0].size\"><p id=n></p></body></html>"
            )
        if path == "/downloads":
            return html('<html><body><a id=get href="/report.pdf" download="report.pdf">Report</a></body></html>')
        if path == "/items":
            return html(
                '<html><body><ul id=list></ul><script>fetch("/api/items").then(r => r.json()).then(items => '
                'document.getElementById("list").innerHTML = items.map(i => "<li>" + i + "</li>").join(""))'
                "</script></body></html>"
            )
        if path == "/frames":
            inner = "<button id=inner onclick=&quot;this.textContent=&#39;pressed&#39;&quot;>Inner</button>"
            return html(
                f"<html><head><title>Outer</title></head><body><p>outside</p>"
                f'<iframe srcdoc="{inner}"></iframe>'
                f'<a id=pop href="/article" target="_blank">open</a></body></html>'
            )
        if path == "/editor":
            return html("""<html><body><div id=ed contenteditable=true></div>
<div id=a draggable=true ondragstart="event.dataTransfer.setData('text', 'a')">drag me</div>
<div id=b style="width:200px;height:100px" ondragover="event.preventDefault()"
     ondrop="event.preventDefault(); this.textContent = 'dropped ' + event.dataTransfer.getData('text')">drop here</div>
<p id=route></p><script>addEventListener('popstate', () => document.getElementById('route').textContent = location.pathname)</script>
</body></html>""")
        if path == "/basic":
            if request["headers"].get("authorization") == "Basic " + base64.b64encode(b"ops:s3cret-basic").decode():
                return html("<html><body><p>inside</p></body></html>")
            return 401, {"www-authenticate": 'Basic realm="ops"', "content-type": "text/plain"}, b"who are you"
        if path == "/away":
            return 302, {"location": request["query"]["to"]}, b""
        if path == "/echo-language":
            return html(f"<html><body><p>language {request['headers'].get('accept-language')}</p></body></html>")
        if path == "/echo-auth":
            return html(f"<html><body><p>auth {request['headers'].get('authorization')}</p></body></html>")
        return self.pages.get(path, html("<p>no such page</p>", status=404))


# ------------------------------------------------------------------ SearXNG

SEARXNG_CONFIG = {
    "categories": ["general", "news", "science"],
    "engines": [
        {"name": "duckduckgo", "categories": ["general"], "enabled": True, "time_range_support": True},
        {"name": "brave", "categories": ["general", "news"], "enabled": True, "time_range_support": True},
        {"name": "wikipedia", "categories": ["general"], "enabled": True, "time_range_support": False},
        {"name": "yandex", "categories": ["general"], "enabled": True, "time_range_support": False},
        {"name": "arxiv", "categories": ["science"], "enabled": True, "time_range_support": True},
    ],
    "plugins": [{"name": "oa_doi_rewrite", "enabled": False}, {"name": "tracker_url_remover", "enabled": True}],
    "doi_resolvers": ["oadoi.org", "doi.org", "sci-hub.se"],
    "default_doi_resolver": "oadoi.org",
}


class FakeSearxng(Loopback):
    """SearXNG's `/search?format=json` and `/config`, as its API documents them."""

    def __init__(self) -> None:
        self.results = [
            {
                "url": "https://docs.example.com/inspections",
                "title": "Inspections — Example docs",
                "content": "An owner may inspect twice a year.",
                "engine": "duckduckgo",
                "engines": ["duckduckgo", "brave"],
                "score": 2.0,
                "category": "general",
                "publishedDate": "2026-10-01T00:00:00",
            },
            {
                "url": "https://other.org/rent",
                "title": "Renting guide",
                "content": "Notice periods explained.",
                "engine": "brave",
                "engines": ["brave"],
                "score": 1.0,
                "category": "general",
                "publishedDate": None,
            },
            {
                "url": "https://www.example.com/blog/notice",
                "title": "Notice",
                "content": "Seven days.",
                "engine": "wikipedia",
                "engines": ["wikipedia"],
                "score": 0.5,
                "category": "general",
            },
        ]
        self.extra: dict[str, Any] = {}
        self.respond_json = True  # False: an instance whose settings.yml lacks `json` under search.formats
        super().__init__(self.respond)

    def respond(self, request: dict) -> Answer:
        if request["path"] == "/config":
            return as_json(SEARXNG_CONFIG)
        if request["path"] == "/search":
            if request["query"].get("format") != "json" or not self.respond_json:
                return 403, {"content-type": "text/html"}, b"<h1>403 Forbidden</h1>"
            data = {
                "query": request["query"].get("q"),
                "number_of_results": 0,
                "results": self.results,
                "answers": [],
                "corrections": [],
                "infoboxes": [],
                "suggestions": [],
                "unresponsive_engines": [],
            }
            data.update(self.extra)
            return as_json(data)
        return 404, {}, b""


# ------------------------------------------------------------------ Brave, Tavily, Jina


class FakeBrave(Loopback):
    """Brave Search API: GET /res/v1/web/search with X-Subscription-Token."""

    KEY = "BSA-test-key-123456"

    def __init__(self) -> None:
        super().__init__(self.respond)

    def respond(self, request: dict) -> Answer:
        if request["path"] != "/res/v1/web/search" or request["method"] != "GET":
            return as_json({"error": "not found"}, 404)
        if request["headers"].get("x-subscription-token") != self.KEY:
            return as_json(
                {
                    "type": "ErrorResponse",
                    "error": {
                        "code": "SUBSCRIPTION_TOKEN_INVALID",
                        "status": 401,
                        "detail": "The provided subscription token is invalid.",
                    },
                },
                401,
            )
        return as_json(
            {
                "type": "search",
                "query": {"original": request["query"]["q"]},
                "web": {
                    "type": "search",
                    "results": [
                        {
                            "title": "Owner <strong>inspections</strong>",
                            "url": "https://docs.example.com/a",
                            "description": "Twice a <strong>year</strong>.",
                            "extra_snippets": ["With notice."],
                            "page_age": "2026-09-01T10:00:00",
                            "type": "search_result",
                        },
                        {
                            "title": "Elsewhere",
                            "url": "https://elsewhere.net/b",
                            "description": "Not on the site.",
                            "type": "search_result",
                        },
                    ],
                },
            }
        )


class FakeTavily(Loopback):
    """Tavily: POST /search with `Authorization: Bearer tvly-…`, JSON body."""

    KEY = "tvly-test-key-abcdef"

    def __init__(self) -> None:
        super().__init__(self.respond)

    def respond(self, request: dict) -> Answer:
        if request["path"] != "/search" or request["method"] != "POST":
            return as_json({"detail": {"error": "not found"}}, 404)
        if request["headers"].get("authorization") != f"Bearer {self.KEY}":
            return as_json({"detail": {"error": "Unauthorized: missing or invalid API key."}}, 401)
        body = json.loads(request["body"])
        return as_json(
            {
                "query": body["query"],
                "answer": None,
                "images": [],
                "response_time": 0.4,
                "results": [
                    {
                        "title": "Tenancy rules",
                        "url": "https://fairtrading.example.gov/rules",
                        "content": "Inspections: twice.",
                        "score": 0.91,
                        "raw_content": None,
                        "published_date": "2026-08-02",
                    },
                ],
            }
        )


class FakeJina(Loopback):
    """Jina Reader: GET /<url> with Accept: application/json → {code, status, data: {title, url, content}}."""

    def __init__(self) -> None:
        super().__init__(self.respond)

    def respond(self, request: dict) -> Answer:
        target = request["raw_path"][1:]
        return as_json(
            {
                "code": 200,
                "status": 20000,
                "data": {
                    "title": "Read by Jina",
                    "url": target,
                    "content": f"# Read by Jina\n\nformat {request['headers'].get('x-return-format')}",
                    "publishedTime": None,
                },
            }
        )


class FakeExa(Loopback):
    """Exa: POST /search and /contents with `x-api-key`."""

    KEY = "exa-test-key-0000"

    def __init__(self) -> None:
        super().__init__(self.respond)

    def respond(self, request: dict) -> Answer:
        if request["headers"].get("x-api-key") != self.KEY:
            return as_json({"requestId": "r1", "error": "Invalid API key", "tag": "INVALID_API_KEY"}, 401)
        body = json.loads(request["body"])
        if request["path"] == "/search":
            return as_json(
                {
                    "requestId": "r2",
                    "resolvedSearchType": "neural",
                    "results": [
                        {
                            "id": "https://arxiv.org/abs/1",
                            "title": "A paper",
                            "url": "https://arxiv.org/abs/1",
                            "publishedDate": "2026-07-01T00:00:00.000Z",
                            "author": "A. Author",
                            "highlights": ["the key sentence", "another one"],
                            "highlightScores": [0.9, 0.8],
                        }
                    ],
                }
            )
        if request["path"] == "/contents":
            return as_json(
                {
                    "requestId": "r3",
                    "results": [{"id": u, "url": u, "title": "Page", "text": f"text of {u}"} for u in body["urls"]],
                    "statuses": [{"id": u, "status": "success", "source": "crawled"} for u in body["urls"]],
                }
            )
        return as_json({"error": "not found"}, 404)


class FakeSerper(Loopback):
    """Serper: POST /search with `X-API-KEY`."""

    KEY = "serper-test-key-1111"

    def __init__(self) -> None:
        super().__init__(self.respond)

    def respond(self, request: dict) -> Answer:
        if request["headers"].get("x-api-key") != self.KEY:
            return as_json({"message": "Unauthorized.", "statusCode": 403}, 403)
        return as_json(
            {
                "searchParameters": json.loads(request["body"]),
                "organic": [
                    {
                        "title": "Ranked first",
                        "link": "https://first.example.com/",
                        "snippet": "The top result.",
                        "date": "Sep 1, 2026",
                        "position": 1,
                    }
                ],
                "answerBox": {"answer": "Seven days"},
            }
        )


class FakeFirecrawl(Loopback):
    """Firecrawl: POST /v2/scrape with `Authorization: Bearer fc-…`."""

    KEY = "fc-test-key-2222"

    def __init__(self) -> None:
        super().__init__(self.respond)

    def respond(self, request: dict) -> Answer:
        if request["headers"].get("authorization") != f"Bearer {self.KEY}":
            return as_json({"success": False, "error": "Unauthorized: Invalid token"}, 401)
        body = json.loads(request["body"])
        data = {"metadata": {"title": "Page", "url": body["url"], "sourceURL": body["url"], "statusCode": 200}}
        for fmt in body["formats"]:
            data[fmt] = f"{fmt} of {body['url']}"
        return as_json({"success": True, "data": data})


class FakeTavilyExtract(Loopback):
    """Tavily Extract: POST /extract with `Authorization: Bearer tvly-…`."""

    KEY = "tvly-test-key-3333"

    def __init__(self) -> None:
        super().__init__(self.respond)

    def respond(self, request: dict) -> Answer:
        if request["headers"].get("authorization") != f"Bearer {self.KEY}":
            return as_json({"detail": {"error": "Unauthorized: missing or invalid API key."}}, 401)
        body = json.loads(request["body"])
        good = [u for u in body["urls"] if "broken" not in u]
        return as_json(
            {
                "results": [{"url": u, "raw_content": f"{body.get('format')} of {u}", "images": []} for u in good],
                "failed_results": [{"url": u, "error": "Failed to fetch url"} for u in body["urls"] if u not in good],
                "response_time": 0.2,
            }
        )
