"""`web action=answer`, foldrun's own: a question in, the passages that answer it out.

No prose and no second model: the agent is already the model. The pages come
from the account's search (or whichever search the agent names), or from
`urls=`; each is read once, cut into passages, and the passages are ranked by
BM25 — the same engine `search_files` uses (foldrun/engine/search.py). Each
passage comes back quoted, with its source URL.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

from foldrun.engine.search import Bm25

from . import pages, site
from .errors import WebToolError
from .shapes import check_url
from .providers.actions import question_arg
from . import search
from .providers import search_via

if TYPE_CHECKING:  # pragma: no cover
    from .tool import WebTool

PAGES = 6  # pages read from the search's results
MAX_URLS = 20
SHOWN = 8  # passages returned
PASSAGE_WORDS = 80
# A passage scoring under this share of the best is left out: BM25 matches any word of the question, so an unrelated
# page sharing one common word ("rent") would otherwise come back second.
CUT_OFF = 0.25


def passages_of(markdown: str) -> list[str]:
    """Paragraph-sized passages: blocks joined up to ~80 words, a long block split at sentences."""
    blocks = [b.strip() for b in re.split(r"\n\s*\n", markdown) if b.strip()]
    out: list[str] = []
    current: list[str] = []
    words = 0
    for block in blocks:
        if block.startswith("#") and current:  # a heading starts a passage
            out.append(" ".join(current))
            current, words = [], 0
        for sentence in re.split(r"(?<=[.!?])\s+", block) if len(block.split()) > PASSAGE_WORDS else [block]:
            current.append(" ".join(sentence.split()))
            words += len(sentence.split())
            if words >= PASSAGE_WORDS:
                out.append(" ".join(current))
                current, words = [], 0
    if current:
        out.append(" ".join(current))
    return [p for p in out if len(p.split()) >= 3]


def _urls(tool: "WebTool", args: dict, question: str) -> tuple[list[str], str]:
    many = args.get("urls")
    if many not in (None, "", []):
        if isinstance(many, str):
            many = [u for u in many.replace(",", "\n").split() if u]
        if not isinstance(many, list):
            raise WebToolError("answer urls= must be a list of URLs")
        if len(many) > MAX_URLS:
            raise WebToolError(f"answer urls= takes at most {MAX_URLS} URLs (got {len(many)})")
        return [check_url(u) for u in many], "the pages given"
    found = search_results(tool, question, args)
    if not found:
        raise WebToolError(f"answer: the search for {question!r} found no pages to read")
    return [h.url for h in found[:PAGES]], "the search's top results"


def search_results(tool: "WebTool", query: str, args: dict) -> list:  # noqa: ANN001 - search.Hit
    """The hits of the agent's search for `query`, as `search` would find them."""
    site_only = search.site_domain(args.get("site"))
    when = search.time_range_of(args.get("time_range"))  # day, week, month or year — refused in search's words
    tag = search.language_tag(args.get("language") or tool.language, args.get("region") or tool.region)
    provider = tool.provider_for("search")
    if provider is None:
        found = search.SearxngEngine(tool).search(
            query, count=10, site=site_only, time_range=when, language=tag, args={}
        )
    else:
        found = search_via(tool, provider, query, count=10, site=site_only, time_range=when, language=tag)
    hits = found.hits
    if site_only:
        hits = [h for h in hits if search.on_site(h.url, site_only)]
    return hits


def run(tool: "WebTool", args: dict) -> str:
    question = question_arg(args, "answer")
    urls, whence = _urls(tool, args, question)

    def read(url: str) -> tuple[str, str | None, str]:
        got = site.get(tool, url)
        if got.location:
            got = site.get(tool, got.location)
        if got.error:
            return url, got.error, ""
        if got.status >= 400:
            return url, f"{url}: HTTP {got.status}", ""
        if got.is_html():
            return url, None, pages.to_markdown(got.text, url)
        if got.media_type.startswith("text/") or got.media_type.endswith(("json", "xml")):
            return url, None, got.text
        return url, f"{url} is {got.media_type or 'not text'}, not a page to read passages from", ""

    with ThreadPoolExecutor(max_workers=min(4, len(urls))) as pool:
        read_pages = list(pool.map(read, urls))
    engine = Bm25()
    items: list[tuple[str, str]] = []
    for url, _error, text in read_pages:
        for n, passage in enumerate(passages_of(text)):
            items.append((f"{n}\t{url}", passage))
    engine.put_many(items)
    ranked = engine.query(question, SHOWN, snippet_tokens=64)
    floor = ranked[0]["score"] * CUT_OFF if ranked else 0.0
    hits = [hit for hit in ranked if hit["score"] >= floor]
    cut = len(ranked) - len(hits)
    problems = [error for _u, error, _t in read_pages if error]
    tool.emit(
        {
            "event": "answer",
            "question": question,
            "pages": len(urls) - len(problems),
            "passages": len(items),
            "shown": len(hits),
            "cut": cut,
        }
    )
    read_count = len(urls) - len(problems)
    lines = [
        f"Passages that answer {question!r}, best first — BM25 over {len(items)} passages of {read_count} "
        f"page{'s' if read_count != 1 else ''} ({whence}), each with its score; a passage under a quarter of "
        f"the best score is left out; quoted as the pages say it, no model wrote this:"
    ]
    if not hits:
        lines.append("no passage on those pages matches the question's words")
    for rank, hit in enumerate(hits, 1):
        url = hit["key"].split("\t", 1)[1]
        lines.append(f'{rank}. "{engine.body(hit["key"])}"')
        lines.append(f"   — {url} (score {hit['score']:.2f})")
    if cut:
        lines.append(
            f"left out: {cut} passage{'s' if cut != 1 else ''} scoring under {floor:.2f}, a quarter of the best"
        )
    for problem in problems:
        lines.append(f"not read: {problem}")
    return "\n".join(lines)
