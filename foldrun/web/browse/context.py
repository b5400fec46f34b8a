"""One call's browser context: locale, device, headers, cookies, the guard proxy and the block list."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from foldrun.contract import web_engines as W
from foldrun.contract.placeholders import fill_placeholders

from ..errors import WebToolError
from ..net import GuardProxy, scrub_url
from . import own
from . import spare as spares
from .pool import find_chromium
from .user_proxy import user_proxy
from .framing import init_failure
from .seed_storage import seed_storage
from .util import ACTION_TIMEOUT_MS, domain_match, glob_match
from .kept import carry_seed

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import BrowserContext, Page

    from .call import Call

VIEWPORT = {"width": 1366, "height": 900}


RESOURCE_TYPES = frozenset(
    {
        "document",
        "stylesheet",
        "image",
        "media",
        "font",
        "script",
        "texttrack",
        "xhr",
        "fetch",
        "eventsource",
        "websocket",
        "manifest",
        "other",
    }
)


class BrowseState:
    """One step's contexts: a `session` name holds its context until the step ends."""

    def __init__(self) -> None:
        self.sessions: dict[str, "BrowserContext"] = {}
        self.holders: dict[str, dict] = {}  # session -> {"call": the Call now using it}
        # session -> what a secret seeded it with (True: cookies, "storage": web.browse.storage) and that secret's
        # values, so every later call in it refuses script in the same words and still redacts them
        self.seeded: dict[str, tuple[bool | str, dict[str, str]]] = {}
        self.proxies: list[GuardProxy] = []  # the sessions' guard proxies
        self.launch: dict[str, int] = {}  # session -> which launch of the pool's browser holds it
        self.pools: dict[str, Any] = {}  # session -> the BrowserPool whose browser holds its context
        self.made_with: dict[str, tuple] = {}  # session -> (its proxy secret's name, its own launch flags)

    def drop(self, name: str | None) -> None:
        if name is None:
            return
        pool = self.pools.pop(name, None)
        context = self.sessions.pop(name, None)
        holder = self.holders.pop(name, None)
        self.launch.pop(name, None)
        self.made_with.pop(name, None)
        if context is not None:
            _close_in_its_thread(context, pool)
        if holder is not None and holder["call"].proxy is not None:
            holder["call"].proxy.close()

    def close(self) -> None:
        for name, context in self.sessions.items():
            _close_in_its_thread(context, self.pools.get(name))
        self.sessions.clear()
        self.pools.clear()
        for proxy in self.proxies:
            proxy.close()
        self.proxies.clear()


def _close_in_its_thread(context: "BrowserContext", pool: Any) -> None:
    """Close a session's context in the thread of the browser holding it — Playwright's objects answer only there,
    and a step's sessions may sit in more than one browser (the plain one, a window's, a pinned build's)."""
    try:
        if pool is not None:
            pool.driver.run(context.close)
        else:
            context.close()
    except Exception:  # noqa: BLE001 - its browser is already gone (an in-step window's closes after its call)
        pass


class ContextMixin:
    """How a Call builds (or finds again) its browser context."""

    def context(self) -> "BrowserContext":
        tool = self.tool
        if tool.browse_state is None:
            tool.browse_state = BrowseState()
        state = tool.browse_state
        name = self.args.get("session")
        pool = tool.browsers
        if name and name in state.sessions and state.pools.get(str(name)) not in (None, pool):
            # The session's context is in another browser than this call's (a window's, a pinned build's, the
            # plain one): closed there, and this call opens its own from the session's saved storage — the login
            # (cookies and localStorage) carries over, as between any two calls; the page does not.
            state.drop(str(name))
        launched_here = bool(state.made_with.get(str(name), (None, ()))[1]) if name else False
        if (
            name
            and name in state.sessions
            and not (own.alive(pool, state.sessions[name]) if launched_here else pool.holds(state.launch.get(name)))
        ):
            state.drop(name)  # its browser went away: start again from the session's saved storage
        if name and name in state.sessions:
            made_with = state.made_with.get(str(name), (None, ()))
            if (self.setting("proxy") or None, tuple(own.own_flags(self) or ())) != made_with:
                had = " and ".join(
                    part
                    for part in (
                        f"proxy {made_with[0]}" if made_with[0] else "",
                        "extensions or webgpu" if made_with[1] else "",
                    )
                    if part
                )
                raise WebToolError(
                    f"browse: session={name} was opened with {had or 'no proxy, extensions or webgpu'}"
                    f"; a later call in it cannot change its proxy, extensions or webgpu (they are how "
                    f"its browser was opened) — use another session name"
                )
            previous = state.holders[name]["call"]
            # A password a login in an earlier call filled is still redacted where a later page prints it; it
            # does not make this call one that fills a secret (reading in the next call is the way to sign in).
            self.kept.update({**previous.kept, **previous.secrets})
            state.holders[name]["call"] = self  # the guard and the block list read this call's settings
            self.proxy = previous.proxy
            self.seeded, kept = state.seeded.get(str(name), (False, {}))
            self.secrets.update(kept)
            if self.seeded and self.args.get("state"):
                raise WebToolError(
                    f"browse: state= does not keep a login seeded from a secret "
                    f"({'web.browse.storage' if self.seeded == 'storage' else 'cookies'}) — "
                    f"session={name} was signed in by one, and state/ is a workspace file every later "
                    f"step can read; sign in with actions instead"
                )
            return state.sessions[name]
        vendor = self.vendor  # a vendor's browser presents itself as the vendor made it (no user agent of ours)
        flags = own.own_flags(self)  # extensions / webgpu: a Chromium launched for this call, not the pool's
        if flags is not None and vendor is not None:
            raise WebToolError(
                "browse: extensions and webgpu need a Chromium launched in the step; a web.browse "
                "via: vendor's browser cannot take them — drop via: or drop them"
            )
        browser = vendor.browser if vendor is not None else (pool.browser() if flags is None else None)
        if vendor is not None and vendor.keep:  # the kept login is the vendor's own context, as it stands
            return self._vendor_context(browser.contexts[0] if browser.contexts else browser.new_context())
        locale = str(self.setting("locale") or _locale(tool.language, tool.region))
        options: dict[str, Any] = {"locale": locale, "viewport": dict(VIEWPORT)}
        if vendor is None:
            version = (
                browser.version
                if browser is not None
                else own.chromium_version(pool.executable or find_chromium() or "chromium")
            )
            options["user_agent"] = _desktop_user_agent(version)
        if getattr(pool, "headless", True) is False:  # a window: pages take its size, not an emulated one
            del options["viewport"]
            options["no_viewport"] = True
        device = self.setting("device")
        if device:
            known = pool.devices()
            if device not in known:
                close = [d for d in known if str(device).lower() in d.lower()][:5]
                raise WebToolError(
                    f"browse: device={device} is not a Playwright device name"
                    + (f"; did you mean {', '.join(close)}?" if close else ', such as "Pixel 7"')
                )
            options.update({k: v for k, v in known[device].items() if k != "default_browser_type"})
        if self.setting("user_agent"):
            options["user_agent"] = str(self.setting("user_agent"))
        if self.setting("timezone"):
            options["timezone_id"] = str(self.setting("timezone"))
        if self.setting("color_scheme") in ("light", "dark"):
            options["color_scheme"] = self.setting("color_scheme")
        if self.setting("geolocation"):
            match = re.fullmatch(r"\s*(-?\d+(?:\.\d+)?)\s*,\s*(-?\d+(?:\.\d+)?)\s*", str(self.setting("geolocation")))
            if not match:
                raise WebToolError('browse: geolocation= is "lat,lng", such as "-33.87,151.21"')
            options["geolocation"] = {"latitude": float(match.group(1)), "longitude": float(match.group(2))}
        permissions = self.setting("permissions")
        if permissions:
            items = [p.strip() for p in permissions.split(",")] if isinstance(permissions, str) else list(permissions)
            wrong = [p for p in items if p not in W.PERMISSIONS]
            if wrong:
                raise WebToolError(
                    f"browse: permissions {', '.join(wrong)} — the ones granted up front are {', '.join(W.PERMISSIONS)}"
                )
            options["permissions"] = items
        headers = self.headers()
        if headers:
            options["extra_http_headers"] = headers
        auth = self.setting("auth")
        if auth:
            user, sep, password = self.secret_value(str(auth)).partition(":")
            if not sep:
                raise WebToolError(f"browse: auth: the secret {auth} does not hold user:pass")
            self.secrets[str(auth)] = password  # redacted wherever it shows; the user name may show
            options["http_credentials"] = {"username": user, "password": password}
        if self.setting("ignore_https_errors") is True:
            options["ignore_https_errors"] = True
        stored = self.load_storage()
        if stored is not None:
            options["storage_state"] = stored
        holder = {"call": self}
        # The user's own proxy, behind the guard (the browser never holds its credentials); a vendor's session
        # takes it through the vendor's own fields instead.
        hop = user_proxy(self) if vendor is None else None
        # The guard proxy is on this machine, where a vendor's browser cannot reach it: its route checks instead.
        proxied = bool(hop or self.allowed_domains() or not tool.allow_private) and vendor is None
        key = (
            spares.key_of(options, proxied)
            if not name and self.har_target is None and vendor is None and hop is None and flags is None
            else None
        )
        made = pool.take_spare(key, self) if key else None
        if key:
            pool.make_spare(key, dict(options), proxied)  # the next call's, made while this one runs
        if made is not None:
            context, self.fresh_page, holder, self.proxy = made  # its guard and route read `holder`'s call
        if made is None and proxied:
            # Every connection the context makes — redirect hops included — is checked when it is made.
            if hop is not None:  # the guard checks the proxy's address, and the page's host against the list
                self.proxy = GuardProxy(
                    lambda host, port: holder["call"].address_policy(host, port),
                    upstream=lambda host: hop,
                    target=lambda host: holder["call"].domain_policy(host),
                )
            else:
                self.proxy = GuardProxy(lambda host, port: holder["call"].connect_policy(host, port))
            options["proxy"] = self.proxy.playwright_proxy()
        if self.har_target is not None:
            options["record_har_path"] = str(self.har_target)
        if made is None:
            context = browser.new_context(**options) if browser is not None else own.launch(self, flags, options)
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        # A route costs a round trip on every request: only a call with something for it to check has one
        # (`blocked()` is a pair of empty lists when nothing is blocked).
        if name or self.allowed_domains() or not tool.allow_private or any(self.blocked()):
            context.route("**/*", lambda route, request: holder["call"]._guard(route, request))
        self.add_cookies(context)
        seed_storage(self, context)
        if name and vendor is None:
            state.sessions[str(name)] = context
            state.holders[str(name)] = holder
            state.launch[str(name)] = pool.launches
            state.pools[str(name)] = pool
            state.made_with[str(name)] = (self.setting("proxy") or None, tuple(flags or ()))
            if self.proxy is not None:
                state.proxies.append(self.proxy)
            if self.seeded:
                state.seeded[str(name)] = (self.seeded, dict(self.secrets))
        return context

    def _vendor_context(self, context: "BrowserContext") -> "BrowserContext":
        """A vendor's kept context: only the guard's route and this call's cookies are added to it."""
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        if self.allowed_domains() or not self.tool.allow_private:
            context.route("**/*", lambda route, request: self._guard(route, request))
        self.add_cookies(context)
        seed_storage(self, context)
        carry_seed(self, self.vendor.vendor, self.vendor.keep, self.vendor.kept)  # the login, and so its seeding
        return context

    def headers(self) -> dict[str, str]:
        """`headers`: a JSON object; a `${NAME}` in a value is read from that secret; `cookie` is refused."""
        raw = self.setting("headers")
        if raw in (None, "", {}):
            return {}
        if isinstance(raw, str):
            try:
                raw = json.loads(raw)
            except ValueError:
                raise WebToolError('browse: headers= is a JSON object, such as {"X-Team": "${TEAM_TOKEN}"}') from None
        if not isinstance(raw, dict):
            raise WebToolError('browse: headers= is a JSON object, such as {"X-Team": "${TEAM_TOKEN}"}')
        out: dict[str, str] = {}
        for key, value in raw.items():
            if str(key).lower() == "cookie":
                raise WebToolError("browse: a cookie header is refused — pass the NAME of a cookie secret as cookies=")
            out[str(key)] = fill_placeholders(value, self.secret_value)
        return out

    def secret_value(self, name: str) -> str:
        value = self.tool.secret(name)
        self.secrets[name] = value
        return value

    def add_cookies(self, context: "BrowserContext") -> None:
        """`cookies`: the NAME of a secret holding a Cookie header line, for `cookie_domain` (else the page's host)."""
        name = self.args.get("cookies") or self.identity.get("cookies") or self.block.get("cookies")
        if not name:
            return
        from_file = not self.args.get("cookies")
        domain = str(
            self.args.get("cookie_domain")
            or self.identity.get("cookie_domain")
            or self.block.get("cookie_domain")
            or ""
        )
        host = (urlsplit(str(self.args.get("url") or "")).hostname or "").lower()
        if from_file:
            if not domain:
                raise WebToolError(
                    "browse: web.browse.cookies needs cookie_domain: beside it — a cookie default must name its site"
                )
            if not domain_match(host, "*." + domain.lstrip(".")):
                self.tool.log(
                    f"browse: {host} is not {domain.lstrip('.')}, so the page opens signed out "
                    f"(web.browse.cookies belongs to {domain})"
                )
                return
        line = self.secret_value(str(name))
        jar = []
        for part in line.split(";"):
            if "=" not in part:
                continue
            key, _, value = part.strip().partition("=")
            jar.append({"name": key.strip(), "value": value.strip(), "domain": domain or host, "path": "/"})
        if jar:
            context.add_cookies(jar)
            self.seeded = True

    def blocked(self) -> tuple[set[str], list[str]]:
        """`block`: resource types and host globs not to load."""
        raw = self.setting("block") if self.vendor is None else None  # block= does not reach a vendor's browser
        items = [i.strip() for i in raw.split(",")] if isinstance(raw, str) else [str(i) for i in raw or []]
        types = {i for i in items if i in RESOURCE_TYPES}
        return (types, [i for i in items if i and i not in RESOURCE_TYPES]) if items else (set(), [])

    def _guard(self, route, request) -> None:  # noqa: ANN001
        reason = self.host_refusal(request.url)
        types, hosts = self.blocked()
        host = (urlsplit(request.url).hostname or "").lower()
        if reason or request.resource_type in types or any(domain_match(host, h) for h in hosts):
            route.abort("blockedbyclient")
        else:
            route.continue_()


def _locale(language: str, region: str | None) -> str:
    tag = language or "en"
    if "-" not in tag and region:
        tag = f"{tag}-{region.upper()}"
    return tag


def _desktop_user_agent(version: str) -> str:
    """A desktop user agent carrying the version of the Chromium actually running (never HeadlessChrome)."""
    major = (version or "0").split(".")[0]
    return f"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 Safari/537.36"


def _body_bytes(response: Any, counted: int | None) -> int | None:
    """The response body's size; None when it cannot be known.

    Chromium counts a body as bytes-on-the-wire less the headers, which goes
    negative for a response with no Content-Length that ends when the
    connection closes (an HTTP/1.0 404 is the usual one): read it instead.
    """
    if isinstance(counted, int) and counted >= 0:
        return counted
    if response is None:
        return None
    try:
        return len(response.body())
    except Exception:  # noqa: BLE001 - no body kept (a redirect, a closed page): unknown, never a guess
        return None


def _declared_bytes(request: Any, response: Any) -> int | None:
    """The body's size as its Content-Length says, when that is what crossed the wire: not for a HEAD, a 204 or a
    304 (no body follows), nor a chunked or connection-closed body (no Content-Length)."""
    if request.method == "HEAD" or response.status in (204, 304) or response.status < 200:
        return None
    value = response.headers.get("content-length")
    return int(value) if value is not None and value.strip().isdigit() else None


def _waits_on_exchanges(actions: Any) -> bool:
    """Whether any step, however nested, is a `wait` on a request or a response."""
    if isinstance(actions, dict):
        return actions.get("wait") in ("request", "response") or any(_waits_on_exchanges(v) for v in actions.values())
    if isinstance(actions, list):
        return any(_waits_on_exchanges(v) for v in actions)
    return False


def listen(call: Call, page: "Page") -> None:
    """The page's own failures, its console and its network, as they happen."""
    call.listened.append(page)

    def on(event: str, handler) -> None:  # noqa: ANN001 - kept, so a session's page can drop them after the call
        page.on(event, handler)
        call.listeners.append((page, event, handler))

    def uncaught(error) -> None:  # noqa: ANN001
        first = (str(error).splitlines() or [""])[0][:300]
        script = init_failure(str(getattr(error, "stack", "") or ""))
        call.page_failures.append(
            f"init {script} threw {getattr(error, 'name', '') or 'Error'}: "
            f"{(getattr(error, 'message', '') or first)[:300]} — the page ran on without it"
            if script
            else f"uncaught error: {first}"
        )
        # `mode=console` is every console message *and* uncaught error: the source is the script the stack names.
        where = re.search(
            r"(https?://[^\s)]+?)(?::\d+){0,2}\)?$",
            next((line for line in str(getattr(error, "stack", "") or "").splitlines()[1:] if "http" in line), ""),
        )
        call.console.append(
            {
                "level": "error",
                "text": f"uncaught {getattr(error, 'name', '') or 'Error'}: "
                f"{(getattr(error, 'message', '') or first)[:2000]}",
                "uncaught": True,
                "source": scrub_url(where.group(1) if where else page.url),
            }
        )

    on("pageerror", uncaught)

    def console(msg) -> None:  # noqa: ANN001
        where = (msg.location or {}).get("url", "")
        call.console.append({"level": msg.type, "text": msg.text[:2000], "source": scrub_url(str(where))})
        if msg.type == "error" and not str(where).endswith("/favicon.ico"):
            call.page_failures.append(f"console {msg.type}: {msg.text[:300]}")

    on("console", console)
    on(
        "requestfailed",
        lambda request: (
            call.page_failures.append(f"request failed: {scrub_url(request.url)[:200]} ({request.failure})")
            if request.failure and "ERR_ABORTED" not in str(request.failure)
            else None
        ),
    )

    def finished(request) -> None:  # noqa: ANN001
        # The response and its timing are already on this side (the `response` event came first); the size is
        # the Content-Length the server declared, and asked of the browser (two round trips a request, most of a
        # warm call on a page of a few requests) only when the response declared none.
        try:
            response = request.existing_response
            if response is None:  # finished without one: nothing to list (as the browser's sizes would say)
                return
            timing = request.timing
            declared = _declared_bytes(request, response)
            size = declared if declared is not None else _body_bytes(response, request.sizes().get("responseBodySize"))
        except Exception:  # noqa: BLE001 - a page closing under us
            return
        call.network.append(
            {
                "url": scrub_url(request.url),
                "method": request.method,
                "type": request.resource_type,
                "status": response.status,
                "bytes": size,
                "ms": round(timing["responseEnd"]) if timing.get("responseEnd", -1) >= 0 else None,
            }
        )

    on("requestfinished", finished)
    if _waits_on_exchanges(call.args.get("actions")):
        # A `wait` on a request or response counts one the page made earlier in the call. The network list above
        # has a request only once its body has finished: one whose response came during an earlier step, its body
        # still arriving, was in neither — and the wait then missed it. Only calls with such a wait listen.
        on("request", lambda request: call.exchanges["request"].append(request.url))
        on("response", lambda response: call.exchanges["response"].append(response.url))
    glob = call.args.get("capture")
    if glob:
        on("response", lambda response: call.captured.append(response) if glob_match(response.url, str(glob)) else None)
    on(
        "dialog",
        lambda dialog: (
            dialog.accept(*([str(call.dialog[1])] if call.dialog[1] is not None else []))
            if call.dialog[0] == "accept"
            else dialog.dismiss()
        ),
    )
