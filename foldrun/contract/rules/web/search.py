"""`web.search:`: a search API by name, or the account's own SearXNG tuned
("Tuning the account's own engine")."""

from __future__ import annotations

from typing import Any

from ... import web_engines as W
from ..providers import did_you_mean, shown
from .answers import LONG_FORM_KEYS, AnswerChecks
from .base import HOST_RE, as_list


class SearchChecks(AnswerChecks):
    """The `web.search:` block."""

    def check_search(self, value: Any) -> None:
        path = ("web", "search")
        if not isinstance(value, dict):
            self.check_long_or_short("search", value)
            return
        allowed = LONG_FORM_KEYS + W.SEARXNG_KEYS
        for key in value:
            if key in W.SEARXNG_PAGE_ONLY:
                self.error(
                    path + (key,),
                    f"web.search.{key} is a SearXNG page preference that does nothing to a JSON answer; drop it.",
                    "web.search_unknown_key",
                )
            elif key not in allowed:
                self.error(
                    path + (key,),
                    f"web.search.{key} is not a web.search key{did_you_mean(key, allowed)} "
                    f"The keys are name and key for a search API, or {', '.join(W.SEARXNG_KEYS)} for the account's own engine.",
                    "web.search_unknown_key",
                )
        if "name" in value:
            self.check_long_or_short("search", value, extra_keys=W.SEARXNG_KEYS)
            name = value["name"] if isinstance(value["name"], str) else "it"
            for key in value:
                if key in W.SEARXNG_KEYS:
                    self.error(
                        path + (key,),
                        f"web.search.{key} tunes the account's own engine, and a search API would ignore it; "
                        f"drop it, or drop name: {name} to tune the account's own engine.",
                        "web.search_key_beside_name",
                    )
            return
        if "key" in value:
            self.error(
                path + ("key",),
                "web.search.key needs a name: beside it — a key is for a search API; the account's own engine takes none.",
                "web.search_key_beside_name",
            )
        self.check_searxng(value, path)

    def check_searxng(self, block: dict, path: tuple) -> None:
        lists: dict[str, list[str]] = {}
        for key in ("engines", "exclude_engines", "categories"):
            if key not in block:
                continue
            items = as_list(block[key])
            if items is None:
                self.error(
                    path + (key,),
                    f"web.search.{key} must be a list of names, e.g. {key}: [duckduckgo, google cse].",
                    "web.search_name_shape",
                )
                continue
            kind = "category" if key == "categories" else "engine"
            for index, item in enumerate(items):
                if not isinstance(item, str) or not W.SEARXNG_NAME_RE.match(item):
                    self.error(
                        path + (key, index),
                        f"web.search.{key}: {shown(item)} is not shaped like a SearXNG {kind} name; write it in lower case as SearXNG "
                        f"lists it, e.g. {'general' if kind == 'category' else 'duckduckgo or google cse'}.",
                        "web.search_name_shape",
                    )
            lists[key] = [i for i in items if isinstance(i, str)]
        for both in sorted(set(lists.get("engines", [])) & set(lists.get("exclude_engines", []))):
            self.error(
                path + ("exclude_engines",),
                f"web.search: {both} is both asked for (engines) and excluded (exclude_engines); keep it in one.",
                "web.search_engine_both",
            )
        if "engines" in block and "categories" in block:
            self.warning(
                path + ("categories",),
                "web.search.categories is not used while engines is set — a named engine list beats categories; drop one.",
                "web.search_categories_unused",
            )
        plugins: dict[str, list[str]] = {}
        for key in ("plugins", "exclude_plugins"):
            if key not in block:
                continue
            items = as_list(block[key])
            if items is None:
                self.error(
                    path + (key,),
                    f"web.search.{key} must be a list of plugin ids, e.g. {key}: [oa_doi_rewrite].",
                    "web.search_plugin",
                )
                continue
            for index, item in enumerate(items):
                if item not in W.SEARXNG_PLUGINS:
                    self.error(
                        path + (key, index),
                        f"web.search.{key}: {shown(item)} is not a SearXNG plugin{did_you_mean(item, W.SEARXNG_PLUGINS)} "
                        f"The plugins are {', '.join(W.SEARXNG_PLUGINS)}.",
                        "web.search_plugin",
                    )
            plugins[key] = [i for i in items if isinstance(i, str)]
        for both in sorted(set(plugins.get("plugins", [])) & set(plugins.get("exclude_plugins", []))):
            self.error(
                path + ("exclude_plugins",),
                f"web.search: the plugin {both} is both switched on (plugins) and off (exclude_plugins); keep it in one.",
                "web.search_plugin",
            )
        if "safesearch" in block:
            value = block["safesearch"]
            # YAML 1.1 reads a bare `off` as false.
            if value is not False and (
                isinstance(value, bool) or not isinstance(value, (str, int)) or value not in W.SAFESEARCH
            ):
                self.error(
                    path + ("safesearch",),
                    "web.search.safesearch must be off, moderate or strict (0, 1 or 2).",
                    "web.search_value",
                )
        if "time_range" in block and block["time_range"] not in W.TIME_RANGES:
            self.error(
                path + ("time_range",), "web.search.time_range must be day, week, month or year.", "web.search_value"
            )
        if "timeout" in block:
            value = block["timeout"]
            low, high = W.SEARCH_TIMEOUT_RANGE
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                self.error(
                    path + ("timeout",),
                    "web.search.timeout must be a number of seconds from 0.5 to 30.",
                    "web.search_value",
                )
        if "doi_resolver" in block:
            value = block["doi_resolver"]
            if not isinstance(value, str) or not HOST_RE.match(value) or "." not in value:
                self.error(
                    path + ("doi_resolver",),
                    "web.search.doi_resolver must be a resolver's host name, e.g. doi.org.",
                    "web.search_value",
                )
