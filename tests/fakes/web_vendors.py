"""Loopback stand-ins for every search, fetch, crawl, map, extract, answer and monitor vendor of the spec.

Each speaks its vendor's documented wire — paths, the place its key travels
(a header, HTTP basic, or the query for SerpApi and ScrapingBee), request
fields and the response shape the spec's tables quote — and answers 401 when
the key is not where that vendor expects it. `seen` records every request, so
a test can assert what went out and that a key reached this host and no other.
`refuse = 402` (or 401, 429) makes the next answers a refusal.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from tests.web.fakes import Answer, Loopback, as_json, html

BASIC_PAIRS = {"dataforseo": "rank-desk@example.com:dfs-password-0123", "zyte": "zyte-key-0123456789:"}
# Where each vendor reads its key: ("header", name, prefix) or ("query", name, "") or ("basic", "", "").
KEY_PLACES: dict[str, tuple[str, str, str]] = {
    "brave": ("header", "x-subscription-token", ""),
    "exa": ("header", "x-api-key", ""),
    "tavily": ("header", "authorization", "Bearer "),
    "parallel": ("header", "x-api-key", ""),
    "you": ("header", "x-api-key", ""),
    "jina": ("header", "authorization", "Bearer "),
    "firecrawl": ("header", "authorization", "Bearer "),
    "perplexity": ("header", "authorization", "Bearer "),
    "linkup": ("header", "authorization", "Bearer "),
    "serper": ("header", "x-api-key", ""),
    "serpapi": ("query", "api_key", ""),
    "dataforseo": ("basic", "", ""),
    "zyte": ("basic", "", ""),
    "scrapingbee": ("query", "api_key", ""),
    "hyperbrowser": ("header", "x-api-key", ""),
}
# Paths a vendor reads with a bearer token instead of its usual header (Parallel's chat API, You.com's agents).
BEARER_PATHS = {("parallel", "/chat/completions"), ("you", "/v1/agents/runs")}
PAGE_HTML = "<html><head><title>Rendered</title></head><body><main><h1>Rendered page</h1><p>Behind the wall.</p></main></body></html>"
PDF = b"%PDF-1.7\n1 0 obj <</Type /Catalog>> endobj\n\x00\xff\xfe binary\n%%EOF\n"
# What the site behind Zyte answers a plain request with, by the URL's extension: (content type, bytes).
ZYTE_SITE = {
    "pdf": ("application/pdf", PDF),
    "html": (
        "text/html; charset=utf-8",
        b"<html><head><title>Own</title></head><body><main><h1>The site's own HTML</h1>"
        b"<p>Not rendered.</p></main></body></html>",
    ),
}


def vault_value(name: str) -> str:
    """What the vault holds for `name`: a plain key, or the encoded pair for a basic-auth vendor."""
    if name in BASIC_PAIRS:
        return base64.b64encode(BASIC_PAIRS[name].encode()).decode()
    return f"{name}-key-0123456789"


class Vendor(Loopback):
    def __init__(self, name: str) -> None:
        self.name = name
        self.key = vault_value(name)
        self.refuse: int | None = None
        self.crawl_polls = 0
        self.monitor_events: list[dict] = []
        super().__init__(self._respond)

    def _authorised(self, request: dict) -> bool:
        how, field, prefix = KEY_PLACES[self.name]
        headers = request["headers"]
        if (self.name, request["path"]) in BEARER_PATHS:
            return headers.get("authorization") == f"Bearer {self.key}"
        if how == "query":
            return request["query"].get(field) == self.key
        if how == "basic":
            return headers.get("authorization") == f"Basic {self.key}"
        if self.name == "jina" and request["path"] != "/" and "authorization" not in headers:
            return True  # the Reader reads without a key, 20 a minute
        return headers.get(field) == prefix + self.key

    def _respond(self, request: dict) -> Answer:
        if self.refuse:
            return self.refuse, {"content-type": "application/json", "retry-after": "30"}, b'{"error": "refused"}'
        if not self._authorised(request):
            return as_json({"error": "invalid api key"}, 401)
        body: Any = json.loads(request["body"]) if request["body"].strip()[:1] in ("{", "[") else {}
        return getattr(self, "_" + self.name)(request, body)

    # ------------------------------------------------------------ search-first vendors
    def _brave(self, r: dict, b: Any) -> Answer:
        return as_json(
            {
                "web": {
                    "results": [
                        {
                            "title": "<strong>Brave</strong> hit",
                            "url": "https://brave.example.com/1",
                            "description": "From Brave's own index",
                            "extra_snippets": ["more"],
                            "page_age": "2026-11-01T00:00:00",
                        }
                    ]
                }
            }
        )

    def _exa(self, r: dict, b: Any) -> Answer:
        if r["path"] == "/contents":
            return as_json(
                {
                    "results": [{"url": u, "id": u, "title": "t", "text": f"text of {u}"} for u in b["urls"]],
                    "statuses": [{"id": u, "status": "success", "source": "crawled"} for u in b["urls"]],
                }
            )
        if r["path"] == "/answer":
            return as_json(
                {
                    "answer": "Twice a year, with notice.",
                    "citations": [
                        {
                            "url": "https://exa.example.com/rules",
                            "title": "The rules",
                            "publishedDate": "2026-10-01T00:00:00.000Z",
                        }
                    ],
                }
            )
        return as_json(
            {
                "results": [
                    {
                        "title": "Exa hit",
                        "url": "https://exa.example.com/1",
                        "highlights": ["by meaning"],
                        "summary": "s",
                        "publishedDate": "2026-07-01T00:00:00.000Z",
                    }
                ]
            }
        )

    def _tavily(self, r: dict, b: Any) -> Answer:
        if r["path"] == "/extract":
            return as_json(
                {
                    "results": [{"url": u, "raw_content": f"markdown of {u}"} for u in b["urls"] if "broken" not in u],
                    "failed_results": [{"url": u, "error": "Failed to fetch url"} for u in b["urls"] if "broken" in u],
                }
            )
        if r["path"] == "/crawl":
            return as_json(
                {
                    "base_url": b["url"],
                    "results": [
                        {"url": f"{b['url'].rstrip('/')}/p{n}", "raw_content": f"# page {n}"} for n in range(1, 4)
                    ],
                }
            )
        if r["path"] == "/map":
            return as_json({"base_url": b["url"], "results": [f"{b['url'].rstrip('/')}/p{n}" for n in range(1, 6)]})
        out: dict = {
            "query": b["query"],
            "results": [
                {
                    "title": "Tavily hit",
                    "url": "https://tavily.example.com/1",
                    "content": "own crawler",
                    "score": 0.9,
                    "published_date": "2026-11-02",
                }
            ],
        }
        if b.get("include_answer"):
            out["answer"] = "Tavily says twice a year."
        return as_json(out)

    def _parallel(self, r: dict, b: Any) -> Answer:
        if r["path"] == "/v1/extract":
            return as_json(
                {
                    "extract_id": "ex_1",
                    "results": [
                        {"url": u, "title": "t", "full_content": f"# full {u}", "excerpts": []}
                        for u in b["urls"]
                        if "broken" not in u
                    ],
                    "errors": [{"url": u, "error_type": "fetch_failed"} for u in b["urls"] if "broken" in u],
                }
            )
        if r["path"] == "/chat/completions":
            return as_json(
                {
                    "id": "c1",
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Parallel's answer."}}],
                    "basis": [
                        {
                            "field": "content",
                            "citations": [{"url": "https://parallel.example.com/src", "title": "A source"}],
                        }
                    ],
                }
            )
        if r["path"] == "/v1alpha/monitors" and r["method"] == "POST":
            return as_json({"monitor_id": "monitor_1", "query": b["query"], "cadence": b.get("cadence")})
        if r["path"].startswith("/v1alpha/monitors/") and r["path"].endswith("/events"):
            return as_json({"events": self.monitor_events})
        return as_json(
            {
                "search_id": "s1",
                "results": [
                    {
                        "title": f"Parallel hit {n}",
                        "url": f"https://{'www.example.com' if n % 2 else 'other.example.org'}/{n}",
                        "excerpts": [f"excerpt {n}"],
                        "publish_date": "2026-09-09",
                    }
                    for n in range(1, 21)
                ][: b["max_results"]],
            }
        )

    def _you(self, r: dict, b: Any) -> Answer:
        """Search: GET /v1/search with its options in the query (or POST with them as a JSON body), X-API-Key;
        the Express agent: POST /v1/agents/runs with a bearer token. Anything else is refused as You.com does."""
        if r["path"] == "/v1/agents/runs":
            if r["method"] != "POST" or b.get("agent") != "express" or not isinstance(b.get("input"), str):
                return as_json({"detail": "agent must be 'express' and input a string"}, 422)
            return as_json(
                {
                    "agent": "express",
                    "input": [{"role": "user", "content": b["input"]}],
                    "output": [
                        {
                            "type": "web_search.results",
                            "content": [
                                {
                                    "source_type": "web_search",
                                    "url": "https://you.example.com/src",
                                    "citation_uri": "https://you.example.com/src",
                                    "title": "You source",
                                    "snippet": "s",
                                }
                            ],
                        },
                        {"type": "message.answer", "text": "You.com's answer."},
                    ],
                }
            )
        if r["path"] != "/v1/search" or r["method"] not in ("GET", "POST"):
            return as_json({"detail": "Not Found"}, 404)
        asked = r["query"] if r["method"] == "GET" else b
        count = str(asked.get("count", "10"))
        freshness = str(asked.get("freshness", "day"))
        if (
            not asked.get("query")
            or not count.isdigit()
            or not 1 <= int(count) <= 100
            or not (
                freshness in ("day", "week", "month", "year")
                or re.fullmatch(r"\d{4}-\d\d-\d\dto\d{4}-\d\d-\d\d", freshness)
            )
        ):
            return as_json(
                {
                    "detail": "query is required; count is 1-100; freshness is day, week, month, year or "
                    "YYYY-MM-DDtoYYYY-MM-DD"
                },
                422,
            )
        web = [
            {
                "title": "You hit",
                "url": "https://you.example.com/1",
                "description": "",
                "snippets": ["a snippet"],
                "page_age": "2026-08-08T10:00:00",
                "authors": [],
                "favicon_url": "https://ydc-index.io/favicon",
            },
            {
                "title": "You second",
                "url": "https://you.example.com/2",
                "description": "Its own description",
                "snippets": ["not this one"],
                "page_age": "2026-08-09T10:00:00",
            },
        ]
        return as_json(
            {
                "results": {"web": web[: int(count)], "news": []},
                "metadata": {"query": asked["query"], "search_uuid": "s-1", "latency": 0.1},
            }
        )

    def _jina(self, r: dict, b: Any) -> Answer:
        if r["path"] == "/":
            return as_json(
                {
                    "code": 200,
                    "data": [
                        {
                            "title": "Jina hit",
                            "url": "https://jina.example.com/1",
                            "description": "read already",
                            "content": "the page",
                            "publishedTime": "2026-06-06T00:00:00Z",
                        }
                    ],
                }
            )
        url = r["raw_path"][1:]
        return as_json({"code": 200, "data": {"title": "t", "url": url, "content": f"jina read {url}"}})

    def _firecrawl(self, r: dict, b: Any) -> Answer:
        path = r["path"]
        if path == "/v2/search":
            return as_json(
                {
                    "success": True,
                    "data": {
                        "web": [
                            {
                                "title": "Firecrawl hit",
                                "url": "https://firecrawl.example.com/1",
                                "description": "open-source core",
                            }
                        ]
                    },
                }
            )
        if path == "/v2/scrape":
            fmt = b["formats"][0]
            if isinstance(fmt, dict) and fmt.get("type") == "json":
                return as_json(
                    {
                        "success": True,
                        "data": {
                            "json": {"name": "Harbour flat", "asked": fmt.get("prompt")},
                            "metadata": {"url": b["url"], "statusCode": 200},
                        },
                    }
                )
            if any(isinstance(f, dict) and f.get("type") == "changeTracking" for f in b["formats"]):
                return as_json(
                    {
                        "success": True,
                        "data": {
                            "markdown": "# now",
                            "metadata": {"statusCode": 200},
                            "changeTracking": {
                                "previousScrapeAt": "2026-11-30T00:00:00Z",
                                "changeStatus": "changed",
                                "visibility": "visible",
                                "diff": {"text": "--- a\n+++ b\n-old line\n+new line\n"},
                            },
                        },
                    }
                )
            return as_json(
                {
                    "success": True,
                    "data": {fmt: f"{fmt} of {b['url']}", "metadata": {"url": b["url"], "statusCode": 200}},
                }
            )
        if path == "/v2/crawl":
            self.crawl_url = b["url"]
            return as_json({"success": True, "id": "crawl-1", "url": f"{self.url}/v2/crawl/crawl-1"})
        if path == "/v2/crawl/crawl-1":
            self.crawl_polls += 1
            if self.crawl_polls == 1:
                return as_json({"status": "scraping", "total": 3, "completed": 1, "data": []})
            if r["query"].get("skip") == "2":
                return as_json(
                    {
                        "status": "completed",
                        "total": 3,
                        "completed": 3,
                        "data": [{"markdown": "# three", "metadata": {"sourceURL": self.crawl_url + "three"}}],
                    }
                )
            return as_json(
                {
                    "status": "completed",
                    "total": 3,
                    "completed": 3,
                    "next": f"{self.url}/v2/crawl/crawl-1?skip=2",
                    "data": [
                        {"markdown": "# one", "metadata": {"sourceURL": self.crawl_url}},
                        {"markdown": "# two", "metadata": {"sourceURL": self.crawl_url + "two"}},
                    ],
                }
            )
        if path == "/v2/map":
            return as_json(
                {"success": True, "links": [{"url": f"{b['url'].rstrip('/')}/{n}", "title": str(n)} for n in range(3)]}
            )
        return as_json({"error": "no such path"}, 404)

    def _perplexity(self, r: dict, b: Any) -> Answer:
        if r["path"] == "/chat/completions":
            return as_json(
                {
                    "id": "p1",
                    "model": "sonar",
                    "choices": [{"message": {"role": "assistant", "content": "Sonar's answer."}}],
                    "search_results": [
                        {
                            "title": "Perplexity source",
                            "url": "https://perplexity.example.com/src",
                            "date": "2026-10-10",
                        }
                    ],
                }
            )
        return as_json(
            {
                "id": "s1",
                "results": [
                    {
                        "title": "Perplexity hit",
                        "url": "https://perplexity.example.com/1",
                        "snippet": "its own crawl",
                        "date": "2026-10-01",
                        "last_updated": "2026-10-02",
                    }
                ],
            }
        )

    def _linkup(self, r: dict, b: Any) -> Answer:
        if b.get("outputType") == "sourcedAnswer":
            return as_json(
                {
                    "answer": "Linkup's answer.",
                    "sources": [{"name": "Linkup source", "url": "https://linkup.example.com/src", "snippet": "s"}],
                }
            )
        return as_json(
            {
                "results": [
                    {
                        "type": "text",
                        "name": "Linkup hit",
                        "url": "https://linkup.example.com/1",
                        "content": "agent-shaped",
                    },
                    {"type": "image", "name": "a picture", "url": "https://linkup.example.com/i.png"},
                ]
            }
        )

    def _serper(self, r: dict, b: Any) -> Answer:
        return as_json(
            {
                "organic": [
                    {
                        "title": "Serper hit",
                        "link": "https://serper.example.com/1",
                        "snippet": "ranked",
                        "date": "Sep 1, 2026",
                        "position": 1,
                    }
                ]
            }
        )

    def _serpapi(self, r: dict, b: Any) -> Answer:
        return as_json(
            {
                "search_metadata": {"status": "Success"},
                "organic_results": [
                    {
                        "position": 1,
                        "title": "SerpApi hit",
                        "link": "https://serpapi.example.com/1",
                        "snippet": "80+ engines",
                        "date": "Aug 2, 2026",
                    }
                ],
            }
        )

    def _dataforseo(self, r: dict, b: Any) -> Answer:
        items = [
            {"type": "featured_snippet", "title": "not organic", "url": "https://x.example.com/"},
            {
                "type": "organic",
                "rank_group": 2,
                "title": "Second",
                "url": "https://dfs.example.com/2",
                "description": "two",
            },
            {
                "type": "organic",
                "rank_group": 1,
                "title": "First",
                "url": "https://dfs.example.com/1",
                "description": "one",
            },
        ]
        return as_json(
            {
                "status_code": 20000,
                "tasks": [
                    {
                        "status_code": 20000,
                        "status_message": "Ok.",
                        "data": b[0],
                        "result": [{"keyword": b[0]["keyword"], "items": items}],
                    }
                ],
            }
        )

    # ------------------------------------------------------------ fetch and extract vendors
    def _zyte(self, r: dict, b: Any) -> Answer:
        if b.get("customAttributes"):
            return as_json(
                {
                    "url": b["url"],
                    "statusCode": 200,
                    "customAttributes": {"values": {k: f"zyte {k}" for k in b["customAttributes"]}},
                }
            )
        if b.get("article"):
            return as_json(
                {"url": b["url"], "statusCode": 200, "article": {"headline": "Zyte article", "url": b["url"]}}
            )
        if b.get("httpResponseBody") and b.get("browserHtml"):  # Zyte: one or the other, never both
            return (
                400,
                {"content-type": "application/problem+json"},
                json.dumps(
                    {
                        "type": "/request/invalid",
                        "title": "Invalid Request",
                        "status": 400,
                        "detail": "browserHtml and httpResponseBody cannot be combined",
                    }
                ).encode(),
            )
        if b.get("httpResponseBody"):  # the site's own answer, base64; its headers when asked
            kind, body = ZYTE_SITE.get(b["url"].rsplit(".", 1)[-1], ZYTE_SITE["html"])
            answer = {"url": b["url"], "statusCode": 200, "httpResponseBody": base64.b64encode(body).decode()}
            if b.get("httpResponseHeaders"):
                answer["httpResponseHeaders"] = [
                    {"name": "Content-Type", "value": kind},
                    {"name": "Content-Length", "value": str(len(body))},
                ]
            return as_json(answer)
        return as_json({"url": b["url"], "statusCode": 200, "browserHtml": PAGE_HTML})

    def _scrapingbee(self, r: dict, b: Any) -> Answer:
        if r["query"].get("render_js") != "true":
            return html("<p>not rendered</p>")
        return html(PAGE_HTML, headers={"spb-initial-status-code": "200"})

    def _hyperbrowser(self, r: dict, b: Any) -> Answer:
        if r["method"] == "POST":
            self.extract_body = b
            return as_json({"jobId": "job-1"})
        return as_json({"jobId": "job-1", "status": "completed", "data": {"name": "Hyperbrowser row"}})
