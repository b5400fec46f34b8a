"""The boundary every provider adapter goes through: the key, the host, the refusal sentences.

An adapter never touches its key. It names how the key travels (`Auth`), and
`Call` adds it to a request whose URL is always that provider's own base plus
a path — so the key is filled in for that provider's host and no other, and a
redirect is never followed with it. The key is never in the arguments, the
result or the trace; an error body that echoes it has it replaced by
`[secret NAME]`.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import httpx

from foldrun import net
from foldrun.contract import web_engines as W

from ..errors import WebToolError

if TYPE_CHECKING:  # pragma: no cover
    from ..tool import WebTool


@dataclass(frozen=True)
class Auth:
    """How the key travels: `header` (name, template with {key}), `query` (parameter), `basic` (the
    vault holds the encoded pair), or `none`."""

    how: str
    name: str = ""
    template: str = "{key}"


BEARER = Auth("header", "Authorization", "Bearer {key}")
BASIC = Auth("basic", "Authorization", "Basic {key}")
NONE = Auth("none")


@dataclass(frozen=True)
class Adapter:
    action: str
    name: str
    fn: Callable[..., Any]
    base: str  # the provider's host, where its key is filled in
    auth: Auth
    page: str  # the vendor page it was built from
    matched: str  # the day it was last matched to that page (YYYY-MM-DD)


REGISTRY: dict[tuple[str, str], Adapter] = {}


def adapter(action: str, name: str, *, base: str, auth: Auth, page: str, matched: str) -> Callable:
    def register(fn: Callable) -> Callable:
        REGISTRY[(action, name)] = Adapter(action, name, fn, base, auth, page, matched)
        return fn

    return register


@dataclass(frozen=True)
class Raw:
    """A fetch answer that is not a page to read (a PDF, an image): the site's own bytes, for save=."""

    media_type: str
    body: bytes


@dataclass
class Call:
    """One provider call's context: the tool, who answers, and the key resolved for it."""

    tool: "WebTool"
    provider: dict
    adapter: Adapter
    key: tuple[str, str] | None = None
    notes: list[str] = field(default_factory=list)
    saving: bool = False  # a fetch whose answer goes to a file (save=): the page's own bytes are wanted

    @property
    def name(self) -> str:
        return self.provider["name"]

    @property
    def base(self) -> str:
        endpoints = self.tool.endpoints
        return (
            endpoints.get(f"{self.name} {self.adapter.action}") or endpoints.get(self.name) or self.adapter.base
        ).rstrip("/")

    def _with_key(self, headers: dict[str, str], params: dict[str, Any]) -> None:
        auth = self.adapter.auth
        if self.key is None or auth.how == "none":
            return
        if auth.how == "query":
            params[auth.name] = self.key[1]
        else:
            headers[auth.name] = auth.template.format(key=self.key[1])

    def hide(self, text: str) -> str:
        if self.key and len(self.key[1]) >= 4:
            return text.replace(self.key[1], f"[secret {self.key[0]}]")
        return text

    def send(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict | None = None,
        headers: dict | None = None,
        timeout: float | None = None,
    ) -> httpx.Response:
        """The raw response of an accepted call; a refusal or a wire error is a sentence."""
        headers = {"Accept": "application/json", **(headers or {})}
        params = dict(params or {})
        self._with_key(headers, params)
        if json is not None:
            headers.setdefault("Content-Type", "application/json")
        started = time.monotonic()
        wait = timeout or self.tool.fetch_timeout
        try:
            response = self.tool.http.request(
                method,
                self.base + path,
                json=json,
                params=params or None,
                headers=headers,
                timeout=wait,
                follow_redirects=False,
            )
        except httpx.TimeoutException:
            raise WebToolError(f"{self.name} did not answer within {wait:g}s") from None
        except httpx.HTTPError as exc:
            raise WebToolError(f"{self.name} could not be reached: {net.describe(exc)}") from None
        self.tool.emit(
            {
                "event": "provider",
                "provider": self.name,
                "action": self.adapter.action,
                "status": response.status_code,
                "seconds": round(time.monotonic() - started, 3),
            }
        )
        if response.status_code >= 400:
            raise WebToolError(refusal(self.name, self.provider.get("key_name"), response, self.hide))
        return response

    def json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = self.send(method, path, **kwargs)
        try:
            data = response.json()
        except ValueError:
            raise WebToolError(f"{self.name} did not answer JSON") from None
        if not isinstance(data, (dict, list)):
            raise WebToolError(f"{self.name} answered something that is not its documented shape")
        return data


def refusal(name: str, vault: str | None, response: httpx.Response, hide: Callable[[str], str]) -> str:
    """The sentence for a refused call: the provider and the vault name, never the key."""
    status = response.status_code
    held = f"the key in {vault}" if vault else "a request without a key"
    if status in (401, 403):
        store = f"; store a working one with `foldrun secrets set {vault}`" if vault else ""
        return f"{name} refused {held} (HTTP {status}) — invalid, revoked, or not for {name}{store}"
    if status == 402:
        return (
            f"{name} refused {held} (HTTP 402): the account behind it is out of credit — add credit with "
            f"{name}, or store another key in {vault}"
        )
    if status == 429:
        after = response.headers.get("retry-after")
        wait = f" and asked us to wait {after}s" if after and after.isdigit() else " and named no wait"
        return f"{name} is rate-limiting {held} (HTTP 429){wait}; wait, or call {name} less often"
    return f"{name} answered HTTP {status}: {hide(response.text[:300])}"


def resolve_key(tool: "WebTool", provider: dict) -> tuple[str, str] | None:
    name = provider.get("key_name")
    if not name:
        return None
    try:
        value = tool.secret(name)
    except Exception:  # noqa: BLE001 - any resolver failure is "not available", said by name
        value = None
    if not value:
        if provider["name"] in W.KEY_OPTIONAL and provider["action"] == "fetch":  # "20 a minute without one"
            return None
        raise WebToolError(
            f"web.{provider['action']}: {provider['name']} needs the secret {name}, and it is not "
            f"available to this step — `foldrun secrets set {name}`"
        )
    return name, value


def open_call(tool: "WebTool", provider: dict) -> Call:
    found = REGISTRY.get((provider["action"], provider["name"]))
    if found is None:  # the table and the registry are proven equal by a test; this is the guard
        raise WebToolError(f"web.{provider['action']}: {provider['name']} has no adapter in this install")
    return Call(tool, provider, found, resolve_key(tool, provider))


def plain(text: object) -> str:
    """Brave and others mark matches with <strong>; the model reads words."""
    import re

    return re.sub(r"</?(strong|b|em|mark)>", "", str(text or ""))


def day(value: object) -> str | None:
    return str(value)[:10] if value else None


def items(data: Any, *path: str | int) -> list[dict]:
    """The list at `path` in a JSON answer (only its objects), [] when the shape is not there."""
    for step in path:
        if isinstance(step, int):
            data = data[step] if isinstance(data, list) and len(data) > step else None
        else:
            data = data.get(step) if isinstance(data, dict) else None
    return [item for item in data if isinstance(item, dict)] if isinstance(data, list) else []
