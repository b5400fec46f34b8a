"""The options of a new session (the `POST /v1/sessions` body, `create_session`'s arguments), checked.

`read_options(body)` returns a `SessionOptions` or raises `SessionError("invalid_input", …)` whose
`details.issues` lists every problem found, each `{path, message}` — not only the first, so a caller
fixes them in one go. The sentences name the field and the range; no value of a header or credential is
ever repeated in one.
"""

from __future__ import annotations

import functools
import re
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from .errors import SessionError

MAX_URL = 2048
MAX_HEADERS = 20
MAX_ALLOW_HOSTS = 50
MIN_TIMEOUT_MS = 10_000
MAX_TIMEOUT_MS = 24 * 3600 * 1000
DEFAULT_IDLE_MS = 5 * 60 * 1000
DEFAULT_MAX_DURATION_MS = 3600 * 1000
MAX_WAIT_FOR_CAPACITY_MS = 30_000
MAX_QUEUE_SECONDS = 900
VIEWPORT_WIDTH = (200, 7680)
VIEWPORT_HEIGHT = (200, 4320)
SCALE = (0.25, 5.0)
DESKTOP = {"width": 1280, "height": 720, "deviceScaleFactor": 1, "mobile": False, "userAgent": ""}
MOBILE_DEVICE = "Pixel 7"
BLOCKABLE = ("image", "media", "font", "stylesheet")
ENGINES = ("chromium",)  # what the keeper launches; engines.json may list more the browse tool drives

KNOWN = {
    "startUrl",
    "device",
    "viewport",
    "record",
    "headers",
    "credentials",
    "proxyUrl",
    "allowHosts",
    "idleTimeoutMs",
    "maxDurationMs",
    "engineId",
    "engineVersion",
    "engine",
    "waitForCapacityMs",
    "queueForCapacity",
    "block",
    "title",
}
_HOST = re.compile(r"^(\*\.)?[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$")
# Names a session's extra headers may not take: the ones the browser writes itself for each request (Host,
# Content-Length, Expect), the hop-by-hop ones that describe one connection and not the request (RFC 9110
# §7.6.1, with the older Keep-Alive and Proxy-Connection), and any Proxy-… (the proxy is proxyUrl's).
# browsing.serializers documents the same list as the name's pattern, so the schema refuses what this does.
FORBIDDEN_HEADERS = (
    "host",
    "content-length",
    "expect",
    "connection",
    "keep-alive",
    "proxy-connection",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
)
FORBIDDEN_HEADER_PREFIX = "proxy-"


def forbidden_header(name: str) -> bool:
    low = name.lower()
    return low in FORBIDDEN_HEADERS or low.startswith(FORBIDDEN_HEADER_PREFIX)


@dataclass
class SessionOptions:
    start_url: str = ""
    device: str = "desktop"
    viewport: dict[str, Any] = field(default_factory=lambda: dict(DESKTOP))
    record: bool = False
    headers: list[dict[str, str]] = field(default_factory=list)  # [{host, name, value}] — values secret
    credentials: dict[str, Any] | None = None  # {namespace, autoSubmit}; no values
    proxy_url: str = ""
    allow_hosts: list[str] = field(default_factory=list)
    idle_timeout_ms: int = DEFAULT_IDLE_MS
    max_duration_ms: int = DEFAULT_MAX_DURATION_MS
    engine: str = "chromium"
    engine_version: int | None = None
    wait_for_capacity_ms: int = 0
    queue_seconds: int = 0
    block: list[str] = field(default_factory=list)
    title: str = ""

    def public(self) -> dict[str, Any]:
        """What the session's record keeps and shows: everything but the header values."""
        shown: dict[str, Any] = {
            "device": self.device,
            "viewport": self.viewport,
            "record": self.record,
            "idleTimeoutMs": self.idle_timeout_ms,
            "maxDurationMs": self.max_duration_ms,
            "engineId": self.engine,
        }
        if self.start_url:
            shown["startUrl"] = self.start_url
        if self.headers:
            shown["headers"] = [{"host": h["host"], "name": h["name"]} for h in self.headers]
        if self.credentials is not None:
            shown["credentials"] = self.credentials
        if self.proxy_url:
            shown["proxyUrl"] = _without_password(self.proxy_url)
        if self.allow_hosts:
            shown["allowHosts"] = self.allow_hosts
        if self.engine_version is not None:
            shown["engineVersion"] = self.engine_version
        if self.wait_for_capacity_ms:
            shown["waitForCapacityMs"] = self.wait_for_capacity_ms
        if self.queue_seconds:
            shown["queueForCapacity"] = {"maxWaitSeconds": self.queue_seconds}
        if self.block:
            shown["block"] = self.block
        return shown


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return parts._replace(netloc=netloc).geturl()


@functools.lru_cache(maxsize=1)
def devices() -> dict[str, dict]:
    """Playwright's device descriptors ("Pixel 7", "iPhone 15"), read once per process.

    Read in a short thread of its own: Playwright's sync API holds an event loop in the thread that starts
    it, and the caller's thread may be one that uses the ORM.
    """
    found: dict[str, dict] = {}

    def read() -> None:
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            found.update(pw.devices)

    reader = threading.Thread(target=read, name="foldrun-device-list", daemon=True)
    reader.start()
    reader.join(timeout=60)
    return found


def device_viewport(name: str) -> dict[str, Any]:
    """The viewport (with its user agent) a device name stands for."""
    if name == "desktop":
        return dict(DESKTOP)
    descriptor = devices().get(MOBILE_DEVICE if name == "mobile" else name) or {}
    size = descriptor.get("viewport") or {"width": 412, "height": 839}
    return {
        "width": int(size["width"]),
        "height": int(size["height"]),
        "deviceScaleFactor": descriptor.get("device_scale_factor", 1),
        "mobile": bool(descriptor.get("is_mobile")),
        "userAgent": descriptor.get("user_agent", ""),
    }


class _Issues:
    def __init__(self) -> None:
        self.items: list[dict[str, str]] = []

    def add(self, path: str, message: str) -> None:
        self.items.append({"path": path, "message": message})


def _integer(body: dict, key: str, low: int, high: int, issues: _Issues, *, what: str = "") -> int | None:
    value = body.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        issues.add(key, f"{key} must be a whole number{what}, from {low:,} to {high:,}")
        return None
    if not low <= value <= high:
        issues.add(key, f"{key} must be from {low:,} to {high:,}{what}; it is {value:,}")
        return None
    return value


def _http_url(value: Any, key: str, issues: _Issues, *, schemes: tuple[str, ...] = ("http", "https")) -> str:
    if not isinstance(value, str) or not value:
        issues.add(key, f"{key} must be an {' or '.join(schemes)} URL")
        return ""
    if len(value) > MAX_URL:
        issues.add(key, f"{key} is {len(value):,} characters long; at most {MAX_URL:,} are allowed")
        return ""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 - raises for a port out of range
    except ValueError:
        issues.add(key, f"{key} is not a valid URL")
        return ""
    if parts.scheme.lower() not in schemes or not parts.hostname:
        issues.add(
            key, f"{key} must be an {' or '.join(schemes)} URL with a host; {(parts.scheme or 'no scheme')!s} was given"
        )
        return ""
    return value


def _host(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    host = value.strip().lower().rstrip(".")
    return host if _HOST.match(host) else None


def read_options(body: Any) -> SessionOptions:
    """The checked options; SessionError("invalid_input") with every issue otherwise."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise SessionError(
            "invalid_input",
            "The session options must be a JSON object.",
            {"issues": [{"path": "", "message": "expected an object"}]},
        )
    issues = _Issues()
    if "url" in body:
        issues.add("url", "url is not an option of a session; use startUrl for the page the browser opens first")
    for key in sorted(set(body) - KNOWN - {"url"}):
        issues.add(key, f"{key} is not an option of a session")
    opts = SessionOptions()
    if body.get("startUrl") is not None:
        opts.start_url = _http_url(body["startUrl"], "startUrl", issues)
    _device_and_viewport(body, opts, issues)
    for key in ("record",):
        if body.get(key) is not None and not isinstance(body[key], bool):
            issues.add(key, f"{key} must be true or false")
    opts.record = body.get("record") is True
    _headers(body.get("headers"), opts, issues)
    _credentials(body.get("credentials"), opts, issues)
    _proxy(body, opts, issues)
    opts.idle_timeout_ms = (
        _integer(body, "idleTimeoutMs", MIN_TIMEOUT_MS, MAX_TIMEOUT_MS, issues, what=" of milliseconds")
        or DEFAULT_IDLE_MS
    )
    opts.max_duration_ms = (
        _integer(body, "maxDurationMs", MIN_TIMEOUT_MS, MAX_TIMEOUT_MS, issues, what=" of milliseconds")
        or DEFAULT_MAX_DURATION_MS
    )
    _engine(body, opts, issues)
    _capacity(body, opts, issues)
    block = body.get("block")
    if block is not None:
        if not isinstance(block, list) or any(b not in BLOCKABLE for b in block):
            issues.add("block", f"block must be a list of {', '.join(BLOCKABLE)}")
        else:
            opts.block = sorted(set(block))
    title = body.get("title")
    if title is not None:
        if not isinstance(title, str) or len(title) > 300:
            issues.add("title", "title must be text of at most 300 characters")
        else:
            opts.title = title
    if issues.items:
        first = issues.items[0]["message"]
        more = len(issues.items) - 1
        raise SessionError(
            "invalid_input",
            first[0].upper() + first[1:] + (f" (and {more} more)" if more else "") + ".",
            {"issues": issues.items},
        )
    return opts


def _device_and_viewport(body: dict, opts: SessionOptions, issues: _Issues) -> None:
    device = body.get("device")
    if device is not None:
        if not isinstance(device, str) or not (device in ("desktop", "mobile") or device in devices()):
            issues.add(
                "device",
                'device must be desktop, mobile or a device id from the device list (such as "iPhone 15" or "Pixel 7")',
            )
        else:
            opts.device = device
            opts.viewport = device_viewport(device)
    viewport = body.get("viewport")
    if viewport is None:
        return
    if not isinstance(viewport, dict):
        issues.add("viewport", "viewport must be an object with width and height")
        return
    for key in sorted(set(viewport) - {"width", "height", "deviceScaleFactor", "mobile"}):
        issues.add(
            f"viewport.{key}", f"viewport.{key} is not a viewport field (width, height, deviceScaleFactor, mobile)"
        )
    shown = dict(opts.viewport)
    for key, (low, high) in (("width", VIEWPORT_WIDTH), ("height", VIEWPORT_HEIGHT)):
        value = viewport.get(key)
        if value is None:
            issues.add(f"viewport.{key}", f"viewport.{key} is required, from {low} to {high} pixels")
        elif isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            issues.add(f"viewport.{key}", f"viewport.{key} must be a whole number of pixels from {low} to {high}")
        else:
            shown[key] = value
    scale = viewport.get("deviceScaleFactor")
    if scale is not None:
        if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not SCALE[0] <= scale <= SCALE[1]:
            issues.add(
                "viewport.deviceScaleFactor",
                f"viewport.deviceScaleFactor must be a number from {SCALE[0]} to {SCALE[1]:g}",
            )
        else:
            shown["deviceScaleFactor"] = scale
    mobile = viewport.get("mobile")
    if mobile is not None:
        if not isinstance(mobile, bool):
            issues.add("viewport.mobile", "viewport.mobile must be true or false")
        else:
            shown["mobile"] = mobile
    opts.viewport = shown


def _headers(raw: Any, opts: SessionOptions, issues: _Issues) -> None:
    if raw is None:
        return
    if not isinstance(raw, list):
        issues.add("headers", 'headers must be a list of {"host", "name", "value"} entries')
        return
    if len(raw) > MAX_HEADERS:
        issues.add("headers", f"headers has {len(raw)} entries; at most {MAX_HEADERS} are allowed")
        return
    for n, entry in enumerate(raw):
        where = f"headers[{n}]"
        if not isinstance(entry, dict) or set(entry) - {"host", "name", "value"}:
            issues.add(where, f"{where} must be an object with host, name and value")
            continue
        host = _host(entry.get("host"))
        name, value = entry.get("name"), entry.get("value")
        if host is None:
            issues.add(
                f"{where}.host", f"{where}.host must be a host name, such as staging.example.com (or *.example.com)"
            )
        if not isinstance(name, str) or not _HEADER_NAME.fullmatch(name):  # fullmatch: `$` lets "X\n" by
            issues.add(f"{where}.name", f"{where}.name must be a header name, such as X-Staging-Gate")
        elif forbidden_header(name):
            issues.add(f"{where}.name", f"{where}.name: the browser sets {name} itself")
        if not isinstance(value, str) or len(value) > 8192 or any(c in value for c in "\r\n\0"):
            issues.add(f"{where}.value", f"{where}.value must be text of one line, at most 8,192 characters")
        if host and isinstance(name, str) and isinstance(value, str):
            opts.headers.append({"host": host, "name": name, "value": value})


def _credentials(raw: Any, opts: SessionOptions, issues: _Issues) -> None:
    if raw is None or raw is False:
        return
    if raw is True:
        opts.credentials = {"namespace": "default", "autoSubmit": True}
        return
    if not isinstance(raw, dict) or set(raw) - {"namespace", "autoSubmit"}:
        issues.add(
            "credentials",
            "credentials must be true or an object with namespace and autoSubmit; there is no "
            "field for a password: logins come from the credential vault",
        )
        return
    namespace = raw.get("namespace", "default")
    if not isinstance(namespace, str) or not re.match(r"^[A-Za-z0-9_.-]{1,64}$", namespace):
        issues.add("credentials.namespace", "credentials.namespace must be a name of letters, digits, . _ or -")
        return
    auto = raw.get("autoSubmit", True)
    if not isinstance(auto, bool):
        issues.add("credentials.autoSubmit", "credentials.autoSubmit must be true or false")
        return
    opts.credentials = {"namespace": namespace, "autoSubmit": auto}


def _proxy(body: dict, opts: SessionOptions, issues: _Issues) -> None:
    if body.get("proxyUrl") is not None:
        opts.proxy_url = _http_url(body["proxyUrl"], "proxyUrl", issues, schemes=("http",))
    hosts = body.get("allowHosts")
    if hosts is None:
        return
    if not body.get("proxyUrl"):
        issues.add("allowHosts", "allowHosts needs proxyUrl: the hosts it names are reached through your proxy")
        return
    if not isinstance(hosts, list) or not hosts or len(hosts) > MAX_ALLOW_HOSTS:
        issues.add("allowHosts", f"allowHosts must be a list of 1 to {MAX_ALLOW_HOSTS} host names")
        return
    for n, raw in enumerate(hosts):
        host = _host(raw)
        if host is None:
            issues.add(f"allowHosts[{n}]", f"allowHosts[{n}] must be a host name, such as app.internal (or *.internal)")
        else:
            opts.allow_hosts.append(host)


def _engine(body: dict, opts: SessionOptions, issues: _Issues) -> None:
    """engineId names a saved engine (the spec); an account has none to save yet, so the built-in engine is the
    one a session runs on, and anything else is refused in a sentence that says so."""
    engine = body.get("engineId", body.get("engine"))
    key = "engineId" if "engineId" in body else "engine"
    if engine is not None:
        if engine not in ENGINES:
            named = f"{engine!r}"[:80] if isinstance(engine, str) else "that value"
            issues.add(
                key,
                f"{key} {named} is not a saved engine of this account: an account has no saved engines "
                f"here, and a session runs on the built-in {', '.join(ENGINES)}. Leave {key} out or "
                f"send {ENGINES[0]}",
            )
        else:
            opts.engine = engine
    version = body.get("engineVersion")
    if version is None:
        return
    if body.get("engineId") is None:
        issues.add("engineVersion", "engineVersion needs engineId")
    elif isinstance(version, bool) or not isinstance(version, int) or version != 1:
        issues.add(
            "engineVersion",
            f"engineVersion picks a saved engine's version; the built-in "
            f"{engine if engine in ENGINES else ENGINES[0]} has version 1 only",
        )
    else:
        opts.engine_version = version


def _capacity(body: dict, opts: SessionOptions, issues: _Issues) -> None:
    wait = _integer(body, "waitForCapacityMs", 0, MAX_WAIT_FOR_CAPACITY_MS, issues, what=" of milliseconds")
    opts.wait_for_capacity_ms = wait or 0
    queue = body.get("queueForCapacity")
    if queue is None:
        return
    if opts.wait_for_capacity_ms > 0:
        issues.add(
            "queueForCapacity",
            "queueForCapacity and waitForCapacityMs above 0 cannot be used together; send one of them",
        )
        return
    if not isinstance(queue, dict) or set(queue) != {"maxWaitSeconds"}:
        issues.add("queueForCapacity", 'queueForCapacity must be {"maxWaitSeconds": 1 to 900}')
        return
    seconds = _integer(queue, "maxWaitSeconds", 1, MAX_QUEUE_SECONDS, issues)
    if issues.items and issues.items[-1]["path"] == "maxWaitSeconds":
        issues.items[-1]["path"] = "queueForCapacity.maxWaitSeconds"
        issues.items[-1]["message"] = "queueForCapacity." + issues.items[-1]["message"]
    opts.queue_seconds = seconds or 0
