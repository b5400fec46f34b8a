"""A model provider's own search and fetch: a server tool in that provider's request, not a call of ours.

It runs on their machines, inside their tool loop — off the run record and
outside the egress proxy — and only while that provider is the one answering
(the check and the run refuse it otherwise, in the same sentence). Each use is
counted as `web.search` (or `web.fetch`). When the model calls our `web` tool
for that action instead, it is told which tool answers it.
"""

from __future__ import annotations

from ..errors import WebToolError
from .base import NONE, Call, adapter
from .query import Found, Query

# provider -> (where the tool goes in the request, what it is). "tools" is an entry in the request's
# tools list; "plugins" is OpenRouter's plugin list beside it.
SEARCH_TOOLS: dict[str, tuple[str, dict]] = {
    "anthropic": ("tools", {"type": "web_search_20250305", "name": "web_search"}),
    "zai": ("tools", {"type": "web_search_20250305", "name": "web_search"}),  # the same server tool
    "openrouter": ("plugins", {"id": "web"}),
    # Responses-shaped: the translator hands `responses` over as the tool itself on that wire.
    "openai": ("tools", {"name": "web_search", "responses": {"type": "web_search"}}),
    # Chat-shaped: the translator hands `chat` over as the tool; the loop answers its call with its arguments.
    "kimi": (
        "tools",
        {"name": "$web_search", "chat": {"type": "builtin_function", "function": {"name": "$web_search"}}},
    ),
}
FETCH_TOOLS: dict[str, tuple[str, dict]] = {
    "anthropic": ("tools", {"type": "web_fetch_20250910", "name": "web_fetch"}),
}
# The name each server tool's uses carry in the reply, to count them as web.search / web.fetch.
USE_NAMES: dict[str, str] = {"web_search": "search", "$web_search": "search", "web_fetch": "fetch"}
PAGES = {
    "anthropic": "https://docs.claude.com/en/docs/agents-and-tools/tool-use/web-search-tool",
    "zai": "https://docs.z.ai/guides/tools/web-search",
    "openrouter": "https://openrouter.ai/docs/features/web-search",
    "openai": "https://platform.openai.com/docs/guides/tools-web-search",
    "kimi": "https://platform.moonshot.ai/docs/guide/use-web-search",
}


def server_tools(tool: object) -> list[tuple[str, dict]]:
    """The server tools this step's `web:` block hands to the model's own request."""
    out = []
    for action, table in (("search", SEARCH_TOOLS), ("fetch", FETCH_TOOLS)):
        try:
            provider = tool.provider_for(action)  # type: ignore[attr-defined]
        except WebToolError:
            continue
        if provider and provider.get("kind") == "model" and provider["name"] in table:
            out.append(table[provider["name"]])
    return out


def _elsewhere(call: Call) -> WebToolError:
    where, definition = (SEARCH_TOOLS if call.adapter.action == "search" else FETCH_TOOLS)[call.name]
    name = (
        definition.get("name") or (definition.get("function") or {}).get("name") or f"the {definition.get('id')} plugin"
    )
    return WebToolError(
        f"web.{call.adapter.action}: this agent's {call.adapter.action} is {call.name}'s own, on its "
        f"servers — use {name}, which {call.name} runs inside its own tool loop; web "
        f"action={call.adapter.action} does not reach it"
    )


for _name in SEARCH_TOOLS:

    @adapter("search", _name, base="", auth=NONE, page=PAGES[_name], matched="2026-12-01")
    def _search(call: Call, q: Query) -> Found:
        raise _elsewhere(call)


for _name in FETCH_TOOLS:

    @adapter(
        "fetch",
        _name,
        base="",
        auth=NONE,
        page="https://docs.claude.com/en/docs/agents-and-tools/tool-use/web-fetch-tool",
        matched="2026-12-01",
    )
    def _fetch(call: Call, urls: list[str], mode: str) -> list[tuple[str, str]]:
        raise _elsewhere(call)
