"""The gallery `web` tool: search, fetch and browse (spec/tools.md, "Reaching the web").

No Django here: it runs on workers and on laptops alike.

The entry point
---------------
::

    from foldrun.web import WebTool, WebToolError

    web = WebTool(
        config,                      # the agent's resolved `web:` block ({} when absent) — resolve_web_block()
        http=client,                 # the shared httpx.Client (account engine + provider APIs)
        sandbox=Path(...),           # the step's agent directory: save=, screenshots, state stay inside
        allow_private=False,         # the install's policy: foldrun.net.allows_private()
        test_mode=False,             # a test run: every action fails closed and says so
        trace=lambda event: ...,     # one dict per event, never a secret: {"event": "fetch", "url": …}
        log=lambda line: ...,        # a run-log line (optional; else a trace event {"event": "log"})
        secret=lambda name: value,   # a provider key by vault NAME, resolved host-side
        language="en-AU", region=None,   # the cascaded language:/region: — resolve_language()
        searxng_url="http://…",      # the account's own engine (its SearXNG instance URL)
    )
    web.schema()          # {"name": "web", "description", "input_schema"} — from the shelf's tool.md args
    web.call(args)        # -> str, the text the model reads; raises WebToolError(message) the model sees
    web.limit_keys(args)  # ["web", "web.fetch"]: one call is one count, even when fetch reads 20 urls
    web.writes(args)      # True for a browse that clicks/fills/… or an action a paid provider answers
    web.secret_names()    # vault names the block's providers need (e.g. ["BRAVE_SEARCH_API_KEY"])
    web.close()           # at step end: closes the step's browser contexts (and a browser it launched)

Plugging it into the engine
---------------------------
``foldrun.web.adapter`` registers ``web`` with the engine's tool registry
(``register_gallery_tool("web", plan_web)``; the registry's loader imports the adapter). The plan
builds the ``Tool`` with ``engine_tool(agent, ctx)`` and hands back the vault names it needs, which
the step resolves with its other secrets (a missing one fails the step). A tool's limit keys may
depend on the call (``Tool.limit_keys`` may be a callable). ``engine_tool`` reads of the step's
``ToolContext`` only ``sandbox.root``, ``is_test``, ``allow_private_urls``, ``http``, ``log``,
``host.trace("web", event)``, ``secret_values([name])`` and ``on_close(web.close)``; the account's
own engine (its SearXNG URL) is ``engine_tool(agent, ctx, searxng_url=…)`` when known, else the
worker's ``FOLDRUN_SEARXNG_URL``.

What is built
-------------
search   the account's own engine (SearXNG over `/search?format=json`; the `web.search:` block's
         engines, exclude_engines, categories, safesearch, time_range, timeout, plugins and
         doi_resolver, checked against the instance's `/config`; answers, infoboxes, corrections,
         suggestions and engines that did not answer printed); search APIs brave, tavily, exa and
         serper with the key filled in here. count, site (a domain, also checked on what comes
         back), time_range, language + region, page/engines/categories for the own engine only.
fetch    foldrun's own: markdown (default), text, html, meta, links, raw; url or urls (≤ 20, one
         count); save= inside the agent directory; Accept-Language from the language; timeouts;
         a 10 MB cap; the connect-time address guard (every address checked, the socket opened
         to the checked one, each redirect hop too); credentials in a URL sent as basic auth and
         never echoed; a page that builds itself with JavaScript names browse. APIs: jina,
         firecrawl, exa (live), tavily extract.
browse   Chromium via Playwright's sync API, launched on demand — one per thread (Playwright's sync
         driver allows one), shared by the thread's WebTools and closed when the last of them
         closes at step end, or when idle; a context per call, or per `session` for the step (its storage also
         in outputs/.browser/<session>/), `state` across runs (state/browser/<name>.json, sealed with AES-256-GCM under a
         state_key); modes
         text, markdown, html, aria (numbered, `"@e4"` found again by role and name), meta,
         table, network, capture, console, diff, feed, a11y (axe-core), vitals, links, map, crawl,
         webmcp, react,
         screenshot, pdf; steps in `browse.BUILT_STEPS`; claims
         (expect step, expect=, if, confirm=); identity, device, locale, timezone, user_agent,
         headers, cookies and auth from secrets, block, trace and har, dialogs, login from a credential secret, secret
         fills redacted; allowed_domains and deny as locks; every connection through a guard
         proxy (loopback/private refused unless allowed, redirect hops included).

crawl    foldrun's own (crawl.py): plain HTTP, same site, robots.txt (protego), 4 at a time, a wire
         error/5xx/429 tried twice, outputs/crawl/<page>.md + index.txt, limit 50 (≤ 5,000), the cursor in
         outputs/crawl/.cursor.json or state/crawl/ (state=true) so the same call resumes.
map      sitemap.py: robots.txt Sitemap: lines, indexes, gzip (ultimate-sitemap-parser through the guarded
         client), else the links of its pages; same host; limit 500; outputs/map.txt.
extract  extract.py: each= + fields= (selectolax, `a@href`), else JSON-LD/microdata/OpenGraph (extruct);
         schema=/prompt= refused (they need an extract provider); outputs/extracted.json.
answer   answer.py: the search's pages or urls=, cut into passages, ranked by the engine's one BM25
         (foldrun/engine/search.py), quoted with their URLs — no prose.
monitor  monitor.py: a page's lines added/removed, or a question's new results; baselines in state/monitor/.

What is not (each refused by name, never answered another way): an engine this machine's
engines.json lacks (browse/engines.py; chrome falls back to Chromium and says so), and a setting
an engine cannot honour (browse/limits.py, the one table check and the call read). Browse's own
modes, steps and settings are listed by its registry (browse/registry.py) and limits table.
"""

from __future__ import annotations

from .errors import WebToolError
from .tool import WebTool, resolve_language, resolve_web_block

__all__ = ["WebTool", "WebToolError", "resolve_language", "resolve_web_block"]
