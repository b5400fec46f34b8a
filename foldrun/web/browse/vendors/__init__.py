"""`web.browse: {via: <vendor>}` — the same browse call on a browser on the vendor's machines, over CDP.

The step holds the key (CDP is a websocket, which the egress proxy does not carry), opens the vendor's
session through its documented API, connects Playwright to the websocket it hands back, and ends the
session when the call ends. A vendor that cannot be reached, or refuses, is not fatal: the call says which
one and renders in the step's own browser (spec/tools.md, "Browsing somewhere else").
"""

from __future__ import annotations

import base64
import itertools
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable
from urllib.parse import unquote, urlsplit

import httpx

from foldrun import net
from foldrun.contract import web_engines as W

from ...errors import WebToolError
from ...net import NoSuchHost, PrivateAddress, checked_addresses, scrub_url
from ...providers.base import refusal, resolve_key
from ..steps import acts
from ..util import safe_name
from .adapters import ADAPTERS, BASES, Asked, socket_url
from ..kept import kept_id, remember_id

if TYPE_CHECKING:  # pragma: no cover
    from ..call import Call

# Where each API vendor reads its key (its documented header).
KEY_HEADERS = {"browserbase": "X-BB-API-Key", "steel": "steel-api-key", "hyperbrowser": "x-api-key"}
CONNECT_MS = 15_000


class Unavailable(Exception):
    """The vendor could not be reached or refused: said, and the call renders in the step. A websocket the vendor
    turned down carries its HTTP status and words, so a socket vendor's refusal is said as a sentence."""

    def __init__(self, sentence: str, status: int | None = None, said: str = "") -> None:
        super().__init__(sentence)
        self.status, self.said = status, said


@dataclass
class Opened:
    """One call's session on a vendor's browser."""

    vendor: str
    browser: Any
    session_id: str = ""
    keep: str = ""  # the kept login's name: the vendor's own context is used as it stands
    kept: str = ""  # … and the vendor's id of that context or profile
    cdp: list = field(default_factory=list)  # CDP commands for the first page (Bright Data's captcha and blocks)
    end: Callable[[], None] | None = None  # release (Steel) / stop (Hyperbrowser)
    call: Any = None  # the browse call it was opened for


def settings_of(call: "Call") -> tuple[str, dict]:
    """(`web.browse.vendor_session` or its old name `session`, the settings)."""
    block = call.block
    if "vendor_session" in block and "session" in block:
        raise WebToolError(
            "browse: web.browse writes both session: and vendor_session:; session: is the old name of "
            "vendor_session: — keep vendor_session: alone."
        )
    key = "vendor_session" if "vendor_session" in block else "session"
    settings = block.get(key)
    if settings in (None, {}):
        return f"web.browse.{key}", {}
    if not isinstance(settings, dict):
        raise WebToolError(
            f"browse: web.browse.{key} must be a block of the vendor's options, e.g. "
            f"{{proxy: {{country: AU}}, captcha: true}}."
        )
    return f"web.browse.{key}", settings


def check_settings(vendor: str, where: str, settings: dict, call: "Call") -> None:
    """What `foldrun check` refuses, refused by the call in the same words (the contract's table)."""
    if vendor == "cdp":
        if settings:
            raise WebToolError(
                f"browse: {where} asks a vendor's browser for its options, but via: cdp is a browser "
                f"of your own with no vendor session; drop it."
            )
        return
    for key, value in settings.items():
        if key not in W.VENDOR_SESSION_KEYS:
            raise WebToolError(
                f"browse: {where}.{key} is not a vendor_session key. The keys are {', '.join(W.VENDOR_SESSION_KEYS)}."
            )
        refused = W.vendor_session_refusal(vendor, key, f"{where}.{key}")
        if refused is None and key == "proxy" and isinstance(value, dict):
            refused = next(
                (
                    W.vendor_session_refusal(vendor, f"proxy.{part}", f"{where}.proxy.{part}")
                    for part in value
                    if f"proxy.{part}" in W.VENDOR_SESSION_OPTIONS
                    and W.vendor_session_refusal(vendor, f"proxy.{part}", "")
                ),
                None,
            )
        if refused is None and key == "proxy":
            refused = W.vendor_proxy_refusal(vendor, value, f"{where}.proxy")
        if refused is None and key in ("region", "timeout"):
            refused = W.vendor_value_refusal(vendor, key, value, f"{where}.{key}")
        if refused is None and key == "block":
            words = [w.strip() for w in value.split(",")] if isinstance(value, str) else list(value or [])
            refused = next(
                (
                    W.vendor_block_refusal(vendor, str(w), f"{where}.block")
                    for w in words
                    if W.vendor_block_refusal(vendor, str(w), "")
                ),
                None,
            )
        if refused:
            raise WebToolError(f"browse: {refused}")
    if settings.get("keep"):
        beside = next(
            (
                k
                for k in ("user_agent", "device", "locale", "timezone", "identities")
                if k in call.block or call.args.get(k) not in (None, "")
            ),
            None,
        )
        if beside:
            raise WebToolError(
                f"browse: web.browse.{beside} is refused beside {where}.keep — {vendor}'s kept "
                f"{W.VENDOR_SESSION_OPTIONS['keep'][vendor].removeprefix('a ')} is the vendor's own "
                f"browser context as it stands."
            )
        safe_name(settings["keep"], "keep")


def open_for(call: "Call", provider: dict) -> Opened | None:
    """The vendor's browser for this call; None when it could not be had (said on the run log: the call renders
    in the step's own browser)."""
    tool, vendor = call.tool, provider["name"]
    where, settings = settings_of(call)
    check_settings(vendor, where, settings, call)
    if vendor == "zenrows":
        changed = next((k for k in ("user_agent", "device") if call.setting(k) not in (None, "")), None)
        if changed:
            raise WebToolError(
                f"browse: {changed} is refused beside via: zenrows — ZenRows' browser refuses a "
                f"changed user agent or device."
            )
    if call.args.get("session"):
        raise WebToolError(
            f"browse: session= keeps a browser context for later calls, and a {vendor} session ends "
            f"with its call; drop it (vendor_session.keep signs in as the last run left off)"
        )
    for key in ("proxy", "block"):
        if call.args.get(key) not in (None, "") or call.block.get(key) not in (None, "", [], {}):
            tool.log(
                f"browse: {key}= does not reach {vendor}'s browser — it is a launch option, and the vendor "
                f"launched it; ask the vendor's session for it (vendor_session: {{{key}: …}})"
            )
    key = resolve_key(tool, provider)
    if key is not None:
        call.secrets[key[0]] = key[1]  # redacted from every line and answer the call writes
    try:
        return _open(call, vendor, settings, key)
    except Unavailable as exc:
        sentence = call.redact(str(exc))
        tool.log(f"browse: {sentence}; rendering in the step's own browser instead")
        call.notes.append(f"{sentence}; rendered in the step's own browser instead")
        return None


def _open(call: "Call", vendor: str, settings: dict, key: tuple[str, str] | None) -> Opened:
    tool = call.tool
    secret = key[1] if key else ""
    if vendor == "cdp":
        return Opened("cdp", _connect(call, "cdp", secret, "the CDP browser in BROWSER_CDP_URL"))
    adapter = ADAPTERS[vendor]
    asked = adapter.ask(settings, lambda: _own_proxy(call, settings))
    base = tool.endpoints.get(vendor) or BASES[vendor]
    if adapter.opens == "socket":
        try:
            browser = _connect(call, vendor, socket_url(vendor, base, asked, secret), f"{vendor}'s browser")
        except Unavailable as exc:
            if exc.status is None:
                raise
            raise Unavailable(_socket_refusal(vendor, key, asked, exc.status, exc.said, call.redact)) from None
        opened = Opened(vendor, browser)
        opened.cdp = list(asked.cdp or [])
        return opened
    api = _Api(call, vendor, base.rstrip("/"), key)
    keep = str(settings.get("keep") or "")
    kept = kept_id(call, vendor, keep, adapter.keep) if keep else None
    body = asked.body
    if vendor == "browserbase":
        if keep:
            kept = kept or str(api.json("POST", "/v1/contexts", {}).get("id") or "")
            body.setdefault("browserSettings", {})["context"] = {"id": kept, "persist": True}
        made = api.json("POST", "/v1/sessions", body)
        ws, session_id = str(made.get("connectUrl") or ""), str(made.get("id") or "")
        live = _live_browserbase(api, session_id)
        end = None  # a Browserbase session ends when its connection closes
    elif vendor == "steel":
        if keep:
            body["persistProfile"] = True
            if kept:
                body["profileId"] = kept
        made = api.json("POST", "/v1/sessions", body)
        session_id = str(made.get("id") or "")
        ws = str(made.get("websocketUrl") or "")
        ws += ("&" if "?" in ws else "?") + f"apiKey={secret}" if ws else ""
        live = str(made.get("sessionViewerUrl") or "")
        kept = str(made.get("profileId") or kept or "")
        end = lambda: api.send("POST", f"/v1/sessions/{session_id}/release", {})  # noqa: E731 - bills to its timeout otherwise
    else:  # hyperbrowser
        if keep:
            kept = kept or str(api.json("POST", "/api/profile", {}).get("id") or "")
            body["profile"] = {"id": kept, "persistChanges": True}
        made = api.json("POST", "/api/session", body)
        session_id = str(made.get("id") or "")
        ws, live = str(made.get("wsEndpoint") or ""), str(made.get("liveUrl") or "")
        end = lambda: api.send("PUT", f"/api/session/{session_id}/stop", None)  # noqa: E731
    if not ws:
        if end is not None:
            _quietly(end)
        raise Unavailable(f"{vendor} opened a session but handed back no websocket to connect to")
    if keep and kept:
        remember_id(call, vendor, keep, adapter.keep, kept)
    if live.startswith("https://"):
        tool.log(f"live view: {live}")
    try:
        browser = _connect(call, vendor, ws, f"{vendor}'s browser")
    except Unavailable:
        if end is not None:
            _quietly(end)
        raise
    return Opened(vendor, browser, session_id, keep=keep, kept=kept or "", end=end)


def end(call: "Call", opened: Opened) -> None:
    """When the call ends: disconnect, then release (Steel) or stop (Hyperbrowser) the vendor's session."""
    try:
        opened.browser.close()  # a connected browser: its contexts are cleared and the connection dropped
    except Exception:  # noqa: BLE001 - already gone
        pass
    if opened.end is not None:
        try:
            opened.end()
        except Exception as exc:  # noqa: BLE001 - said, never fatal: the call's answer is already made
            call.tool.log(call.redact(f"browse: {opened.vendor} session {opened.session_id} was not ended: {exc}"))


def gone_under(opened: list[Opened]) -> str | None:
    """The sentence for a call whose vendor browser closed under it (its session ended, the connection dropped),
    or None — so the lost-pod rules, which are about the account's own pod, never judge it."""
    for session in opened:
        try:
            connected = session.browser.is_connected()
        except Exception:  # noqa: BLE001 - a browser that cannot say is not connected
            connected = False
        if not connected:
            acted = (
                " It may have acted before it closed; look at the page before repeating it."
                if acts(session.call.args)
                else ""
            )
            return (
                f"browse: {session.vendor}'s browser closed during this call — its session ended or the "
                f"connection dropped.{acted}"
            )
    return None


def on_page(call: "Call", page: Any) -> None:
    """CDP commands the vendor takes on a page before it navigates (Bright Data's `Captcha.setAutoSolve`,
    `Unblocker.enableAdBlock`, `Unblocker.enableCookieBlock`)."""
    opened = getattr(call, "vendor", None)
    if opened is None or not opened.cdp:
        return
    session = page.context.new_cdp_session(page)
    for method, params in opened.cdp:
        try:
            session.send(method, params)
        except Exception as exc:  # noqa: BLE001 - said; the page is read without it
            call.notes.append(f"{opened.vendor} did not take {method}: {str(exc).splitlines()[0][:160]}")


def _connect(call: "Call", vendor: str, ws: str, what: str) -> Any:
    """Playwright over CDP to `ws`, its host checked by the network guard first (a user-named address)."""
    parts = urlsplit(ws)
    if parts.scheme not in ("ws", "wss", "http", "https") or not parts.hostname:
        raise WebToolError(f"browse: {what} is not at a ws://, wss:// or http(s):// address")
    if not call.tool.allow_private:
        try:
            checked_addresses(parts.hostname, parts.port or (443 if parts.scheme in ("wss", "https") else 80))
        except (PrivateAddress, NoSuchHost) as exc:
            raise WebToolError(f"browse: {what} was not connected to — {exc}") from None
    headers: dict[str, str] = {}
    if parts.username is not None:  # user:pass in the address travels as HTTP basic auth on the handshake
        pair = f"{unquote(parts.username)}:{unquote(parts.password or '')}"
        headers["Authorization"] = "Basic " + base64.b64encode(pair.encode()).decode()
        ws = scrub_url(ws)
    try:
        return call.tool.browsers.playwright().chromium.connect_over_cdp(ws, timeout=CONNECT_MS, headers=headers)
    except Exception as exc:  # noqa: BLE001 - refused, closed, not CDP: one sentence, never the URL's key
        lines = str(exc).splitlines() or [""]
        first = lines[0].split(": ", 1)[-1][:200]
        # Playwright's words for an upgrade the host answered with a status: `WebSocket error: <url> 401 Unauthorized`,
        # then the body's lines, then its call log.
        refused = _UPGRADE_REFUSED.search(lines[0])
        said = " ".join(line.strip() for line in itertools.takewhile(lambda line: line != "Call log:", lines[1:]))
        raise Unavailable(
            f"{what} could not be reached at {_shown(ws)} ({call.redact(first)})",
            int(refused.group(1)) if refused else None,
            call.redact(said)[:200],
        ) from None


_UPGRADE_REFUSED = re.compile(r"WebSocket error: \S+ (\d{3})(?: [^\n]*)?$")


def _socket_refusal(
    vendor: str, key: tuple[str, str] | None, asked: Asked, status: int, said: str, hide: Callable[[str], str]
) -> str:
    """The sentence for a socket vendor's turned-down websocket, as an API vendor's refusal is said — in the vendor's
    own words where its adapter has them (`Adapter.refused`: Browserless's 401 beside a proxy city)."""
    held = key[0] if key else None
    own = ADAPTERS[vendor].refused
    sentence = own(status, asked, held) if own else None
    sentence = sentence or refusal(vendor, held, httpx.Response(status, text=said), hide)
    return sentence + (f' — {vendor} said "{said}"' if said and said not in sentence else "")


def _shown(url: str) -> str:
    """The address without its key: no user:pass, no query."""
    parts = urlsplit(scrub_url(url))
    return f"{parts.scheme}://{parts.netloc}{parts.path}"


def _live_browserbase(api: "_Api", session_id: str) -> str:
    try:
        return str(api.json("GET", f"/v1/sessions/{session_id}/debug", None).get("debuggerFullscreenUrl") or "")
    except Unavailable:
        return ""  # no live view is not a reason to stop


def _own_proxy(call: "Call", settings: dict) -> dict:
    """`proxy: {own: SECRET}`: the secret's proxy URL, as the vendor's fields take it."""
    name = str(settings["proxy"]["own"]).strip()
    name = name[2:-1] if name.startswith("${") and name.endswith("}") else name
    url = call.secret_value(name)
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if not parts.hostname:
        raise WebToolError(f"browse: the secret {name} does not hold a proxy URL such as http://user:pass@host:port")
    server = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    if parts.password:
        call.secrets[f"{name} password"] = parts.password
    return {"url": url, "server": server, "username": parts.username or "", "password": parts.password or ""}


def _quietly(fn: Callable[[], Any]) -> None:
    try:
        fn()
    except Exception:  # noqa: BLE001 - best effort after a failure already said
        pass


class _Api:
    """A vendor's session API: its key in its header, on its host alone; a refusal is a sentence."""

    def __init__(self, call: "Call", vendor: str, base: str, key: tuple[str, str] | None) -> None:
        self.call, self.vendor, self.base, self.key = call, vendor, base, key

    def send(self, method: str, path: str, body: Any) -> httpx.Response:
        tool = self.call.tool
        headers = {"Accept": "application/json"}
        if self.key is not None:
            headers[KEY_HEADERS[self.vendor]] = self.key[1]
        try:
            response = tool.http.request(
                method, self.base + path, json=body, headers=headers, timeout=tool.fetch_timeout, follow_redirects=False
            )
        except httpx.TimeoutException:
            raise Unavailable(f"{self.vendor} did not answer within {tool.fetch_timeout:g}s") from None
        except httpx.HTTPError as exc:
            raise Unavailable(f"{self.vendor} could not be reached: {net.describe(exc)}") from None
        tool.emit({"event": "provider", "provider": self.vendor, "action": "browse", "status": response.status_code})
        if response.status_code >= 400:
            said = _words(response, self.call.redact)
            sentence = refusal(self.vendor, self.key[0] if self.key else None, response, self.call.redact)
            raise Unavailable(sentence + (f' — {self.vendor} said "{said}"' if said and said not in sentence else ""))
        return response

    def json(self, method: str, path: str, body: Any) -> dict:
        try:
            data = self.send(method, path, body).json()
        except ValueError:
            raise Unavailable(f"{self.vendor} did not answer JSON") from None
        if not isinstance(data, dict):
            raise Unavailable(f"{self.vendor} answered something that is not its documented shape")
        return data


def _words(response: httpx.Response, hide: Callable[[str], str]) -> str:
    """The vendor's own message in a refusal (`message`, `error`), else the start of its body."""
    try:
        data = response.json()
    except ValueError:
        return hide(response.text.strip()[:200])
    if isinstance(data, dict):
        said = data.get("message") or data.get("error") or ""
        if isinstance(said, dict):
            said = said.get("message") or ""
        return hide(str(said).strip()[:200])
    return ""
