"""Run inside a fresh network namespace where 9.9.9.9 (a global address) is on loopback.

Not a test module: tests/net/test_every_role.py starts it under `unshare -n` and
reads the JSON it prints. Here a global address is really reachable, so each
role can be shown to reach a public host, and then to be refused when the same
name re-resolves to loopback, or when a redirect from the public host points there.
"""

from __future__ import annotations

import http.client
import json
import socket
import sys
import tempfile
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from foldrun import net
from foldrun.engine.tools.http import HttpToolRuntime
from foldrun.net.proxy import GuardProxy
from foldrun.providers.client import ModelClient, ProviderError, Supply
from foldrun.web.errors import WebToolError
from foldrun.web.tool import WebTool
from notify.webhook import post_once
from tests.net.conftest import Site
from vault import oauth
from vault.boundary import EgressProxy

PUBLIC = "9.9.9.9"


class Resolver:
    """public.example is always 9.9.9.9; rebind.example answers 9.9.9.9 once, then 127.0.0.1."""

    def __init__(self) -> None:
        self.rebinds = 0

    def __call__(self, host: str, port: int) -> list[str]:
        if host == "public.example":
            return [PUBLIC]
        if host == "rebind.example":
            self.rebinds += 1
            return [PUBLIC] if self.rebinds == 1 else ["127.0.0.1"]
        raise net.NoSuchHost(host)


class StepStandIn:
    """What an http tool reads of its step (the ToolContext's few fields it uses)."""

    is_test = False
    allow_private_urls = False

    def log(self, message: str) -> None:
        pass

    def secret_values(self, names: list[str]) -> dict[str, str]:
        return {}

    def redact(self, text: str) -> str:
        return text


def said(call) -> str:
    try:
        return str(call())
    except Exception as exc:  # the refusal is the outcome under test
        return str(exc)


def through_proxy(proxy_url: str, prefix: str, target: str) -> str:
    """GET `target` through a forward proxy, following a redirect through it as a browser or a script would."""
    host, port = proxy_url.removeprefix("http://").split("/", 1)[0].split(":")
    for _hop in range(2):
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("GET", prefix + target)
        answer = conn.getresponse()
        body = answer.read().decode().strip()
        conn.close()
        if answer.status != 302:
            break
        target = answer.headers["Location"]
    return f"{answer.status} {body}"


def roles(public: Site, private: Site, sandbox: Path) -> dict:
    web = WebTool({}, http=net.client("web"), sandbox=sandbox, allow_private=False, test_mode=False)
    egress = EgressProxy({}).start()
    guard = GuardProxy(lambda host, port: net.connect_addresses(host, port))
    step = StepStandIn()
    lines: list[str] = []

    def openapi(url: str) -> str:
        lines.clear()
        HttpToolRuntime("crm", {"base": url, "openapi": url}, files={}, log=lines.append).tools()
        return lines[0] if lines else "loaded"

    def http_tool(url: str) -> str:
        parts = urlsplit(url)
        tool = HttpToolRuntime("crm", {"base": f"{parts.scheme}://{parts.netloc}"}, files={}, log=lines.append)
        return tool.call(step, "GET", parts.path, dict(parse_qsl(parts.query)), None, {})

    def model(url: str) -> str:
        client = ModelClient(Supply(name=None, format="anthropic", base_url=url, model="m", key="k"))
        try:
            client.create(None, [{"role": "user", "content": "hi"}], [], 10)
        except ProviderError as exc:
            return exc.message
        return "answered"

    def webhook(url: str) -> str:
        outcome = post_once(url, b"{}", {})
        return outcome.error or f"answered {outcome.status_code}"

    def token(url: str) -> str:
        return said(
            lambda: oauth.refresh(None, name="CRM", token_url=url, refresh_token="r", client_id="c", client_secret=None)
        )

    def fetch(url: str) -> str:
        try:
            return web.call({"action": "fetch", "url": url, "mode": "raw"})[:200]
        except WebToolError as exc:
            return str(exc)

    every = {
        **{
            f"net.client({role!r})": (
                lambda url, role=role: said(lambda: net.client(role).get(url, follow_redirects=True).status_code)
            )
            for role in net.ROLES
        },
        "http tool": lambda url: said(lambda: http_tool(url)),
        "http tool openapi": openapi,
        "model provider": model,
        "webhook": webhook,
        "oauth token endpoint": token,
        "web fetch": fetch,
        "egress proxy": lambda url: through_proxy(
            egress.url, "/" + egress.url.rstrip("/").rsplit("/", 1)[1] + "/", url
        ),
        "browser guard proxy": lambda url: through_proxy(guard.url, "", url),
    }
    found: dict[str, dict] = {}
    resolver = net.policy().resolver
    for name, call in every.items():
        resolver.rebinds = 0
        rebind = f"http://rebind.example:{public.port}/x"
        hop = f"http://public.example:{public.port}/hop?to=http://127.0.0.1:{private.port}/in"
        found[name] = {"first": call(rebind), "second": call(rebind), "redirect": call(hop)}
    egress.stop()
    guard.close()
    return found


def main() -> int:
    assert socket.gethostbyname(PUBLIC) == PUBLIC
    net.configure(allow_private=False, resolver=Resolver())
    public, private = Site(PUBLIC, close=True), Site("127.0.0.1")
    with tempfile.TemporaryDirectory() as sandbox:
        found = roles(public, private, Path(sandbox))
    print(json.dumps({"roles": found, "private_seen": private.seen, "public_seen": len(public.seen)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
