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
        allow_private=False,         # settings.FOLDRUN_ALLOW_PRIVATE_URLS
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

Plugging it into the engine (`foldrun/engine/`, owned by the runs helper)
-------------------------------------------------------------------------
Three small edits; `foldrun.web.adapter.engine_tool` builds the `Tool`.

1. ``foldrun/engine/tools/base.py`` — a tool's limit keys may depend on the call::

       limit_keys: list[str] | Callable[[dict], list[str]] = field(default_factory=list)

       def call_limit_keys(self, arguments: dict) -> list[str]:
           return self.limit_keys(arguments) if callable(self.limit_keys) else self.limit_keys

2. ``foldrun/engine/step.py``, in ``_call_tool``: count with the call's keys::

       refusal = counter.check(tool.call_limit_keys(arguments))

3. ``foldrun/engine/step.py``, in ``_prepare_tools``'s loop over ``agent.tool_files``
   (the shelf's tool.md says ``transport: builtin``, ``gallery: true``), before the
   ``else: raise StepFailed(...)``::

       elif transport in ("builtin", "gallery") and tool_file.name == "web":
           from foldrun.web.adapter import engine_tool
           web_tool, web_names = engine_tool(agent, env)
           tools.append(web_tool)
           names += web_names          # resolved with the step's other secrets, missing one fails the step
           continue

   ``engine_tool`` reads ``env.sandbox.root``, ``env.is_test``, ``env.allow_private_urls``,
   ``env.http``, ``env.log``, ``env.host.trace("web", event)``, ``env.secret_values([name])``
   and ``env.on_close(web.close)``. The account's own engine (its SearXNG instance URL) is
   ``engine_tool(agent, env, searxng_url=…)`` when the engine knows the account's setting,
   else the worker's ``FOLDRUN_SEARXNG_URL`` environment variable.

What is built: search (the account's SearXNG over its JSON API, with the
`web.search:` tuning block checked against the instance's `/config`; brave,
tavily, exa and serper with the key filled in here), fetch (foldrun's own:
markdown, text, html, meta, links, raw; up to 20 urls; save=; the connect-time
address guard; jina as a provider), browse (Chromium via Playwright: the
modes text, markdown, html, aria, meta, table, links, screenshot, pdf; the
steps in `browse.BUILT_STEPS`; numbered elements; session and state). What is
not is refused by name, never quietly answered another way.
"""
from __future__ import annotations

from .errors import WebToolError
from .tool import WebTool, resolve_language, resolve_web_block

__all__ = ["WebTool", "WebToolError", "resolve_language", "resolve_web_block"]
