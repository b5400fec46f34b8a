"""`web:` blocks (and `language:` / `region:`): the check rules.

spec/tools.md, "Reaching the web" through "Tuning the account's own engine".
A block may sit in AGENTS.md, an agent or a flow; the rules read the raw
frontmatter dict. What each engine and provider can do comes from
`foldrun.contract.web_engines` — the one table the run and the gallery `web`
tool read too, so a pair refused here is refused there in the same words.

    web:
      actions: [search, fetch, crawl]        # what it may do — all eight when absent
      search: exa                            # or {name: exa, key: ${MY_EXA_KEY}}, or a SearXNG block
      fetch: jina
      browse:                                # a vendor's name, or the browser's block
        engine: chrome
        identities: {au-mobile: {device: "Pixel 7", locale: en-AU}}
        via: browserbase
        vendor_session: {proxy: {country: AU}}

Codes start with `web.`.
"""
from __future__ import annotations

import re
import zoneinfo
from typing import Any, Iterator, Mapping
from urllib.parse import urlparse

from .. import web_engines as W
from ..check import Context, rule
from ..desk import AGENT, Desk, Document
from ..findings import Finding
from ..paths import PathError, normalise_path
from .providers import (
    Emitter,
    block_documents,
    closest,
    did_you_mean,
    effective_provider_name,
    key_reference_problem,
    one_of,
    reference_name,
    secret_name_problem,
    shown,
)

WEB_KEYS: tuple[str, ...] = ("actions",) + W.WEB_ACTIONS
LONG_FORM_KEYS: tuple[str, ...] = ("name", "key")

# Keys of the `web.browse:` block: how the browser presents itself, what it may
# do, where it renders. Everything here is a default a call may override,
# except the locks (`allowed_domains`, `deny`).
BROWSE_BLOCK_KEYS: tuple[str, ...] = (
    "engine", "browser", "version", "via", "headless", "user_agent", "device", "locale", "timezone",
    "geolocation", "permissions", "color_scheme", "headers", "proxy", "auth", "block",
    "cookies", "cookie_domain", "storage", "storage_origin", "captcha", "captcha_solver", "dialogs", "dialog_text",
    "live", "live_view", "video", "allowed_domains", "deny", "boundaries", "init", "extensions", "webgpu",
    "ignore_https_errors", "state_key", "identities", "vendor_session", "session",
)
# What one call does stays in the call: there is no block key for any of these.
CALL_ONLY_KEYS: tuple[str, ...] = (
    "url", "wait_for", "mode", "actions", "interactive", "js", "capture", "limit", "expect", "confirm", "routes",
    "identity", "state", "trace", "har", "within", "depth", "compact", "delta", "annotate", "visual",
    "cpu_profile", "max_output", "against",
)
# Who the browser *is*: "Engine, device, locale, timezone, user agent, proxy,
# headers, geolocation, colour scheme, block list and a cookie secret".
IDENTITY_KEYS: tuple[str, ...] = (
    "engine", "browser", "device", "locale", "timezone", "user_agent", "proxy", "headers", "geolocation",
    "color_scheme", "block", "cookies", "cookie_domain",
)
TEXT_KEYS: dict[str, str] = {  # key -> an example value for the message
    "engine": "chrome", "browser": "chrome", "version": "stable", "via": "browserbase",
    "user_agent": '"Mozilla/5.0 (…)"', "device": '"Pixel 7"', "locale": "en-AU", "timezone": "Australia/Sydney",
    "cookies": "MEDIUM_COOKIES", "cookie_domain": ".medium.com", "storage": "SITE_STORAGE",
    "storage_origin": "https://www.example.com", "proxy": "PROXY_AU", "auth": "SITE_BASIC_AUTH",
    "captcha": "CAPSOLVER_KEY", "captcha_solver": "capsolver", "state_key": "BROWSER_STATE_KEY",
    "geolocation": '"-33.87,151.21"', "color_scheme": "dark", "dialogs": "accept", "dialog_text": '"yes"',
}
SECRET_KEYS: tuple[str, ...] = ("cookies", "storage", "proxy", "auth", "captcha", "state_key")
BOOL_KEYS: tuple[str, ...] = ("headless", "live", "live_view", "webgpu", "ignore_https_errors", "boundaries")
# A header whose value is a credential: written without `${NAME}` it is a secret in a file.
CREDENTIAL_HEADERS: tuple[str, ...] = ("authorization", "proxy-authorization", "x-api-key", "api-key", "x-auth-token")

_TAG_RE = re.compile(r"^[A-Za-z]{2,3}(?:-[A-Za-z]{4})?(?:-(?:[A-Za-z]{2}|[0-9]{3}))?$")
_REGION_RE = re.compile(r"^[A-Za-z]{2}$")
_HOST_RE = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
_GEO_RE = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*$")
_REF_IN_TEXT_RE = re.compile(r"\$\{([^}]*)\}")
# The Chrome major a user agent claims: Chrome/154.0.0.0 (CriOS/ on iOS).
_CHROME_MAJOR_RE = re.compile(r"\b(?:Chrome|CriOS)/(\d+)(?:\.|\b)")


def both_of(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _dotted(path: tuple) -> str:
    return ".".join(str(part) for part in path)


def _as_list(value: Any) -> list | None:
    """A list as written, a comma-separated string as its items, else None."""
    if isinstance(value, list):
        return value
    if isinstance(value, str):
        return [item.strip() for item in value.split(",") if item.strip()]
    return None


def _is_tag(value: Any) -> bool:
    return isinstance(value, str) and bool(_TAG_RE.match(value.strip()))


def _is_timezone(value: str) -> bool:
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        return False
    return True


class _WebCheck:
    """One document's `web:` block."""

    def __init__(self, desk: Desk, document: Document, emit: Emitter, platform: Mapping[str, int] | None = None) -> None:
        self.desk = desk
        self.document = document
        self.emit = emit
        self.platform = platform or {}
        self.secret_names: list[tuple[tuple, str]] = []  # (path, NAME) the block reads

    def error(self, path: tuple, message: str, code: str) -> None:
        self.emit(path, "error", message, code)

    def warning(self, path: tuple, message: str, code: str) -> None:
        self.emit(path, "warning", message, code)

    # ------------------------------------------------------------ the block

    def run(self, web: Any) -> None:
        path = ("web",)
        if not isinstance(web, dict):
            self.error(path, "web must be a block naming who answers each action, e.g. web: {search: exa, fetch: jina}.", "web.shape")
            return
        for key in web:
            if key not in WEB_KEYS:
                self.error(path + (key,), f"web.{key} is not a web key{did_you_mean(key, WEB_KEYS)} The keys are {', '.join(WEB_KEYS)}.", "web.unknown_key")
        allowed = self.check_actions(web)
        for action in W.WEB_ACTIONS:
            if action not in web or web[action] is None:
                continue
            if allowed is not None and action not in allowed:
                self.warning(path + (action,),
                             f"web.{action} names who answers {action}, but web.actions does not allow {action}, so it is never used; "
                             f"add {action} to web.actions or drop web.{action}.", "web.action_not_allowed")
            if action == "search":
                self.check_search(web[action])
            elif action == "browse":
                self.check_browse(web[action])
            else:
                self.check_long_or_short(action, web[action])
        self.check_declared_secrets()
        self.check_granted()

    def check_granted(self) -> None:
        """An agent's `web:` block configures a tool it must also be granted."""
        if self.document.kind != AGENT:
            return
        tools = self.document.meta.get("tools")
        names = _as_list(tools) or []
        if "web" not in [str(n).strip() for n in names]:
            self.warning(("web",), "web: is set, but this agent is not granted the web tool, so the block does nothing; add web to tools: or drop web:.",
                         "web.not_granted")

    def check_actions(self, web: dict) -> set[str] | None:
        if "actions" not in web:
            return None
        actions = web["actions"]
        if not isinstance(actions, list):
            self.error(("web", "actions"), "web.actions must be a list of actions, e.g. actions: [search, fetch]; leave it out for all eight.", "web.actions")
            return None
        for index, action in enumerate(actions):
            if action not in W.WEB_ACTIONS:
                self.error(("web", "actions", index),
                           f"web.actions: {shown(action)} is not an action{did_you_mean(action, W.WEB_ACTIONS)} "
                           f"The eight are {', '.join(W.WEB_ACTIONS)}.", "web.actions")
        return {a for a in actions if isinstance(a, str)}

    # ------------------------------------------------------------ who answers an action

    def check_provider_name(self, action: str, name: Any, path: tuple) -> None:
        """The run refuses the same names in the same words: both read web_capabilities."""
        where = _dotted(path)
        if action == "browse" and isinstance(name, str) and W.engine_name(name.strip().lower()) \
                and name.strip().lower() not in W.providers_for(action):
            word = name.strip().lower()
            self.error(path, f"{where}: {word} is an engine, not a vendor; write web: {{browse: {{engine: {word}}}}}.", "web.provider_cannot")
            return
        refused = W.provider_refusal(action, name)
        if refused is not None:
            code, sentence = refused
            if code == "web.provider_unknown" and (not isinstance(name, str) or not name.strip()):
                self.error(path, f"{where} must {sentence}.", code)
            else:
                self.error(path, f"{where}: {sentence}" + ("" if sentence.endswith((".", "?")) else "."), code)
            return
        self.check_model_provider(action, name.strip().lower(), path)

    def check_model_provider(self, action: str, name: str, path: tuple) -> None:
        """A model provider's own search or fetch runs only while that provider is the one answering."""
        if name not in W.MODEL_PROVIDER_ACTIONS.get(action, {}):
            return
        provider = effective_provider_name(self.desk, self.document)
        holder = "agent" if self.document.kind == AGENT else "file"
        sentence = W.model_provider_refusal(action, name, provider, holder)
        if sentence:
            self.error(path, f"{_dotted(path)}: {sentence}.", "web.model_provider_mismatch")

    def check_long_or_short(self, action: str, value: Any, extra_keys: tuple[str, ...] = ()) -> dict | None:
        """`fetch: jina` or `fetch: {name: jina, key: ${MY_KEY}}`; returns the long form's dict."""
        path = ("web", action)
        if isinstance(value, str):
            self.check_provider_name(action, value, path)
            return None
        if not isinstance(value, dict):
            self.error(path, f"web.{action} must be a provider's name, e.g. {action}: {W.providers_for(action)[0]}, "
                             f"or the long form {{name: {W.providers_for(action)[0]}, key: ${{NAME}}}}.", "web.shape")
            return None
        if not extra_keys:
            for key in value:
                if key not in LONG_FORM_KEYS:
                    self.error(path + (key,), f"web.{action}.{key} is not a key of the long form{did_you_mean(key, LONG_FORM_KEYS)} "
                                              f"It takes name: and key: ${{NAME}}.", "web.unknown_key")
        if "name" in value:
            self.check_provider_name(action, value["name"], path + ("name",))
        elif not extra_keys:
            self.error(path, f"web.{action} has no name:; name who answers {action}, e.g. {{name: {W.providers_for(action)[0]}, key: ${{NAME}}}}.", "web.provider_unknown")
        if "key" in value:
            problem = key_reference_problem(value["key"], f"web.{action}.key")
            if problem:
                self.error(path + ("key",), problem, "web.key_not_reference")
        return value

    # ------------------------------------------------------------ search

    def check_search(self, value: Any) -> None:
        path = ("web", "search")
        if not isinstance(value, dict):
            self.check_long_or_short("search", value)
            return
        allowed = LONG_FORM_KEYS + W.SEARXNG_KEYS
        for key in value:
            if key in W.SEARXNG_PAGE_ONLY:
                self.error(path + (key,), f"web.search.{key} is a SearXNG page preference that does nothing to a JSON answer; drop it.", "web.search_unknown_key")
            elif key not in allowed:
                self.error(path + (key,), f"web.search.{key} is not a web.search key{did_you_mean(key, allowed)} "
                                          f"The keys are name and key for a search API, or {', '.join(W.SEARXNG_KEYS)} for the account's own engine.",
                           "web.search_unknown_key")
        if "name" in value:
            self.check_long_or_short("search", value, extra_keys=W.SEARXNG_KEYS)
            name = value["name"] if isinstance(value["name"], str) else "it"
            for key in value:
                if key in W.SEARXNG_KEYS:
                    self.error(path + (key,),
                               f"web.search.{key} tunes the account's own engine, and a search API would ignore it; "
                               f"drop it, or drop name: {name} to tune the account's own engine.", "web.search_key_beside_name")
            return
        if "key" in value:
            self.error(path + ("key",), "web.search.key needs a name: beside it — a key is for a search API; the account's own engine takes none.",
                       "web.search_key_beside_name")
        self.check_searxng(value, path)

    def check_searxng(self, block: dict, path: tuple) -> None:
        lists: dict[str, list[str]] = {}
        for key in ("engines", "exclude_engines", "categories"):
            if key not in block:
                continue
            items = _as_list(block[key])
            if items is None:
                self.error(path + (key,), f"web.search.{key} must be a list of names, e.g. {key}: [duckduckgo, google cse].", "web.search_name_shape")
                continue
            kind = "category" if key == "categories" else "engine"
            for index, item in enumerate(items):
                if not isinstance(item, str) or not W.SEARXNG_NAME_RE.match(item):
                    self.error(path + (key, index),
                               f"web.search.{key}: {shown(item)} is not shaped like a SearXNG {kind} name; write it in lower case as SearXNG "
                               f"lists it, e.g. {'general' if kind == 'category' else 'duckduckgo or google cse'}.", "web.search_name_shape")
            lists[key] = [i for i in items if isinstance(i, str)]
        for both in sorted(set(lists.get("engines", [])) & set(lists.get("exclude_engines", []))):
            self.error(path + ("exclude_engines",), f"web.search: {both} is both asked for (engines) and excluded (exclude_engines); keep it in one.",
                       "web.search_engine_both")
        if "engines" in block and "categories" in block:
            self.warning(path + ("categories",), "web.search.categories is not used while engines is set — a named engine list beats categories; drop one.",
                         "web.search_categories_unused")
        plugins: dict[str, list[str]] = {}
        for key in ("plugins", "exclude_plugins"):
            if key not in block:
                continue
            items = _as_list(block[key])
            if items is None:
                self.error(path + (key,), f"web.search.{key} must be a list of plugin ids, e.g. {key}: [oa_doi_rewrite].", "web.search_plugin")
                continue
            for index, item in enumerate(items):
                if item not in W.SEARXNG_PLUGINS:
                    self.error(path + (key, index),
                               f"web.search.{key}: {shown(item)} is not a SearXNG plugin{did_you_mean(item, W.SEARXNG_PLUGINS)} "
                               f"The plugins are {', '.join(W.SEARXNG_PLUGINS)}.", "web.search_plugin")
            plugins[key] = [i for i in items if isinstance(i, str)]
        for both in sorted(set(plugins.get("plugins", [])) & set(plugins.get("exclude_plugins", []))):
            self.error(path + ("exclude_plugins",), f"web.search: the plugin {both} is both switched on (plugins) and off (exclude_plugins); keep it in one.",
                       "web.search_plugin")
        if "safesearch" in block:
            value = block["safesearch"]
            # YAML 1.1 reads a bare `off` as false.
            if value is not False and (isinstance(value, bool) or not isinstance(value, (str, int)) or value not in W.SAFESEARCH):
                self.error(path + ("safesearch",), "web.search.safesearch must be off, moderate or strict (0, 1 or 2).", "web.search_value")
        if "time_range" in block and block["time_range"] not in W.TIME_RANGES:
            self.error(path + ("time_range",), "web.search.time_range must be day, week, month or year.", "web.search_value")
        if "timeout" in block:
            value = block["timeout"]
            low, high = W.SEARCH_TIMEOUT_RANGE
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
                self.error(path + ("timeout",), "web.search.timeout must be a number of seconds from 0.5 to 30.", "web.search_value")
        if "doi_resolver" in block:
            value = block["doi_resolver"]
            if not isinstance(value, str) or not _HOST_RE.match(value) or "." not in value:
                self.error(path + ("doi_resolver",), "web.search.doi_resolver must be a resolver's host name, e.g. doi.org.", "web.search_value")

    # ------------------------------------------------------------ browse

    def check_browse(self, value: Any) -> None:
        path = ("web", "browse")
        if isinstance(value, str):
            self.check_provider_name("browse", value, path)
            return
        if not isinstance(value, dict):
            self.error(path, "web.browse must be a vendor's name (browse: browserbase) or the browser's block, e.g. browse: {engine: chrome, locale: en-AU}.",
                       "web.shape")
            return
        block = value
        for key in block:
            if key in CALL_ONLY_KEYS:
                self.error(path + (key,), f"web.browse.{key} belongs to a call, not to the file — what one call does stays in the call; "
                                          f"pass {key}= on the web action=browse call.", "web.browse_call_key")
            elif key not in BROWSE_BLOCK_KEYS:
                near = ["via"] if key == "name" else closest(key, BROWSE_BLOCK_KEYS, limit=1)
                hint = f"; did you mean {near[0]}?" if near else f". The keys are {', '.join(BROWSE_BLOCK_KEYS)}."
                self.error(path + (key,), f"web.browse.{key} is not a web.browse key{hint}", "web.browse_unknown_key")
        self.check_settings(block, path, is_identity=False)
        engine = self.block_engine(block, path)
        vendor = None
        if "via" in block and isinstance(block["via"], str):
            self.check_provider_name("browse", block["via"], path + ("via",))
            vendor = block["via"].strip().lower() if block["via"].strip().lower() in W.BROWSE_VENDORS else None
        if engine and vendor is None:
            for capability, key in self.capabilities(block):
                if not W.engine_can(engine, capability):
                    self.error(path + (key,), f"web.browse: {W.engine_refusal(engine, capability)}.", "web.engine_capability")
        if vendor is None:
            self.check_pinned_user_agent(block, path, engine)
        self.check_live(block, path)
        self.check_browse_lists(block, path)
        if "identities" in block:
            self.check_identities(block, path, engine, vendor)
        self.check_vendor(block, path, vendor)

    def check_pinned_user_agent(self, block: dict, path: tuple, engine: str | None) -> None:
        """spec/tools.md, "A pinned user agent has to keep up with Chrome": a
        pinned `user_agent:` claiming another Chrome major than the browser
        that sends it — on chrome the platform's Google Chrome (Chromium where
        it has none), on chromium (the default) its Chromium — is a warning,
        in check and deploy alike. Known only when the platform is: offline
        with no server, nothing is said. A vendor's browser (via:) is not ours
        to compare."""
        agent = block.get("user_agent")
        claimed = _CHROME_MAJOR_RE.search(agent) if isinstance(agent, str) else None
        engine = engine or W.DEFAULT_ENGINE
        if claimed is None or engine not in ("chromium", "chrome"):
            return
        major = self.platform.get(f"{engine}_major")
        browser = "Google Chrome" if engine == "chrome" and major is not None else "Chromium"
        if major is None and engine == "chrome":
            major = self.platform.get("chromium_major")  # chrome falls back to Chromium where it is not installed
        if major is None or int(claimed.group(1)) == major:
            return
        where = _dotted(path)
        self.warning(path + ("user_agent",),
                     f"{where}.user_agent claims Chrome {claimed.group(1)}, but the browser that sends it is {browser} {major}; "
                     f"a site sees the mismatch beside the client hints and the JavaScript engine, which say {major} — "
                     f"drop the pin so the user agent follows the browser, or raise it to Chrome/{major}.",
                     "web.user_agent_stale")

    def block_engine(self, block: dict, path: tuple) -> str | None:
        """The engine a block (or identity) names, after `engine`/`browser` agree."""
        engines = {key: W.engine_name(block[key]) for key in ("engine", "browser") if isinstance(block.get(key), str)}
        refusal = W.engine_disagreement(_dotted(path), block.get("engine"), block.get("browser"))
        if refusal:
            self.error(path + ("browser",), f"{refusal}.", "web.engine_unknown")
        return engines.get("engine") or engines.get("browser")

    @staticmethod
    def capabilities(block: dict) -> Iterator[tuple[str, str]]:
        """(capability in the engine table, the key that asks for it) for a block or identity."""
        yield from W.settings_capabilities(block)

    def check_settings(self, block: dict, path: tuple, *, is_identity: bool) -> None:
        """Value checks shared by the block and each identity."""
        where = _dotted(path)
        for key, example in TEXT_KEYS.items():
            if key in block and not isinstance(block[key], str):
                self.error(path + (key,), f"{where}.{key} is not text; write it as one string, e.g. {key}: {example}.", "web.browse_not_text")
        for key in ("engine", "browser"):
            value = block.get(key)
            if isinstance(value, str) and W.engine_name(value) is None:
                self.error(path + (key,), f"{where}.{key}: {shown(value)} is not an engine{did_you_mean(value, W.ENGINE_SPELLINGS)} "
                                          "The engines are chromium (the default), chrome, firefox, safari (webkit also works), lightpanda and obscura.",
                           "web.engine_unknown")
        for key in SECRET_KEYS:
            value = block.get(key)
            if isinstance(value, str):
                problem = secret_name_problem(value, f"{where}.{key}", TEXT_KEYS[key])
                if problem:
                    self.error(path + (key,), problem, "web.secret_value")
                else:
                    self.secret_names.append((path + (key,), reference_name(value) or value))
        if isinstance(block.get("cookies"), str) and "cookie_domain" not in block:
            self.error(path + ("cookies",), f"{where}.cookies needs cookie_domain: beside it, the site the cookies belong to (e.g. cookie_domain: .medium.com); "
                                            "without it every page the agent opens would be handed that site's session.", "web.cookie_domain_missing")
        if isinstance(block.get("cookie_domain"), str) and not _HOST_RE.match(block["cookie_domain"].lstrip(".")):
            self.error(path + ("cookie_domain",), f"{where}.cookie_domain must be a domain such as .medium.com.", "web.browse_value")
        if isinstance(block.get("locale"), str) and not _is_tag(block["locale"]):
            self.error(path + ("locale",), f"{where}.locale: {shown(block['locale'])} is not a locale; write a language tag such as en-AU or pt-BR.", "web.locale")
        if isinstance(block.get("timezone"), str) and not _is_timezone(block["timezone"]):
            self.error(path + ("timezone",), f"{where}.timezone: {shown(block['timezone'])} is not a time zone; write an IANA name such as Australia/Sydney.",
                       "web.timezone")
        if isinstance(block.get("geolocation"), str):
            match = _GEO_RE.match(block["geolocation"])
            if not match or not (-90 <= float(match.group(1)) <= 90 and -180 <= float(match.group(2)) <= 180):
                self.error(path + ("geolocation",), f'{where}.geolocation must be "lat,lng" the page will see, e.g. "-33.87,151.21".', "web.browse_value")
        for key, choices in (("color_scheme", ("light", "dark")), ("dialogs", ("accept", "dismiss")), ("captcha_solver", W.CAPTCHA_SOLVERS)):
            if isinstance(block.get(key), str) and block[key] not in choices:
                self.error(path + (key,), f"{where}.{key} must be {one_of(choices)}.", "web.browse_value")
        if "headers" in block:
            self.check_headers(block["headers"], path + ("headers",))
        if "block" in block and _as_list(block["block"]) is None:
            self.error(path + ("block",), f'{where}.block must be resource types and host globs, e.g. block: "image,font,*.doubleclick.net".', "web.browse_value")
        if is_identity:
            return
        for key in BOOL_KEYS:
            if key in block and not isinstance(block[key], bool):
                self.error(path + (key,), f"{where}.{key} must be true or false.", "web.browse_value")
        if "video" in block and not (isinstance(block["video"], bool) or (isinstance(block["video"], str) and block["video"].endswith(".webm"))):
            self.error(path + ("video",), f"{where}.video must be true, false or a .webm path.", "web.browse_value")
        if "permissions" in block:
            items = _as_list(block["permissions"])
            bad = [p for p in items or [None] if p not in W.PERMISSIONS]
            if bad:
                self.error(path + ("permissions",), f"{where}.permissions may grant only {one_of(W.PERMISSIONS)}.", "web.browse_value")
        if isinstance(block.get("storage"), str) and "storage_origin" not in block:
            self.error(path + ("storage",), f"{where}.storage needs storage_origin: beside it, the origin the storage belongs to (e.g. https://www.example.com) — "
                                            "storage is walled off per origin.", "web.storage_origin")
        if isinstance(block.get("storage_origin"), str):
            origin = urlparse(block["storage_origin"])
            if origin.scheme not in ("http", "https") or not origin.hostname or origin.path not in ("", "/") or origin.query:
                self.error(path + ("storage_origin",), f"{where}.storage_origin must be an origin, a scheme and a host such as https://www.example.com; "
                                                       ".example.com cannot name one.", "web.storage_origin")

    def check_headers(self, headers: Any, path: tuple) -> None:
        where = _dotted(path)
        if not isinstance(headers, dict):
            self.error(path, f"{where} must be a mapping of header names to values; a ${{NAME}} in a value is read from that secret.", "web.browse_value")
            return
        for name, value in headers.items():
            lowered = str(name).lower()
            if lowered == "cookie":
                self.error(path + (name,), f"{where}.{name} is refused: cookies go in cookies:, as a secret's NAME, with cookie_domain: beside it.", "web.header_cookie")
                continue
            if not isinstance(value, str):
                self.error(path + (name,), f"{where}.{name} is not text; write the header's value as one string.", "web.browse_not_text")
                continue
            refs = _REF_IN_TEXT_RE.findall(value)
            for ref in refs:
                if reference_name("${" + ref + "}"):
                    self.secret_names.append((path + (name,), ref))
                else:
                    self.error(path + (name,), f"{where}.{name} holds a ${{…}} that is not a secret's NAME; write ${{NAME}} in capitals, digits and underscores.",
                               "web.secret_value")
            if lowered in CREDENTIAL_HEADERS and not refs:
                self.error(path + (name,), f"{where}.{name} holds a credential written into the file; keep the value in the vault and write ${{NAME}} in its place.",
                           "web.secret_value")

    def check_live(self, block: dict, path: tuple) -> None:
        if block.get("live") is not True:
            return
        for key in ("video", "auth", "device"):
            if block.get(key):
                self.warning(path + (key,), f"web.browse.{key} does nothing beside live: true — a live page does not support video, har, auth or device; "
                                            "the call says so and carries on without it.", "web.live_unsupported")

    def check_browse_lists(self, block: dict, path: tuple) -> None:
        if "allowed_domains" in block:
            items = block["allowed_domains"]
            if not isinstance(items, list):
                self.error(path + ("allowed_domains",), "web.browse.allowed_domains must be a list of domains, e.g. [portal.example.com, \"*.example-cdn.com\"].",
                           "web.allowed_domains")
            else:
                for index, item in enumerate(items):
                    host = item[2:] if isinstance(item, str) and item.startswith("*.") else item
                    if not isinstance(host, str) or not _HOST_RE.match(host):
                        self.error(path + ("allowed_domains", index),
                                   f"web.browse.allowed_domains: {shown(item)} is not a domain; write a host such as portal.example.com "
                                   "or a glob such as *.example.com — no scheme, no path.", "web.allowed_domains")
        if "deny" in block:
            items = block["deny"]
            if not isinstance(items, list):
                self.error(path + ("deny",), "web.browse.deny must be a list of actions, e.g. deny: [eval, download, upload].", "web.deny")
            else:
                for index, item in enumerate(items):
                    if item not in W.DENYABLE:
                        self.error(path + ("deny", index),
                                   f"web.browse.deny: {shown(item)} is not an action, so denying it would deny nothing"
                                   f"{did_you_mean(item, W.DENYABLE)}", "web.deny")
        for key, what in (("init", "scripts"), ("extensions", "unpacked extensions")):
            if key not in block:
                continue
            items = block[key]
            if not isinstance(items, list):
                self.error(path + (key,), f"web.browse.{key} must be a list of workspace paths of {what}.", "web.workspace_path")
                continue
            for index, item in enumerate(items):
                if not self.workspace_path_exists(item, folder=key == "extensions"):
                    self.error(path + (key, index), f"web.browse.{key}: {shown(item)} is not {'a folder' if key == 'extensions' else 'a file'} in this workspace; "
                                                    f"{key}: takes workspace paths of {what}, e.g. {'extensions/my-extension' if key == 'extensions' else 'scripts/stub-analytics.js'}.",
                               "web.workspace_path")

    def workspace_path_exists(self, item: Any, *, folder: bool) -> bool:
        if not isinstance(item, str):
            return False
        try:
            path = normalise_path(item)
        except PathError:
            return False
        if folder:
            return any(name.startswith(path + "/") for name in self.desk.files)
        return path in self.desk.files

    # ------------------------------------------------------------ identities

    def check_identities(self, block: dict, path: tuple, block_engine: str | None, vendor: str | None) -> None:
        identities = block["identities"]
        ipath = path + ("identities",)
        if not isinstance(identities, dict):
            self.error(ipath, "web.browse.identities must map a name to who the browser is, e.g. au-mobile: {device: \"Pixel 7\", locale: en-AU}.", "web.identity")
            return
        block_caps = dict(self.capabilities(block))
        for name, identity in identities.items():
            here = ipath + (name,)
            where = _dotted(here)
            if not isinstance(identity, dict):
                self.error(here, f"{where} must be a block of identity settings, e.g. {{locale: en-AU, timezone: Australia/Sydney}}.", "web.identity")
                continue
            for key in identity:
                if key in CALL_ONLY_KEYS:
                    self.error(here + (key,), f"{where}.{key} belongs to a call, not to an identity — an identity is who the browser is "
                                              f"({', '.join(IDENTITY_KEYS)}); pass {key}= on the call.", "web.identity_call_key")
                elif key not in IDENTITY_KEYS:
                    self.error(here + (key,), f"{where}.{key} is not an identity key{did_you_mean(key, IDENTITY_KEYS)} "
                                              f"An identity takes {', '.join(IDENTITY_KEYS)}.", "web.identity_unknown_key")
            self.check_settings(identity, here, is_identity=True)
            own_engine = self.block_engine(identity, here)
            engine = own_engine or block_engine
            if vendor is None:
                self.check_pinned_user_agent(identity, here, engine)
            if not engine or vendor is not None:
                continue
            own_caps = dict(self.capabilities(identity))
            for capability in {**block_caps, **own_caps}:
                # A pair made only of the block's own settings is the block's finding, not this identity's.
                if (own_engine or capability in own_caps) and not W.engine_can(engine, capability):
                    key = own_caps.get(capability) or ("engine" if "engine" in identity else "browser")
                    self.error(here + (key,), f"{where}: {W.engine_refusal(engine, capability)}.", "web.engine_capability")

    # ------------------------------------------------------------ vendors

    def check_vendor(self, block: dict, path: tuple, vendor: str | None) -> None:
        if vendor is not None:
            for key in ("proxy", "block"):
                if block.get(key):
                    self.warning(path + (key,), f"web.browse.{key} does not reach {vendor}'s browser — it is a launch option, and the vendor launched it; "
                                                f"ask the vendor's session for it (vendor_session: {{{key}: …}}).", "web.vendor_launch_option")
        if vendor == "zenrows":
            places = [(path, block)]
            if isinstance(block.get("identities"), dict):
                places += [(path + ("identities", n), i) for n, i in block["identities"].items() if isinstance(i, dict)]
            for where_path, settings in places:
                for key in ("user_agent", "device"):
                    if key in settings:
                        self.error(where_path + (key,), f"{_dotted(where_path)}.{key} is refused beside via: zenrows — "
                                                        "ZenRows' browser refuses a changed user agent or device.", "web.vendor_refuses")
        has_old, has_new = "session" in block, "vendor_session" in block
        if has_old and has_new:
            self.error(path + ("session",), "web.browse writes both session: and vendor_session:; session: is the old name of vendor_session: — keep vendor_session: alone.",
                       "web.vendor_session_both")
            return
        if not (has_old or has_new):
            return
        key = "vendor_session" if has_new else "session"
        if has_old:
            self.warning(path + ("session",), "web.browse.session: is now called vendor_session: (renamed 2026-10-01, because a call's session= is a "
                                              "named saved login, a different thing); rename it.", "web.vendor_session_renamed")
        self.check_vendor_session(block[key], path + (key,), block, vendor)

    def check_vendor_session(self, session: Any, path: tuple, block: dict, vendor: str | None) -> None:
        where = _dotted(path)
        via = block.get("via").strip().lower() if isinstance(block.get("via"), str) else None
        if via == "cdp":
            self.error(path, f"{where} asks a vendor's browser for its options, but via: cdp is a browser of your own with no vendor session; drop it.",
                       "web.vendor_session_no_vendor")
            return
        if vendor is None:
            if via is None:
                self.error(path, f"{where} asks a vendor's browser for its options, but no vendor is named; add via: "
                                 f"{one_of(W.BROWSE_VENDORS[:-1])} beside it.", "web.vendor_session_no_vendor")
            return
        if not isinstance(session, dict):
            self.error(path, f"{where} must be a block of the vendor's options, e.g. {{proxy: {{country: AU}}, captcha: true}}.", "web.vendor_session")
            return
        for key, value in session.items():
            here = path + (key,)
            if key not in W.VENDOR_SESSION_KEYS:
                self.error(here, f"{where}.{key} is not a vendor_session key{did_you_mean(key, W.VENDOR_SESSION_KEYS)} "
                                 f"The keys are {', '.join(W.VENDOR_SESSION_KEYS)}.", "web.vendor_session")
                continue
            if not self.vendor_has(vendor, key, here):
                continue
            if key == "proxy":
                self.check_vendor_proxy(value, here, vendor)
            elif key in ("region", "timeout"):
                refused = W.vendor_value_refusal(vendor, key, value, f"{where}.{key}")
                if refused:
                    self.error(here, refused, "web.vendor_session")
            elif key in ("captcha", "stealth", "record") and not isinstance(value, bool):
                self.error(here, f"{where}.{key} must be true or false.", "web.vendor_session")
            elif key == "keep":
                if not isinstance(value, str) or not value.strip():
                    self.error(here, f"{where}.keep must be a name for the saved login, e.g. keep: client-portal.", "web.vendor_session")
                for beside in ("user_agent", "device", "locale", "timezone", "identities"):
                    if beside in block:
                        self.error(path[:-1] + (beside,), f"web.browse.{beside} is refused beside {where}.keep — {vendor}'s kept {W.VENDOR_SESSION_OPTIONS['keep'][vendor].removeprefix('a ')} "
                                                          "is the vendor's own browser context as it stands.", "web.vendor_keep_conflict")
            elif key == "block":
                items = _as_list(value)
                if items is None:
                    self.error(here, f"{where}.block must be a list of ads, trackers or cookies.", "web.vendor_session")
                    continue
                for index, word in enumerate(items):
                    if word not in W.VENDOR_BLOCK_WORDS:
                        self.error(here + (index,), f"{where}.block: {shown(word)} is not one of ads, trackers, cookies.", "web.vendor_session")
                    elif W.vendor_block_refusal(vendor, word, f"{where}.block"):
                        self.error(here + (index,), W.vendor_block_refusal(vendor, word, f"{where}.block"), "web.vendor_session_unsupported")
            elif key == "options" and not isinstance(value, dict):
                self.error(here, f"{where}.options must be a mapping of the vendor's own fields, as its docs name them.", "web.vendor_session")

    def vendor_has(self, vendor: str, setting: str, path: tuple) -> bool:
        refused = W.vendor_session_refusal(vendor, setting, _dotted(path))
        if refused is None:
            return True
        self.error(path, refused, "web.vendor_session_unsupported")
        return False

    def check_vendor_proxy(self, value: Any, path: tuple, vendor: str) -> None:
        where = _dotted(path)
        if isinstance(value, bool):
            return
        if not isinstance(value, dict):
            self.error(path, f"{where} must be true, {{country, state, city}} or {{own: MY_PROXY_SECRET}}.", "web.vendor_session")
            return
        for key, item in value.items():
            here = path + (key,)
            if key not in ("country", "state", "city", "own"):
                self.error(here, f"{where}.{key} is not a proxy setting{did_you_mean(key, ('country', 'state', 'city', 'own'))} "
                                 "It takes country, state, city, or own.", "web.vendor_session")
                continue
            if not self.vendor_has(vendor, f"proxy.{key}", here):
                continue
            if key == "own":
                problem = secret_name_problem(item, f"{where}.own", "MY_PROXY_SECRET")
                if problem:
                    self.error(here, problem, "web.secret_value")
                elif isinstance(item, str):
                    self.secret_names.append((here, reference_name(item) or item))
            elif key == "country" and W.vendor_country_refusal(vendor, value, where):
                self.error(here, W.vendor_country_refusal(vendor, value, where), "web.vendor_session")
            elif key == "state" and W.vendor_state_refusal(vendor, value, where):
                self.error(here, W.vendor_state_refusal(vendor, value, where), "web.vendor_session_unsupported")
            elif key == "state" and W.vendor_state_code_refusal(vendor, value, where):
                self.error(here, W.vendor_state_code_refusal(vendor, value, where), "web.vendor_session")
            elif not isinstance(item, str):
                self.error(here, f"{where}.{key} is not text; write it as one string, e.g. {key}: {'NY' if key == 'state' else 'Sydney'}.", "web.vendor_session")
            elif key == "city" and W.vendor_city_refusal(vendor, value, where):
                self.error(here, W.vendor_city_refusal(vendor, value, where), "web.vendor_session_unsupported")

    # ------------------------------------------------------------ secrets the block reads

    def check_declared_secrets(self) -> None:
        """An agent still declares every secret its block reads under `secrets:`."""
        if self.document.kind != AGENT or not self.secret_names:
            return
        declared = self.document.meta.get("secrets")
        declared_names = {str(s) for s in declared} if isinstance(declared, list) else set()
        for path, name in self.secret_names:
            if name not in declared_names:
                self.warning(path, f"{_dotted(path)} reads the secret {name}, which this agent does not declare under secrets:; "
                                   "add it there, or the step is not given it.", "web.secret_undeclared")


def _check_language_and_region(document: Document, emit: Emitter) -> None:
    meta = document.meta
    if "language" in meta and not _is_tag(meta["language"]):
        emit(("language",), "error", f"language: {shown(meta['language'])} is not a language tag; write one such as en, en-AU or pt-BR.", "web.language")
    if "region" in meta and not (isinstance(meta["region"], str) and _REGION_RE.match(meta["region"])):
        emit(("region",), "error", f"region: {shown(meta['region'])} is not a country code; write a two-letter one such as au or us.", "web.region")


@rule("web")
def check_web_blocks(desk: Desk, ctx: Context) -> Iterator[Finding]:
    """Every `web:` block, `language:` and `region:` in AGENTS.md, agents and flows."""
    for document in block_documents(desk):
        meta = document.meta
        if "web" not in meta and "language" not in meta and "region" not in meta:
            continue
        emit = Emitter(document)
        if "web" in meta:
            _WebCheck(desk, document, emit, ctx.platform).run(meta["web"])
        _check_language_and_region(document, emit)
        yield from emit.findings
