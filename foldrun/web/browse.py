"""`web action=browse`: a real browser (Playwright's sync API over the system Chromium).

The browser is launched on demand by a `BrowserPool` and closed at step end
(or when idle); each call gets a fresh context unless it names a `session`,
whose context (cookies, localStorage — a login) is kept for the rest of the
step and its storage written to `outputs/.browser/<session>/state.json` so a
later step of the run starts signed in. `state` does the same across runs
under `state/browser/<name>.json`.

Steps (`actions`) run in order before the page is read; `expect` claims stop
the call when wrong; `get` and `eval` answers are the call's results. A number
read with `mode=aria` is written `"@e4"` in a later call and found again by its
role and name, or refused when the page changed (spec "Numbered elements").
"""
from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from foldrun.contract import web_engines as W

from . import pages
from .errors import WebToolError
from .net import GuardProxy, NoSuchHost, PrivateAddress, Refused, checked_addresses, scrub_url

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import BrowserContext, Locator, Page

    from .tool import WebTool

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run",
               # WebRTC held to proxied transports: no UDP around the guard proxy.
               "--force-webrtc-ip-handling-policy=disable_non_proxied_udp"]
VIEWPORT = {"width": 1366, "height": 900}
RESOURCE_TYPES = frozenset({"document", "stylesheet", "image", "media", "font", "script", "texttrack", "xhr", "fetch",
                            "eventsource", "websocket", "manifest", "other"})
IDLE_SECONDS = 15 * 60
ACTION_TIMEOUT_MS = 10_000
FIRST_TRY_MS = 1_500        # the plain click's own try, before the keyboard and the label
MAX_OUTPUT = 18_000
BUILT_MODES = ("text", "markdown", "html", "aria", "meta", "table", "network", "capture", "links", "screenshot",
               "pdf", "console", "diff", "feed", "a11y", "vitals")
BUILT_STEPS = ("click", "dblclick", "rightclick", "hover", "check", "uncheck", "fill", "type", "press", "select",
               "wait", "goto", "scroll", "back", "forward", "reload", "focus", "clear", "keyboard", "get", "eval",
               "expect", "if", "screenshot", "pdf", "viewport", "extract", "cookie", "localstorage", "sessionstorage",
               "dialog", "login", "upload", "download", "mock", "unmock", "offline", "mouse", "wheel", "keydown",
               "keyup", "highlight", "insert", "tab", "frame", "drag", "paste", "pushstate", "clipboard")
# Block settings with no implementation here: a file that sets one is refused, not ignored.
UNBUILT_SETTINGS = ("proxy", "captcha", "captcha_solver", "live", "video", "extensions", "init", "webgpu",
                    "storage", "storage_origin", "headless", "version", "boundaries")
# Steps that may have acted: a call carrying one is a write (spec "Slim steps and a lost pod").
ACTING_STEPS = frozenset({"click", "dblclick", "rightclick", "check", "uncheck", "drag", "fill", "type", "login",
                          "insert", "press", "select", "upload", "paste", "eval", "keyboard", "keydown", "keyup",
                          "mouse", "tap", "swipe", "dialog", "solve", "webmcp", "clipboard", "cookie", "localstorage",
                          "sessionstorage", "pushstate", "download"})
INTERACTIVE_ROLES = frozenset({"button", "link", "textbox", "searchbox", "checkbox", "radio", "combobox", "listbox",
                               "option", "slider", "spinbutton", "switch", "tab", "menuitem", "menuitemcheckbox",
                               "menuitemradio", "treeitem"})
_SNAPSHOT_LINE = re.compile(r'^(\s*)- (?P<role>[a-zA-Z]+)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?P<rest>.*?)\[ref=(?P<ref>[a-z0-9]+)\]')


# ------------------------------------------------------------------ the browser

class BrowserPool:
    """One Chromium for a worker process (or a test module), launched on first use.

    Playwright's sync objects belong to the thread that made them, so the pool
    is used from one thread; a call from another thread is refused rather than
    corrupting the driver.
    """

    def __init__(self, executable: str | None = None, args: list[str] | None = None,
                 idle_seconds: float = IDLE_SECONDS) -> None:
        self.executable = executable
        self.args = list(args or LAUNCH_ARGS)
        self.idle_seconds = idle_seconds
        self._playwright = None
        self._browser = None
        self._thread: int | None = None
        self._devices: dict | None = None
        self.last_used = 0.0
        self.launches = 0
        self.users = 0

    def browser(self):  # noqa: ANN201
        if self._thread is not None and self._thread != threading.get_ident():
            raise WebToolError("browse: the browser belongs to another thread of this worker")
        if self._browser is not None and not self._browser.is_connected():
            self.close()
        if self._browser is None:
            executable = self.executable or find_chromium()
            if executable is not None and not Path(executable).exists():
                raise WebToolError(f"browse: no browser at {executable}. {INSTALL_SENTENCE}")
            from playwright.sync_api import sync_playwright

            self._playwright = sync_playwright().start()
            self._thread = threading.get_ident()
            try:  # no system Chromium: Playwright's own download, where `playwright install chromium` put one
                self._browser = self._playwright.chromium.launch(executable_path=executable, args=self.args,
                                                                headless=True)
            except Exception as exc:  # noqa: BLE001
                self.close()
                if "Executable doesn't exist" in str(exc) or "playwright install" in str(exc):
                    raise WebToolError(f"browse: no browser was found. {INSTALL_SENTENCE}") from None
                raise
            self.launches += 1
        self.last_used = time.monotonic()
        return self._browser

    def devices(self) -> dict:
        """Playwright's device descriptors ("Pixel 7", "iPhone 15")."""
        if self._devices is None:
            self.browser()
            self._devices = dict(self._playwright.devices)
        return self._devices

    def acquire(self) -> "BrowserPool":
        self.users += 1
        return self

    def release(self) -> None:
        """One user (a step's WebTool) is done; the last one out closes the browser."""
        self.users = max(0, self.users - 1)
        if self.users == 0:
            self.close()

    def holds(self, launch: int | None) -> bool:
        """True while the browser of that launch is still the one running."""
        return self._browser is not None and self._browser.is_connected() and launch == self.launches

    def alive(self) -> bool:
        """False when a browser was launched and has since gone (closed, crashed)."""
        return self._browser is None or self._browser.is_connected()

    def idle(self) -> bool:
        return self._browser is not None and time.monotonic() - self.last_used > self.idle_seconds

    def close(self) -> None:
        try:
            if self._browser is not None:
                self._browser.close()
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
        try:
            if self._playwright is not None:
                self._playwright.stop()
        except Exception:  # noqa: BLE001
            pass
        self._browser = self._playwright = None
        self._thread = None


class BrowseState:
    """One step's contexts: a `session` name holds its context until the step ends."""

    def __init__(self) -> None:
        self.sessions: dict[str, "BrowserContext"] = {}
        self.holders: dict[str, dict] = {}   # session -> {"call": the Call now using it}
        self.seeded: set[str] = set()        # sessions a cookie secret seeded
        self.proxies: list[GuardProxy] = []  # the sessions' guard proxies
        self.launch: dict[str, int] = {}     # session -> which launch of the pool's browser holds it

    def drop(self, name: str | None) -> None:
        if name is None:
            return
        context = self.sessions.pop(name, None)
        holder = self.holders.pop(name, None)
        self.launch.pop(name, None)
        if context is not None:
            try:
                context.close()
            except Exception:  # noqa: BLE001 - its browser is already gone
                pass
        if holder is not None and holder["call"].proxy is not None:
            holder["call"].proxy.close()

    def close(self) -> None:
        for context in self.sessions.values():
            try:
                context.close()
            except Exception:  # noqa: BLE001
                pass
        self.sessions.clear()
        for proxy in self.proxies:
            proxy.close()
        self.proxies.clear()


_threads = threading.local()


def thread_pool() -> BrowserPool:
    """This thread's browser: Playwright's sync API allows one driver per thread, so every WebTool
    in the thread shares it (acquire/release), and the last to finish closes it."""
    pool = getattr(_threads, "pool", None)
    if pool is None:
        pool = _threads.pool = BrowserPool()
    return pool


INSTALL_SENTENCE = ("Install Chromium (`apt-get install -y chromium` on a worker), or on a laptop "
                    "`npm i -g playwright@1.63.0` then `npx playwright install chromium`; FOLDRUN_CHROMIUM names "
                    "another binary")


def find_chromium() -> str | None:
    """The browser to drive: FOLDRUN_CHROMIUM, the system Chromium, else None (Playwright's own download)."""
    named = os.environ.get("FOLDRUN_CHROMIUM")
    if named:
        return named
    for candidate in (CHROMIUM, "chromium", "chromium-browser"):
        found = shutil.which(candidate) if not candidate.startswith("/") else (candidate if Path(candidate).exists() else None)
        if found:
            return found
    return None


def acts(args: dict) -> bool:
    """True when the call's steps may have changed something (a click, a fill, script …)."""
    if args.get("js"):
        return True
    try:
        steps = _steps(args.get("actions"))
    except WebToolError:
        return True  # could be either: counts as a write

    def walk(items: Any) -> bool:
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            if ACTING_STEPS & set(item):
                return True
            if walk(item.get("then")) or walk(item.get("else")):
                return True
        return False

    return walk(steps)


def _steps(raw: Any) -> list:
    if raw in (None, "", []):
        return []
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise WebToolError(f"browse: actions= is not a JSON array of steps ({exc.msg} at character {exc.pos})") from None
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(s, dict) for s in raw):
        raise WebToolError('browse: actions= must be a JSON array of steps, such as [{"click": "#go"}]')
    return raw


# ------------------------------------------------------------------ one call

class Call:
    """Everything one browse call holds while it runs."""

    def __init__(self, tool: "WebTool", args: dict) -> None:
        self.tool = tool
        self.args = args
        block = tool.config.get("browse")
        self.block: dict = block if isinstance(block, dict) else {}
        self.notes: list[str] = []          # lines at the top of the output (what a ref matched, a fallback)
        self.results: list[dict] = []       # get / eval answers
        self.page_failures: list[str] = []  # the page's own errors, one line each
        self.refused_hosts: dict[str, str] = {}
        self.session_key = str(args.get("session") or "default")
        self.secrets: dict[str, str] = {}   # name -> value used in this call, redacted from every output
        self.seeded = False                 # cookies from a secret: no script may run beside them
        self.secrets_in_steps = False       # a fill/type from a secret somewhere in the steps
        self.dialog: tuple[str, Any] = (str(args.get("dialogs") or self.block.get("dialogs") or "dismiss"),
                                        args.get("dialog_text") or self.block.get("dialog_text"))
        self.console: list[dict] = []
        self.network: list[dict] = []
        self.main_response: dict = {}
        self.captured: list = []            # responses the `capture` glob matched
        self.saved_captures: list[dict] = []
        self.proxy: GuardProxy | None = None
        self.har_target: Path | None = None   # `har`: every request and response, written when the context closes
        self.page: "Page | None" = None      # the tab the steps act on (a `tab` step moves it)
        self.scope: Any = None              # the frame a `frame` step chose, else None (the page)
        self.tabs: dict[str, "Page"] = {}   # labels given to tabs opened with "new"
        self.listened: list["Page"] = []    # pages whose failures and console this call records
        self.known_tabs = 1                 # tabs open when the steps last switched: more means a click opened one
        identities = self.block.get("identities") if isinstance(self.block.get("identities"), dict) else {}
        wanted = args.get("identity")
        if wanted and wanted not in identities:
            raise WebToolError(f"browse: identity={wanted} is not in web.browse.identities"
                               + (f"; the identities are {', '.join(identities)}" if identities else ""))
        self.identity: dict = dict(identities.get(wanted) or {}) if wanted else {}

    # -- guards ------------------------------------------------------------------
    def allowed_domains(self) -> list[str] | None:
        """The block's list is a lock; a call's may only narrow it."""
        block = [str(d).lower() for d in self.block.get("allowed_domains") or []] or None
        call = self.args.get("allowed_domains")
        if isinstance(call, str):
            call = [d.strip() for d in call.split(",") if d.strip()]
        call = [str(d).lower() for d in call or []] or None
        if block and call:
            wider = [d for d in call if not any(_domain_match(d.lstrip("*."), b) for b in block)]
            if wider:
                raise WebToolError(f"browse: allowed_domains= may only narrow the agent's list; "
                                   f"{', '.join(wider)} is outside web.browse.allowed_domains")
            return call
        return call or block

    def connect_policy(self, host: str, port: int) -> list[str]:
        """What the context's proxy may connect to for `host` (checked addresses), or Refused."""
        domains = self.allowed_domains()
        if domains and not any(_domain_match(host.lower(), d) for d in domains):
            raise Refused(f"{host} is outside this agent's allowed_domains ({', '.join(domains)})")
        if self.tool.allow_private:
            return [host]
        return checked_addresses(host, port)

    def proxy_refusal(self, url: str) -> str | None:
        """The reason the proxy refused this URL's host during this call, if it did."""
        if self.proxy is None:
            return None
        host = (urlsplit(url).hostname or "").lower()
        return next((reason for refused, reason in reversed(self.proxy.refusals) if refused.lower() == host), None)

    def host_refusal(self, url: str) -> str | None:
        """Why the browser may not reach this URL's host, or None."""
        parts = urlsplit(url)
        if parts.scheme in ("data", "blob", "about"):
            return None
        host = (parts.hostname or "").lower()
        if not host:
            return None
        if host in self.refused_hosts:
            return self.refused_hosts[host] or None
        reason = ""
        domains = self.allowed_domains()
        if domains and not any(_domain_match(host, d) for d in domains):
            reason = f"{host} is outside this agent's allowed_domains ({', '.join(domains)})"
        elif not self.tool.allow_private:
            try:
                checked_addresses(host, parts.port or (443 if parts.scheme in ("https", "wss") else 80))
            except PrivateAddress as exc:
                reason = str(exc)
            except NoSuchHost as exc:
                reason = str(exc)
        self.refused_hosts[host] = reason
        return reason or None

    def denied(self, name: str) -> None:
        deny = [str(d) for d in self.block.get("deny") or []]
        if name in deny or (name in ("eval",) and "js" in deny):
            raise WebToolError(f"browse: the action {name} is denied to this agent (web.browse.deny)")

    # -- the page ----------------------------------------------------------------
    def setting(self, key: str) -> Any:
        """A call argument beats the identity, and the identity beats the block's own defaults."""
        if self.args.get(key) not in (None, ""):
            return self.args[key]
        if self.identity.get(key) not in (None, ""):
            return self.identity[key]
        return self.block.get(key)

    def context(self) -> "BrowserContext":
        tool = self.tool
        if tool.browse_state is None:
            tool.browse_state = BrowseState()
        state = tool.browse_state
        name = self.args.get("session")
        pool = tool.browsers
        if name and name in state.sessions and not pool.holds(state.launch.get(name)):
            state.drop(name)  # its browser went away: start again from the session's saved storage
        if name and name in state.sessions:
            previous = state.holders[name]["call"]
            state.holders[name]["call"] = self  # the guard and the block list read this call's settings
            self.proxy = previous.proxy
            self.seeded = name in state.seeded
            return state.sessions[name]
        browser = pool.browser()
        locale = str(self.setting("locale") or _locale(tool.language, tool.region))
        options: dict[str, Any] = {"locale": locale, "viewport": dict(VIEWPORT),
                                   "user_agent": _desktop_user_agent(browser.version)}
        device = self.setting("device")
        if device:
            known = pool.devices()
            if device not in known:
                close = [d for d in known if str(device).lower() in d.lower()][:5]
                raise WebToolError(f"browse: device={device} is not a Playwright device name"
                                   + (f"; did you mean {', '.join(close)}?" if close else ", such as \"Pixel 7\""))
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
                raise WebToolError(f"browse: permissions {', '.join(wrong)} — the ones granted up front are "
                                   f"{', '.join(W.PERMISSIONS)}")
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
        if self.allowed_domains() or not tool.allow_private:
            # Every connection the context makes — redirect hops included — is checked when it is made.
            self.proxy = GuardProxy(lambda host, port: holder["call"].connect_policy(host, port))
            options["proxy"] = self.proxy.playwright_proxy()
        if self.har_target is not None:
            options["record_har_path"] = str(self.har_target)
        context = browser.new_context(**options)
        context.set_default_timeout(ACTION_TIMEOUT_MS)
        if name or self.allowed_domains() or not tool.allow_private or self.blocked():
            context.route("**/*", lambda route, request: holder["call"]._guard(route, request))
        self.add_cookies(context)
        if name:
            state.sessions[str(name)] = context
            state.holders[str(name)] = holder
            state.launch[str(name)] = pool.launches
            if self.proxy is not None:
                state.proxies.append(self.proxy)
            if self.seeded:
                state.seeded.add(str(name))
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
            out[str(key)] = re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: self.secret_value(m.group(1)), str(value))
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
        domain = str(self.args.get("cookie_domain") or self.identity.get("cookie_domain")
                     or self.block.get("cookie_domain") or "")
        host = (urlsplit(str(self.args.get("url") or "")).hostname or "").lower()
        if from_file:
            if not domain:
                raise WebToolError("browse: web.browse.cookies needs cookie_domain: beside it — a cookie default must "
                                   "name its site")
            if not _domain_match(host, "*." + domain.lstrip(".")):
                self.tool.log(f"browse: {host} is not {domain.lstrip('.')}, so the page opens signed out "
                              f"(web.browse.cookies belongs to {domain})")
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
        raw = self.setting("block")
        items = [i.strip() for i in raw.split(",")] if isinstance(raw, str) else [str(i) for i in raw or []]
        types = {i for i in items if i in RESOURCE_TYPES}
        return (types, [i for i in items if i and i not in RESOURCE_TYPES]) if items else (set(), [])

    def _guard(self, route, request) -> None:  # noqa: ANN001
        reason = self.host_refusal(request.url)
        types, hosts = self.blocked()
        host = (urlsplit(request.url).hostname or "").lower()
        if reason or request.resource_type in types or any(_domain_match(host, h) for h in hosts):
            route.abort("blockedbyclient")
        else:
            route.continue_()

    def storage_file(self) -> Path | None:
        """Where this call's login lives between calls: `state=` across runs, `session=` within the run."""
        if self.args.get("state"):
            return self.tool.sandbox / "state" / "browser" / f"{_safe_name(self.args['state'], 'state')}.json"
        if self.args.get("session"):
            return self.tool.sandbox / "outputs" / ".browser" / _safe_name(self.args["session"], "session") / "state.json"
        return None

    def state_key(self) -> bytes | None:
        """`state_key`: the NAME of a secret whose value encrypts the `state=` login at rest (AES-256-GCM)."""
        name = self.args.get("state_key") or self.block.get("state_key")
        if not name or not self.args.get("state"):
            return None
        import hashlib

        return hashlib.sha256(self.secret_value(str(name)).encode()).digest()

    def load_storage(self) -> dict | None:
        source = self.storage_file()
        if source is None or not source.is_file():
            return None
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except ValueError:
            raise WebToolError(f"browse: {self.tool.relative(source)} is not a saved login; delete it to start "
                               f"signed out") from None
        if isinstance(data, dict) and data.get("alg") == "AES-256-GCM":
            key = self.state_key()
            if key is None:
                raise WebToolError(f"browse: the state {self.args.get('state')} is encrypted; name its state_key — "
                                   f"an encrypted login is never started signed out")
            import base64

            from cryptography.exceptions import InvalidTag
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            try:
                plain = AESGCM(key).decrypt(base64.b64decode(data["nonce"]), base64.b64decode(data["data"]), b"foldrun-state")
            except (InvalidTag, KeyError, ValueError):
                raise WebToolError(f"browse: the state {self.args.get('state')} does not open with its state_key; "
                                   f"the key changed, or the file did") from None
            data = json.loads(plain)
        return data if isinstance(data, dict) else None

    def save_storage(self, context: "BrowserContext") -> None:
        target = self.storage_file()
        if target is None:
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(context.storage_state(), indent=1).encode()
        key = self.state_key()
        if key is not None:
            import base64
            import secrets as random

            from cryptography.hazmat.primitives.ciphers.aead import AESGCM

            nonce = random.token_bytes(12)
            sealed = AESGCM(key).encrypt(nonce, data, b"foldrun-state")
            data = json.dumps({"alg": "AES-256-GCM", "nonce": base64.b64encode(nonce).decode(),
                               "data": base64.b64encode(sealed).decode()}).encode()
        self.tool.write_file(target, data)

    # -- selectors -----------------------------------------------------------------
    def locate(self, page: "Page", selector: Any) -> "Locator":
        """A Playwright locator for a step's selector, in the frame a `frame` step chose, else the page —
        and when the page has no match, in every frame (a form inside an iframe is found without a `frame`)."""
        if not isinstance(selector, str) or not selector.strip():
            raise WebToolError("browse: a step needs a selector (CSS, text=…, role=…, or a number such as @e4)")
        selector = selector.strip()
        if re.fullmatch(r"@[ef]\d+(?:e\d+)?", selector):
            return self.by_ref(page, selector[1:])

        def build(root):  # noqa: ANN001, ANN202 - a Page or a Frame
            if selector.startswith("aria-ref="):
                return root.locator(selector)
            for prefix, method in (("label=", root.get_by_label), ("placeholder=", root.get_by_placeholder),
                                   ("alt=", root.get_by_alt_text), ("title=", root.get_by_title),
                                   ("testid=", root.get_by_test_id)):
                if selector.startswith(prefix):
                    return method(selector[len(prefix):])
            return root.locator(selector)

        if self.scope is not None:
            return build(self.scope)
        found = build(page)
        if len(page.frames) > 1 and found.count() == 0:
            for frame in page.frames[1:]:
                inside = build(frame)
                if inside.count():
                    return inside
        return found

    def by_ref(self, page: "Page", ref: str) -> "Locator":
        saved = _load_refs(self.tool.sandbox).get(self.session_key) or {}
        entry = (saved.get("refs") or {}).get(ref)
        if entry is None:
            raise WebToolError(f"@{ref} is not a number from the last mode=aria read of this session — read the page "
                               f"with mode=aria first and use its numbers")
        here = _page_key(page.url)
        if saved.get("page") != here:
            raise WebToolError(f"@{ref} was read on {saved.get('page')}, not on this page ({here}) — read this page with "
                               f"mode=aria first and use its numbers")
        role, name, nth, of = entry["role"], entry.get("name"), int(entry["nth"]), int(entry["of"])
        locator = page.get_by_role(role, name=name, exact=True) if name else page.get_by_role(role)
        what = f'{role} "{name}"' if name else role
        count = locator.count()
        if count == 0:
            raise WebToolError(f"@{ref} ({what}) is gone from the page — read the page with mode=aria again and use "
                               f"the new numbers")
        if count != of:
            raise WebToolError(f"@{ref} was {what} ({nth + 1} of {of}), and the page now has {count} of them — read "
                               f"the page with mode=aria again and use the new numbers")
        self.notes.append(f"@{ref} = {what} ({nth + 1} of {of})")
        return locator.nth(nth)

    # -- steps ---------------------------------------------------------------------
    def run_steps(self, page: "Page", steps: list[dict]) -> None:
        for index, step in enumerate(steps, 1):
            name = next((k for k in step if k in W.BROWSE_STEP_ACTIONS), None)
            if name is None:
                raise WebToolError(f"browse: step {index} ({json.dumps(step)[:80]}) names no action; the actions are "
                                   f"{', '.join(BUILT_STEPS)}")
            self.denied(name)
            if name not in BUILT_STEPS:
                raise WebToolError(f"browse: the action {name} is not built into this install yet; the ones that run "
                                   f"here: {', '.join(BUILT_STEPS)}")
            try:
                self.step(self.page or page, name, step, index)
            except WebToolError:
                raise
            except Exception as exc:  # a Playwright timeout or error: the step and what it said
                message = str(exc).split("\n", 1)[0]
                raise WebToolError(f"browse: step {index} ({name} {json.dumps(step.get(name))}) failed: "
                                   f"{message}") from None

    def step(self, page: "Page", name: str, step: dict, index: int) -> None:
        value = step[name]
        timeout = float(step.get("timeout") or ACTION_TIMEOUT_MS)
        if name in ("click", "dblclick", "rightclick", "hover", "check", "uncheck", "focus", "clear"):
            locator = self.locate(page, value)
            force = bool(step.get("force"))
            if name in ("click", "check", "uncheck") and not force:
                self.press_on(page, locator, name, value, timeout)
            elif name == "click":
                locator.click(timeout=timeout, force=force)
            elif name == "dblclick":
                locator.dblclick(timeout=timeout, force=force)
            elif name == "rightclick":
                locator.click(button="right", timeout=timeout, force=force)
            elif name == "hover":
                locator.hover(timeout=timeout, force=force)
            elif name == "check":
                locator.check(timeout=timeout, force=force)
            elif name == "uncheck":
                locator.uncheck(timeout=timeout, force=force)
            elif name == "focus":
                locator.focus(timeout=timeout)
            else:
                locator.clear(timeout=timeout)
        elif name in ("fill", "type"):
            if "secret" in step:
                text = self.secret_value(str(step["secret"]))
            else:
                text = step.get("text")
            if not isinstance(text, str):
                raise WebToolError(f'browse: step {index}: {name} needs "text" (or "secret", a secret\'s NAME)')
            locator = self.locate(page, value)
            if name == "fill":
                locator.fill(text, timeout=timeout)
            else:
                locator.press_sequentially(text, timeout=timeout)
        elif name == "press":
            key = step.get("key")
            if not isinstance(key, str):
                raise WebToolError(f'browse: step {index}: press needs "key", such as "Enter"')
            if value in ("", None):
                page.keyboard.press(key)
            else:
                self.locate(page, value).press(key, timeout=timeout)
        elif name == "select":
            choice = step.get("value")
            if choice is None:
                raise WebToolError(f'browse: step {index}: select needs "value"')
            locator = self.locate(page, value)
            try:
                locator.select_option(value=str(choice), timeout=min(timeout, 2000))
            except Exception:  # noqa: BLE001 - by the option's words, as a person reads it
                locator.select_option(label=str(choice), timeout=timeout)
        elif name == "keyboard":
            page.keyboard.type(str(value))
        elif name == "wait":
            self.wait(page, value, step, timeout)
        elif name == "goto":
            self.navigate(page, str(value))
        elif name == "scroll":
            if value == "bottom":
                page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            elif value == "top":
                page.evaluate("window.scrollTo(0, 0)")
            elif isinstance(value, (int, float)):
                page.mouse.wheel(0, float(value))
            else:
                self.locate(page, value).scroll_into_view_if_needed(timeout=timeout)
        elif name in ("back", "forward", "reload"):
            getattr(page, {"back": "go_back", "forward": "go_forward", "reload": "reload"}[name])()
        elif name == "viewport":
            if not (isinstance(value, list) and len(value) == 2):
                raise WebToolError(f"browse: step {index}: viewport takes [width, height]")
            page.set_viewport_size({"width": int(value[0]), "height": int(value[1])})
        elif name == "get":
            plain = value in ("url", "title", "localstorage", "sessionstorage")
            self.results.append({"get": value if plain else f"{step.get('what', 'text')} of {value}",
                                 "value": self.get(page, value, step)})
        elif name == "eval":
            self.no_script("eval")
            self.results.append({"eval": str(value), "value": page.evaluate(str(value))})
        elif name in ("cookie", "localstorage", "sessionstorage"):
            self.storage_step(page, name, step)
        elif name == "dialog":
            self.dialog = (str(value), step.get("text"))
        elif name == "tab":
            self.tab(page, value, step)
        elif name == "drag":
            if not step.get("to"):
                raise WebToolError(f'browse: step {index}: drag needs "to", the selector to drop on')
            self.locate(page, value).first.drag_to(self.locate(page, step["to"]).first, timeout=timeout)
        elif name == "paste":
            if "file" in step:
                markup = self.tool.sandbox_file(step["file"], arg="paste file").read_text(encoding="utf-8")
            elif isinstance(step.get("html"), str):
                markup = step["html"]
            else:
                raise WebToolError(f'browse: step {index}: paste needs "html" or "file"')
            handled = self.locate(page, value).first.evaluate(_PASTE_JS, markup)
            self.notes.append(f"paste into {value} ({'the editor took it' if handled else 'inserted as HTML'})")
        elif name == "pushstate":
            target = urljoin(page.url, str(value))
            if urlsplit(target).netloc != urlsplit(page.url).netloc or urlsplit(target).scheme != urlsplit(page.url).scheme:
                raise WebToolError(f"browse: pushstate moves a single-page app within its own origin; {value} is "
                                   f"another origin — use goto")
            page.evaluate(_PUSHSTATE_JS, target)
        elif name == "clipboard":
            page.context.grant_permissions(["clipboard-read", "clipboard-write"])
            if value == "write":
                page.evaluate("t => navigator.clipboard.writeText(t)", str(step.get("text") or ""))
            elif value == "read":
                self.no_script("clipboard read")
                self.results.append({"clipboard": "read", "value": page.evaluate("() => navigator.clipboard.readText()")})
            else:
                raise WebToolError(f'browse: step {index}: clipboard is "write" (+ text) or "read"')
        elif name == "frame":
            if value in ("", None):
                self.scope = None
            else:
                self.scope = None
                handle = self.locate(page, value).first.element_handle(timeout=timeout)
                frame = handle.content_frame() if handle is not None else None
                if frame is None:
                    raise WebToolError(f"browse: frame {value} is not an iframe on the page")
                self.scope = frame
        elif name == "login":
            self.login(page, str(value), step, timeout)
        elif name == "upload":
            source = self.tool.sandbox_file(step.get("file"), arg="upload file")
            self.locate(page, value).set_input_files(str(source), timeout=timeout)
        elif name == "download":
            self.download(page, value, step, timeout)
        elif name == "mock":
            self.mock(page, str(value), step)
        elif name == "unmock":
            if value == "*":
                page.unroute_all(behavior="ignoreErrors")
            else:
                page.unroute(str(value))
        elif name == "offline":
            page.context.set_offline(bool(value))
        elif name == "mouse":
            x, y = float(step.get("x", 0)), float(step.get("y", 0))
            if value == "move":
                page.mouse.move(x, y)
            elif value in ("down", "up"):
                page.mouse.move(x, y)
                getattr(page.mouse, value)()
            elif value == "dblclick":
                page.mouse.dblclick(x, y)
            else:
                page.mouse.click(x, y)
        elif name == "wheel":
            page.mouse.wheel(float(step.get("dx") or 0), float(value))
        elif name in ("keydown", "keyup"):
            getattr(page.keyboard, "down" if name == "keydown" else "up")(str(value))
        elif name == "highlight":
            self.locate(page, value).highlight()
        elif name == "insert":
            page.keyboard.insert_text(str(value))
        elif name == "expect":
            failure = self.claim(page, step, "expect")
            if failure:
                raise WebToolError(f"browse: expect failed at step {index}: {failure}; the steps after it did not run")
            self.notes.append(f"expect ✓ {json.dumps(step)[:120]}")
        elif name == "if":
            holds = self.claim(page, {**step, "expect": value}, "expect") is None
            branch = step.get("then" if holds else "else") or []
            self.run_steps(page, _steps(branch))
        elif name in ("screenshot", "pdf"):
            where = self.keep_file(page, name, step)
            self.notes.append(f"{name}: {where}")
        elif name == "extract":
            rows = self.extract(page, value, step)
            self.results.append({"extract": value, "rows": rows})
            self.tool.write_file(self.tool.sandbox / "outputs" / "extracted.json",
                                 json.dumps(rows, indent=1, ensure_ascii=False).encode())

    def press_on(self, page: "Page", locator: "Locator", name: str, selector: Any, timeout: float) -> None:
        """click / check / uncheck, falling back when the pointer cannot reach the element.

        A control drawn over its hidden real input, or one under a fixed banner,
        fails a plain click. After a short first try: the keyboard (Space on a
        checkbox, radio or switch, Enter on a button or link), then the control's
        label — and a toggle is read back rather than trusting the press.
        """
        first_try = min(timeout, FIRST_TRY_MS)
        try:
            if name == "click":
                locator.click(timeout=first_try)
            elif name == "check":
                locator.check(timeout=first_try)
            else:
                locator.uncheck(timeout=first_try)
            return
        except Exception as exc:  # noqa: BLE001 - the fallbacks below, else this error
            first_error = exc
        element = locator.first
        try:
            kind = element.evaluate("e => [e.tagName.toLowerCase(), (e.type || '').toLowerCase(), "
                                    "(e.getAttribute('role') || '').toLowerCase()]", timeout=timeout)
        except Exception:  # noqa: BLE001 - not on the page at all: the plain error says so
            raise first_error from None
        toggle = kind[1] in ("checkbox", "radio") or kind[2] in ("checkbox", "radio", "switch")
        if name in ("check", "uncheck") and not toggle:
            raise first_error
        want = None if not toggle else (name != "uncheck" if name != "click" else not self._checked(element))
        key = "Space" if toggle else "Enter"
        label = f"{name} {selector}"
        try:
            element.focus(timeout=FIRST_TRY_MS)
            page.keyboard.press(key)
            if want is None or self._checked(element) == want:
                self.notes.append(f"{label} (by keyboard ({key}) — the pointer could not reach it)")
                return
        except Exception:  # noqa: BLE001 - then the label
            pass
        try:
            clicked = element.evaluate("e => { const l = e.labels && e.labels[0]; if (!l) return false; l.click(); "
                                       "return true; }")
            if clicked and (want is None or self._checked(element) == want):
                self.notes.append(f"{label} (by its label — the pointer could not reach it)")
                return
        except Exception:  # noqa: BLE001
            pass
        message = str(first_error).split("\n", 1)[0]
        raise WebToolError(f"browse: {label} failed by pointer, keyboard ({key}) and label: {message} — try "
                           f"\"force\": true, which sends the click to the element itself")

    @staticmethod
    def _checked(element: "Locator") -> bool:
        return bool(element.evaluate("e => e.getAttribute('aria-checked') !== null ? "
                                     "e.getAttribute('aria-checked') === 'true' : !!e.checked"))

    def wait(self, page: "Page", value: Any, step: dict, timeout: float) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            page.wait_for_timeout(min(float(value), 30_000))
        elif value in ("load", "domcontentloaded", "networkidle"):
            page.wait_for_load_state(value, timeout=timeout)
        elif value == "navigation":
            page.wait_for_load_state("load", timeout=timeout)
        elif value == "url":
            pattern = step.get("matches") or step.get("contains")
            page.wait_for_url(re.compile(str(pattern)) if step.get("matches") else f"**{pattern}**", timeout=timeout)
        elif value == "text":
            page.get_by_text(str(step.get("text"))).first.wait_for(timeout=timeout)
        elif value == "fn":
            self.no_script("eval")
            page.wait_for_function(str(step.get("js")), timeout=timeout)
        else:
            state = "hidden" if step.get("gone") else "visible"
            self.locate(page, value).first.wait_for(state=state, timeout=timeout)

    def get(self, page: "Page", value: Any, step: dict) -> Any:
        if value == "url":
            return page.url
        if value == "title":
            return page.title()
        if value in ("localstorage", "sessionstorage"):
            if self.seeded:
                raise WebToolError(f"browse: a get of {value} is refused where a secret seeded the session")
            store = "localStorage" if value == "localstorage" else "sessionStorage"
            return page.evaluate(f"k => window.{store}.getItem(k)", str(step.get("key") or ""))
        what = step.get("what") or "text"
        if what in ("value", "html") and self.secrets:
            raise WebToolError("browse: a call that fills a secret reads no field back (get of a value) — read the "
                               "page in the next call of the same session")
        locator = self.locate(page, value)
        if what == "count":
            return locator.count()
        first = locator.first
        if what == "text":
            return first.inner_text()
        if what == "html":
            return first.inner_html()
        if what == "value":
            return first.input_value()
        if what == "visible":
            return first.is_visible()
        if what == "checked":
            return first.is_checked()
        if what == "enabled":
            return first.is_enabled()
        if what == "attr":
            return first.get_attribute(str(step.get("attr")))
        if what == "box":
            return first.bounding_box()
        raise WebToolError(f"browse: get what={what} is not one of text, html, value, count, box, visible, checked, "
                           f"enabled, attr")

    def claim(self, page: "Page", step: dict, key: str) -> str | None:
        """None when the claim holds, else what was found instead."""
        subject = step.get(key)
        if subject in ("url", "title", "text"):
            actual = page.url if subject == "url" else page.title() if subject == "title" else page.inner_text("body")
            return _compare(subject, actual, step)
        locator = self.locate(page, subject)
        if step.get("gone"):
            return None if locator.count() == 0 or not locator.first.is_visible() else f"{subject} is still there"
        if "count" in step:
            count = locator.count()
            return None if count == int(step["count"]) else f"{subject}: {count} found, not {step['count']}"
        first = locator.first
        if locator.count() == 0 or not first.is_visible():  # the page as it stands: a claim does not wait
            return f"{subject} is not on the page"
        if "text" in step and str(step["text"]) not in first.inner_text():
            return f"{subject} reads {first.inner_text()[:120]!r}, without {step['text']!r}"
        if "value" in step and first.input_value() != str(step["value"]):
            return f"{subject} holds {first.input_value()!r}, not {step['value']!r}"
        if "checked" in step and first.is_checked() != bool(step["checked"]):
            return f"{subject} is {'' if first.is_checked() else 'not '}checked"
        if "enabled" in step and first.is_enabled() != bool(step["enabled"]):
            return f"{subject} is {'' if first.is_enabled() else 'not '}enabled"
        if "attr" in step:
            return _compare(f"{subject}@{step['attr']}", first.get_attribute(str(step["attr"])) or "", step)
        return None

    def redact(self, text: str) -> str:
        for name, value in self.secrets.items():
            if value and len(value) >= 4:
                text = text.replace(value, f"[secret {name}]")
        return text

    def confirm(self, page: "Page", selector: str) -> None:
        """Reload, and require the selector in what the server now returns."""
        page.reload(wait_until="load")
        locator = page.get_by_text(selector[5:]) if selector.startswith("text=") else self.locate(page, selector)
        if locator.count() == 0:
            raise WebToolError(f"browse: confirm={selector} is not on the page after a reload — the change did not "
                               f"stick. Do not retry: a refused write is a session or a permission, not a flake")
        self.notes.append(f"confirm ✓ {selector} after a reload")

    def no_script(self, what: str) -> None:
        """`js`, `eval` and script by another name never run beside a secret's cookies or a filled secret."""
        self.denied("js" if what == "js" else "eval")
        if self.seeded:
            raise WebToolError(f"browse: {what} does not run in a call that carries cookies from a secret, or in a "
                               f"session those cookies seeded — document.cookie is one expression away")
        if self.secrets_in_steps or self.secrets:
            raise WebToolError(f"browse: {what} does not run in a call that fills a secret — script could read the "
                               f"field; sign in with session= and read in the next call")

    def storage_step(self, page: "Page", name: str, step: dict) -> None:
        value = step[name]
        if name == "cookie":
            host = (urlsplit(page.url).hostname or "")
            if step.get("delete"):
                if value == "*":
                    page.context.clear_cookies()
                else:
                    page.context.clear_cookies(name=str(value))
                return
            page.context.add_cookies([{"name": str(value), "value": str(step.get("value") or ""),
                                       "domain": str(step.get("domain") or host), "path": str(step.get("path") or "/")}])
            return
        store = "localStorage" if name == "localstorage" else "sessionStorage"
        if step.get("delete"):
            script = f"k => k === '*' ? window.{store}.clear() : window.{store}.removeItem(k)"
            page.evaluate(script, str(value))
        else:
            page.evaluate(f"([k, v]) => window.{store}.setItem(k, v)", [str(value), str(step.get("value") or "")])

    def tab(self, page: "Page", value: Any, step: dict) -> None:
        """Switch to a tab a click opened (`1`, `"last"`), open one (`"new"` + url, + label), or close this one."""
        context = page.context
        if value == "new":
            self.denied("goto")
            target = context.new_page()
            _listen(self, target)
            if step.get("label"):
                self.tabs[str(step["label"])] = target
            self.page, self.scope = target, None
            self.known_tabs = len(context.pages)
            if step.get("url"):
                self.navigate(target, str(step["url"]))
            return
        wants_opened = value == "last" or (isinstance(value, int) and not isinstance(value, bool)
                                           and value >= len(context.pages))
        if wants_opened and len(context.pages) <= self.known_tabs:
            try:  # a click's new tab opens a moment after the click returns
                context.wait_for_event("page", timeout=3000)
            except Exception:  # noqa: BLE001 - none came: the tabs as they stand
                pass
        if value == "close":
            page.close()
            if not context.pages:
                raise WebToolError("browse: tab close closed the last tab; nothing is left to read")
            target = context.pages[-1]
        elif value == "last":
            target = context.pages[-1]
        elif isinstance(value, int) and not isinstance(value, bool):
            if not 0 <= value < len(context.pages):
                raise WebToolError(f"browse: tab {value}: there are {len(context.pages)} tabs, numbered from 0")
            target = context.pages[value]
        elif str(value) in self.tabs:
            target = self.tabs[str(value)]
        else:
            raise WebToolError(f'browse: tab takes a number, "last", "new", "close" or a label it was given; '
                               f"{value!r} is none of them")
        if target not in self.listened:
            _listen(self, target)
        target.wait_for_load_state("load")
        target.bring_to_front()
        self.page, self.scope = target, None
        self.known_tabs = len(context.pages)

    def login(self, page: "Page", name: str, step: dict, timeout: float) -> None:
        """Sign in from a credential secret the model never sees.

        The secret holds {"username", "password"} as JSON (optionally `url` and the three selectors) or
        `user:pass`. With a `url` it goes there first and fills no form on any other origin.
        """
        raw = self.secret_value(name)
        try:
            cred = json.loads(raw)
        except ValueError:
            user, sep, password = raw.partition(":")
            if not sep:
                raise WebToolError(f'browse: login: the secret {name} is neither {{"username", "password"}} as JSON '
                                   f"nor user:pass") from None
            cred = {"username": user, "password": password}
        if not isinstance(cred, dict) or not cred.get("password"):
            raise WebToolError(f'browse: login: the secret {name} has no "password"')
        self.secrets[f"{name}"] = str(cred["password"])  # redacted as [secret NAME] wherever it shows
        origin = None
        if cred.get("url"):
            self.denied("goto")
            self.navigate(page, str(cred["url"]))
            parts = urlsplit(str(cred["url"]))
            origin = f"{parts.scheme}://{parts.netloc}"

        def same_origin() -> None:
            here = urlsplit(page.url)
            if origin and f"{here.scheme}://{here.netloc}" != origin:
                raise WebToolError(f"browse: login: the page is on {here.scheme}://{here.netloc}, not {origin} where "
                                   f"the secret {name} signs in — its form is not filled")

        def field(selector: str | None, guesses: tuple[str, ...]) -> "Locator | None":
            for candidate in ((selector,) if selector else guesses):
                for frame in page.frames:
                    found = frame.locator(candidate)
                    if found.count() and found.first.is_visible():
                        return found.first
            return None

        user_guesses = ("input[autocomplete=username]", "input[type=email]", "input[name*=user i]",
                        "input[name*=email i]", "input[id*=user i]", "input[type=text]")
        same_origin()
        password = field(cred.get("password_selector"), ("input[type=password]",))
        user = field(cred.get("username_selector"), user_guesses)
        if user is not None and cred.get("username"):
            user.fill(str(cred["username"]), timeout=timeout)
        if password is None:  # a username-then-password form: submit the first half, then look again
            if user is None:
                raise WebToolError("browse: login: no sign-in form on the page (no password field or user name field)")
            user.press("Enter")
            page.wait_for_load_state("load")
            same_origin()
            password = page.locator(cred.get("password_selector") or "input[type=password]").first
            password.wait_for(state="visible", timeout=timeout)
        password.fill(str(cred["password"]), timeout=timeout)
        if cred.get("submit_selector"):
            page.locator(str(cred["submit_selector"])).first.click(timeout=timeout)
        else:
            password.press("Enter")
        page.wait_for_load_state("load")
        self.notes.append(f"login: signed in from the secret {name}")

    def download(self, page: "Page", value: Any, step: dict, timeout: float) -> None:
        """`download` from a control (or a URL) to `outputs/<to>`."""
        to = str(step.get("to") or "")
        with page.expect_download(timeout=max(timeout, 30_000)) as caught:
            if isinstance(value, str) and value.startswith(("http://", "https://")):
                self.denied("goto")
                reason = self.host_refusal(value)
                if reason:
                    raise WebToolError(f"browse: {scrub_url(value)} was not downloaded — {reason}")
                page.evaluate("u => { const a = document.createElement('a'); a.href = u; a.download = ''; "
                              "document.body.appendChild(a); a.click(); a.remove(); }", value)
            else:
                self.locate(page, value).click(timeout=timeout)
        got = caught.value
        name = to or got.suggested_filename or "download"
        target = self.tool.save_target(name if name.startswith("outputs/") else f"outputs/{name}")
        temp = got.path()
        self.tool.write_file(target, Path(temp).read_bytes())
        self.notes.append(f"download: {self.tool.relative(target)} ({Path(temp).stat().st_size:,} bytes)")

    def mock(self, page: "Page", glob: str, step: dict) -> None:
        """Answer for the server on every request matching the glob, from now on."""
        if step.get("abort"):
            page.route(glob, lambda route: route.abort())
            return
        headers = {str(k): str(v) for k, v in (step.get("headers") or {}).items()}
        if "json" in step:
            body, headers = json.dumps(step["json"]).encode(), {"content-type": "application/json", **headers}
        elif "file" in step:
            body = self.tool.sandbox_file(step["file"], arg="mock file").read_bytes()
        else:
            body = str(step.get("body") or "").encode()
        status = int(step.get("status") or 200)
        page.route(glob, lambda route: route.fulfill(status=status, headers=headers, body=body))

    def keep_file(self, page: "Page", kind: str, step: dict) -> str:
        name = step.get(kind) if isinstance(step.get(kind), str) and step.get(kind) else "page"
        suffix = ".pdf" if kind == "pdf" else (".jpg" if str(name).lower().endswith((".jpg", ".jpeg")) else ".png")
        stem = re.sub(r"[^A-Za-z0-9_.-]", "-", str(name)).removesuffix(suffix).removesuffix(".jpeg") or "page"
        target = self.tool.save_target(f"outputs/{stem}{suffix}")
        if kind == "pdf":
            data = page.pdf()
        elif step.get("selector"):
            data = self.locate(page, step["selector"]).screenshot()
        else:
            options: dict[str, Any] = {"full_page": step.get("full", True) is not False}
            if suffix == ".jpg":
                options.update(type="jpeg", quality=int(step.get("quality") or 60))
            data = page.screenshot(**options)
        return self.tool.write_file(target, data)

    def extract(self, page: "Page", selector: Any, step: dict) -> list[dict]:
        fields = step.get("fields") or {}
        if not isinstance(fields, dict) or not fields:
            raise WebToolError('browse: extract needs "fields", such as {"name": "h3", "url": "a@href"}')
        limit = int(step.get("limit") or 1000)
        return page.evaluate(_EXTRACT_JS, {"selector": str(selector), "fields": fields, "limit": limit})

    def navigate(self, page: "Page", url: str) -> None:
        reason = self.host_refusal(url)
        if reason:
            raise WebToolError(f"browse: {scrub_url(url)} was not opened — {reason}")
        seen = len(self.proxy.refusals) if self.proxy is not None else 0
        try:
            response = page.goto(url, wait_until="load", timeout=self.tool.browse_timeout * 1000)
        except Exception as exc:  # noqa: BLE001
            host = (urlsplit(url).hostname or "").lower()
            refused = self.refused_hosts.get(host) or (self.proxy.refusals[-1][1] if self.proxy is not None
                                                       and len(self.proxy.refusals) > seen else None)
            if refused:
                raise WebToolError(f"browse: {scrub_url(url)} was not opened — {refused}") from None
            message = str(exc).split("\n", 1)[0]
            if "ERR_INVALID_AUTH_CREDENTIALS" in message:
                held = "the user:pass in auth= was refused" if self.setting("auth") else \
                    "pass auth=, the NAME of a secret holding user:pass"
                raise WebToolError(f"browse: {scrub_url(url)} asks for HTTP basic auth; {held}") from None
            if "Download is starting" in message:
                raise WebToolError(f"browse: {scrub_url(url)} is a download, not a page — fetch it with mode=raw and "
                                   f"save= to keep the bytes") from None
            raise WebToolError(f"browse: {scrub_url(url)} did not open: {message}") from None
        if response is not None and response.status == 403 and self.proxy_refusal(response.url):
            hop = "" if response.url == url else f" (redirected to {scrub_url(response.url)})"
            raise WebToolError(f"browse: {scrub_url(url)} was not opened{hop} — {self.proxy_refusal(response.url)}")
        if response is not None:
            hops = []
            request = response.request.redirected_from
            while request is not None:
                hops.insert(0, scrub_url(request.url))
                request = request.redirected_from
            headers = {k: v for k, v in response.headers.items() if k.lower() != "set-cookie"}  # Set-Cookie withheld
            self.main_response = {"url": scrub_url(response.url), "status": response.status, "redirects": hops,
                                  "contentType": headers.get("content-type"), "headers": headers}
            if response.status >= 400:
                self.notes.append(f"the page answered HTTP {response.status}")


def _compare(label: str, actual: str, step: dict) -> str | None:
    if "equals" in step:
        return None if actual == str(step["equals"]) else f"{label} is {actual[:160]!r}, not {step['equals']!r}"
    if "contains" in step:
        return None if str(step["contains"]) in actual else f"{label} is {actual[:160]!r}, without {step['contains']!r}"
    if "matches" in step:
        return None if re.search(str(step["matches"]), actual) else f"{label} is {actual[:160]!r}, not matching {step['matches']!r}"
    return None if actual else f"{label} is empty"


_EXTRACT_JS = """({selector, fields, limit}) => {
  const rows = [];
  for (const el of Array.from(document.querySelectorAll(selector)).slice(0, limit)) {
    const row = {};
    for (const [key, spec] of Object.entries(fields)) {
      const at = spec.lastIndexOf('@');
      const sel = at > 0 ? spec.slice(0, at) : (at === 0 ? '' : spec);
      const attr = at >= 0 ? spec.slice(at + 1) : null;
      const found = sel ? el.querySelector(sel) : el;
      row[key] = !found ? null : attr ? (attr === 'href' || attr === 'src' ? found[attr] || found.getAttribute(attr) : found.getAttribute(attr)) : found.innerText.trim();
    }
    rows.push(row);
  }
  return rows;
}"""

_TABLES_JS = """() => Array.from(document.querySelectorAll('table')).map(t => {
  let heading = null;
  for (let el = t.previousElementSibling; el; el = el.previousElementSibling) {
    if (/^H[1-6]$/.test(el.tagName)) { heading = el.innerText.trim(); break; }
  }
  const caption = t.caption ? t.caption.innerText.trim() : null;
  const rows = Array.from(t.rows).map(r => Array.from(r.cells).map(c => c.innerText.trim()));
  const head = rows.length ? rows[0] : [];
  return {heading: caption || heading, rows: rows.slice(1).map(r => Object.fromEntries(head.map((h, i) => [h || String(i), r[i] ?? null])))};
})"""

# A real paste: a ClipboardEvent carrying text/html, which rich editors handle themselves;
# an element that ignores it gets the HTML inserted, so headings, links and lists survive either way.
_PASTE_JS = """(el, html) => {
  el.focus();
  const data = new DataTransfer();
  data.setData('text/html', html);
  data.setData('text/plain', html.replace(/<[^>]+>/g, ''));
  const event = new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true});
  const handled = !el.dispatchEvent(event);
  if (!handled) {
    if (el.isContentEditable) { document.execCommand('insertHTML', false, html); }
    else if ('value' in el) { el.value += data.getData('text/plain'); el.dispatchEvent(new Event('input', {bubbles: true})); }
  }
  return handled;
}"""

# A single-page app's own route change: Next.js's router when it exposes one, else pushState and popstate.
_PUSHSTATE_JS = """(url) => {
  const router = window.next && window.next.router;
  if (router && typeof router.push === 'function') { router.push(url); return 'router'; }
  history.pushState({}, '', url);
  window.dispatchEvent(new PopStateEvent('popstate', {state: {}}));
  return 'history';
}"""

_LINKS_JS = """() => Array.from(document.querySelectorAll('a[href]')).map(a => ({text: a.innerText.trim(), href: a.href}))
  .filter(l => !l.href.startsWith('javascript:'))"""


def _domain_match(host: str, pattern: str) -> bool:
    """`*.example.com` covers the subdomains and the bare domain."""
    pattern = pattern.lower().strip()
    if pattern.startswith("*."):
        bare = pattern[2:]
        return host == bare or host.endswith("." + bare)
    return host == pattern or fnmatch.fnmatch(host, pattern)


def _locale(language: str, region: str | None) -> str:
    tag = language or "en"
    if "-" not in tag and region:
        tag = f"{tag}-{region.upper()}"
    return tag


def _desktop_user_agent(version: str) -> str:
    """A desktop user agent carrying the version of the Chromium actually running (never HeadlessChrome)."""
    major = (version or "0").split(".")[0]
    return (f"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{major}.0.0.0 "
            f"Safari/537.36")


def _safe_name(raw: Any, what: str) -> str:
    name = str(raw).strip()
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name) or ".." in name:
        raise WebToolError(f"browse: {what}= is a name of letters, digits, - _ and ., such as client-portal")
    return name


def _page_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path or '/'}"


def _refs_file(sandbox: Path) -> Path:
    return sandbox / "outputs" / ".browser" / "refs.json"


def _load_refs(sandbox: Path) -> dict:
    try:
        return json.loads(_refs_file(sandbox).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def parse_snapshot(snapshot: str) -> dict[str, dict]:
    """`- button "Delete" [ref=e5]` → {e5: {role, name, nth, of}}, nth counting the same role and name."""
    entries: list[tuple[str, str, str | None]] = []
    for line in snapshot.splitlines():
        match = _SNAPSHOT_LINE.match(line)
        if not match:
            continue
        name = json.loads(match.group("name")) if match.group("name") else None
        entries.append((match.group("ref"), match.group("role"), name))
    totals: dict[tuple[str, str | None], int] = {}
    for _ref, role, name in entries:
        totals[(role, name)] = totals.get((role, name), 0) + 1
    seen: dict[tuple[str, str | None], int] = {}
    refs: dict[str, dict] = {}
    for ref, role, name in entries:
        nth = seen.get((role, name), 0)
        seen[(role, name)] = nth + 1
        refs[ref] = {"role": role, "name": name, "nth": nth, "of": totals[(role, name)]}
    return refs


def interactive_lines(snapshot: str) -> str:
    """`interactive=true`: only the numbered things one can act on, one per line, with a link's target."""
    lines = snapshot.splitlines()
    out: list[str] = []
    for index, line in enumerate(lines):
        match = _SNAPSHOT_LINE.match(line)
        if not match or match.group("role") not in INTERACTIVE_ROLES:
            continue
        text = line.strip().removeprefix("- ").rstrip(":")
        text = re.sub(r"\s*\[cursor=pointer\]", "", text)
        if match.group("role") == "link" and index + 1 < len(lines) and lines[index + 1].strip().startswith("- /url:"):
            text += " -> " + lines[index + 1].strip().removeprefix("- /url:").strip()
        out.append(text)
    return "\n".join(out) or "nothing on the page can be acted on"


# ------------------------------------------------------------------ the action

def _uses_secret(steps: list) -> bool:
    for step in steps:
        if not isinstance(step, dict):
            continue
        if "secret" in step or "login" in step or _uses_secret(step.get("then") or []) or _uses_secret(step.get("else") or []):
            return True
    return False


def run(tool: "WebTool", args: dict) -> str:
    """The whole `browse` action. Preconditions: allowed, not a test run."""
    url = args.get("url")
    if not isinstance(url, str) or not url.strip():
        raise WebToolError("browse needs url= — the page to open")
    url = url.strip()
    if urlsplit(url).scheme not in ("http", "https") or not urlsplit(url).hostname:
        raise WebToolError(f"{scrub_url(url)}: browse opens http and https URLs only")
    explicit_mode = args.get("mode") not in (None, "")
    mode = str(args.get("mode") or "text").strip().lower()
    if mode not in W.BROWSE_MODES:
        raise WebToolError(f"browse mode={mode} is not one of {', '.join(W.BROWSE_MODES)}")
    if mode not in BUILT_MODES:
        raise WebToolError(f"browse mode={mode} is not built into this install yet; the modes that are: "
                           f"{', '.join(BUILT_MODES)}")
    call = Call(tool, args)
    vendor = tool.provider_for("browse")
    if vendor is not None:
        raise WebToolError(f"web.browse: rendering on {vendor['name']} is not built into this install yet; leave "
                           f"web.browse's via unset to render in the account's own browser")
    engine_word = args.get("browser") or args.get("engine") or call.identity.get("engine") or \
        call.block.get("engine") or call.block.get("browser")
    engine = W.engine_name(engine_word) if engine_word else W.DEFAULT_ENGINE
    if engine is None:
        raise WebToolError(f"browse: browser={engine_word} is not an engine; the engines are {', '.join(W.ENGINES)}")
    if engine == "chrome":
        tool.log("browse: Google Chrome is not in this runner image; running Chromium")
    elif engine != "chromium":
        raise WebToolError(f"browse: this runner image was built without {engine}; it has chromium "
                           f"(and chrome, which runs as Chromium here)")
    for key in UNBUILT_SETTINGS:  # a setting the file asks for is never quietly dropped
        value = call.identity.get(key) if key in call.identity else call.block.get(key)
        if value not in (None, "", False, [], {}) or (key == "headless" and value is False):
            where = "web.browse.identities" if key in call.identity else "web.browse"
            raise WebToolError(f"browse: {where} {key} is not built into this install yet; drop it to browse "
                               f"without it")
    steps = _steps(args.get("actions"))
    claims = _steps(args.get("expect")) if args.get("expect") not in (None, "") else []
    routes = _steps(args.get("routes")) if args.get("routes") not in (None, "") else []
    call.secrets_in_steps = _uses_secret(steps)
    if args.get("js"):
        call.denied("js")
        if args.get("cookies"):
            raise WebToolError("browse: js does not run in a call that carries cookies from a secret — "
                               "document.cookie is one expression away")
        if call.secrets_in_steps:
            call.no_script("js")
    if args.get("state") and (args.get("cookies") or call.identity.get("cookies") or call.block.get("cookies")):
        raise WebToolError("browse: state= does not keep a login seeded from a secret (cookies) — state/ is a "
                           "workspace file every later step can read; sign in with actions instead")
    recorders = [k for k in ("trace", "har") if args.get(k) not in (None, "", False, "false")]
    if recorders and call.secrets_in_steps:
        raise WebToolError(f"browse: a call that signs in keeps no {' or '.join(recorders)} — a trace keeps every "
                           f"field's value, a HAR every request body; sign in with session= and record the next call")
    if args.get("har") not in (None, "", False, "false"):
        if args.get("session"):
            raise WebToolError("browse: har records one call's own browser context; drop session= to record it")
        call.har_target = tool.save_target(_recording_path(args["har"], "outputs/network.har", ".har", "har"))
    trace_target = (tool.save_target(_recording_path(args["trace"], "outputs/trace.zip", ".zip", "trace"))
                    if args.get("trace") not in (None, "", False, "false") else None)
    if args.get("confirm") and not steps:
        raise WebToolError("browse: confirm= needs actions= — confirming a page nobody changed proves nothing")
    for key in ("session", "state"):
        if args.get(key) is not None:
            _safe_name(args[key], key)
    max_output = args.get("max_output")
    limit = MAX_OUTPUT if max_output in (None, "") else max(200, min(int(max_output), MAX_OUTPUT))
    reason = call.host_refusal(url)
    if reason:  # before a browser opens
        raise WebToolError(f"browse: {scrub_url(url)} was not opened — {reason}")
    if tool.browsers.idle():  # unused past its idle time: a fresh browser (a session reloads its saved storage)
        if tool.browse_state is not None:
            tool.browse_state.close()
        tool.browsers.close()
    started = time.monotonic()
    context = call.context()
    refusals_from = len(call.proxy.refusals) if call.proxy is not None else 0
    page = context.new_page()
    _listen(call, page)
    if trace_target is not None:
        context.tracing.start(screenshots=True, snapshots=True)
    try:
        for route in routes:  # mocks in place before the first request
            if "mock" not in route:
                raise WebToolError('browse: routes= is a JSON array of mock steps, such as [{"mock": "**/api/*", "json": []}]')
            call.mock(page, str(route["mock"]), route)
        call.navigate(page, url)
        if args.get("wait_for"):
            try:
                call.locate(page, args["wait_for"]).first.wait_for(state="visible", timeout=ACTION_TIMEOUT_MS)
            except WebToolError:
                raise
            except Exception:  # noqa: BLE001
                raise WebToolError(f"browse: wait_for={args['wait_for']} did not appear within "
                                   f"{ACTION_TIMEOUT_MS // 1000}s") from None
        call.page, call.known_tabs = page, len(context.pages)
        call.run_steps(page, steps)
        page = call.page  # the tab the steps ended on is the one read
        if args.get("js"):
            call.no_script("js")
            call.results.append({"js": str(args["js"]), "value": page.evaluate(str(args["js"]))})
        failed = []
        for claim in claims:
            subject = next((k for k in ("expect",) if k in claim), None)
            problem = call.claim(page, claim, "expect") if subject else "a claim is {\"expect\": …}"
            call.notes.append(f"expect {'✓' if problem is None else '✗'} {json.dumps(claim, ensure_ascii=False)[:120]}"
                              + (f" — {problem}" if problem else ""))
            if problem:
                failed.append(problem)
        if failed:
            raise WebToolError(call.redact("browse: " + "\n".join(call.notes)))
        if args.get("confirm"):
            call.confirm(page, str(args["confirm"]))
        if args.get("capture"):
            try:  # the last fetches land before their bodies are kept
                page.wait_for_load_state("networkidle", timeout=3000)
            except Exception:  # noqa: BLE001
                pass
            call.saved_captures = save_captures(call)
            call.notes.append(f"capture: {len(call.saved_captures)} response"
                              f"{'s' if len(call.saved_captures) != 1 else ''} saved under outputs/captures/")
        body = read(call, page, mode, args)
        call.save_storage(context)
    finally:
        if trace_target is not None:
            try:
                context.tracing.stop(path=str(trace_target))
                call.notes.append(f"trace: {tool.relative(trace_target)} — open it at trace.playwright.dev")
            except Exception:  # noqa: BLE001 - the call's own error matters more than its trace
                pass
        for opened in {id(p): p for p in [page, *call.listened, *(context.pages if not args.get("session") else [])]}.values():
            try:
                opened.close()
            except Exception:  # noqa: BLE001
                pass
        if not args.get("session"):
            try:
                context.close()
            except Exception:  # noqa: BLE001
                pass
            if call.proxy is not None:
                call.proxy.close()
            if call.har_target is not None and call.har_target.is_file():
                call.notes.append(f"har: {tool.relative(call.har_target)}")
        if call.proxy is not None:  # what the guard refused beyond the page itself: one line each
            for host, reason in call.proxy.refusals[refusals_from:]:
                line = f"refused {host}: {reason}"
                if line not in call.page_failures:
                    call.page_failures.append(line)
    for line in call.page_failures:
        tool.log(call.redact(f"browse {scrub_url(url)}: {line}"))
    tool.emit({"event": "browse", "url": url, "mode": mode, "steps": len(steps),
               "seconds": round(time.monotonic() - started, 3), "page_failures": len(call.page_failures) or None})
    if call.results:
        tool.write_file(tool.sandbox / "outputs" / "results.json",
                        call.redact(json.dumps(call.results, indent=1, ensure_ascii=False, default=str)).encode())
    parts: list[str] = []
    if call.notes:
        parts.append("\n".join(call.notes))
    if call.results and not explicit_mode:  # the answers are the output when nothing else claims it
        parts.append(json.dumps(call.results, indent=1, ensure_ascii=False, default=str))
    else:
        if not body.strip():
            kind = str(call.main_response.get("contentType") or "").split(";")[0].strip().lower()
            if kind and "html" not in kind and not kind.startswith("text/"):
                why = f"it is {kind}, not a page — fetch it with mode=raw and save= to keep the bytes"
            else:
                why = "; ".join(call.page_failures[:3]) or "the page drew no text"
            body = f"the page is empty — {why}"
        parts.append(body)
        if call.results:
            parts.append("Results:\n" + json.dumps(call.results, indent=1, ensure_ascii=False, default=str))
    out = call.redact("\n\n".join(parts))
    if len(out) > limit:
        out = out[:limit] + f"\n\n[cut at {limit:,} of {len(out):,} characters]"
    return out


def _listen(call: Call, page: "Page") -> None:
    """The page's own failures, its console and its network, as they happen."""
    call.listened.append(page)
    page.on("pageerror", lambda error: call.page_failures.append(f"uncaught error: {str(error).splitlines()[0][:300]}"))

    def console(msg) -> None:  # noqa: ANN001
        where = (msg.location or {}).get("url", "")
        call.console.append({"level": msg.type, "text": msg.text[:2000], "source": scrub_url(str(where))})
        if msg.type == "error" and not str(where).endswith("/favicon.ico"):
            call.page_failures.append(f"console {msg.type}: {msg.text[:300]}")

    page.on("console", console)
    page.on("requestfailed", lambda request: call.page_failures.append(
        f"request failed: {scrub_url(request.url)[:200]} ({request.failure})")
        if request.failure and "ERR_ABORTED" not in str(request.failure) else None)

    def finished(request) -> None:  # noqa: ANN001
        try:
            response = request.response()
            timing = request.timing
            sizes = request.sizes()
        except Exception:  # noqa: BLE001 - a page closing under us
            return
        call.network.append({"url": scrub_url(request.url), "method": request.method, "type": request.resource_type,
                             "status": response.status if response else None,
                             "bytes": sizes.get("responseBodySize"),
                             "ms": round(timing["responseEnd"]) if timing.get("responseEnd", -1) >= 0 else None})

    page.on("requestfinished", finished)
    glob = call.args.get("capture")
    if glob:
        page.on("response", lambda response: call.captured.append(response)
                if _glob_match(response.url, str(glob)) else None)
    page.on("dialog", lambda dialog: dialog.accept(*([str(call.dialog[1])] if call.dialog[1] is not None else []))
            if call.dialog[0] == "accept" else dialog.dismiss())


def _recording_path(value: Any, default: str, suffix: str, what: str) -> str:
    """`"true"` → the default file; a path must end in its suffix."""
    if value is True or str(value).lower() == "true":
        return default
    text = str(value).strip()
    if not text.lower().endswith(suffix):
        raise WebToolError(f'browse: {what}= is "true" or a {suffix} path, such as {default}')
    return text


def _glob_match(url: str, glob: str) -> bool:
    """Playwright's URL globs, near enough: `**` any characters, `*` any but `/`."""
    pattern = re.escape(glob).replace(r"\*\*", "\0").replace(r"\*", "[^/]*").replace("\0", ".*")
    return re.fullmatch(pattern, url) is not None or re.fullmatch(pattern, urlsplit(url)._replace(query="").geturl()) is not None


def save_captures(call: Call) -> list[dict]:
    """The bodies the `capture` glob matched, saved under outputs/captures/."""
    saved = []
    for number, response in enumerate(call.captured, 1):
        try:
            body = response.body()
        except Exception:  # noqa: BLE001 - a response with no body (a redirect, a closed page)
            continue
        kind = (response.headers.get("content-type") or "").split(";")[0].strip()
        suffix = ".json" if "json" in kind else ".txt" if kind.startswith("text/") else ".bin"
        stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", urlsplit(response.url).path.strip("/"))[-60:] or "root"
        target = call.tool.sandbox / "outputs" / "captures" / f"{number:03d}-{stem}{suffix}"
        where = call.tool.write_file(target, body)
        saved.append({"url": scrub_url(response.url), "status": response.status, "contentType": kind, "file": where,
                      "text": body.decode("utf-8", errors="replace") if suffix != ".bin" else None})
    return saved


def diff_read(call: Call, page: "Page") -> str:
    """The page as markdown against the last diff read of the same URL; the first read saves the baseline."""
    import difflib
    import hashlib

    tool = call.tool
    now = pages.to_markdown(page.content(), page.url)
    key = hashlib.sha256(_page_key(page.url).encode() + b"?" + urlsplit(page.url).query.encode()).hexdigest()[:20]
    baseline = tool.sandbox / "state" / "browser" / "diff" / f"{key}.md"
    before = baseline.read_text(encoding="utf-8") if baseline.is_file() else None
    tool.write_file(baseline, now.encode())
    where = tool.relative(baseline)
    if before is None:
        return (f"first diff read of {scrub_url(page.url)}: saved as the baseline ({len(now.splitlines())} lines, "
                f"{where}); the next diff read compares with it")
    lines = list(difflib.unified_diff(before.splitlines(), now.splitlines(), "before", "now", n=2, lineterm=""))
    if not lines:
        return f"no change since the last diff read of {scrub_url(page.url)}"
    return "\n".join(lines)


def feed_read(call: Call, page: "Page") -> str:
    """The RSS, Atom or JSON feed: the URL itself when it is one, else the first linked, else the usual paths."""
    from . import fetch as plain

    tool = call.tool
    candidates: list[str] = []
    main_type = str(call.main_response.get("contentType") or "").split(";")[0].strip().lower()
    if main_type and "html" not in main_type:
        candidates.append(page.url)
    else:
        meta = pages.meta_of(page.content(), page.url)
        candidates += [f["href"] for f in meta["feeds"]]
        origin = f"{urlsplit(page.url).scheme}://{urlsplit(page.url).netloc}"
        candidates += [origin + path for path in pages.FEED_PATHS]
    for url in dict.fromkeys(candidates):
        if call.host_refusal(url):
            continue
        got = plain.get(tool, url, tool.language)  # one plain read through the guarded client
        if got.error or got.status >= 400 or not got.is_text():
            continue
        items = pages.feed_items(got.text)
        if items is None:
            continue
        data = json.dumps({"feed": scrub_url(url), "items": items}, indent=1, ensure_ascii=False)
        tool.write_file(tool.sandbox / "outputs" / "feed.json", data.encode())
        lines = [f"feed: {scrub_url(url)} ({len(items)} items)"]
        for item in items:
            lines.append(f"- {item.get('title') or '(untitled)'}" + (f" — {item['date']}" if item.get("date") else ""))
            if item.get("link"):
                lines.append(f"  {item['link']}")
        return "\n".join(lines)
    return f"no feed: {scrub_url(page.url)} is not one, links none, and none of {', '.join(pages.FEED_PATHS)} answered one"


# The built-in checks, for when the image has no axe-core: each a rule, what it found, and the fix.
_A11Y_JS = """() => {
  const out = [];
  const name = el => (el.getAttribute('aria-label') || el.getAttribute('title') || el.innerText || el.value || '').trim();
  const sel = el => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '');
  const add = (rule, what, fix, els) => { if (els.length) out.push({rule, what, fix, count: els.length, elements: els.map(sel)}); };
  add('image-alt', 'images with no alt attribute', 'give each an alt (alt="" when it is decorative)',
      [...document.querySelectorAll('img:not([alt])')]);
  add('label', 'form fields with no label', 'add a <label for>, aria-label or aria-labelledby',
      [...document.querySelectorAll('input:not([type=hidden]):not([type=submit]):not([type=button]), select, textarea')]
        .filter(el => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.getAttribute('aria-labelledby') && !el.getAttribute('title')));
  add('button-name', 'buttons with no name', 'give the button text or an aria-label',
      [...document.querySelectorAll('button, [role=button]')].filter(el => !name(el) && !el.querySelector('img[alt]:not([alt=""])')));
  add('link-name', 'links with no name', 'give the link text or an aria-label',
      [...document.querySelectorAll('a[href]')].filter(el => !name(el) && !el.querySelector('img[alt]:not([alt=""])')));
  add('html-has-lang', 'a page with no lang', 'set <html lang="…">', document.documentElement.lang ? [] : [document.documentElement]);
  add('document-title', 'a page with no title', 'add a <title>', document.title.trim() ? [] : [document.documentElement]);
  const ids = {}; document.querySelectorAll('[id]').forEach(el => { (ids[el.id] = ids[el.id] || []).push(el); });
  add('duplicate-id', 'ids used more than once', 'make each id unique', Object.values(ids).filter(l => l.length > 1).flat());
  let last = 0; const skips = [];
  document.querySelectorAll('h1, h2, h3, h4, h5, h6').forEach(h => { const n = +h.tagName[1]; if (last && n > last + 1) skips.push(h); last = n; });
  add('heading-order', 'headings that skip a level', 'step headings down one level at a time', skips);
  return out;
}"""

_VITALS_JS = """() => new Promise(resolve => {
  const nav = performance.getEntriesByType('navigation')[0] || {};
  const paint = Object.fromEntries(performance.getEntriesByType('paint').map(p => [p.name, p.startTime]));
  let lcp = null, cls = 0;
  try { new PerformanceObserver(l => { for (const e of l.getEntries()) lcp = e.startTime; }).observe({type: 'largest-contentful-paint', buffered: true}); } catch (e) {}
  try { new PerformanceObserver(l => { for (const e of l.getEntries()) if (!e.hadRecentInput) cls += e.value; }).observe({type: 'layout-shift', buffered: true}); } catch (e) {}
  setTimeout(() => {
    const grade = (v, good, poor) => v === null ? null : v <= good ? 'good' : v <= poor ? 'needs improvement' : 'poor';
    const bytes = performance.getEntriesByType('resource').reduce((n, r) => n + (r.transferSize || 0), nav.transferSize || 0);
    const ms = v => v === null || v === undefined ? null : Math.round(v);
    resolve({
      LCP: {value: ms(lcp), unit: ' ms', grade: grade(lcp, 2500, 4000)},
      CLS: {value: Math.round(cls * 1000) / 1000, grade: grade(cls, 0.1, 0.25)},
      FCP: {value: ms(paint['first-contentful-paint'] ?? null), unit: ' ms', grade: grade(paint['first-contentful-paint'] ?? null, 1800, 3000)},
      TTFB: {value: ms(nav.responseStart ?? null), unit: ' ms', grade: grade(nav.responseStart ?? null, 800, 1800)},
      load: {value: ms(nav.loadEventEnd ?? null), unit: ' ms'},
      weight: {value: bytes, unit: ' bytes'},
    });
  }, 300);
})"""


def read(call: Call, page: "Page", mode: str, args: dict) -> str:
    tool = call.tool
    if mode == "capture":
        if not args.get("capture"):
            raise WebToolError('browse: mode=capture needs capture=, a URL glob such as "**/api/*"')
        saved = call.saved_captures
        if not saved:
            return f"nothing the page fetched matched capture={args['capture']}"
        return "\n\n".join(f"=== {c['url']} ({c['status']}, {c['file']}) ===\n" + (c["text"] or "(binary)")[:6000]
                            for c in saved)
    if mode == "diff":
        return diff_read(call, page)
    if mode == "feed":
        return feed_read(call, page)
    if mode == "a11y":
        found = page.evaluate(_A11Y_JS)
        data = json.dumps(found, indent=1, ensure_ascii=False)
        tool.write_file(tool.sandbox / "outputs" / "a11y.json", data.encode())
        if not found:
            return "the built-in checks found nothing to fix (axe-core is not in this image; its rules go further)"
        return "\n".join(f"[{v['rule']}] {v['count']} × {v['what']} — {v['fix']}\n    " +
                         "\n    ".join(v["elements"][:5]) for v in found)
    if mode == "vitals":
        vitals = page.evaluate(_VITALS_JS)
        data = json.dumps(vitals, indent=1)
        tool.write_file(tool.sandbox / "outputs" / "vitals.json", data.encode())
        return "\n".join(f"{k}: {v['value']}{v.get('unit', '')}" + (f" ({v['grade']})" if v.get("grade") else "")
                         for k, v in vitals.items())
    if mode == "text":
        return page.inner_text("body")
    if mode == "html":
        return page.content()
    if mode == "markdown":
        text = pages.to_markdown(page.content(), page.url)
        tool.write_file(tool.sandbox / "outputs" / "page.md", text.encode())
        return text
    if mode == "meta":
        meta = {"url": scrub_url(page.url), **pages.meta_of(page.content(), page.url)}
        data = json.dumps(meta, indent=1, ensure_ascii=False)
        tool.write_file(tool.sandbox / "outputs" / "meta.json", data.encode())
        return data
    if mode == "links":
        return pages.links_text(page.evaluate(_LINKS_JS))
    if mode == "table":
        tables = page.evaluate(_TABLES_JS)
        data = json.dumps(tables, indent=1, ensure_ascii=False)
        tool.write_file(tool.sandbox / "outputs" / "tables.json", data.encode())
        return data if tables else "no tables on the page"
    if mode == "console":
        data = json.dumps(call.console, indent=1, ensure_ascii=False)
        tool.write_file(tool.sandbox / "outputs" / "console.json", call.redact(data).encode())
        if not call.console:
            return "the page wrote nothing to its console"
        return "\n".join(f"[{m['level']}] {m['text']}" + (f" ({m['source']})" if m["source"] else "")
                         for m in call.console)
    if mode == "network":
        try:  # every request it made: let the last ones land before listing them
            page.wait_for_load_state("networkidle", timeout=3000)
        except Exception:  # noqa: BLE001 - a page that never idles is listed as it stands
            pass
        data = json.dumps({"page": call.main_response, "requests": call.network}, indent=1, ensure_ascii=False)
        tool.write_file(tool.sandbox / "outputs" / "network.json", data.encode())
        head = call.main_response
        lines = [f"{head.get('status')} {head.get('url')} ({head.get('contentType')})"]
        lines += [f"  redirect: {hop}" for hop in head.get("redirects") or []]
        lines += [f"  {k}: {v}" for k, v in (head.get("headers") or {}).items()]
        lines.append("")
        lines += [f"{r['status'] or '---'} {r['method']} {r['type']} {r['url']} "
                  f"{r['bytes'] if r['bytes'] is not None else '?'} bytes {r['ms'] if r['ms'] is not None else '?'} ms"
                  for r in call.network]
        return "\n".join(lines)
    if mode == "aria":
        snapshot = page.aria_snapshot(mode="ai")
        refs = _load_refs(tool.sandbox)
        refs[call.session_key] = {"page": _page_key(page.url), "refs": parse_snapshot(snapshot)}
        tool.write_file(_refs_file(tool.sandbox), json.dumps(refs, indent=1, ensure_ascii=False).encode())
        return interactive_lines(snapshot) if args.get("interactive") else snapshot
    if mode == "screenshot":
        where = call.keep_file(page, "screenshot", {"screenshot": "page"})
        return f"{where} — the full page at {page.viewport_size['width']}px wide. Read {where} to see it."
    where = call.keep_file(page, "pdf", {"pdf": "page"})
    return f"{where} — the page printed to PDF."
